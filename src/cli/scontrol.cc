// scontrol: show and update the cluster (Slurm-compatible subset).
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/render/render.h"
#include "core/array.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::cli {

int ShowRemote(const render::ShowRequest& req);

namespace {

int ShowHostnames(const std::vector<std::string>& words) {
  std::string expr;
  if (words.empty()) {
    const char* env = getenv("SLURM_JOB_NODELIST");
    if (!env) env = getenv("SLURM_NODELIST");
    if (!env) {
      std::cerr << "scontrol: error: host list is empty\n";
      return 1;
    }
    expr = env;
  } else {
    expr = util::Join(words, ",");
  }
  auto hosts = util::ExpandHostlist(expr);
  if (!hosts.ok()) {
    std::cerr << "scontrol: error: Invalid hostlist: " << expr << "\n";
    return 1;
  }
  for (const auto& h : *hosts) std::cout << h << "\n";
  return 0;
}

int ShowHostlist(const std::vector<std::string>& words) {
  if (words.empty()) {
    std::cerr << "scontrol: error: host list is empty\n";
    return 1;
  }
  auto hosts = util::ExpandHostlist(util::Join(words, ","));
  if (!hosts.ok()) {
    std::cerr << "scontrol: error: Invalid hostlist: " << util::Join(words, ",") << "\n";
    return 1;
  }
  std::cout << util::CompressHostlist(*hosts) << "\n";
  return 0;
}

int Show(const std::vector<std::string>& words, bool one_liner, bool details, bool all) {
  if (words.empty()) {
    std::cerr << "scontrol: error: too few arguments for keyword:show\n";
    return 1;
  }
  std::string what = util::ToLower(words[0]);
  std::vector<std::string> rest(words.begin() + 1, words.end());
  if (what == "hostnames") return ShowHostnames(rest);
  if (what == "hostlist" || what == "hostlistsorted") return ShowHostlist(rest);
  render::ShowRequest req;
  req.one_liner = one_liner;
  req.details = details;
  req.all = all;
  if (what == "job" || what == "jobs" || what == "jobid") {
    req.what = "job";
  } else if (what == "node" || what == "nodes") {
    req.what = "node";
  } else if (what == "partition" || what == "partitions") {
    req.what = "partition";
  } else if (what == "config") {
    req.what = "config";
  } else {
    std::cerr << "scontrol: error: invalid entity:" << words[0] << " for keyword:show \n";
    return 1;
  }
  if (!rest.empty()) req.name = rest[0];
  return ShowRemote(req);
}

// Slurm's scontrol prints each refusal as "<error> for job <id>".
int PrintResults(const Response& resp) {
  int rc = 0;
  for (const auto& r : resp.body.at("results")) {
    std::string err = r.value("error", "");
    if (err.empty()) continue;
    std::cerr << err << " for job " << r.value("job_id", "") << "\n";
    rc = 1;
  }
  return rc;
}

// hold, uhold, release, requeue, requeuehold, top: a list of job ids
// (commas or words, "JobId=" allowed).
int JobListVerb(const std::string& verb, const std::vector<std::string>& words) {
  if (words.empty()) {
    std::cerr << "scontrol: error: too few arguments for keyword:" << verb << "\n";
    return 1;
  }
  std::vector<std::string> ids;
  for (const auto& w : words) {
    std::string v = w;
    if (util::StartsWith(util::ToLower(v), "jobid=")) v = v.substr(6);
    for (std::string& id : core::SplitJobIdList(v)) ids.push_back(std::move(id));
  }
  std::string target;
  nlohmann::json body = {{"job_ids", ids}};
  if (verb == "hold" || verb == "uhold") {
    target = "/v1/jobs/hold";
    body["user_hold"] = verb == "uhold";
  } else if (verb == "release") {
    target = "/v1/jobs/release";
  } else if (verb == "requeue" || verb == "requeuehold") {
    target = "/v1/jobs/requeue";
    body["hold"] = verb == "requeuehold";
  } else {
    target = "/v1/jobs/top";
  }
  auto resp = CallController(target, body);
  if (!resp.ok()) {
    PrintCallError("scontrol", resp.status());
    return 1;
  }
  return PrintResults(*resp);
}

// scontrol update JobId=... Field=Value ...
int UpdateJob(const std::vector<std::string>& words) {
  std::string id;
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& w : words) {
    auto eq = w.find('=');
    std::string key = util::ToLower(w.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (key == "jobid") {
      id = value;
      continue;
    }
    static const char* const kKnown[] = {"timelimit", "partition", "name", "jobname", "comment",
                                         "dependency", "nice", "arraytaskthrottle", "numnodes",
                                         "minnodes", "gres", "tresperjob"};
    if (eq == std::string::npos ||
        std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      std::cerr << "Update of this parameter is not supported: " << w << "\nRequest aborted\n";
      return 1;
    }
    if (key == "timelimit" && !util::ParseTimeLimitSeconds(value).ok()) {
      std::cerr << "scontrol: error: Invalid TimeLimit value\n";
      return 1;
    }
    fields.push_back({key, value});
  }
  auto resp = CallController("/v1/jobs/update", {{"job_id", id}, {"fields", fields}});
  if (!resp.ok()) {
    std::cerr << resp.status().message() << " for job " << id << "\n";
    return 1;
  }
  return 0;
}

int Update(const std::vector<std::string>& words) {
  std::string nodes, state, reason;
  for (const auto& w : words) {
    auto eq = w.find('=');
    if (eq == std::string::npos) {
      std::cerr << "scontrol: error: Invalid input: " << w << "\nRequest aborted\n";
      return 1;
    }
    std::string key = util::ToLower(w.substr(0, eq));
    std::string value = w.substr(eq + 1);
    if (key == "nodename" || key == "node") {
      nodes = value;
    } else if (key == "state") {
      state = value;
    } else if (key == "reason") {
      reason = value;
    } else if (key == "jobid") {
      return UpdateJob(words);
    } else {
      std::cerr << "scontrol: error: Update of this parameter is not supported: " << w << "\n"
                << "Request aborted\n";
      return 1;
    }
  }
  if (nodes.empty()) {
    std::cerr << "scontrol: error: No valid entity in update command\n";
    return 1;
  }
  if (state.empty()) {
    std::cerr << "scontrol: error: no node state specified\n";
    return 1;
  }
  auto resp = CallController("/v1/nodes/update",
                             {{"nodes", nodes}, {"state", state}, {"reason", reason}});
  if (!resp.ok()) {
    PrintCallError("scontrol", resp.status());
    return 1;
  }
  return 0;
}

}  // namespace

int ScontrolMain(const std::vector<std::string>& args) {
  bool one_liner = false, details = false, all = false;
  std::vector<std::string> words;
  for (const auto& a : args) {
    if (a == "-o" || a == "--oneliner") {
      one_liner = true;
    } else if (a == "-d" || a == "--details" || a == "-dd") {
      details = true;
    } else if (a == "-a" || a == "--all") {
      all = true;
    } else if (a == "-Q" || a == "--quiet" || a == "-v") {
      continue;
    } else {
      words.push_back(a);
    }
  }
  if (words.empty()) {
    std::cerr << "usage: scontrol [-o] [-d] show {job|node|partition|config|hostnames|hostlist} "
                 "[NAME] | update NodeName=... State=... [Reason=...] | update JobId=... FIELD=VALUE... | "
                 "hold|uhold|release|requeue|requeuehold|top JOBID\n";
    return 1;
  }
  std::string verb = util::ToLower(words[0]);
  std::vector<std::string> rest(words.begin() + 1, words.end());
  if (verb == "show") return Show(rest, one_liner, details, all);
  if (verb == "update") return Update(rest);
  if (verb == "hold" || verb == "uhold" || verb == "release" || verb == "requeue" ||
      verb == "requeuehold" || verb == "top") {
    return JobListVerb(verb, rest);
  }
  if (verb == "version" || verb == "--version" || verb == "-V") {
    return PrintVersion();
  }
  if (verb == "ping") {
    auto client = Client::Connect();
    bool up = client.ok() && client->Get("/v1/ping").ok();
    std::cout << "Slurmctld(primary) at " << "localhost" << " is " << (up ? "UP" : "DOWN") << "\n";
    return up ? 0 : 1;
  }
  std::cerr << "scontrol: error: Invalid keyword: " << words[0] << "\n";
  return 1;
}

}  // namespace muster::cli

// scontrol: show and update the cluster (Slurm-compatible subset).
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/help_texts.h"
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
  if (what == "reservation" || what == "reservations" || what == "res") {
    return ReservationCommand("show", rest, one_liner);
  }
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
  } else if (what == "step" || what == "steps") {
    req.what = "step";
  } else if (what == "topology") {
    req.what = "topology";
  } else {
    std::cerr << "scontrol: error: invalid entity:" << words[0] << " for keyword:show \n";
    return 1;
  }
  if (!rest.empty()) req.name = rest[0];
  return ShowRemote(req);
}

// One refusal as Slurm's scontrol prints it: "<error> for job <id>", or
// "<id>: <error>" for an array or an array task ("12_3: Invalid job id
// specified").
void PrintRefusal(const std::string& id, const std::string& error, bool array) {
  if (array) {
    std::cerr << id << ": " << error << "\n";
  } else {
    std::cerr << error << " for job " << id << "\n";
  }
}

// Prints the refusals of one request; returns 1 when there was one.
// `suspend_line`: hold, uhold and release then add, as Slurm 22.05 does,
// "slurm_suspend error: <the last job's error, or No error>" unless every
// refusal was of the array form.
int PrintResults(const Response& resp, bool suspend_line) {
  bool failed = false, plain_failure = false;
  std::string last;
  for (const auto& r : resp.body.at("results")) {
    last = r.value("error", "");
    if (last.empty()) continue;
    const bool array = r.value("array", false);
    PrintRefusal(r.value("job_id", ""), last, array);
    failed = true;
    plain_failure = plain_failure || !array;
  }
  if (suspend_line && plain_failure) {
    std::cerr << "slurm_suspend error: " << (last.empty() ? "No error" : last) << "\n";
  }
  return failed ? 1 : 0;
}

// hold, uhold, release, requeue, requeuehold, top: a list of job ids
// (commas or words, "JobId=" allowed). Hold, uhold and release go one
// request per word, as Slurm reports them (one slurm_suspend line each).
int JobListVerb(const std::string& verb, const std::vector<std::string>& words) {
  if (words.empty()) {
    std::cerr << "scontrol: error: too few arguments for keyword:" << verb << "\n";
    return 1;
  }
  const bool suspend = verb == "hold" || verb == "uhold" || verb == "release";
  std::vector<std::vector<std::string>> batches;
  for (const auto& w : words) {
    std::string v = w;
    if (util::StartsWith(util::ToLower(v), "jobid=")) v = v.substr(6);
    if (batches.empty() || suspend) batches.emplace_back();
    for (std::string& id : core::SplitJobIdList(v)) batches.back().push_back(std::move(id));
  }
  int rc = 0;
  for (const auto& ids : batches) {
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
    rc |= PrintResults(*resp, suspend);
  }
  return rc;
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
                                         "minnodes", "gres", "tresperjob", "priority", "qos"};
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
  auto resp = PostToController("/v1/jobs/update", {{"job_id", id}, {"fields", fields}});
  if (!resp.ok() || IsTransportRefusal(*resp)) {
    PrintCallError("scontrol", resp.ok() ? util::Unavailable(ErrorText(*resp)) : resp.status());
    return 1;
  }
  if (resp->status < 200 || resp->status >= 300) {
    PrintRefusal(id, ErrorText(*resp), resp->body.is_object() && resp->body.value("array", false));
    return 1;
  }
  return 0;
}

// scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=...] ALL|NODES:
// each node is rebooted by RebootProgram once it runs nothing.
int Reboot(const std::vector<std::string>& words) {
  nlohmann::json body = {{"asap", false}};
  std::string nodes;
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    const std::string key = util::ToLower(w.substr(0, eq));
    if (eq == std::string::npos && key == "asap") {
      body["asap"] = true;
    } else if (eq != std::string::npos && key == "nextstate") {
      const std::string next = util::ToUpper(w.substr(eq + 1));
      if (next != "RESUME" && next != "DOWN") {
        std::cerr << "Invalid state: " << w.substr(eq + 1) << "\nValid states: DOWN, RESUME\n";
        return 1;
      }
      body["next_state"] = next;
    } else if (eq != std::string::npos && key == "reason") {
      body["reason"] = w.substr(eq + 1);
    } else if (eq == std::string::npos && nodes.empty()) {
      nodes = w;
    } else {
      std::cerr << "scontrol: error: Invalid input: " << w << "\nRequest aborted\n";
      return 1;
    }
  }
  if (nodes.empty()) {
    std::cerr << "Missing node list. Specify ALL|<NodeList>\n";
    return 1;
  }
  body["nodes"] = nodes;
  auto resp = CallController("/v1/nodes/reboot", body);
  if (!resp.ok()) {
    const util::Status& st = resp.status();
    const std::string why = st.message();
    if (st.code() == util::Code::kUnavailable) {
      PrintCallError("scontrol", st);
    } else if (why == "RebootProgram isn't defined") {
      // Slurm's two lines.
      std::cerr << "scontrol: error: " << why << "\nscontrol_reboot_nodes error: Unspecified error\n";
    } else {
      std::cerr << "scontrol_reboot_nodes error: "
                << (why == "Access/permission denied" ? "Permission denied" : why) << "\n";
    }
    return 1;
  }
  return 0;
}

// scontrol cancel_reboot NODES (or update State=CANCEL_REBOOT).
int CancelReboot(const std::vector<std::string>& words) {
  if (words.size() != 1) {
    std::cerr << "scontrol: error: " << (words.empty() ? "Missing node list" : "Too many arguments")
              << ". Specify <NodeList>\n";
    return 1;
  }
  auto resp = CallController("/v1/nodes/cancel_reboot", {{"nodes", words[0]}});
  if (!resp.ok()) {
    if (resp.status().code() == util::Code::kUnavailable) {
      PrintCallError("scontrol", resp.status());
    } else {
      std::cerr << "slurm_update error: " << resp.status().message() << "\n";
    }
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
    } else if (key == "reservationname" || key == "reservation") {
      return ReservationCommand("update", words, false);
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
  if (util::EqualsIgnoreCase(state, "CANCEL_REBOOT")) return CancelReboot({nodes});
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
                 "create|update|delete|show reservation ... | "
                 "hold|uhold|release|requeue|requeuehold|top JOBID | reconfigure\n";
    return 1;
  }
  if (words[0] == "-V" || words[0] == "--version") return PrintVersion();
  if (words[0] == "-h" || words[0] == "--help" || words[0] == "--usage" ||
      util::EqualsIgnoreCase(words[0], "help")) {
    std::cout << ScontrolHelp();
    return 0;
  }
  std::string verb = util::ToLower(words[0]);
  std::vector<std::string> rest(words.begin() + 1, words.end());
  if (verb == "show") return Show(rest, one_liner, details, all);
  if (verb == "update") return Update(rest);
  if (verb == "reboot" || verb == "reboot_nodes") return Reboot(rest);
  if (verb == "cancel_reboot") return CancelReboot(rest);
  if (verb == "create" || verb == "delete") {
    if (verb == "create" && (rest.empty() || (!util::EqualsIgnoreCase(rest[0], "reservation") &&
                                              !util::EqualsIgnoreCase(rest[0], "res")))) {
      std::cerr << "scontrol: error: invalid entity:" << (rest.empty() ? "" : rest[0])
                << " for keyword:create\n";
      return 1;
    }
    return ReservationCommand(verb, rest, one_liner);
  }
  if (verb == "hold" || verb == "uhold" || verb == "release" || verb == "requeue" ||
      verb == "requeuehold" || verb == "top") {
    return JobListVerb(verb, rest);
  }
  if (verb == "version") return PrintVersion();
  if (verb == "reconfigure" || verb == "reconfig") {
    // Silent when done, as Slurm's.
    auto r = CallController("/v1/reconfigure", nlohmann::json::object());
    if (!r.ok()) std::cerr << "slurm_reconfigure error: " << r.status().message() << "\n";
    return r.ok() ? 0 : 1;
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

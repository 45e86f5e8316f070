#include "ctld/api_handlers.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/render/render.h"
#include "core/json.h"
#include "core/trigger.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {
namespace {

using nlohmann::json;

api::HttpResponse JsonReply(int status, const json& body) {
  api::HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

api::HttpResponse Error(int status, const std::string& message, const std::string& detail = {}) {
  json body = {{"error", message}};
  if (!detail.empty()) body["detail"] = detail;
  return JsonReply(status, body);
}

int HttpStatusFor(const util::Status& st) {
  switch (st.code()) {
    case util::Code::kInvalidArgument:
    case util::Code::kOutOfRange: return 400;
    case util::Code::kPermissionDenied: return 403;
    case util::Code::kNotFound: return 404;
    case util::Code::kFailedPrecondition: return 409;
    case util::Code::kUnavailable: return 422;
    default: return 500;
  }
}

// A refused submission: "slurm_line" is what sbatch prints before "Batch
// job submission failed: <error>", "detail" what it prints after.
api::HttpResponse SubmitError(const util::Status& st, const sched::SubmitRefusal& why) {
  json body = {{"error", st.message()}};
  if (!why.slurm_line.empty()) body["slurm_line"] = why.slurm_line;
  if (!why.detail.empty()) body["detail"] = why.detail;
  return JsonReply(HttpStatusFor(st), body);
}

// By value: a rendered squeue is megabytes, moved into the reply, not copied.
api::HttpResponse TextReply(util::Result<std::string> text) {
  if (!text.ok()) return Error(HttpStatusFor(text.status()), text.status().message());
  api::HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(*text);
  return r;
}

// A view's warnings as the reply's stderr lines: "X\n" (a line and then an
// empty one, as Slurm prints some) is two.
std::vector<std::string> WarningLines(const std::vector<std::string>& warnings) {
  std::vector<std::string> lines;
  for (const std::string& w : warnings) {
    for (std::string& line : util::Split(w, '\n', /*skip_empty=*/false)) {
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

json ActionResults(const std::vector<JobActionResult>& results) {
  json out = json::array();
  for (const auto& r : results) {
    json one = {{"job_id", r.job_id}, {"error", r.error}};
    if (r.array) one["array"] = true;
    out.push_back(std::move(one));
  }
  return json{{"results", out}};
}

// The cluster as the renderers see it. `only_uids`, when given, limits the
// jobs to those users' (in id order, as the whole table would list them).
render::ClusterView MakeView(const Controller& ctl, const Caller& caller,
                             const std::optional<std::set<uint32_t>>& only_uids = std::nullopt) {
  render::ClusterView view;
  view.config = &ctl.config();
  view.users = &util::SystemUserDb();
  view.now = ctl.Now();
  view.caller_uid = caller.uid;
  view.caller_admin = caller.admin;
  view.caller_groups = util::UserGroups(caller.uid, caller.gid);
  view.ctld_start_time = ctl.start_time();
  if (only_uids) {
    std::vector<core::JobId> ids;
    for (uint32_t uid : *only_uids) {
      const std::set<core::JobId>* mine = ctl.jobs().OfUser(uid);
      if (mine != nullptr) ids.insert(ids.end(), mine->begin(), mine->end());
    }
    std::sort(ids.begin(), ids.end());
    view.jobs.reserve(ids.size());
    for (core::JobId id : ids) view.jobs.push_back(&ctl.jobs().At(id));
  } else {
    view.jobs.reserve(ctl.jobs().size());
    for (const core::Job& job : ctl.jobs()) view.jobs.push_back(&job);
  }
  for (const auto& n : ctl.nodes()) view.nodes.push_back(&n);
  return view;
}

// squeue -u / --me without job ids: the users' uids, so the view holds only
// their jobs; nullopt (the whole table) when a name does not resolve, so
// the renderer reports it as it would.
std::optional<std::set<uint32_t>> SqueueUsers(const render::SqueueRequest& r, const Caller& caller) {
  if (!r.job_ids.empty() || (r.users.empty() && !r.me)) return std::nullopt;
  std::set<uint32_t> uids;
  if (r.me) uids.insert(caller.uid);
  for (const std::string& u : r.users) {
    auto n = util::ParseInt(u);
    if (n.ok() && *n <= UINT32_MAX) {
      uids.insert(static_cast<uint32_t>(*n));
    } else if (auto uid = util::LookupUid(u)) {
      uids.insert(*uid);
    } else {
      return std::nullopt;
    }
  }
  return uids;
}

// sacct, seff and sreport: a query of the accounting database, rendered here.
api::HttpResponse RenderAccounting(Controller& ctl, const std::string& what, const json& body,
                                   const Caller& caller) {
  store::AccountingStore* acct = ctl.accounting();
  if (!acct) return Error(503, "accounting storage is not available");
  // Records queued by the writer thread become visible once flushed.
  util::Status flushed = acct->Flush();
  if (!flushed.ok() && flushed.code() != util::Code::kUnavailable) {
    return Error(500, flushed.message());
  }
  int64_t now = ctl.Now();
  if (what == "sacct") {
    auto req = render::SacctRequestFromJson(body);
    if (!req.ok()) return Error(400, req.status().message());
    auto result = acct->Query(
        render::SacctQuery(*req, util::SystemUserDb(), now, caller.uid, caller.admin));
    if (!result.ok()) return Error(500, result.status().message());
    return TextReply(render::RenderSacct(*req, util::SystemUserDb(), result->jobs, result->steps,
                                         now, caller.uid, caller.admin));
  }
  if (what == "seff") {
    int64_t id = body.value("job_id", int64_t{0});
    store::AccountingQuery q;
    q.job_ids = {id};
    auto result = acct->Query(q);
    if (!result.ok()) return Error(500, result.status().message());
    if (result->jobs.empty()) return Error(404, "Job not found.");
    const store::JobRecord& job = result->jobs.front();
    if (!caller.admin && job.uid != caller.uid) return Error(403, "Job not found.");
    api::HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = render::RenderSeff(job, result->steps, now);
    return r;
  }
  auto req = render::SreportRequestFromJson(body);
  if (!req.ok()) return Error(400, req.status().message());
  auto result = acct->Query(render::SreportQuery(*req, now));
  if (!result.ok()) return Error(500, result.status().message());
  render::SreportCluster cluster;
  cluster.name = ctl.config().cluster_name;
  for (const auto& n : ctl.nodes()) {
    cluster.cpus += n.config.cpus;
    cluster.gpus += n.TotalGpus();
  }
  for (const auto& j : result->jobs) {
    if (!cluster.proper_names.count(j.user)) cluster.proper_names[j.user] = util::RealName(j.uid);
  }
  return TextReply(render::RenderSreport(*req, result->jobs, result->steps, cluster, now));
}

// The Slurm message type of a request, as sdiag counts it: what the Slurm
// command doing the same sends to slurmctld (squeue REQUEST_JOB_INFO, sinfo
// REQUEST_NODE_INFO, ...). What slurmdbd serves in Slurm (sacct,
// sacctmgr, sreport) and what Slurm has no message for keep Muster's own
// name, with id 0.
struct RpcType {
  const char* name;
  int id;
};
RpcType RpcTypeOf(const std::string& method, const std::vector<std::string>& parts,
                  const json& body) {
  const bool get = method == "GET";
  if (parts.size() == 1 && parts[0] == "metrics") return {"MUSTER_METRICS", 0};
  const std::string what = parts.size() > 1 ? parts[1] : "";
  const std::string verb = parts.size() > 2 ? parts[2] : "";
  if (what == "ping") return {"REQUEST_PING", 1008};
  if (what == "crontab") return {"MUSTER_CRONTAB", 0};
  if (what == "triggers") {
    const std::string op = body.is_object() ? body.value("op", "") : "";
    if (op == "set") return {"REQUEST_TRIGGER_SET", 0};
    if (op == "clear") return {"REQUEST_TRIGGER_CLEAR", 0};
    return {"REQUEST_TRIGGER_GET", 0};
  }
  if (what == "reconfigure") return {"REQUEST_RECONFIGURE", 1003};
  if (what == "stats") return {"REQUEST_STATS_INFO", 2035};
  if (what == "priority") return {"REQUEST_PRIORITY_FACTORS", 2026};
  if (what == "shares") return {"REQUEST_SHARE_INFO", 2022};
  if (what == "nodes") {
    return get ? RpcType{"REQUEST_NODE_INFO", 2007} : RpcType{"REQUEST_UPDATE_NODE", 3002};
  }
  if (what == "reservations") {
    if (get) return {"REQUEST_RESERVATION_INFO", 2024};
    const std::string op = body.is_object() ? body.value("op", "") : "";
    if (op == "create") return {"REQUEST_CREATE_RESERVATION", 3006};
    if (op == "delete") return {"REQUEST_DELETE_RESERVATION", 3008};
    return {"REQUEST_UPDATE_RESERVATION", 3009};
  }
  if (what == "accounts" || what == "sacct" || what == "seff") return {"MUSTER_ACCOUNTING", 0};
  if (what == "render") {
    if (verb == "squeue") return {"REQUEST_JOB_INFO", 2003};
    if (verb == "sinfo") return {"REQUEST_NODE_INFO", 2007};
    if (verb == "show") return {"REQUEST_JOB_INFO_SINGLE", 2021};
    return {"MUSTER_ACCOUNTING", 0};
  }
  if (what == "jobs") {
    if (parts.size() == 2) {
      return get ? RpcType{"REQUEST_JOB_INFO", 2003} : RpcType{"REQUEST_SUBMIT_BATCH_JOB", 4003};
    }
    if (parts.size() == 3) {
      if (get) return {"REQUEST_JOB_INFO_SINGLE", 2021};
      if (verb == "cancel") return {"REQUEST_KILL_JOB", 5032};
      if (verb == "requeue") return {"REQUEST_JOB_REQUEUE", 5023};
      if (verb == "top") return {"REQUEST_TOP_JOB", 5038};
      return {"REQUEST_UPDATE_JOB", 3001};
    }
    const std::string sub = parts.size() > 3 ? parts[3] : "";
    if (sub == "allocation") {
      return get ? RpcType{"REQUEST_JOB_READY", 4019}
                 : RpcType{"REQUEST_COMPLETE_JOB_ALLOCATION", 5017};
    }
    if (sub == "steps" && parts.size() == 4) return {"REQUEST_JOB_STEP_CREATE", 5001};
    if (sub == "steps" && parts.size() == 6 && parts[5] == "end") {
      return {"REQUEST_STEP_COMPLETE", 5016};
    }
    if (sub == "steps" && parts.size() == 6 && parts[5] == "attach") {
      return get ? RpcType{"REQUEST_STEP_LAYOUT", 5021} : RpcType{"MUSTER_STEP_ATTACH", 0};
    }
    if (sub == "steps") return {"REQUEST_LAUNCH_TASKS", 6001};
  }
  return {"MUSTER_UNKNOWN", 0};
}

// strigger: {"op": "set", "trigger": core::Trigger's JSON (its owner and
// id are musterd's to fill)}, {"op": "get"} or {"op": "clear", "id",
// "job_id", "uid"}.
api::HttpResponse TriggerRequest(Controller& ctl, const json& body, const Caller& caller) {
  const std::string op = body.value("op", "");
  if (op == "get") {
    json list = json::array();
    for (const core::Trigger& t : ctl.triggers()) list.push_back(core::ToJson(t));
    return JsonReply(200, {{"triggers", list}});
  }
  if (op == "set") {
    json t = body.value("trigger", json::object());
    t["id"] = 0;
    t["uid"] = caller.uid;
    t["gid"] = caller.gid;
    util::Result<core::Trigger> trigger = core::TriggerFromJson(t);
    if (!trigger.ok()) return Error(400, trigger.status().message());
    util::Result<uint32_t> id = ctl.SetTrigger(std::move(*trigger), caller);
    if (!id.ok()) return Error(HttpStatusFor(id.status()), id.status().message());
    return JsonReply(200, {{"id", *id}});
  }
  if (op == "clear") {
    std::optional<uint32_t> uid;
    if (body.contains("uid")) uid = body.at("uid").get<uint32_t>();
    util::Result<int> n = ctl.ClearTriggers(body.value("id", 0u), body.value("job_id", 0u), uid,
                                            caller);
    if (!n.ok()) return Error(HttpStatusFor(n.status()), n.status().message());
    return JsonReply(200, {{"cleared", *n}});
  }
  return Error(400, "op must be set, get or clear");
}

// scrontab: {"op": "get", "uid"} gives {"text"}; {"op": "set", "uid",
// "text", "entries"} installs (an empty text removes), giving {"job_ids"}.
api::HttpResponse CrontabRequest(Controller& ctl, const json& body, const Caller& caller) {
  const uint32_t uid = body.value("uid", caller.uid);
  const std::string op = body.value("op", "");
  if (op == "get") {
    util::Result<std::string> text = ctl.CrontabOf(uid, caller);
    if (!text.ok()) return Error(HttpStatusFor(text.status()), text.status().message());
    return JsonReply(200, {{"text", *text}});
  }
  if (op == "set") {
    util::Result<std::vector<core::JobId>> ids = ctl.InstallCrontab(
        uid, body.value("text", ""), body.value("entries", json::array()), caller);
    if (!ids.ok()) return Error(HttpStatusFor(ids.status()), ids.status().message());
    return JsonReply(200, {{"job_ids", *ids}});
  }
  return Error(400, "op must be get or set");
}

// `path` is the request's target without its query, `parts` its pieces.
api::HttpResponse Route(Controller& ctl, const api::HttpRequest& req, const std::string& path,
                        const std::vector<std::string>& parts, const json& body,
                        const Caller& caller) {
  if (path == "/metrics" && req.method == "GET") return MetricsReply(ctl);
  if (parts.empty() || parts[0] != "v1") return Error(404, "no such endpoint: " + path);
  const std::string& what = parts.size() > 1 ? parts[1] : "";
  bool get = req.method == "GET";
  bool post = req.method == "POST";

  if (what == "ping" && get) {
    return JsonReply(200, {{"status", "ok"}, {"cluster", ctl.config().cluster_name}});
  }
  if (what == "jobs" && parts.size() == 2 && post) {
    // A heterogeneous job: the first component's request, and the others'
    // under "hetjob".
    std::vector<core::JobRequest> reqs = {body.get<core::JobRequest>()};
    for (const json& c : body.value("hetjob", json::array())) reqs.push_back(c.get<core::JobRequest>());
    for (core::JobRequest& jr : reqs) {
      jr.cron_spec.clear();  // only a crontab makes cron jobs
      jr.cron_line = 0;
    }
    sched::SubmitRefusal why;
    auto id = reqs.size() == 1 ? ctl.Submit(std::move(reqs.front()), caller, &why)
                               : ctl.SubmitHet(std::move(reqs), caller, &why);
    if (!id.ok()) return SubmitError(id.status(), why);
    return JsonReply(201, {{"job_id", *id}, {"cluster", ctl.config().cluster_name}});
  }
  if (what == "jobs" && parts.size() == 2 && get) {
    json out = json::array();
    for (const core::Job& job : ctl.jobs()) out.push_back(job);
    return JsonReply(200, {{"jobs", out}});
  }
  if (what == "jobs" && parts.size() == 3 && get) {
    auto num = util::ParseInt(parts[2]);
    const core::Job* job =
        num.ok() && *num >= 0 && *num <= UINT32_MAX ? ctl.jobs().Find(static_cast<core::JobId>(*num)) : nullptr;
    if (job == nullptr) return Error(404, "Invalid job id specified");
    return JsonReply(200, *job);
  }
  if (what == "jobs" && parts.size() == 3 && post && parts[2] == "cancel") {
    return JsonReply(200, ActionResults(ctl.Cancel(body, caller)));
  }
  if (what == "jobs" && parts.size() == 3 && post && (parts[2] == "hold" || parts[2] == "release")) {
    auto ids = body.value("job_ids", std::vector<std::string>{});
    bool user_hold = body.value("user_hold", false);
    return JsonReply(200, ActionResults(ctl.Hold(ids, parts[2] == "hold", user_hold, caller)));
  }
  if (what == "jobs" && parts.size() == 3 && post && parts[2] == "requeue") {
    auto ids = body.value("job_ids", std::vector<std::string>{});
    return JsonReply(200, ActionResults(ctl.Requeue(ids, body.value("hold", false), caller)));
  }
  if (what == "jobs" && parts.size() == 3 && post && parts[2] == "top") {
    auto ids = body.value("job_ids", std::vector<std::string>{});
    return JsonReply(200, ActionResults(ctl.Top(ids, caller)));
  }
  if (what == "jobs" && parts.size() == 3 && post && parts[2] == "update") {
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& f : body.value("fields", json::array())) {
      fields.emplace_back(f.at(0).get<std::string>(), f.at(1).get<std::string>());
    }
    const std::string id = body.value("job_id", "");
    util::Status st = ctl.UpdateJob(id, fields, caller);
    if (!st.ok()) {
      // "array": scontrol prints "12_3: <error>" rather than "... for job 12_3".
      json err = {{"error", st.message()}};
      if (ctl.NamesArray(id)) err["array"] = true;
      return JsonReply(HttpStatusFor(st), err);
    }
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "jobs" && parts.size() == 4 && post && parts[3] == "steps") {
    auto num = util::ParseInt(parts[2]);
    if (!num.ok()) return Error(400, "Invalid job id specified");
    auto step = ctl.CreateStep(static_cast<core::JobId>(*num), body, caller);
    if (!step.ok()) return Error(HttpStatusFor(step.status()), step.status().message());
    return JsonReply(201, *step);
  }
  if (what == "jobs" && parts.size() == 4 && parts[3] == "allocation") {
    auto job = util::ParseInt(parts[2]);
    if (!job.ok()) return Error(400, "Invalid job id specified");
    if (get) {
      auto alloc = ctl.AllocationOf(static_cast<core::JobId>(*job), caller);
      if (!alloc.ok()) return Error(HttpStatusFor(alloc.status()), alloc.status().message());
      return JsonReply(200, *alloc);
    }
    if (post) {
      util::Status st = ctl.CompleteAllocation(static_cast<core::JobId>(*job), body.value("exit_code", 0), caller);
      if (!st.ok()) return Error(HttpStatusFor(st), st.message());
      return JsonReply(200, {{"status", "ok"}});
    }
  }
  if (what == "jobs" && parts.size() == 6 && post && parts[3] == "steps" && parts[5] == "launch") {
    auto job = util::ParseInt(parts[2]);
    auto step = util::ParseInt(parts[4]);
    if (!job.ok() || !step.ok()) return Error(400, "Invalid job step id specified");
    auto launched = ctl.LaunchStep(static_cast<core::JobId>(*job), static_cast<int>(*step), body, caller);
    if (!launched.ok()) return Error(HttpStatusFor(launched.status()), launched.status().message());
    return JsonReply(200, *launched);
  }
  if (what == "jobs" && parts.size() == 6 && parts[3] == "steps" && parts[5] == "attach") {
    // srun says where sattach finds its step (POST); sattach asks (GET,
    // the step's id as given: "batch" has its own answer).
    auto job = util::ParseInt(parts[2]);
    if (!job.ok()) return Error(400, "Invalid job id specified");
    if (post) {
      auto step = util::ParseInt(parts[4]);
      if (!step.ok()) return Error(400, "Invalid job step id specified");
      util::Status st =
          ctl.RegisterAttach(static_cast<core::JobId>(*job), static_cast<int>(*step), body, caller);
      if (!st.ok()) return Error(HttpStatusFor(st), st.message());
      return JsonReply(200, {{"status", "ok"}});
    }
    if (get) {
      auto where = ctl.AttachOf(static_cast<core::JobId>(*job), parts[4], caller);
      if (!where.ok()) return Error(HttpStatusFor(where.status()), where.status().message());
      return JsonReply(200, *where);
    }
  }
  if (what == "jobs" && parts.size() == 6 && post && parts[3] == "steps" && parts[5] == "end") {
    auto job = util::ParseInt(parts[2]);
    auto step = util::ParseInt(parts[4]);
    if (!job.ok() || !step.ok()) return Error(400, "Invalid job step id specified");
    StepEnd end;
    end.exit_code = body.value("exit_code", 0);
    end.exit_signal = body.value("exit_signal", 0);
    end.timed_out = body.value("timed_out", false);
    end.max_rss_kb = body.value("max_rss_kb", int64_t{-1});
    end.total_cpu_ms = body.value("total_cpu_ms", int64_t{0});
    util::Status st = ctl.EndStep(static_cast<core::JobId>(*job), static_cast<int>(*step), end, caller);
    if (!st.ok()) return Error(HttpStatusFor(st), st.message());
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "reconfigure" && parts.size() == 2 && post) {
    util::Status st = ctl.Reconfigure(caller);
    if (!st.ok()) return Error(HttpStatusFor(st), st.message());
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "accounts" && parts.size() == 2 && get) return JsonReply(200, ctl.accounts().ToJson());
  if (what == "accounts" && parts.size() == 2 && post) {
    auto out = ctl.ChangeAccounts(body, caller);
    if (!out.ok()) return Error(HttpStatusFor(out.status()), out.status().message());
    return JsonReply(200, {{"changed", out->changed}, {"lines", out->lines}});
  }
  if (what == "reservations" && parts.size() == 2 && get) {
    return JsonReply(200, ctl.ReservationsReport());
  }
  if (what == "reservations" && parts.size() == 2 && post) {
    auto out = ctl.ChangeReservation(body, caller);
    if (!out.ok()) return Error(HttpStatusFor(out.status()), out.status().message());
    return JsonReply(200, {{"message", *out}});
  }
  if (what == "triggers" && parts.size() == 2 && post) return TriggerRequest(ctl, body, caller);
  if (what == "crontab" && parts.size() == 2 && post) return CrontabRequest(ctl, body, caller);
  if (what == "stats" && parts.size() == 2 && get) return JsonReply(200, ctl.StatsReport());
  if (what == "stats" && parts.size() == 3 && parts[2] == "reset" && post) {
    util::Status st = ctl.ResetStats(caller);
    if (!st.ok()) return Error(HttpStatusFor(st), st.message());
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "priority" && parts.size() == 2 && get) return JsonReply(200, ctl.PriorityReport());
  if (what == "shares" && parts.size() == 2 && get) return JsonReply(200, ctl.SharesReport());
  if (what == "nodes" && parts.size() == 2 && get) {
    json out = json::array();
    for (const auto& n : ctl.nodes()) out.push_back(n);
    return JsonReply(200, {{"nodes", out}});
  }
  if (what == "nodes" && parts.size() == 3 && parts[2] == "reboot" && post) {
    core::RebootRequest req;
    req.asap = body.value("asap", false);
    req.next_state = util::ToUpper(body.value("next_state", ""));
    req.reason = body.value("reason", "");
    util::Status st = ctl.RebootNodes(body.value("nodes", ""), req, caller);
    if (!st.ok()) return Error(HttpStatusFor(st), st.message());
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "nodes" && parts.size() == 3 && parts[2] == "cancel_reboot" && post) {
    util::Status st = ctl.CancelReboots(body.value("nodes", ""), caller);
    if (!st.ok()) return Error(HttpStatusFor(st), st.message());
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "nodes" && parts.size() == 3 && parts[2] == "update" && post) {
    util::Status st = ctl.UpdateNodes(body.value("nodes", ""), body.value("state", ""),
                                      body.value("reason", ""), caller);
    if (!st.ok()) return Error(HttpStatusFor(st), st.message());
    return JsonReply(200, {{"status", "ok"}});
  }
  if (what == "render" && parts.size() == 3 && post) {
    if (parts[2] == "squeue") {
      auto r = render::SqueueRequestFromJson(body);
      if (!r.ok()) return Error(400, r.status().message());
      if (r->start) ctl.EstimateStartTimes();
      std::vector<std::string> warnings;
      render::ClusterView squeue_view = MakeView(ctl, caller, SqueueUsers(*r, caller));
      // Only squeue -s pays for the steps.
      if (r->steps) squeue_view.steps = ctl.RunningSteps();
      api::HttpResponse reply = TextReply(render::RenderSqueue(*r, squeue_view, &warnings));
      reply.warnings = WarningLines(warnings);
      return reply;
    }
    render::ClusterView view = MakeView(ctl, caller);
    if (parts[2] == "sinfo") {
      auto r = render::SinfoRequestFromJson(body);
      if (!r.ok()) return Error(400, r.status().message());
      return TextReply(render::RenderSinfo(*r, view));
    }
    if (parts[2] == "sacct" || parts[2] == "seff" || parts[2] == "sreport") {
      return RenderAccounting(ctl, parts[2], body, caller);
    }
    if (parts[2] == "show") {
      auto r = render::ShowRequestFromJson(body);
      if (!r.ok()) return Error(400, r.status().message());
      view.steps = ctl.RunningSteps();
      return TextReply(render::RenderShow(*r, view));
    }
  }
  return Error(404, "no such endpoint: " + req.method + " " + path);
}

}  // namespace

api::HttpResponse MetricsReply(const Controller& ctl) {
  api::HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = ctl.MetricsText();
  return r;
}

api::HttpResponse HandleApiRequest(Controller& ctl, const api::HttpRequest& req) {
  Caller caller;
  caller.uid = req.peer.uid;
  caller.gid = req.peer.gid;
  caller.admin = ctl.IsAdmin(caller.uid);
  json body;
  if (!req.body.empty()) {
    body = core::ParseIntegerJson(req.body);
    if (body.is_discarded()) return Error(400, "malformed JSON body (or a number not an integer)");
  }
  if (body.is_null()) body = json::object();
  const util::Stopwatch took;
  const std::string path = req.target.substr(0, req.target.find('?'));
  const std::vector<std::string> parts = util::Split(path, '/');
  api::HttpResponse reply;
  try {
    reply = Route(ctl, req, path, parts, body, caller);
  } catch (const std::exception& e) {
    // Type errors in a client's JSON (e.g. a string where a number belongs).
    reply = Error(400, std::string("invalid request: ") + e.what());
  }
  const RpcType type = RpcTypeOf(req.method, parts, body);
  ctl.CountRpc(type.name, type.id, caller.uid, took.ElapsedMicros());
  return reply;
}

void ServeApiRequest(Controller& ctl, const api::HttpRequest& req, api::Respond respond) {
  const std::vector<std::string> parts =
      util::Split(req.target.substr(0, req.target.find('?')), '/');
  if (req.method == "POST" && parts.size() == 4 && parts[0] == "v1" && parts[1] == "jobs" &&
      parts[3] == "stats") {
    const util::Stopwatch took;
    Caller caller{req.peer.uid, req.peer.gid, ctl.IsAdmin(req.peer.uid)};
    util::Result<int64_t> id = util::ParseInt(parts[2]);
    if (!id.ok() || *id <= 0 || *id > UINT32_MAX) {
      respond(Error(400, "invalid job id: " + parts[2]));
      return;
    }
    ctl.StepStats(static_cast<core::JobId>(*id), caller,
                  [respond = std::move(respond)](util::Result<json> got) {
                    respond(got.ok() ? JsonReply(200, *got)
                                     : Error(HttpStatusFor(got.status()), got.status().message()));
                  });
    ctl.CountRpc("REQUEST_JOB_STEP_STAT", 0, caller.uid, took.ElapsedMicros());
    return;
  }
  // Moved, never copied: a squeue of 100,000 jobs is 8 MB (two copies of
  // it were half of that squeue's time in musterd).
  ctl.AfterCommit([respond = std::move(respond), reply = HandleApiRequest(ctl, req)]() mutable {
    respond(std::move(reply));
  });
}

}  // namespace muster::ctld

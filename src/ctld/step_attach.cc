// sattach in musterd: where a running srun step's I/O can be joined (srun
// listens for sattach on its own host, cli/step_attach.h), given only to
// the job's user and operators, since its token is what lets sattach in.
#include <fmt/format.h>

#include "ctld/controller.h"
#include "util/strings.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using nlohmann::json;

namespace {

// The registration as srun sends it, or why it is not one.
util::Status CheckAttachBody(const json& body) {
  auto bad = [](const std::string& what) {
    return util::InvalidArgument("malformed step attach: " + what);
  };
  if (!body.is_object()) return bad("not an object");
  const json& addresses = body.value("addresses", json());
  if (!addresses.is_array() || addresses.empty()) return bad("no addresses");
  for (const json& a : addresses) {
    if (!a.is_string()) return bad("an address is not a string");
  }
  const json& port = body.value("port", json());
  if (!port.is_number_integer() || port.get<int64_t>() < 1 || port.get<int64_t>() > 65535) {
    return bad("port is not 1-65535");
  }
  if (!body.value("token", json()).is_string()) return bad("no token");
  const json& layout = body.value("layout", json());
  if (!layout.is_array()) return bad("no layout");
  for (const json& n : layout) {
    if (!n.is_object() || !n.value("node", json()).is_string() ||
        !n.value("ranks", json()).is_array()) {
      return bad("a layout entry is not {node, ranks}");
    }
    for (const json& r : n["ranks"]) {
      if (!r.is_number_integer()) return bad("a rank is not a number");
    }
  }
  return util::Status::Ok();
}

}  // namespace

util::Status Controller::RegisterAttach(core::JobId id, int step_id, const json& body,
                                        const Caller& caller) {
  const Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  auto running = running_steps_.find({id, step_id});
  if (running == running_steps_.end()) {
    return util::NotFound("Job/step already completing or completed");
  }
  MUSTER_RETURN_IF_ERROR(CheckAttachBody(body));
  // Kept with the step's accounting row, so a restarted musterd still
  // knows it (RecoverRunningSteps).
  running->second.record.attach = json{{"addresses", body["addresses"]},
                                       {"port", body["port"]},
                                       {"token", body["token"]},
                                       {"layout", body["layout"]}}
                                      .dump();
  acct_->UpsertStep(running->second.record);
  return util::Status::Ok();
}

util::Result<json> Controller::AttachOf(core::JobId id, const std::string& step,
                                        const Caller& caller) const {
  const Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  if (job->state == JobState::kPending) {
    return util::FailedPrecondition("Job is pending execution");
  }
  const std::string step_id = fmt::format("{}.{}", id, step);
  if (step == "batch" && job->state == JobState::kRunning && job->HasBatchStep()) {
    return util::FailedPrecondition(
        "StepId=" + step_id +
        " has no I/O to attach to: the batch step's output goes to the job's files");
  }
  util::Result<int64_t> number = util::ParseInt(step);
  auto running = number.ok() && job->state == JobState::kRunning
                     ? running_steps_.find({id, static_cast<int>(*number)})
                     : running_steps_.end();
  if (running == running_steps_.end()) {
    return util::NotFound("Job/step already completing or completed");
  }
  json out = json::parse(running->second.record.attach, nullptr, false);
  if (!out.is_object()) {
    return util::Unavailable("StepId=" + step_id +
                             " cannot be attached to yet: its srun has not said where");
  }
  out["nodelist"] = running->second.record.node_list;
  out["ntasks"] = running->second.record.ntasks;
  return out;
}

}  // namespace muster::ctld

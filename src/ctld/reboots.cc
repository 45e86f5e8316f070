// scontrol reboot and cancel_reboot, and a reboot's course: requested,
// issued to the node's agent once the node runs nothing (RebootProgram on
// a node that is its agent's machine; an emulated node's reboot is played
// by its agent), back when the agent says the node has booted (or
// registers again), then health-checked before it takes a job; DOWN with
// "reboot timed out" when it takes longer than ResumeTimeout. The state
// transitions are core's (core/node.h); this is their I/O.
#include <fmt/format.h>

#include <algorithm>

#include "ctld/controller.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/strings.h"

namespace muster::ctld {

using nlohmann::json;

util::Result<std::vector<core::Node*>> Controller::NodesNamed(const std::string& nodes) {
  std::vector<core::Node*> out;
  if (util::EqualsIgnoreCase(nodes, "ALL")) {
    for (core::Node& n : cluster_.nodes()) out.push_back(&n);
    return out;
  }
  auto names = util::ExpandHostlist(nodes);
  if (!names.ok() || names->empty()) return util::InvalidArgument("Invalid node name specified");
  for (const std::string& name : *names) {
    core::Node* node = cluster_.FindNode(name);
    if (node == nullptr) return util::InvalidArgument("Invalid node name specified");
    out.push_back(node);
  }
  return out;
}

util::Status Controller::RebootNodes(const std::string& nodes, const core::RebootRequest& req,
                                     const Caller& caller) {
  if (!caller.admin) return util::PermissionDenied("Access/permission denied");
  if (cfg_.reboot_program.empty()) return util::FailedPrecondition("RebootProgram isn't defined");
  if (!req.next_state.empty() && req.next_state != "RESUME" && req.next_state != "DOWN") {
    return util::InvalidArgument("Invalid state: " + req.next_state +
                                 "\nValid states: DOWN, RESUME");
  }
  util::Result<std::vector<core::Node*>> targets = NodesNamed(nodes);
  if (!targets.ok()) return targets.status();
  core::RebootRequest asked = req;
  asked.uid = caller.uid;
  const int64_t now = Now();
  for (core::Node* node : *targets) {
    // One already on its way keeps going; asking again changes nothing.
    if (node->Rebooting()) continue;
    core::RequestReboot(*node, asked, now);
    util::LogInfo("node {}: reboot requested{}{}", node->config.name, asked.asap ? " (ASAP)" : "",
                  asked.next_state.empty() ? "" : ", then " + asked.next_state);
    MarkNode(*node);
  }
  IssueDueReboots();
  RequestSchedule();
  return util::Status::Ok();
}

util::Status Controller::CancelReboots(const std::string& nodes, const Caller& caller) {
  if (!caller.admin) return util::PermissionDenied("Access/permission denied");
  util::Result<std::vector<core::Node*>> targets = NodesNamed(nodes);
  if (!targets.ok()) return targets.status();
  std::vector<std::string> refused;
  for (core::Node* node : *targets) {
    if (core::CancelReboot(*node)) {
      MarkNode(*node);
    } else if (!util::EqualsIgnoreCase(nodes, "ALL")) {
      refused.push_back(node->config.name);
    }
  }
  RequestSchedule();
  if (!refused.empty()) {
    // Slurm's words; the log says which nodes had nothing to cancel.
    util::LogInfo("cancel_reboot: no pending reboot on {}", util::CompressHostlist(refused));
    return util::FailedPrecondition("Invalid node state specified");
  }
  return util::Status::Ok();
}

void Controller::IssueDueReboots() {
  const int64_t now = Now();
  bool issued = false;
  for (core::Node& node : cluster_.nodes()) {
    if (!core::RebootDue(node)) continue;
    std::shared_ptr<api::LineConn> conn = agents_.ConnOf(node.config.name);
    // Its agent is away: issued when it is back and the node still idle.
    if (conn == nullptr) continue;
    core::IssueReboot(node, now);
    MarkNode(node);
    util::LogInfo("node {}: reboot issued (back within ResumeTimeout={} s)", node.config.name,
                  cfg_.resume_timeout_s);
    SendAfterCommit(conn, {{"type", "reboot"}, {"node", node.config.name}});
    issued = true;
  }
  if (issued) ArmRebootTimer();
}

void Controller::ArmRebootTimer() {
  int64_t next = 0;
  for (const core::Node& node : cluster_.nodes()) {
    if (!node.Rebooting()) continue;
    const int64_t due = node.reboot_issued_time + cfg_.resume_timeout_s;
    next = next == 0 ? due : std::min(next, due);
  }
  if (next == 0) return;
  if (!reboot_timer_) reboot_timer_ = time_.MakeTimer([this] { OnRebootTimer(); });
  reboot_timer_->ArmAt(next);
}

void Controller::OnRebootTimer() {
  const int64_t now = Now();
  for (core::Node& node : cluster_.nodes()) {
    if (!node.Rebooting() || node.reboot_issued_time + cfg_.resume_timeout_s > now) continue;
    util::LogWarn("node {}: not back {} s after its reboot (ResumeTimeout): DOWN", node.config.name,
                  cfg_.resume_timeout_s);
    core::RebootTimedOut(node, now);
    MarkNode(node);
  }
  ArmRebootTimer();
}

void Controller::NodeBackFromReboot(const std::shared_ptr<api::LineConn>& conn, core::Node& node) {
  util::LogInfo("node {}: back from its reboot", node.config.name);
  core::FinishReboot(node);
  MarkNode(node);
  // As slurmd runs HealthCheckProgram before it registers again.
  if (!node.down) CheckHealthOnJoin(conn, {node.config.name});
  RequestSchedule();
}

}  // namespace muster::ctld

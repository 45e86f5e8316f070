// Health checks in musterd (config::HealthConfig): the schedule, and what
// each node's results do. The checks themselves run on the agents
// (agent/health.h); musterd adds driver_version, which compares nodes.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ctld/controller.h"
#include "util/hostlist.h"
#include "util/log.h"

namespace muster::ctld {

using nlohmann::json;

namespace {

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Whether HealthCheckNodeState asks for `node` to be checked now.
bool InCheckedState(const config::HealthConfig& h, const core::Node& node) {
  if (h.skip_drained && node.drain) return false;
  if (h.node_states.empty()) return true;
  const core::NodeBase base = node.Base();
  const char* state = base == core::NodeBase::kIdle        ? "idle"
                      : base == core::NodeBase::kMixed     ? "mixed"
                      : base == core::NodeBase::kAllocated ? "alloc"
                                                           : "";
  return Contains(h.node_states, state);
}

}  // namespace

void Controller::RunHealthChecks() {
  // CYCLE: a few nodes each tick, one tick per node's share of the
  // interval, so that every node is checked once per interval but never
  // all at once (a shared file system checked by every node together).
  const size_t total = cluster_.nodes().size();
  int64_t step_s = cfg_.health.interval_s;
  size_t first = 0;
  size_t count = total;
  if (cfg_.health.cycle && total > 0) {
    step_s = std::max<int64_t>(1, cfg_.health.interval_s / static_cast<int64_t>(total));
    count = std::min(total, static_cast<size_t>((static_cast<int64_t>(total) * step_s +
                                                 cfg_.health.interval_s - 1) /
                                                cfg_.health.interval_s));
    first = health_cursor_ % total;
    health_cursor_ = (first + count) % total;
  }
  std::set<std::string> due;
  for (size_t k = 0; k < count; ++k) {
    const core::Node& node = cluster_.nodes()[(first + k) % total];
    if (!node.down && InCheckedState(cfg_.health, node)) due.insert(node.config.name);
  }
  for (const auto& [host, agent] : agents_.agents()) {
    json nodes = json::array();
    for (const std::string& name : agent.nodes) {
      if (due.count(name) != 0) nodes.push_back(name);
    }
    if (!nodes.empty()) agent.conn->Send({{"type", "health_check"}, {"nodes", nodes}});
  }
  // From the moment this run was due, not Now(): the clock may read the
  // second before the one the timer fired in, and a run would follow at once.
  health_due_ = std::max(health_due_ + step_s, Now() + 1);
  health_timer_->ArmAt(health_due_);
}

void Controller::CheckHealthOnJoin(const std::shared_ptr<api::LineConn>& conn,
                                   const std::vector<std::string>& names) {
  if (!cfg_.health.any() || conn == nullptr) return;
  json nodes = json::array();
  for (const std::string& name : names) {
    core::Node* node = cluster_.FindNode(name);
    if (node == nullptr) continue;
    node->health_pending = true;
    nodes.push_back(name);
  }
  if (nodes.empty()) return;
  util::LogInfo("nodes {}: joined; held back until their health check answers",
                util::CompressHostlist(nodes.get<std::vector<std::string>>()));
  conn->Send({{"type", "health_check"}, {"nodes", nodes}});
}

bool Controller::HealthMayDrain(const std::string& check) const {
  const int64_t drained =
      std::count_if(cluster_.nodes().begin(), cluster_.nodes().end(),
                    [&](const core::Node& n) { return n.health_drained_by == check; });
  return (drained + 1) * 100 <= static_cast<int64_t>(cfg_.health.max_drain_percent) *
                                    static_cast<int64_t>(cluster_.nodes().size());
}

void Controller::OnAgentHealth(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  const std::string name = msg.at("node").get<std::string>();
  core::Node* node = cluster_.FindNode(name);
  if (node == nullptr || !agents_.Holds(conn, name)) return;
  // (check, what it saw), in the order the agent ran them.
  std::vector<std::pair<std::string, std::string>> failures;
  for (const json& f : msg.value("failures", json::array())) {
    failures.emplace_back(f.at("check").get<std::string>(), f.at("detail").get<std::string>());
  }
  const std::string driver = msg.value("driver_version", "");
  if (!driver.empty()) driver_versions_[name] = driver;
  if (Contains(cfg_.health.checks, "driver_version") && !driver.empty()) {
    // A node unlike the strict majority fails; with no majority there is
    // no telling which nodes are the odd ones.
    std::map<std::string, int> count;
    for (const auto& [n, v] : driver_versions_) ++count[v];
    auto most = std::max_element(count.begin(), count.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    const bool majority = most->second * 2 > static_cast<int>(driver_versions_.size());
    if (majority && most->first != driver) {
      failures.emplace_back("driver_version",
                            fmt::format("driver {} where {} of {} nodes run {}", driver,
                                        most->second, driver_versions_.size(), most->first));
    }
  }
  const int64_t now = Now();
  node->health_time = now;
  if (node->health_pending) {
    // It may take jobs now, or is drained below.
    node->health_pending = false;
    RequestSchedule();
  }
  node->health_failures.clear();
  for (const auto& [check, detail] : failures)
    node->health_failures.push_back(check + ": " + detail);

  if (failures.empty()) {
    // Passing again: resumed only if health drained it and the check that
    // did may heal by itself.
    if (node->drain && !node->health_drained_by.empty() &&
        Contains(cfg_.health.auto_resume, node->health_drained_by)) {
      util::LogInfo("node {}: health checks pass again: resumed (drained by {})", name,
                    node->health_drained_by);
      node->drain = false;
      node->health_drained_by.clear();
      if (!node->down) {
        node->reason.clear();
        node->reason_actor.clear();
        node->reason_uid = 0;
        node->reason_time = 0;
        node->reason_source = core::ReasonSource::kNone;
      }
      MarkNode(*node);
      RequestSchedule();
    }
    return;
  }
  if (node->drain || node->down) return;  // out of service already: its reason stays
  const auto& [check, detail] = failures.front();
  if (!HealthMayDrain(check)) {
    ++health_withheld_[check];
    util::LogWarn(
        "node {} fails health check {} ({}), but draining it would take the nodes drained for "
        "{} past MusterHealthMaxDrainPercent={}: taken for a shared cause, not drained",
        name, check, detail, check, cfg_.health.max_drain_percent);
    return;
  }
  util::LogWarn("node {}: health check {} failed: {}: draining", name, check, detail);
  node->drain = true;
  node->reason = fmt::format("health: {}: {}", check, detail);
  node->reason_actor = "health";
  node->reason_source = core::ReasonSource::kHealth;
  node->reason_uid = 0;
  node->reason_time = now;
  node->health_drained_by = check;
  MarkNode(*node);
}

}  // namespace muster::ctld

// Stage: node state. A node takes new work only when its agent is connected
// (Slurm: not NOT_RESPONDING), it is not DOWN, not DRAIN (draining nodes
// finish what runs but take nothing new), not FUTURE, and not waiting for
// the health check it gets as it joins (HealthCheckProgram). Node keeps no live
// FUTURE flag, so State=FUTURE in the configuration keeps a node out.
#include "sched/pipeline.h"

namespace muster::sched {

FilterResult FilterNodeState(const core::Node& node) {
  if (node.down) return {Verdict::kUnschedulableNow, "node is down"};
  if (node.drain) return {Verdict::kUnschedulableNow, "node is drained"};
  if (node.fail) return {Verdict::kUnschedulableNow, "node is in state FAIL"};
  if (node.config.initial_state == core::NodeInitialState::kFuture) {
    return {Verdict::kUnschedulableNow, "node is in state FUTURE"};
  }
  if (!node.registered) return {Verdict::kUnschedulableNow, "node is not responding"};
  if (node.health_pending) return {Verdict::kUnschedulableNow, "node awaits its health check"};
  if (node.Rebooting()) return {Verdict::kUnschedulableNow, "node is rebooting"};
  return {};
}

}  // namespace muster::sched

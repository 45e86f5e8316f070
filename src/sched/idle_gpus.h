// The idle-GPU policy's rule (config::IdleGpuConfig), pure: given a
// running job's idle-GPU state, whether its GPUs are idle in the sample
// just taken, and the time, what the policy does next. The controller
// applies the action (notify, report, cancel) and keeps the new state.
#pragma once

#include <cstdint>
#include <string_view>

#include "config/config.h"

namespace muster::sched {

enum class IdleGpuAction {
  kNone,
  kFlag,    // flagged: tell its user
  kReport,  // still idle: tell its user again and report it to the operators
  kCancel,  // still idle in a partition that allows it: cancel
  kUnflag,  // busy again: the flag goes
};

std::string_view IdleGpuActionName(IdleGpuAction a);

struct IdleGpuState {
  int64_t idle_since = 0;  // 0: not idle
  int stage = 0;           // 0 none, 1 flagged, 2 reported, 3 cancelled
};

// One sample of a job's GPUs: `idle` when every one of them was under the
// threshold. `may_cancel`: its partition has IdleGpuCancel=YES (no
// partition has by default, so by default nothing is cancelled). Advances
// at most one stage per sample.
IdleGpuAction NextIdleGpuAction(const config::IdleGpuConfig& cfg, bool idle, int64_t now,
                                bool may_cancel, IdleGpuState* state);

}  // namespace muster::sched

#include "sched/idle_gpus.h"

namespace muster::sched {

std::string_view IdleGpuActionName(IdleGpuAction a) {
  switch (a) {
    case IdleGpuAction::kNone:
      return "none";
    case IdleGpuAction::kFlag:
      return "flagged";
    case IdleGpuAction::kReport:
      return "reported";
    case IdleGpuAction::kCancel:
      return "cancelled";
    case IdleGpuAction::kUnflag:
      return "busy";
  }
  return "none";
}

IdleGpuAction NextIdleGpuAction(const config::IdleGpuConfig& cfg, bool idle, int64_t now,
                                bool may_cancel, IdleGpuState* state) {
  if (!cfg.enabled()) return IdleGpuAction::kNone;
  if (!idle) {
    const bool flagged = state->stage > 0;
    *state = {};
    return flagged ? IdleGpuAction::kUnflag : IdleGpuAction::kNone;
  }
  if (state->idle_since == 0) state->idle_since = now;
  const int64_t idle_for = now - state->idle_since;
  if (state->stage == 0 && idle_for >= cfg.flag_after_s) {
    state->stage = 1;
    return IdleGpuAction::kFlag;
  }
  if (state->stage == 1 && cfg.report_after_s > 0 && idle_for >= cfg.report_after_s) {
    state->stage = 2;
    return IdleGpuAction::kReport;
  }
  // Cancelling follows a report when there is one, else the flag.
  const int before_cancel = cfg.report_after_s > 0 ? 2 : 1;
  if (state->stage == before_cancel && may_cancel && cfg.cancel_after_s > 0 &&
      idle_for >= cfg.cancel_after_s) {
    state->stage = 3;
    return IdleGpuAction::kCancel;
  }
  return IdleGpuAction::kNone;
}

}  // namespace muster::sched

// Stage: job eligibility, before any node is looked at. Mirrors the reasons
// Slurm gives a job that may not be considered yet: JobHeldUser/Admin
// (scontrol hold / sbatch -H), BeginTime (--begin), the partition's State=
// (DOWN and INACTIVE stop queued jobs; DRAIN only refuses submissions, man
// slurm.conf) and its MaxTime / MaxNodes / MinNodes limits.
#include "sched/pipeline.h"

namespace muster::sched {

using core::PendingReason;

PendingReason CheckEligibility(const core::Job& job, const core::Partition* part, int64_t now) {
  if (job.held) {
    if (job.reason == PendingReason::kJobRequeuedHeld) return job.reason;
    return job.HoldReason();
  }
  if (job.req.begin_time > now) return PendingReason::kBeginTime;
  // A job whose partition is gone from the configuration can never be
  // scheduled there; INACTIVE is the nearest Slurm reason.
  if (part == nullptr || part->state == core::PartitionState::kInactive) {
    return PendingReason::kPartitionInactive;
  }
  if (part->state == core::PartitionState::kDown) return PendingReason::kPartitionDown;
  if (part->max_time_s >= 0 && (job.time_limit_s < 0 || job.time_limit_s > part->max_time_s)) {
    return PendingReason::kPartitionTimeLimit;
  }
  const int min_nodes = job.req.min_nodes > 0 ? job.req.min_nodes : 1;
  const int max_nodes = job.req.max_nodes > min_nodes ? job.req.max_nodes : min_nodes;
  if ((part->max_nodes >= 0 && min_nodes > part->max_nodes) ||
      (job.req.min_nodes > 0 && max_nodes < part->min_nodes)) {
    return PendingReason::kPartitionNodeLimit;
  }
  return PendingReason::kNone;
}

}  // namespace muster::sched

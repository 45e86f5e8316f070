// When a waiting job should start (squeue --start). The reasoning is the
// pure core's (sched/estimate); this file feeds it the running jobs'
// expected ends and bounds what it costs. Why a job waits is the pass's
// (src/cluster/pass.cc).
#include <fmt/format.h>

#include <unordered_map>

#include "ctld/controller.h"
#include "sched/estimate.h"
#include "sched/priority.h"
#include "util/hostlist.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using core::PendingReason;

namespace {

// squeue --start: estimates for at most this many waiting jobs.
constexpr size_t kMaxEstimates = 1000;

}  // namespace

void Controller::EstimateStartTimes() {
  // With backfill the last pass planned every waiting job (ExplainPending
  // kept its start); only jobs it did not see lose a stale estimate.
  if (cfg_.backfill) {
    for (core::JobId id : cluster_.pending_ids()) {
      Job& job = cluster_.jobs().At(id);
      const bool unseen = cluster_.orphans().count(id) || job.held ||
                          job.reason == PendingReason::kDependency ||
                          job.reason == PendingReason::kDependencyNeverSatisfied;
      if (unseen) {
        job.estimated_start = 0;
        job.estimated_nodes.clear();
      }
    }
    return;
  }
  sched::Snapshot snap = cluster_.Snapshot(Now());
  for (core::JobId id : cluster_.pending_ids()) {
    Job& job = cluster_.jobs().At(id);
    job.estimated_start = 0;
    job.estimated_nodes.clear();
    if (cluster_.orphans().count(id) || job.held) continue;
    if (job.reason == PendingReason::kDependency ||
        job.reason == PendingReason::kDependencyNeverSatisfied) {
      continue;
    }
    snap.pending.push_back(&job);
  }
  sched::OrderByPriority(&snap.pending, cfg_);
  for (const auto& e :
       sched::EstimateStarts(snap, snap.running, cluster::kUnlimitedRunS, kMaxEstimates)) {
    if (e.start <= 0) continue;
    Job& job = cluster_.jobs().At(e.job_id);
    job.estimated_start = e.start;
    job.estimated_nodes = util::CompressHostlist(e.nodes);
  }
}

}  // namespace muster::ctld

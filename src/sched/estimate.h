// squeue --start estimates and the one-line explanation of why a job waits
// for resources. Pure: the future is simulated from the running jobs'
// expected ends over copies of the snapshot's nodes; `now` comes in the
// Snapshot and times are formatted by a callback, so no clock and no time
// zone reach the core. Thread-safe in that it touches only its arguments
// (never mutated).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/job.h"
#include "sched/scheduler.h"

namespace muster::sched {

// squeue --start's START_TIME and SCHEDNODES for one pending job.
struct StartEstimate {
  core::JobId job_id = 0;
  // 0 = no estimate (not placed within the horizon, or not waiting on resources).
  int64_t start = 0;
  std::vector<std::string> nodes;  // where it would start
};

// For sched/builtin (with backfill the pass plans every job itself, see
// Plan::planned). Simulates the future with Schedule itself (Slurm's main scheduler, no
// backfill): first one pass at snapshot.now over all of snapshot.pending;
// then, at each moment a running (or simulated) job ends, its allocation is
// released on copies of the nodes (ReleaseJob) and a pass runs with
// now = that moment over the window's jobs not yet placed. A job that starts
// gets that moment and its nodes as its estimate and runs until
// moment + time_limit_s (UNLIMITED: past the horizon).
//
// Which jobs get an estimate: the first pass classifies. Jobs it starts get
// `now`; jobs it leaves with Resources or Priority form the window (the
// first `max_jobs` of them, in priority order); every other reason (held,
// BeginTime, partition state and limits, BadConstraints, ReqNodeNotAvail)
// gets start 0, as do jobs not placed by snapshot.now + horizon_s. The
// scheduler knows nothing of dependencies: the caller leaves jobs waiting on
// one out of snapshot.pending. Jobs beyond the window never start in the
// simulation, so an estimate can be early where a lower-priority job of
// another partition would take shared nodes first. Returns one entry per
// job of snapshot.pending, in its order. Requires snapshot.config != nullptr.
//
// Cost: one full pass, then at most E further passes over the window,
// E = distinct end moments within the horizon (<= running + max_jobs); a
// pass costs O(nodes + max_jobs x candidate nodes), plus one copy of the
// nodes. Measured: 1,000 nodes, 1,000 running jobs, 5,000 pending,
// max_jobs = 500: about 90 ms.
std::vector<StartEstimate> EstimateStarts(const Snapshot& snapshot,
                                          std::span<const RunningJob> running, int64_t horizon_s,
                                          size_t max_jobs);

// One line for people naming what blocks a job waiting for Resources and
// what would unblock it, from the job's request, the partition's nodes
// (their live free resources in `snapshot`) and when the running jobs on
// them end (`running`; pending jobs ahead are not considered). E.g.
//   "waits for 8 GPUs (h100) on one node; 3 nodes have 8, all busy until about 14:20"
//   "waits for 64 CPUs on one node; the largest free share is 12 CPUs on gpu02;
//    cpu[01-02] free up at about 15:05"
//   "waits for 2 nodes with 4 GPUs each; 1 is free now, the next frees up at about 14:20"
//   "waits for 64 CPUs across nodes; 40 are free now, enough free up by about 15:05"
//   "waits for an idle node; none of the 3 nodes that could take it is idle; gpu02 is
//    idle at about 14:20"
//   "waits for 8 GPUs on one node; gpu[01-02] have that but are down or drained"
//   "fits on gpu01 now; the next scheduling pass starts it" (state changed since the pass)
//   "needs 512000M memory on one node; no node of partition short has that much"
// The last form (or CheckSatisfiable's detail where no per-node maximum is
// the cause) is for a job that could never run there (BadConstraints). A
// time is left out when no listed running job's end frees enough.
// `format_time` turns a moment into text (the controller: local "HH:MM", or
// a date when not today).
// Cost: O(nodes + running x (log running + nodes per job)) per call, a
// copy of the partition's matching nodes included: about 1 ms with 1,000
// nodes and 1,000 running jobs.
std::string ExplainResources(const core::Job& job, const Snapshot& snapshot,
                             std::span<const RunningJob> running,
                             const std::function<std::string(int64_t)>& format_time);

}  // namespace muster::sched

// A workload replayed through the cluster's state machine (cluster::Cluster,
// the code musterd runs) on a virtual clock, with simulated agents: every
// node registers at the start, and each job runs for its recorded run time
// (ended by its time limit when that is shorter, as TIMEOUT).
//
// Events (submissions, ends, the ends of preemption grace times, purges
// after MinJobAge, and the timer that runs a pass at least every
// bf_interval while jobs wait) are taken in time order, ties in the order
// they were made; after each submission and each end one pass runs, as
// musterd runs one after each change. Nothing reads a clock but the
// progress report, so the same configuration and trace give the same
// outcomes, byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "util/status.h"

namespace muster::sim {

// Where a long replay is, for the progress line.
struct Progress {
  int64_t simulated_s = 0;  // seconds since the trace's first submission
  int64_t jobs_done = 0;    // ended, or refused at submission
  int64_t jobs_total = 0;
  double host_seconds = 0;
};

struct ReplayOptions {
  // Called about every `progress_every_s` seconds of host time (never
  // when null); the only use of a clock.
  std::function<void(const Progress&)> progress;
  double progress_every_s = 2.0;
  // A timer's pass that nothing but the time separates from the last pass
  // is skipped when the cluster says it would decide the same
  // (cluster::PassOptions::only_time_changed); false plans every one, for
  // the same outcomes, slower.
  bool skip_quiet_passes = true;
};

// Submissions the cluster refused, by Slurm's message.
struct Refusal {
  std::string message;
  int jobs = 0;
  int first_line = 0;  // the first refused job's line in the trace
};

struct ReplayResult {
  std::vector<JobOutcome> jobs;  // in the trace's order, refused ones included
  ClusterSize size;
  std::vector<Refusal> refused;  // by message
  int not_replayed = 0;          // jobs the trace marks as never started
  // User associations the replay made (AccountingStorageEnforce=associations).
  int associations_added = 0;
  int64_t passes = 0;            // passes that planned
  int64_t skipped_passes = 0;    // timer passes that would have decided the same
  int64_t events = 0;
  double host_seconds = 0;  // varies from run to run; not part of the outcomes
};

// The second the replay's clock starts at (the trace's first submission):
// 2026-01-01 00:00:00 UTC, so dates in explanations and logs are plausible.
inline constexpr int64_t kReplayEpoch = 1767225600;

// Replays `trace` on the cluster `cfg` describes.
util::Result<ReplayResult> Replay(const config::Config& cfg, const Trace& trace,
                                  const ReplayOptions& options = {});

}  // namespace muster::sim

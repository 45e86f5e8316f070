// What a replay shows: the figures operators read (per partition and per
// account: jobs, wait percentiles, bounded slowdown, makespan, CPU and GPU
// utilisation, backfilled and preempted jobs) and the per-job and schedule
// CSVs in Batsim's columns (out_jobs.csv, out_schedule.csv), so analysis
// notebooks written for Batsim read Muster's runs.
//
// Pure: outcomes in, figures and text out; the same outcomes give the same
// bytes (fixed decimals, no locale, groups in name order).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace muster::sim {

// How one job of a replay went. Times are seconds of the replay's clock.
struct JobOutcome {
  std::string id;
  std::string workload;  // the trace's name
  int64_t submit = 0;
  int64_t start = -1;          // -1: it never started
  int64_t end = -1;            // -1: it never ended
  int64_t requested_time = 0;  // its time limit
  int cpus = 0;
  int gpus = 0;
  std::string user;
  std::string account;
  std::string partition;
  // Slurm's end state: COMPLETED, TIMEOUT, CANCELLED, PREEMPTED, FAILED
  // (refused at submission), or PENDING when the replay ended first.
  std::string state;
  std::string nodes;  // the nodes it ran on, as a hostlist
  bool backfilled = false;
  int preemptions = 0;
};

// The figures of a group of jobs (all, one partition or one account).
struct GroupFigures {
  int jobs = 0;     // submitted
  int started = 0;  // of which started
  // Waits (start - submit) of the jobs that started, seconds.
  int64_t wait_p50 = 0, wait_p90 = 0, wait_p99 = 0, wait_max = 0;
  double wait_mean = 0;
  // Mean bounded slowdown: (wait + run) / max(run, kSlowdownBoundS), at
  // least 1, over the jobs that ended.
  double bounded_slowdown = 0;
  int backfilled = 0;
  int preempted = 0;  // jobs preempted at least once
};

inline constexpr int64_t kSlowdownBoundS = 10;

struct Figures {
  GroupFigures all;
  std::map<std::string, GroupFigures> by_partition;
  std::map<std::string, GroupFigures> by_account;
  int64_t makespan = 0;  // first submission to last end
  // Shares of the cluster's CPUs and GPUs held by jobs over the makespan.
  double cpu_utilisation = 0;
  double gpu_utilisation = 0;
};

// The cluster's size, for utilisation.
struct ClusterSize {
  int64_t cpus = 0;
  int64_t gpus = 0;
  int nodes = 0;
};

Figures Summarize(const std::vector<JobOutcome>& jobs, const ClusterSize& cluster);

// The figures as the report `muster sim` prints: a line of totals, then a
// table by partition and one by account.
std::string FormatFigures(const Figures& figures);

// Several replays of one workload side by side (`muster sim --compare`,
// `--sweep`): a column per run, labelled, and with exactly two runs a
// column of the second's difference from the first.
struct LabelledFigures {
  std::string label;
  Figures figures;
};
std::string FormatComparison(const std::vector<LabelledFigures>& runs);

// Batsim's out_jobs.csv: a header and one line per job, in `jobs`' order.
std::string JobsCsv(const std::vector<JobOutcome>& jobs);
// Batsim's out_schedule.csv: a header and one line for the whole run (the
// columns whose meaning a replay has; no energy model, so no joules).
// `scheduling_seconds`: the host time the scheduler took (Batsim's
// scheduling_time), which is the one figure that varies between runs;
// pass 0 for byte-identical files.
std::string ScheduleCsv(const std::vector<JobOutcome>& jobs, const Figures& figures,
                        const ClusterSize& cluster, double scheduling_seconds);

}  // namespace muster::sim

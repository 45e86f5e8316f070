// Plain value types of the accounting store: one finished (or running) job,
// one of its steps, and a query over them. Header-only and free of ctld and
// core types so that the renderers (src/cli/render) and the controller can
// both use them without linking the store.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace muster::store {

// One job as sacct shows it. Times are Unix seconds, 0 = unknown/not yet.
// TRES strings use Slurm's spelling and order: "billing=2,cpu=2,gres/gpu=1,
// mem=1G,node=1" (sacct prints them as stored).
struct JobRecord {
  int64_t job_id = 0;
  // Array fields, reserved: array_job_id is the parent's id, array_task_id
  // the index (-1 = not an array task).
  int64_t array_job_id = 0;
  int64_t array_task_id = -1;
  std::string name;
  std::string user;     // login name
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string group;    // group name, for seff's "User/Group"
  std::string account;
  std::string partition;
  std::string qos;
  std::string cluster;
  int64_t submit_time = 0;
  int64_t eligible_time = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  int64_t time_limit_min = -1;  // minutes; -1 = UNLIMITED
  // Slurm's state string, with its suffix: "COMPLETED", "FAILED",
  // "CANCELLED by 1000", "PENDING", "RUNNING", "OUT_OF_MEMORY", ...
  std::string state;
  int exit_code = 0;         // the exit status of the batch script
  int exit_signal = 0;       // the signal that ended it, 0 = none
  int derived_exit_code = 0; // highest step exit status
  int derived_exit_signal = 0;
  std::string req_tres;
  std::string alloc_tres;
  std::string node_list;     // hostlist, "None assigned" style is the renderer's job
  int nnodes = 0;
  int ncpus = 0;
  int64_t req_mem_mb = 0;    // total per job as ReqMem shows it
  bool req_mem_per_cpu = false;
  std::string work_dir;
  std::string comment;
  int64_t max_rss_kb = -1;   // -1 = never sampled (sacct prints an empty field)
  int64_t total_cpu_ms = 0;  // user + system CPU of all steps
  std::string reason;        // why it waited ("None" once it ran)
  int restarts = 0;
};

// One step. step_id is Slurm's text: "batch", "extern", "interactive",
// "0", "1", ...
struct StepRecord {
  int64_t job_id = 0;
  std::string step_id;
  std::string name;
  std::string state;
  int exit_code = 0;
  int exit_signal = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  std::string node_list;
  int nnodes = 0;
  int ntasks = 0;
  int ncpus = 0;
  std::string alloc_tres;
  int64_t max_rss_kb = -1;
  int64_t total_cpu_ms = 0;
};

// Which records a query returns. Empty lists match everything.
struct AccountingQuery {
  std::vector<int64_t> job_ids;
  std::vector<uint32_t> uids;
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<std::string> names;
  // Time window (Slurm's sacct semantics): a job matches when it was
  // eligible before `window_end` and had not ended before `window_start`
  // (end 0 = still running). 0 on either side = unbounded.
  int64_t window_start = 0;
  int64_t window_end = 0;
  bool include_steps = true;
  int64_t limit = 0;  // 0 = no limit
};

struct QueryResult {
  std::vector<JobRecord> jobs;    // job id order, as sacct lists them
  std::vector<StepRecord> steps;  // by job id, then batch, extern, 0, 1, ...
};

// Sort rank of a step id inside its job, the order sacct prints steps in.
inline int64_t StepSortRank(const std::string& step_id) {
  if (step_id == "batch") return -5;
  if (step_id == "extern") return -4;
  if (step_id == "interactive") return -3;
  int64_t v = 0;
  for (char c : step_id) {
    if (c < '0' || c > '9') return 1LL << 40;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace muster::store

// Plain value types of the accounting store: one finished (or running) job,
// one of its steps, and a query over them. Header-only and free of ctld and
// core types so that the renderers (src/cli/render) and the controller can
// both use them without linking the store.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace muster::store {

// One job as sacct shows it. Times are Unix seconds, 0 = unknown/not yet.
// TRES strings use Slurm's spelling and order: "billing=2,cpu=2,gres/gpu=1,
// mem=1G,node=1" (sacct prints them as stored).
struct JobRecord {
  int64_t job_id = 0;  // the raw id (sacct's JobIDRaw)
  // Job arrays: array_job_id is the array's id (0 = not an array job) and
  // array_task_id the task's index, -1 for a plain job and for the array's
  // pending part (job_id == array_job_id), whose tasks not started yet are
  // array_pending, folded as scontrol prints them without the "%N"
  // ("3,5,7-9", long lists cut with "..."), and array_max_running the %N
  // throttle (0 = none). sacct prints the part as "123_[3,5,7-9%2]".
  int64_t array_job_id = 0;
  int64_t array_task_id = -1;
  std::string array_pending;
  int array_max_running = 0;
  // A heterogeneous job's component: the first component's id and this
  // one's offset (sacct prints "123+1"); 0 and -1 otherwise.
  int64_t het_job_id = 0;
  int het_job_offset = -1;
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
  // Which run of the job this is: 0 for the first, n after n requeues. The
  // store keeps one record per (job_id, restarts); a run that was requeued
  // is closed as `prior_run_state` of the next run with the requeue time as
  // its end, and the next run's submit_time is that requeue time (as sacct
  // -D shows them).
  int restarts = 0;
  // How the run before this one ended: "REQUEUED" (scontrol requeue, a
  // preemption) or "NODE_FAIL" (its node failed; its batch step is closed
  // CANCELLED without an exit code, as Slurm shows it).
  std::string prior_run_state = "REQUEUED";
};

// One step. step_id is Slurm's text: "batch", "extern", "interactive",
// "0", "1", ...
struct StepRecord {
  int64_t job_id = 0;
  // The run of the job the step belongs to (JobRecord::restarts); -1 = not
  // known to the writer: the store takes the latest run that had started
  // by start_time (or the latest run).
  int run = -1;
  std::string step_id;
  std::string name;
  std::string state;
  int exit_code = 0;  // -1: none reported (sacct shows an empty ExitCode)
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
  // The job's GPUs over its life, from the agents' samples (the batch
  // step's record carries the whole job's): mean utilisation in percent
  // and the most memory one GPU held. -1: not sampled (no GPUs, or a job
  // shorter than JobAcctGatherFrequency).
  int gpu_util_pct = -1;
  int64_t gpu_mem_max_bytes = -1;
  // Where sattach reaches a running srun step (its srun's registration,
  // JSON; cli/step_attach.h), kept so that it still does after musterd
  // restarts; "" before srun says and once the step has ended.
  std::string attach;
};

// Where a record comes from: the controller journal's sequence number of the
// job change it reflects (0 = not journalled, e.g. an srun step) and when
// that change happened (Unix seconds; 0 = when Upsert is called). A rerun's
// record closes the earlier runs at that time.
struct Origin {
  uint64_t seq = 0;
  int64_t time = 0;
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
  // Every run of a requeued job (sacct -D); otherwise only its latest.
  bool duplicates = false;
  int64_t limit = 0;  // 0 = no limit
};

struct QueryResult {
  std::vector<JobRecord> jobs;    // in JobRecordLess order, as sacct lists them
  std::vector<StepRecord> steps;  // by job id, run, then batch, extern, 0, 1, ...
};

// The order sacct 22.05 lists jobs in (observed: sacct -j 14490,14491,14492
// with 14491 an array whose tasks got raw ids 14493.. and whose last task
// kept 14491): by job id, an array's records together at the array's id,
// its tasks by index and the pending part after them; runs oldest first.
inline bool JobRecordLess(const JobRecord& a, const JobRecord& b) {
  auto key = [](const JobRecord& r) {
    const int64_t group = r.array_job_id > 0 ? r.array_job_id : r.job_id;
    const int64_t task = r.array_task_id >= 0 ? r.array_task_id : (int64_t{1} << 40);
    return std::tuple(group, task, r.job_id, r.restarts);
  };
  return key(a) < key(b);
}

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

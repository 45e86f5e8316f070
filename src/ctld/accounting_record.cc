#include "ctld/accounting_record.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/tres.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {

namespace {

// The job's TRES as sacct shows them: sorted by name ("billing=1,cpu=1,
// mem=1000M,node=1"), where scontrol's TRES= keeps Slurm's id order.
std::string SortedTres(const core::Tres& tres) {
  std::vector<std::string> items = util::Split(core::FormatTres(tres), ',');
  std::sort(items.begin(), items.end());
  return util::Join(items, ",");
}

// The batch step's state as Slurm 22.05 records it. For jobs that ended on
// their own or at their time limit it follows how the shell ended, not the
// job: a shell a signal ended is CANCELLED (kill -9 $$: job FAILED 0:9,
// .batch CANCELLED 0:9; the time limit's SIGTERM: job TIMEOUT, .batch
// CANCELLED 0:15), one that exited non-zero FAILED (a shell that outlived
// the SIGTERM of its time limit and exited 15: .batch FAILED 15:0), else
// COMPLETED. Other ends (cancelled, out of memory, node failure) are the
// job's, without the "by <uid>" suffix.
std::string BatchStepState(const core::Job& job) {
  using core::JobState;
  switch (job.state) {
    case JobState::kCompleted:
    case JobState::kFailed:
    case JobState::kTimeout:
      if (job.exit_signal != 0) return "CANCELLED";
      return job.exit_code != 0 ? "FAILED" : "COMPLETED";
    default:
      return core::IsFinished(job.state) ? std::string(core::JobStateName(job.state)) : "RUNNING";
  }
}

}  // namespace

store::JobRecord ToJobRecord(const core::Job& job, const config::Config& cfg) {
  store::JobRecord r;
  r.job_id = job.id;
  r.het_job_id = job.het_job_id;
  r.het_job_offset = job.het_job_offset;
  if (job.array_job_id != 0) {
    r.array_job_id = job.array_job_id;
    r.array_task_id = job.array_task_id;
    r.array_max_running = job.array_max_running;
    // The pending part's tasks, folded (and cut) as scontrol prints them:
    // sacct 22.05 printed 14506_[3,5,7,...,62,6...%1] for
    // --array=1-13:2,20-200:3%1 with task 1 running.
    if (job.IsArrayPendingPart()) r.array_pending = core::FormatArrayTasks(job.array_pending, 0);
  }
  r.name = job.req.name;
  r.user = job.req.user_name;
  r.uid = job.req.uid;
  r.gid = job.req.gid;
  r.group = util::GroupName(job.req.gid);
  r.account = job.req.account;
  r.partition = job.partition;
  r.qos = core::QosName(job.req);
  r.cluster = cfg.cluster_name;
  r.submit_time = job.submit_time;
  r.eligible_time = job.eligible_time;
  r.start_time = job.start_time;
  r.end_time = core::IsFinished(job.state) ? job.end_time : 0;
  r.time_limit_min = job.time_limit_s < 0 ? -1 : job.time_limit_s / 60;
  r.state = job.StateWithSuffix();
  r.exit_code = job.exit_code;
  r.exit_signal = job.exit_signal;
  // Slurm records a job ended by scancel or its time limit as 0:0; the
  // signal shows on its batch step (0:15), and so does the exit code of a
  // shell that outlived its time limit's SIGTERM (TIMEOUT 0:0, .batch
  // FAILED 15:0).
  if (job.state == core::JobState::kCancelled || job.state == core::JobState::kTimeout) {
    r.exit_signal = 0;
  }
  if (job.state == core::JobState::kTimeout) r.exit_code = 0;
  r.derived_exit_code = job.exit_code;
  r.derived_exit_signal = 0;
  const core::Tres figures = core::JobTres(job, cfg.MemoryDefaultsFor(job));
  std::string tres = SortedTres(figures);
  r.req_tres = tres;
  r.alloc_tres = job.alloc.empty() ? "" : tres;
  r.node_list = job.nodelist;
  r.nnodes = static_cast<int>(figures.nodes);
  r.ncpus = static_cast<int>(figures.cpus);
  r.req_mem_mb = figures.mem_mb;
  r.req_mem_per_cpu = job.req.mem_per_cpu_mb > 0;
  r.work_dir = job.req.work_dir;
  r.comment = job.req.comment;
  r.max_rss_kb = job.max_rss_kb > 0 ? job.max_rss_kb : -1;
  r.total_cpu_ms = job.total_cpu_ms;
  r.reason = job.state == core::JobState::kPending
                 ? std::string(core::PendingReasonName(job.reason))
                 : "None";
  r.restarts = job.restart_count;
  r.prior_run_state = job.last_run_node_failed ? "NODE_FAIL" : "REQUEUED";
  return r;
}

store::StepRecord ToBatchStepRecord(const core::Job& job, const config::Config& cfg) {
  store::StepRecord s;
  s.job_id = job.id;
  s.run = job.restart_count;
  s.step_id = "batch";
  s.name = "batch";
  bool done = core::IsFinished(job.state);
  s.state = BatchStepState(job);
  s.exit_code = job.exit_code;
  s.exit_signal = job.exit_signal;
  s.start_time = job.start_time;
  s.end_time = done ? job.end_time : 0;
  s.node_list = job.batch_host;
  s.nnodes = 1;
  s.ntasks = 1;
  s.ncpus = job.alloc.empty() ? 0 : job.alloc.front().cpus;
  s.alloc_tres = SortedTres(core::JobTres(job, cfg.MemoryDefaultsFor(job)));
  s.max_rss_kb = job.max_rss_kb > 0 ? job.max_rss_kb : -1;
  s.total_cpu_ms = job.total_cpu_ms;
  if (job.gpu_sampled_s > 0) {
    s.gpu_util_pct = static_cast<int>(job.gpu_util_pct_s / job.gpu_sampled_s);
    s.gpu_mem_max_bytes = job.gpu_mem_max_bytes;
  }
  return s;
}

store::StepRecord ToExternStepRecord(const core::Job& job, const config::Config& cfg) {
  store::StepRecord s;
  s.job_id = job.id;
  s.run = job.restart_count;
  s.step_id = "extern";
  s.name = "extern";
  const bool done = core::IsFinished(job.state);
  s.state = !done ? "RUNNING" : job.state == core::JobState::kNodeFail ? "NODE_FAIL" : "COMPLETED";
  s.start_time = job.start_time;
  s.end_time = done ? job.end_time : 0;
  s.node_list = job.nodelist;
  const core::Tres figures = core::JobTres(job, cfg.MemoryDefaultsFor(job));
  s.nnodes = static_cast<int>(figures.nodes);
  s.ntasks = s.nnodes;  // one per node
  s.ncpus = static_cast<int>(figures.cpus);
  s.alloc_tres = SortedTres(figures);
  return s;
}

AccountingChange ToAccountingChange(const core::Job& job, const config::Config& cfg,
                                    store::Origin origin) {
  AccountingChange change{ToJobRecord(job, cfg), std::nullopt, origin, std::nullopt};
  // An allocation (salloc) has no batch step.
  if (job.start_time > 0 && job.HasBatchStep()) change.batch = ToBatchStepRecord(job, cfg);
  // Every allocation has its extern step, salloc's too (it is where
  // pam_slurm_adopt puts a user's ssh session).
  if (job.start_time > 0 && cfg.prolog_flags.contain) change.extern_step = ToExternStepRecord(job, cfg);
  return change;
}

void RecordChange(store::AccountingStore& store, const AccountingChange& change) {
  store.Upsert(change.job, change.origin);
  if (change.batch) store.UpsertStep(*change.batch, change.origin);
  if (change.extern_step) store.UpsertStep(*change.extern_step, change.origin);
}

}  // namespace muster::ctld

// Heterogeneous jobs in musterd: components submitted together (sbatch's
// ":" and "#SBATCH hetjob"), each a Job of its own with ids that follow
// the first's. The scheduler starts them together (sched/scheduler.h);
// here they are made, found, and ended together. Only the first runs the
// batch script; its steps reach the others with srun --het-group.
#include <utility>

#include <fmt/format.h>

#include "ctld/controller.h"

namespace muster::ctld {

using core::Job;
using core::JobId;
using core::JobState;

namespace {

// More would only be a mistake (Slurm allows 128 per job).
constexpr size_t kMaxHetComponents = 128;

// What every component takes from the first: what the job is and where its
// script runs, reads and writes, and when it may start.
void CopyJobWideFields(const core::JobRequest& first, core::JobRequest* c) {
  c->name = first.name;
  c->work_dir = first.work_dir;
  c->submit_dir = first.submit_dir;
  c->submit_host = first.submit_host;
  c->std_out = first.std_out;
  c->std_err = first.std_err;
  c->std_in = first.std_in;
  c->open_append = first.open_append;
  c->argv = first.argv;
  c->script = first.script;
  c->command = first.command;
  c->environment = first.environment;
  c->export_mode = first.export_mode;
  c->dependency = first.dependency;
  c->kill_invalid_dep = first.kill_invalid_dep;
  c->begin_time = first.begin_time;
  c->hold = first.hold;
  c->requeue = first.requeue;
  c->requeue_set = first.requeue_set;
  c->interactive = first.interactive;
}

}  // namespace

util::Result<JobId> Controller::SubmitHet(std::vector<core::JobRequest> reqs,
                                          const Caller& caller, sched::SubmitRefusal* why) {
  *why = sched::SubmitRefusal{};
  if (reqs.size() == 1) return Submit(std::move(reqs.front()), caller, why);
  if (reqs.empty() || reqs.size() > kMaxHetComponents) {
    return util::InvalidArgument(fmt::format(
        "a heterogeneous job has 2 to {} components, not {}", kMaxHetComponents, reqs.size()));
  }
  for (size_t k = 0; k < reqs.size(); ++k) {
    if (!reqs[k].array_spec.empty()) {
      return util::InvalidArgument("Job arrays of heterogeneous jobs are not supported");
    }
    if (k > 0) CopyJobWideFields(reqs.front(), &reqs[k]);
  }
  std::vector<Job> jobs;
  for (size_t k = 0; k < reqs.size(); ++k) {
    util::Result<Job> job = PrepareJob(std::move(reqs[k]), caller, why);
    if (!job.ok()) {
      if (why->detail.empty()) {
        why->detail = fmt::format("(in component {} of the heterogeneous job)", k);
      }
      return job.status();
    }
    jobs.push_back(std::move(job).value());
  }
  const JobId first = cluster_.next_job_id();
  cluster_.SetNextJobId(first + static_cast<JobId>(jobs.size()));
  for (size_t k = 0; k < jobs.size(); ++k) {
    jobs[k].id = first + static_cast<JobId>(k);
    jobs[k].het_job_id = first;
    jobs[k].het_job_offset = static_cast<int>(k);
    jobs[k].het_job_size = static_cast<int>(jobs.size());
  }
  // Only the first has a payload to write, so only it can fail.
  for (Job& job : jobs) {
    util::Result<JobId> admitted = AdmitJob(std::move(job));
    if (!admitted.ok()) {
      cluster_.SetNextJobId(first);
      return admitted.status();
    }
  }
  return first;
}

std::vector<const Job*> Controller::HetComponents(const Job& any) const {
  std::vector<const Job*> out;
  for (int k = 0; k < any.het_job_size; ++k) {
    const Job* c = cluster_.jobs().Find(any.het_job_id + static_cast<JobId>(k));
    if (c != nullptr && c->het_job_id == any.het_job_id) out.push_back(c);
  }
  return out;
}

std::vector<Job*> Controller::HetComponents(const Job& any) {
  std::vector<Job*> out;
  for (const Job* c : std::as_const(*this).HetComponents(any))
    out.push_back(cluster_.jobs().Find(c->id));
  return out;
}

void Controller::EndHetComponents(const Job& ended) {
  const JobId id = ended.id;
  const JobState state = ended.state;
  for (Job* c : HetComponents(ended)) {
    if (c->id == id || core::IsFinished(c->state)) continue;
    if (c->state == JobState::kPending) {
      // Never started (the first was cancelled while they waited).
      CancelPending(*c, ended.cancelled_by);
      MarkJob(c->id);
    } else if (c->HasBatchStep()) {
      // The first's script is still running: it is stopped, and ends (and
      // ends the rest) once its processes are gone.
      if (c->state == JobState::kCompleting) continue;
      c->state = JobState::kCompleting;
      if (c->ending_as == JobState::kPending) c->ending_as = state;
      MarkJob(c->id);
      StopJob(*c);
    } else {
      FinishJob(*c, state, ended.exit_code, ended.exit_signal, ended.end_time, "");
    }
  }
}

}  // namespace muster::ctld

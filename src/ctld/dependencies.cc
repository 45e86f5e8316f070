// Job dependencies in the controller: the job table seen through
// sched::DepLookup, and the gate a pending job passes before each
// scheduling pass. The rules themselves are the pure sched/dependency.
#include <algorithm>

#include "ctld/controller.h"
#include "util/log.h"

namespace muster::ctld {

using core::Job;
using core::JobId;
using core::JobState;

namespace {

sched::DepJob ViewOf(const Job& job) {
  sched::DepJob d;
  d.id = job.id;
  d.state = job.state;
  d.start_time = job.start_time;
  d.end_time = job.end_time;
  d.exit_code = job.exit_code;
  d.exit_signal = job.exit_signal;
  d.array_task_id = job.array_task_id;
  return d;
}

// The controller's job table (with its array index) as the dependency
// rules see it.
class JobTable : public sched::DepLookup {
 public:
  JobTable(const std::map<JobId, Job>& jobs, const std::map<JobId, std::set<JobId>>& arrays)
      : jobs_(jobs), arrays_(arrays) {}

  std::vector<sched::DepJob> Find(JobId id, int task) const override {
    std::vector<sched::DepJob> out;
    auto recs = arrays_.find(id);
    if (recs == arrays_.end()) {
      auto it = jobs_.find(id);
      if (it != jobs_.end() && (task < 0 || it->second.array_task_id == task)) {
        out.push_back(ViewOf(it->second));
      }
      return out;
    }
    for (JobId rid : recs->second) {
      auto it = jobs_.find(rid);
      if (it == jobs_.end()) continue;
      const Job& job = it->second;
      if (!job.IsArrayPendingPart()) {
        if (task < 0 || job.array_task_id == task) out.push_back(ViewOf(job));
        continue;
      }
      // Tasks not started yet, as PENDING records of their own.
      sched::DepJob d = ViewOf(job);
      for (int t : job.array_pending) {
        if (task >= 0 && t != task) continue;
        d.array_task_id = t;
        out.push_back(d);
      }
    }
    return out;
  }

  bool SingletonBlocked(const Job& self) const override {
    for (const auto& [id, job] : jobs_) {
      if (id == self.id || core::IsFinished(job.state)) continue;
      if (job.req.uid != self.req.uid || job.req.name != self.req.name) continue;
      // An earlier submission, or one already running.
      if (id < self.id || job.state != JobState::kPending) return true;
    }
    return false;
  }

 private:
  const std::map<JobId, Job>& jobs_;
  const std::map<JobId, std::set<JobId>>& arrays_;
};

}  // namespace

util::Status Controller::CheckDependency(const core::JobRequest& req) const {
  if (req.dependency.empty()) return util::Status::Ok();
  auto dep = sched::ParseDependency(req.dependency);
  if (dep.ok()) return util::Status::Ok();
  return util::InvalidArgument(std::string(sched::SlurmSubmitErrorText(dep.status())));
}

core::PendingReason Controller::DependencyGate(Job& job, int64_t now) {
  if (job.req.dependency.empty()) return core::PendingReason::kNone;
  if (job.dependency_failed) return core::PendingReason::kDependencyNeverSatisfied;
  auto cached = dependencies_.find(job.id);
  if (cached == dependencies_.end()) {
    auto dep = sched::ParseDependency(job.req.dependency);
    if (!dep.ok()) {
      // Checked at submission; only a record from an older version gets here.
      util::LogWarn("job {}: unreadable dependency '{}' ignored", job.id, job.req.dependency);
      job.req.dependency.clear();
      return core::PendingReason::kNone;
    }
    cached = dependencies_.emplace(job.id, std::move(dep).value()).first;
  }
  // An array's pending part: the task that would start next decides
  // (aftercorr pairs it with the same task of the other array).
  Job self_view;
  const Job* self = &job;
  if (job.IsArrayPendingPart() && !job.array_pending.empty()) {
    self_view.id = job.id;
    self_view.req.uid = job.req.uid;
    self_view.req.name = job.req.name;
    self_view.array_job_id = job.array_job_id;
    self_view.array_task_id = job.array_pending.front();
    self = &self_view;
  }
  sched::DepVerdict v = sched::EvaluateDependency(cached->second, *self,
                                                  JobTable(jobs_, array_records_), now);
  job.dependency_state = v.status == sched::DepStatus::kSatisfied
                             ? ""
                             : sched::FormatDependency(cached->second, v.states);
  if (v.ready_at > now && (next_dependency_time_ == 0 || v.ready_at < next_dependency_time_)) {
    next_dependency_time_ = v.ready_at;
  }
  core::PendingReason reason = sched::DependencyReason(v);
  if (reason == core::PendingReason::kNone) {
    dependencies_.erase(cached);
    return reason;
  }
  job.explanation = v.explanation;
  if (reason == core::PendingReason::kDependencyNeverSatisfied) {
    job.dependency_failed = true;
    dependencies_.erase(cached);
    MarkJob(job.id);
  }
  const bool kill = job.req.kill_invalid_dep == 1 ||
                    (job.req.kill_invalid_dep == -1 && cfg_.kill_invalid_depend);
  if (reason == core::PendingReason::kDependencyNeverSatisfied && kill) {
    // As Slurm: cancelled, its reason kept for sacct and scontrol.
    util::LogInfo("job {}: dependency can never be satisfied, cancelled", job.id);
    job.state = JobState::kCancelled;
    job.end_time = now;
    job.reason = reason;
    pending_ids_.erase(job.id);
    MarkJob(job.id);
  }
  return reason;
}

}  // namespace muster::ctld

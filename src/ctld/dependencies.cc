// Job dependencies in the controller: the job table seen through
// sched::DepLookup, and the gate a pending job passes before each
// scheduling pass. The rules and the decision (sched::GateDependency) are
// the pure core's; this file parses once, applies what it decides (drop,
// fail, split a task off, cancel) and nothing more.
#include <algorithm>
#include <functional>

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
class DepTable : public sched::DepLookup {
 public:
  using SingletonIndex = std::map<std::pair<uint32_t, std::string>, std::vector<JobId>>;
  DepTable(const JobTable& jobs, const std::function<const SingletonIndex&()>& singletons)
      : jobs_(jobs), singletons_(singletons) {}

  std::vector<sched::DepJob> Find(JobId id, int task) const override {
    std::vector<sched::DepJob> out;
    const std::set<JobId>* recs = jobs_.OfArray(id);
    if (recs == nullptr) {
      const Job* job = jobs_.Find(id);
      if (job != nullptr && (task < 0 || job->array_task_id == task)) out.push_back(ViewOf(*job));
      return out;
    }
    for (JobId rid : *recs) {
      const Job& job = jobs_.At(rid);
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
    const SingletonIndex& index = singletons_();
    auto same = index.find({self.req.uid, self.req.name});
    if (same == index.end()) return false;
    for (JobId id : same->second) {
      if (id == self.id) continue;
      // An earlier submission, or one already running.
      if (id < self.id || jobs_.At(id).state != JobState::kPending) return true;
    }
    return false;
  }

 private:
  const JobTable& jobs_;
  const std::function<const SingletonIndex&()>& singletons_;
};

// aftercorr: how many tasks of an array's pending part one pass may find
// ready, each checked against its partner.
constexpr int kMaxPairedStartsPerPass = 256;

}  // namespace

util::Status Controller::CheckDependency(const core::JobRequest& req) const {
  if (req.dependency.empty()) return util::Status::Ok();
  auto dep = sched::ParseDependency(req.dependency);
  if (dep.ok()) return util::Status::Ok();
  return util::InvalidArgument(std::string(sched::SlurmSubmitErrorText(dep.status())));
}

core::PendingReason Controller::DependencyGate(Job& job, int64_t now, sched::StartLimit* start_limit,
                                               std::string* cut_why) {
  *start_limit = sched::StartLimit{};
  cut_why->clear();
  if (job.req.dependency.empty()) return core::PendingReason::kNone;
  if (job.dependency_failed) {
    // Split off an aftercorr array with its failed pairing, or requeued
    // after its dependency failed: still cancelled when it asks.
    CancelIfInvalidDepKills(job, now);
    return core::PendingReason::kDependencyNeverSatisfied;
  }
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
  // Unfinished jobs by (user, name), built once per pass when a singleton
  // asks (the pass resets singleton_index_).
  using Index = DepTable::SingletonIndex;
  std::function<const Index&()> singletons = [this]() -> const Index& {
    if (!singleton_index_) {
      singleton_index_.emplace();
      for (const Job& j : jobs_) {
        if (!core::IsFinished(j.state)) (*singleton_index_)[{j.req.uid, j.req.name}].push_back(j.id);
      }
    }
    return *singleton_index_;
  };
  const sched::DepGate gate = sched::GateDependency(cached->second, job, DepTable(jobs_, singletons),
                                                    now, kMaxPairedStartsPerPass);
  // What the core decided, applied.
  job.dependency_state = gate.dependency_state;
  if (gate.ready_at > now && (next_dependency_time_ == 0 || gate.ready_at < next_dependency_time_)) {
    next_dependency_time_ = gate.ready_at;
  }
  start_limit->count = gate.start_count;
  if (gate.cut_reason != core::PendingReason::kNone) start_limit->reason = gate.cut_reason;
  *cut_why = gate.cut_why;
  if (gate.reason != core::PendingReason::kNone) job.explanation = gate.explanation;
  switch (gate.action) {
    case sched::DepGate::Action::kKeep:
      break;
    case sched::DepGate::Action::kDrop:
      // Met: a requeue of the job it named later does not make it wait again.
      dependencies_.erase(cached);
      job.req.dependency.clear();
      MarkJob(job.id);
      break;
    case sched::DepGate::Action::kSplitFailedTask: {
      Job& task = SplitTask(job, job.array_pending.front());
      task.dependency_failed = true;
      task.dependency_state = job.dependency_state;
      task.reason = gate.reason;
      task.explanation = gate.explanation;
      MarkJob(task.id);
      CancelIfInvalidDepKills(task, now);
      RequestSchedule();
      return core::PendingReason::kDependency;  // the rest of the array waits on
    }
    case sched::DepGate::Action::kFail:
      job.dependency_failed = true;
      dependencies_.erase(cached);
      MarkJob(job.id);
      CancelIfInvalidDepKills(job, now);
      break;
  }
  return gate.reason;
}

void Controller::CancelIfInvalidDepKills(Job& job, int64_t now) {
  const bool kill = job.req.kill_invalid_dep == 1 ||
                    (job.req.kill_invalid_dep == -1 && cfg_.kill_invalid_depend);
  if (!kill || job.state != JobState::kPending) return;
  // As Slurm: cancelled, its reason kept for sacct and scontrol.
  util::LogInfo("job {}: dependency can never be satisfied, cancelled", job.id);
  job.state = JobState::kCancelled;
  job.end_time = now;
  job.reason = core::PendingReason::kDependencyNeverSatisfied;
  pending_ids_.erase(job.id);
  MarkJob(job.id);
  stats_.JobCanceled();
}

}  // namespace muster::ctld

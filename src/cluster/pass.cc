// The scheduling pass around the pure scheduler: which pending jobs may be
// scheduled now (dependencies, holds, eligibility), their priorities, the
// plan (sched::Schedule), and the plan applied to the state, with the
// reasons and explanations of the jobs it leaves waiting.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "cluster/cluster.h"
#include "sched/estimate.h"
#include "sched/priority.h"
#include "util/hostlist.h"
#include "util/log.h"

namespace muster::cluster {

using core::Job;
using core::JobId;
using core::JobState;
using core::PendingReason;

namespace {

// Explanations for jobs waiting on resources cost about a millisecond each
// on a large cluster: at most this many per refresh, highest priority first.
constexpr size_t kExplainPerRefresh = 32;

// aftercorr: how many tasks of an array's pending part one pass may find
// ready, each checked against its partner.
constexpr int kMaxPairedStartsPerPass = 256;

// "14:20" today, "Dec 24 08:00" another day, in local time.
std::string ClockTime(int64_t t, int64_t now) {
  time_t tt = static_cast<time_t>(t);
  time_t tn = static_cast<time_t>(now);
  struct tm at {
  }, today{};
  localtime_r(&tt, &at);
  localtime_r(&tn, &today);
  char buf[32];
  const bool same_day = at.tm_yday == today.tm_yday && at.tm_year == today.tm_year;
  strftime(buf, sizeof buf, same_day ? "%H:%M" : "%b %d %H:%M", &at);
  return buf;
}

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

// The job table (with its array index) as the dependency rules see it.
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

}  // namespace

PassOutcome Cluster::Pass(int64_t now, const PassOptions& options) {
  PassOutcome outcome;
  outcome.now = now;
  if (options.only_time_changed && now < same_until_ && QueueOrderHolds(now)) {
    outcome.skipped = true;
    outcome.queue_depth = static_cast<int64_t>(pending_ids_.size());
    return outcome;
  }
  same_until_ = 0;
  sched::Snapshot snap = Snapshot(now);
  snap.plan_all = options.explain;
  last_pass_time_ = now;
  next_dependency_time_ = 0;
  singleton_index_.reset();
  const std::vector<JobId> pending(pending_ids_.begin(), pending_ids_.end());
  outcome.queue_depth = static_cast<int64_t>(pending.size());
  // Whether some job waits on another's start or end (a start this pass
  // may free it: after:, or the next tasks of an aftercorr array).
  bool dependency_waits = false;
  // Array parts whose next task waits on its own dependency, and why.
  std::map<JobId, std::string> cut_by_dependency;
  int64_t wake = INT64_MAX;  // the first begin time to come
  for (JobId id : pending) {
    if (orphans_.count(id)) continue;
    Job& job = jobs_.At(id);
    // A held job's reason is its hold, set when it was held, and nothing
    // the pass finds changes it; only its dependency's state, which squeue
    // shows, is worth the pass's time. (A queue of held jobs made every
    // submission a pass over all of them.)
    if (job.held && job.req.dependency.empty()) continue;
    sched::StartLimit start_limit;
    std::string cut_why;
    PendingReason waits = DependencyGate(job, now, &start_limit, &cut_why, &outcome);
    if (start_limit.count > 0) {
      snap.start_limit[id] = start_limit;
      dependency_waits = true;
      if (!cut_why.empty()) cut_by_dependency[id] = std::move(cut_why);
    }
    if (job.state != JobState::kPending) continue;  // cancelled: invalid dependency
    if (waits == PendingReason::kDependency) dependency_waits = true;
    if (job.held) continue;
    if (job.req.begin_time > now) wake = std::min(wake, job.req.begin_time);
    if (waits != PendingReason::kNone) {
      job.reason = waits;
      continue;
    }
    if (job.eligible_time == 0) {
      job.eligible_time = std::max(now, job.req.begin_time);
      MarkJob(id);
    }
    snap.pending.push_back(&job);
  }
  if (snap.pending.empty()) {
    same_until_ = SameUntil(snap, sched::Plan{}, outcome, wake);
    return outcome;
  }
  outcome.ran = true;
  Reprioritize(&snap);
  sched::Plan plan = sched::Schedule(snap);
  outcome.figures = plan.figures;
  ExplainPending(snap, plan, options);
  for (const auto& [id, why] : cut_by_dependency) {
    // Tasks left in the part because their own partners have not ended OK.
    Job& part = jobs_.At(id);
    if (part.reason == PendingReason::kDependency) part.explanation = why;
  }
  outcome.started = ApplyStarts(plan, now);
  outcome.preemptions = std::move(plan.preemptions);
  // A start can satisfy an after: dependency or let the next aftercorr
  // tasks go, and one that takes GPUs frees their GpuReserve for CPU-only
  // work tried before it: look again rather than wait for the next job's end.
  const bool reserve = cfg_.gpu_reserve_cpus > 0 || cfg_.gpu_reserve_mem_mb > 0;
  if (!plan.starts.empty() && (dependency_waits || reserve)) outcome.again = true;
  same_until_ = SameUntil(snap, plan, outcome, wake);
  last_order_.clear();
  if (cfg_.priority.multifactor) {
    for (const Job* job : snap.pending) last_order_.push_back(job->id);
  }
  return outcome;
}

int64_t Cluster::SameUntil(const sched::Snapshot& snap, const sched::Plan& plan,
                           const PassOutcome& outcome, int64_t wake) const {
  const int64_t now = snap.now;
  // The driver acts on preemptions (the victims are told, which the next
  // pass sees), and `again` asks for the next pass itself.
  if (outcome.again || !outcome.preemptions.empty() || !outcome.cancelled.empty()) return now;
  // bf_min_prio_reserve compares priorities themselves, which multifactor
  // moves with the time.
  if (cfg_.priority.multifactor && cfg_.bf.min_prio_reserve > 0) return now;
  // A preemptor is weighed before the later jobs of the pass start: once
  // they hold what it waited for, the next pass may stop a job for it.
  if (cfg_.preempt_type != config::PreemptType::kNone && !outcome.started.empty()) return now;
  for (const sched::RunningJob& r : snap.running) {
    // An end counted from now (a job past its limit, or one without a
    // limit that bf_window reaches) moves with the time.
    const bool unlimited = r.job->time_limit_s < 0;
    if (unlimited ? kUnlimitedRunS <= cfg_.bf.window_s : r.expected_end <= now) return now;
  }
  int64_t until = std::min(plan.same_until, wake);
  if (next_dependency_time_ > 0) until = std::min(until, next_dependency_time_);
  return until;
}

bool Cluster::QueueOrderHolds(int64_t now) {
  if (!cfg_.priority.multifactor) return true;
  sched::Snapshot snap = Snapshot(now);
  std::vector<JobId> before;
  for (JobId id : last_order_) {
    Job* job = jobs_.Find(id);
    if (job == nullptr || job->state != JobState::kPending) continue;
    snap.pending.push_back(job);
    before.push_back(id);
  }
  Reprioritize(&snap);
  for (size_t k = 0; k < before.size(); ++k) {
    if (snap.pending[k]->id != before[k]) return false;
  }
  return true;
}

std::vector<PassOutcome::Start> Cluster::ApplyStarts(const sched::Plan& plan, int64_t now) {
  std::vector<PassOutcome::Start> started;
  for (const auto& start : plan.starts) {
    Job* chosen = jobs_.Find(start.job_id);
    if (chosen == nullptr) continue;
    if (chosen->state != JobState::kPending) continue;  // never started twice
    if (chosen->IsArrayPendingPart() && chosen->array_pending.empty()) continue;
    // An array's pending part starts its lowest task, split off (or itself
    // when it is the last).
    Job& job =
        chosen->IsArrayPendingPart() ? SplitTask(*chosen, chosen->array_pending.front()) : *chosen;
    job.alloc = start.alloc;
    job.partition = start.partition.empty() ? job.partition : start.partition;
    sched::AssignCpuIds(&job.alloc, Lookup());
    util::Status applied = sched::ApplyStart(job.alloc, Lookup());
    if (!applied.ok()) {
      // The plan disagrees with live state: a bug, but never over-allocate.
      util::LogError("job {}: plan not applied: {}", job.id, applied.message());
      job.alloc.clear();
      continue;
    }
    std::vector<std::string> names;
    for (const auto& a : job.alloc) {
      names.push_back(a.node);
      if (core::Node* node = FindNode(a.node)) node->last_busy = now;
    }
    job.nodelist = util::CompressHostlist(names);
    job.batch_host = job.alloc.empty() ? "" : job.alloc.front().node;
    if (job.array_job_id != 0) ++array_running_[job.array_job_id];
    job.state = JobState::kRunning;
    pending_ids_.erase(job.id);
    job.reason = PendingReason::kNone;
    job.start_time = now;
    MarkJob(job.id);
    started.push_back({job.id, start.backfilled});
  }
  return started;
}

PendingReason Cluster::DependencyGate(Job& job, int64_t now, sched::StartLimit* start_limit,
                                      std::string* cut_why, PassOutcome* outcome) {
  *start_limit = sched::StartLimit{};
  cut_why->clear();
  if (job.req.dependency.empty()) return PendingReason::kNone;
  if (job.dependency_failed) {
    // Split off an aftercorr array with its failed pairing, or requeued
    // after its dependency failed: still cancelled when it asks.
    CancelIfInvalidDepKills(job, now, outcome);
    return PendingReason::kDependencyNeverSatisfied;
  }
  auto cached = dependencies_.find(job.id);
  if (cached == dependencies_.end()) {
    auto dep = sched::ParseDependency(job.req.dependency);
    if (!dep.ok()) {
      // Checked at submission; only a record from an older version gets here.
      util::LogWarn("job {}: unreadable dependency '{}' ignored", job.id, job.req.dependency);
      job.req.dependency.clear();
      return PendingReason::kNone;
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
        if (!core::IsFinished(j.state))
          (*singleton_index_)[{j.req.uid, j.req.name}].push_back(j.id);
      }
    }
    return *singleton_index_;
  };
  const sched::DepGate gate = sched::GateDependency(
      cached->second, job, DepTable(jobs_, singletons), now, kMaxPairedStartsPerPass);
  // What the core decided, applied.
  job.dependency_state = gate.dependency_state;
  if (gate.ready_at > now &&
      (next_dependency_time_ == 0 || gate.ready_at < next_dependency_time_)) {
    next_dependency_time_ = gate.ready_at;
  }
  start_limit->count = gate.start_count;
  if (gate.cut_reason != PendingReason::kNone) start_limit->reason = gate.cut_reason;
  *cut_why = gate.cut_why;
  if (gate.reason != PendingReason::kNone) job.explanation = gate.explanation;
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
      CancelIfInvalidDepKills(task, now, outcome);
      outcome->again = true;
      return PendingReason::kDependency;  // the rest of the array waits on
    }
    case sched::DepGate::Action::kFail:
      job.dependency_failed = true;
      dependencies_.erase(cached);
      MarkJob(job.id);
      CancelIfInvalidDepKills(job, now, outcome);
      break;
  }
  return gate.reason;
}

void Cluster::CancelIfInvalidDepKills(Job& job, int64_t now, PassOutcome* outcome) {
  const bool kill =
      job.req.kill_invalid_dep == 1 || (job.req.kill_invalid_dep == -1 && cfg_.kill_invalid_depend);
  if (!kill || job.state != JobState::kPending) return;
  // As Slurm: cancelled, its reason kept for sacct and scontrol.
  util::LogInfo("job {}: dependency can never be satisfied, cancelled", job.id);
  job.state = JobState::kCancelled;
  job.end_time = now;
  job.reason = PendingReason::kDependencyNeverSatisfied;
  pending_ids_.erase(job.id);
  MarkJob(job.id);
  outcome->cancelled.push_back(job.id);
}

void Cluster::ExplainPending(const sched::Snapshot& snap, const sched::Plan& plan,
                             const PassOptions& options) {
  for (const auto& p : plan.pending) {
    Job* job = jobs_.Find(p.job_id);
    if (job == nullptr) continue;
    job->reason = p.reason;
    job->reason_nodes = p.unavailable_nodes;
    job->reason_reserved = p.reserved;
  }
  if (!options.explain) return;
  // The job ahead of the rest of a partition: the first one that waits for
  // resources there (no one passes it who could delay it). With backfill
  // every waiting job has its planned start, which is its estimate too.
  std::map<std::string, JobId> first_blocked;
  std::unordered_map<JobId, const sched::PlannedStart*> planned;
  for (const sched::PlannedStart& p : plan.planned) planned.emplace(p.job_id, &p);
  std::vector<Job*> resources;
  for (const auto& p : plan.pending) {
    Job* found = jobs_.Find(p.job_id);
    if (found == nullptr) continue;
    Job& job = *found;
    job.explanation.clear();
    job.estimated_start = 0;
    job.estimated_nodes.clear();
    auto at = planned.find(job.id);
    if (at != planned.end()) {
      job.estimated_start = at->second->start;
      std::vector<std::string> names;
      for (const core::NodeAlloc& share : at->second->alloc) names.push_back(share.node);
      job.estimated_nodes = util::CompressHostlist(names);
    }
    if (p.reason == PendingReason::kResources) {
      first_blocked.emplace(job.partition, job.id);
      resources.push_back(&job);
    } else if (p.reason == PendingReason::kPriority) {
      auto ahead = first_blocked.find(job.partition);
      if (ahead != first_blocked.end()) {
        job.explanation = fmt::format(
            "waits behind job {} (higher priority), which waits for resources in partition {}",
            ahead->second, job.partition);
        if (at != planned.end()) {
          job.explanation += fmt::format(
              "; this job is planned to start at about {} on {}, as what frees up before then "
              "is held for jobs of higher priority",
              ClockTime(job.estimated_start, snap.now), job.estimated_nodes);
        }
      }
    } else if (p.reason == PendingReason::kJobArrayTaskLimit) {
      job.explanation = fmt::format("{} of its array's tasks run, the most its %{} limit allows",
                                    job.array_max_running, job.array_max_running);
    }
  }
  RefreshResourceExplanations(snap, resources);
  // Why a job was held back by a limit, or can never run where it waits.
  for (const auto& p : plan.pending) {
    if (p.detail.empty()) continue;
    Job* job = jobs_.Find(p.job_id);
    if (job == nullptr) continue;
    if (p.stage == "limits") {
      job->explanation = "waits for a limit: " + p.detail;
    } else if (p.reason == PendingReason::kBadConstraints) {
      job->explanation = "can never run in partition " + job->partition + ": " + p.detail;
    }
  }
}

void Cluster::RefreshResourceExplanations(const sched::Snapshot& snap,
                                          const std::vector<Job*>& resources) {
  if (resources.empty()) return;
  // Refreshing the resource explanations is bounded in time and count; the
  // others keep what they were told at the last refresh.
  const int64_t now = snap.now;
  if (now < next_explain_time_) {
    for (Job* job : resources) job->explanation = explained_[job->id];
    return;
  }
  next_explain_time_ = now + 1;
  explained_.clear();
  auto format = [now](int64_t t) { return ClockTime(t, now); };
  for (size_t k = 0; k < resources.size() && k < kExplainPerRefresh; ++k) {
    Job& job = *resources[k];
    job.explanation = sched::ExplainResources(job, snap, snap.running, format);
    explained_[job.id] = job.explanation;
  }
}

}  // namespace muster::cluster

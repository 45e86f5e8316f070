// Why a job waits, for people (Job::explanation), and when it should start
// (squeue --start). The reasoning is the pure core's (sched/estimate); this
// file feeds it the running jobs' expected ends and bounds what it costs.
#include <time.h>

#include <fmt/format.h>

#include <unordered_map>

#include "ctld/controller.h"
#include "sched/estimate.h"
#include "sched/priority.h"
#include "util/hostlist.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using core::PendingReason;

namespace {

// Running jobs without a limit are taken to run this long.
constexpr int64_t kHorizonS = 7 * 24 * 3600;
// Explanations for jobs waiting on resources cost about a millisecond each
// on a large cluster: at most this many per refresh, highest priority first.
constexpr size_t kExplainPerRefresh = 32;
// squeue --start: estimates for at most this many waiting jobs.
constexpr size_t kMaxEstimates = 1000;

// "14:20" today, "Dec 24 08:00" another day, in local time.
std::string ClockTime(int64_t t, int64_t now) {
  time_t tt = static_cast<time_t>(t);
  time_t tn = static_cast<time_t>(now);
  struct tm at {}, today {};
  localtime_r(&tt, &at);
  localtime_r(&tn, &today);
  char buf[32];
  const bool same_day = at.tm_yday == today.tm_yday && at.tm_year == today.tm_year;
  strftime(buf, sizeof buf, same_day ? "%H:%M" : "%b %d %H:%M", &at);
  return buf;
}

}  // namespace

std::vector<sched::RunningJob> Controller::RunningJobs(int64_t now) const {
  std::vector<sched::RunningJob> out;
  for (const Job& job : jobs_) {
    if (job.state != JobState::kRunning && job.state != JobState::kCompleting) continue;
    const int64_t end = job.time_limit_s >= 0 ? job.start_time + job.time_limit_s : now + kHorizonS;
    out.push_back({&job, std::max(end, now)});
  }
  return out;
}

void Controller::ExplainPending(const sched::Snapshot& snap, const sched::Plan& plan) {
  // The job ahead of the rest of a partition: the first one that waits for
  // resources there (no one passes it who could delay it). With backfill
  // every waiting job has its planned start, which is its estimate too.
  std::map<std::string, core::JobId> first_blocked;
  std::unordered_map<core::JobId, const sched::PlannedStart*> planned;
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

void Controller::EstimateStartTimes() {
  // With backfill the last pass planned every waiting job (ExplainPending
  // kept its start); only jobs it did not see lose a stale estimate.
  if (cfg_.backfill) {
    for (core::JobId id : pending_ids_) {
      Job& job = jobs_.At(id);
      const bool unseen = orphans_.count(id) || job.held ||
                          job.reason == PendingReason::kDependency ||
                          job.reason == PendingReason::kDependencyNeverSatisfied;
      if (unseen) {
        job.estimated_start = 0;
        job.estimated_nodes.clear();
      }
    }
    return;
  }
  sched::Snapshot snap = ClusterSnapshot();
  for (core::JobId id : pending_ids_) {
    Job& job = jobs_.At(id);
    job.estimated_start = 0;
    job.estimated_nodes.clear();
    if (orphans_.count(id) || job.held) continue;
    if (job.reason == PendingReason::kDependency ||
        job.reason == PendingReason::kDependencyNeverSatisfied) {
      continue;
    }
    snap.pending.push_back(&job);
  }
  sched::OrderByPriority(&snap.pending, cfg_);
  for (const auto& e : sched::EstimateStarts(snap, snap.running, kHorizonS, kMaxEstimates)) {
    if (e.start <= 0) continue;
    Job& job = jobs_.At(e.job_id);
    job.estimated_start = e.start;
    job.estimated_nodes = util::CompressHostlist(e.nodes);
  }
}

}  // namespace muster::ctld

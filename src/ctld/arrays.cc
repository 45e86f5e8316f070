// Job arrays in the controller: naming records by the ids users type
// ("123", "123_4", "123_[1-3]"), splitting tasks off an array's pending
// part, and what an array shares between its records (payload).
// The model is core::Job's (src/core/job.h): started tasks are records of
// their own; the tasks not started yet stay in the pending part.
#include <algorithm>

#include "core/array.h"
#include "ctld/controller.h"
#include "util/log.h"

namespace muster::ctld {

using core::Job;
using core::JobId;
using core::JobState;

bool Controller::DropPendingTasks(const std::string& text, const Caller& caller) {
  util::Result<core::JobIdSpec> spec = core::ParseJobIdSpec(text);
  if (!spec.ok() || spec->tasks.empty()) return false;
  const std::set<JobId>* recs = cluster_.jobs().OfArray(spec->id);
  if (recs == nullptr) return false;
  Job* part = nullptr;
  bool started_named = false;
  for (JobId id : *recs) {
    Job* job = cluster_.jobs().Find(id);
    if (job == nullptr) continue;
    if (job->IsArrayPendingPart() && job->state == JobState::kPending) {
      part = job;
    } else if (std::binary_search(spec->tasks.begin(), spec->tasks.end(), job->array_task_id)) {
      started_named = true;
    }
  }
  if (part == nullptr || !CheckJobAccess(*part, caller).ok()) return false;
  std::vector<int> left;
  std::set_difference(part->array_pending.begin(), part->array_pending.end(),
                      spec->tasks.begin(), spec->tasks.end(), std::back_inserter(left));
  const size_t dropped = part->array_pending.size() - left.size();
  // Every pending task named: the part itself is cancelled (it holds the
  // array's id), as a whole array is.
  if (dropped == 0 || left.empty()) return false;
  part->array_pending = std::move(left);
  MarkJob(part->id);
  util::LogInfo("array {}: {} pending task(s) cancelled ({})", part->array_job_id, dropped, text);
  return !started_named;
}

util::Result<std::vector<Job*>> Controller::ResolveForCaller(const std::string& text,
                                                             const Caller& caller) {
  // Access first: nobody splits up another user's array.
  auto seen = ResolveJobs(text, /*split_pending=*/false);
  if (!seen.ok()) return seen.status();
  for (const Job* job : *seen) MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  return ResolveJobs(text, /*split_pending=*/true);
}

util::Result<std::vector<Job*>> Controller::ResolveJobs(const std::string& text,
                                                        bool split_pending) {
  auto spec = core::ParseJobIdSpec(text);
  if (!spec.ok()) return util::InvalidArgument("Invalid job id specified");
  std::vector<Job*> out;
  if (spec->het_offset >= 0) {
    // "N+K": component K of heterogeneous job N (their ids follow N's).
    Job* job = cluster_.jobs().Find(spec->id + static_cast<JobId>(spec->het_offset));
    if (job == nullptr || job->het_job_id != spec->id || job->het_job_offset != spec->het_offset) {
      return util::InvalidArgument("Invalid job id specified");
    }
    out.push_back(job);
    return out;
  }
  const std::set<JobId>* recs = cluster_.jobs().OfArray(spec->id);
  if (recs == nullptr) {
    // A plain job, an array task named by its own id, or a heterogeneous
    // job by its leader's id (every component).
    Job* job = cluster_.jobs().Find(spec->id);
    if (job == nullptr || !spec->tasks.empty()) {
      return util::InvalidArgument("Invalid job id specified");
    }
    if (job->het_job_id == job->id) return HetComponents(*job);
    out.push_back(job);
    return out;
  }
  // Copy: splitting adds records to the set being walked.
  const std::vector<JobId> ids(recs->begin(), recs->end());
  for (JobId id : ids) {
    Job* found = cluster_.jobs().Find(id);
    if (found == nullptr) continue;
    Job& job = *found;
    if (spec->tasks.empty()) {
      out.push_back(&job);
      continue;
    }
    if (!job.IsArrayPendingPart()) {
      if (std::binary_search(spec->tasks.begin(), spec->tasks.end(), job.array_task_id)) {
        out.push_back(&job);
      }
      continue;
    }
    std::vector<int> named;
    std::set_intersection(job.array_pending.begin(), job.array_pending.end(), spec->tasks.begin(),
                          spec->tasks.end(), std::back_inserter(named));
    if (named.empty()) continue;
    if (!split_pending) {
      out.push_back(&job);
      continue;
    }
    for (int task : named) out.push_back(&SplitTask(job, task));
  }
  if (out.empty()) return util::InvalidArgument("Invalid job id specified");
  std::sort(out.begin(), out.end(), [](const Job* a, const Job* b) {
    return a->array_task_id != b->array_task_id ? a->array_task_id < b->array_task_id
                                                : a->id < b->id;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace muster::ctld

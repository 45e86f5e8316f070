// What users and admins do to jobs after submitting them, beyond cancel and
// hold: scontrol requeue / requeuehold, scontrol update JobId=..., and
// scontrol top. Each change is journalled (MarkJob) before the reply.
#include <algorithm>

#include "core/array.h"
#include "core/gres.h"
#include "ctld/controller.h"
#include "sched/dependency.h"
#include "sched/partition_rules.h"
#include "util/log.h"
#include "util/slurm_time.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {

using core::Job;
using core::JobId;
using core::JobState;

void Controller::PutBackInQueue(Job& job, bool hold, const std::string& detail,
                                bool node_failure) {
  cluster_.PutBackInQueue(job, hold, detail, node_failure, Now());
  RequestCommit();
  RequestSchedule();
}

std::vector<JobActionResult> Controller::Requeue(const std::vector<std::string>& ids, bool hold,
                                                 const Caller& caller) {
  std::vector<JobActionResult> out;
  for (const auto& sid : ids) {
    auto found = ResolveJobs(sid, /*split_pending=*/false);
    if (!found.ok()) {
      out.push_back({sid, found.status().message()});
      continue;
    }
    const size_t reported = out.size();
    for (Job* job : *found) {
      const std::string name = core::DisplayJobId(*job);
      util::Status access = CheckJobAccess(*job, caller);
      if (!access.ok()) {
        out.push_back({name, access.message()});
        continue;
      }
      if (job->state == JobState::kPending) {
        if (found->size() == 1) out.push_back({name, "Job is pending execution"});
        continue;
      }
      if (job->req.interactive) {
        out.push_back({name, "Only batch jobs are accepted or processed"});
        continue;
      }
      if (job->IsHetComponent()) {
        out.push_back({name, "Muster does not requeue heterogeneous jobs"});
        continue;
      }
      if (!job->req.requeue) {
        out.push_back({name, "Requested operation is presently disabled"});
        continue;
      }
      if (job->state == JobState::kCompleting) {
        if (job->requeue_on_end == 0) out.push_back({name, "Job is currently being completed"});
        continue;
      }
      if (core::IsFinished(job->state)) {
        // A finished job still in the table runs again from the start.
        util::LogInfo("job {}: requeued after it ended", job->id);
        PutBackInQueue(*job, hold, "");
        continue;
      }
      // Running: stopped like a cancel; back in the queue once its
      // processes are gone (FinishJob), so two runs never overlap.
      util::LogInfo("job {}: requeue requested", job->id);
      job->requeue_on_end = hold ? 2 : 1;
      job->state = JobState::kCompleting;
      MarkJob(job->id);
      StopJob(*job);
    }
    if (out.size() == reported) out.push_back({sid, ""});
  }
  return out;
}

namespace {

// The fields of `scontrol update JobId=...` Muster applies, lower case.
bool PendingOnly(const std::string& key) {
  return key == "partition" || key == "numnodes" || key == "gres" || key == "tresperjob" ||
         key == "dependency";
}

}  // namespace

util::Status Controller::UpdateJob(const std::string& id_text,
                                   const std::vector<std::pair<std::string, std::string>>& fields,
                                   const Caller& caller) {
  // "123_5" still waiting inside the array's pending part is split off, so
  // the update reaches that task alone.
  auto found = ResolveForCaller(id_text, caller);
  if (!found.ok()) return AsUpdateRefusal(found.status());
  auto allowed = [&](const Job& job) {
    for (const auto& [key, value] : fields) {
      if (PendingOnly(key) && job.state != JobState::kPending) return false;
      if (core::IsFinished(job.state) && key != "comment" && key != "name") return false;
    }
    return true;
  };
  // A whole array: the records the fields still apply to; one record: it
  // must take them all.
  if (found->size() > 1) {
    std::erase_if(*found, [&](Job* job) { return !allowed(*job); });
    if (found->empty()) return util::FailedPrecondition("Job is no longer pending execution");
  }
  // Check everything on every record first: an update applies whole or not at all.
  for (Job* job : *found) {
    MUSTER_RETURN_IF_ERROR(AsUpdateRefusal(CheckJobAccess(*job, caller)));
    if (!allowed(*job)) return util::FailedPrecondition("Job is no longer pending execution");
  }
  struct Change {
    std::optional<int64_t> time_limit;
    std::optional<std::string> partition, name, comment, dependency;
    std::optional<int> nice, throttle, min_nodes, max_nodes;
    std::optional<uint32_t> priority;
    std::optional<std::string> qos;
    std::optional<std::vector<core::GresRequest>> gres;
  } c;
  for (const auto& [key, value] : fields) {
    if (key == "timelimit") {
      auto t = util::ParseTimeLimitSeconds(value);
      if (!t.ok()) return util::InvalidArgument("Invalid TimeLimit value");
      c.time_limit = *t;
    } else if (key == "partition") {
      for (const auto& p : util::Split(value, ',')) {
        if (cfg_.FindPartition(p) == nullptr) {
          return util::InvalidArgument("Invalid partition name specified");
        }
      }
      c.partition = value;
    } else if (key == "name" || key == "jobname") {
      c.name = value;
    } else if (key == "comment") {
      c.comment = value;
    } else if (key == "dependency") {
      if (!value.empty()) {
        auto d = sched::ParseDependency(value);
        if (!d.ok()) return util::InvalidArgument("Job dependency problem");
      }
      c.dependency = value;
    } else if (key == "nice") {
      auto n = util::ParseSignedInt(value);
      if (!n.ok() || *n < -core::kMaxNice || *n > core::kMaxNice) {
        return util::InvalidArgument("Invalid nice value");
      }
      if (*n < 0 && !caller.admin) return util::PermissionDenied("Access/permission denied");
      c.nice = static_cast<int>(*n);
    } else if (key == "priority") {
      // Operators only, as in Slurm; 0 holds the job.
      auto n = util::ParseInt(value);
      if (!n.ok() || *n > UINT32_MAX - 1) return util::InvalidArgument("Invalid priority value");
      if (!caller.admin) return util::PermissionDenied("Access/permission denied");
      c.priority = static_cast<uint32_t>(*n);
    } else if (key == "qos") {
      if (cluster_.accounts().FindQos(value) == nullptr)
        return util::InvalidArgument("Invalid qos specification");
      c.qos = value;
    } else if (key == "arraytaskthrottle") {
      auto n = util::ParseInt(value);
      if (!n.ok() || *n < 0) return util::InvalidArgument("Invalid ArrayTaskThrottle value");
      c.throttle = static_cast<int>(*n);
    } else if (key == "numnodes" || key == "minnodes") {
      auto dash = value.find('-');
      auto lo = util::ParseInt(value.substr(0, dash));
      auto hi = dash == std::string::npos ? lo : util::ParseInt(value.substr(dash + 1));
      if (!lo.ok() || !hi.ok() || *lo < 1 || *hi < *lo) {
        return util::InvalidArgument("Invalid node count specified");
      }
      // One number sets the minimum alone, as Slurm shows it (NumNodes=2).
      c.min_nodes = static_cast<int>(*lo);
      c.max_nodes = dash == std::string::npos ? 0 : static_cast<int>(*hi);
    } else if (key == "gres" || key == "tresperjob") {
      if (util::EqualsIgnoreCase(value, "none") || value.empty()) {
        c.gres = std::vector<core::GresRequest>{};
      } else {
        auto g = core::ParseGresRequest(value);
        if (!g.ok()) return util::InvalidArgument("Invalid generic resource (gres) specification");
        c.gres = *g;
      }
    } else {
      return util::InvalidArgument("Update of this parameter is not supported: " + key + "=" +
                                   value);
    }
  }
  for (Job* job : *found) {
    if (c.time_limit) {
      // Users may only lower a limit; admins set any.
      const bool raises = *c.time_limit < 0 ||
                          (job->time_limit_s >= 0 && *c.time_limit > job->time_limit_s);
      if (raises && !caller.admin) return util::PermissionDenied("Access/permission denied");
    }
    if (c.throttle && job->array_job_id == 0) {
      return util::InvalidArgument("Job is not an array job: ArrayTaskThrottle");
    }
    if (c.partition || c.min_nodes || c.gres) {
      // The request as it would be, checked as a submission is.
      core::JobRequest req = job->req;
      if (c.min_nodes) {
        req.min_nodes = *c.min_nodes;
        req.max_nodes = *c.max_nodes;
      }
      if (c.gres) {
        std::erase_if(req.gres, [](const core::GresRequest& g) { return !g.per_job; });
        for (const auto& g : *c.gres) req.gres.push_back(g);
      }
      const std::string parts = c.partition ? *c.partition : job->partition;
      for (const auto& p : util::Split(parts, ',')) {
        // The job's own partition may have left the configuration since.
        const core::Partition* found_part = cfg_.FindPartition(p);
        if (found_part == nullptr) return util::InvalidArgument("Invalid partition name specified");
        const core::Partition& part = *found_part;
        // A partition the job's owner may not use (AllowAccounts, groups,
        // state) is refused as at submission.
        if (c.partition) {
          MUSTER_RETURN_IF_ERROR(sched::CheckPartitionAccess(
              req, part, cfg_, [](const std::string& g) { return util::LookupGid(g); }));
        }
        util::Status sat = sched::CheckSatisfiable(req, part, cfg_, nullptr);
        if (!sat.ok()) return sat;
      }
    }
  }
  for (Job* job : *found) {
    if (c.time_limit) {
      job->time_limit_s = *c.time_limit;
      // A running job's muster-step enforces the limit: it hears of the
      // new one once it is on disk.
      if (job->state == JobState::kRunning) {
        SendToAgentOf(*job,
                      {{"type", "limit"}, {"job_id", job->id}, {"time_limit_s", *c.time_limit}});
      }
    }
    if (c.partition) {
      job->partition = *c.partition;
      job->req.partition = *c.partition;
    }
    if (c.name) job->req.name = *c.name;
    if (c.comment) job->req.comment = *c.comment;
    if (c.dependency) {
      job->req.dependency = *c.dependency;
      cluster_.dependencies().erase(job->id);
      job->dependency_state.clear();
      job->dependency_failed = false;
    }
    if (c.nice) {
      job->req.nice = *c.nice;
      job->priority = PriorityOf(*job);
    }
    if (c.priority) {
      if (*c.priority == 0) {
        job->held = job->held_by_admin = true;
        job->reason = job->HoldReason();
      } else {
        job->admin_priority = *c.priority;
      }
      job->priority = PriorityOf(*job);
    }
    if (c.qos) {
      job->req.qos = *c.qos;
      job->priority = PriorityOf(*job);
    }
    if (c.throttle) job->array_max_running = *c.throttle;
    if (c.min_nodes) {
      job->req.min_nodes = *c.min_nodes;
      job->req.max_nodes = *c.max_nodes;
    }
    if (c.gres) {
      std::erase_if(job->req.gres, [](const core::GresRequest& g) { return !g.per_job; });
      for (const auto& g : *c.gres) job->req.gres.push_back(g);
    }
    MarkJob(job->id);
  }
  // ArrayTaskThrottle is the array's: every record carries it.
  if (c.throttle) {
    for (Job* job : *found) {
      const std::set<JobId>* recs = cluster_.jobs().OfArray(job->array_job_id);
      if (recs == nullptr) continue;
      for (JobId rid : *recs) {
        Job& rec = cluster_.jobs().At(rid);
        if (rec.array_max_running == *c.throttle) continue;
        rec.array_max_running = *c.throttle;
        MarkJob(rid);
      }
    }
  }
  RequestSchedule();
  return util::Status::Ok();
}

std::vector<JobActionResult> Controller::Top(const std::vector<std::string>& ids,
                                             const Caller& caller) {
  std::vector<JobActionResult> out;
  for (const auto& sid : ids) {
    auto found = ResolveJobs(sid, /*split_pending=*/false);
    if (!found.ok()) {
      out.push_back({sid, found.status().message()});
      continue;
    }
    // An array's records: its pending part (or a pending task) is the one
    // to move; a running task is not.
    auto pending = std::find_if(found->begin(), found->end(),
                                [](const Job* j) { return j->state == JobState::kPending; });
    Job& top = pending != found->end() ? **pending : *found->front();
    // As Slurm: users may reorder their own jobs only where the cluster
    // allows it (SchedulerParameters=enable_user_top).
    if (!caller.admin && !cfg_.enable_user_top) {
      out.push_back({sid, "Access/permission denied"});
      continue;
    }
    util::Status access = CheckJobAccess(top, caller);
    if (!access.ok() || top.state != JobState::kPending) {
      out.push_back({sid, access.ok() ? "Job is no longer pending execution" : access.message()});
      continue;
    }
    if (top.held) {
      out.push_back({sid, "Job is in held state, pending scheduler release"});
      continue;
    }
    // As Slurm does: the user's other pending jobs in the same partition
    // that would go first get a nice value that puts them behind it.
    const int64_t top_order = top.array_job_id != 0 ? top.array_job_id : top.id;
    for (JobId id : cluster_.pending_ids()) {
      Job& other = cluster_.jobs().At(id);
      if (other.req.uid != top.req.uid || other.partition != top.partition) continue;
      if (PayloadId(other) == PayloadId(top)) continue;
      const int64_t order = other.array_job_id != 0 ? other.array_job_id : other.id;
      const int64_t behind = std::min<int64_t>(top_order + top.req.nice - order + 1, core::kMaxNice);
      if (other.req.nice >= behind) continue;
      other.req.nice = static_cast<int>(behind);
      other.priority = PriorityOf(other);
      MarkJob(id);
    }
    out.push_back({sid, ""});
  }
  RequestSchedule();
  return out;
}

}  // namespace muster::ctld

// Admission: the checks a submission passes and the pending job it makes,
// as sbatch, salloc and srun see them (Slurm's refusals, word for word
// where tools parse them), then its place in the queue.
#include <fmt/format.h>

#include <functional>

#include "cluster/cluster.h"
#include "core/array.h"
#include "sched/partition_rules.h"
#include "sched/pipeline.h"
#include "util/strings.h"

namespace muster::cluster {

using core::Job;
using core::JobId;

util::Result<Job> Cluster::PrepareJob(core::JobRequest req, const Submitter& who, int64_t now,
                                      sched::SubmitRefusal* why) const {
  *why = sched::SubmitRefusal{};
  if (req.account.empty()) req.account = DefaultAccountOf(req.user_name);
  // AccountingStorageEnforce=associations: only what sacctmgr allows.
  if (cfg_.enforce_associations && !accounts_.HasAssociation(req.account, req.user_name)) {
    return util::PermissionDenied(sched::kInvalidAccountMsg);
  }
  if (req.qos.empty()) req.qos = "normal";
  if (accounts_.FindQos(req.qos) == nullptr)
    return util::PermissionDenied("Invalid qos specification");
  if (!req.reservation.empty()) {
    auto resv = reservations_.find(req.reservation);
    if (resv == reservations_.end()) {
      return util::PermissionDenied("Requested reservation is invalid");
    }
    if (!resv->second.Admits(req.user_name, req.account)) {
      return util::PermissionDenied("Access denied to requested reservation");
    }
  }
  if (!req.requeue_set) req.requeue = cfg_.job_requeue != 0;

  // Only operators may raise a job's priority with a negative nice (Slurm);
  // the range is Slurm's too.
  if (req.nice < -core::kMaxNice || req.nice > core::kMaxNice) {
    return util::InvalidArgument("Invalid nice value, out of range (+/- 2147483645)");
  }
  if (req.nice < 0 && !who.admin) return util::PermissionDenied("Access/permission denied");
  if (req.script.empty() && !req.interactive)
    return util::InvalidArgument("Batch script is empty!");
  // SchedulerParameters=max_script_size, with Slurm's (odd) message for it.
  MUSTER_RETURN_IF_ERROR(
      core::CheckScriptSize(req.script.size(), cfg_.max_script_size, &why->detail));
  if (!req.interactive && req.script.rfind("#!", 0) != 0) {
    return util::InvalidArgument("This does not look like a batch script: it must start with #!");
  }
  if (req.work_dir.empty() || req.work_dir[0] != '/') {
    return util::InvalidArgument("work_dir must be an absolute path");
  }
  // The partitions it may wait in (-p a,b), with Slurm's refusals for
  // unknown, closed or forbidden ones and EnforcePartLimits.
  auto kept = sched::ResolveJobPartitions(req, req.time_limit_s, cfg_, who.group_id, why);
  if (!kept.ok()) return kept.status();
  if (!req.signal_spec.empty()) {
    auto ws = core::ParseSignalSpec(req.signal_spec);
    if (!ws.ok()) return ws.status();
  }
  MUSTER_RETURN_IF_ERROR(CheckDependency(req));
  // Refused only when no partition of the list could ever run it.
  std::vector<const core::Partition*> usable;
  util::Status sat = util::Status::Ok();
  for (const core::Partition* p : *kept) {
    sched::SubmitRefusal refusal;
    util::Status st = sched::CheckSatisfiable(req, *p, cfg_, &refusal, &satisfiable_);
    if (st.ok()) {
      usable.push_back(p);
    } else if (sat.ok()) {
      sat = st;
      *why = std::move(refusal);
    }
  }
  if (usable.empty()) return sat;
  *why = sched::SubmitRefusal{};
  const core::Partition* part = usable.front();
  std::optional<core::ArraySpec> array;
  if (!req.array_spec.empty()) {
    auto spec = core::ParseArraySpec(req.array_spec, cfg_.max_array_size);
    if (!spec.ok()) return spec.status();
    array = std::move(spec).value();
  }

  Job job;
  std::vector<std::string> names;
  for (const core::Partition* p : usable) names.push_back(p->name);
  job.partition = util::Join(names, ",");
  job.submit_time = now;
  // Eligible (Slurm's EligibleTime, sacct's Eligible) once nothing but
  // resources or the begin time stands in the way: a held job or one with
  // a dependency becomes eligible in the scheduling pass that finds it so.
  job.eligible_time =
      req.hold || !req.dependency.empty() ? 0 : std::max(job.submit_time, req.begin_time);
  if (req.time_limit_s == -2) {
    job.time_limit_s = part->default_time_s != -1 ? part->default_time_s : part->max_time_s;
  } else {
    job.time_limit_s = req.time_limit_s;
  }
  if (array) {
    // array_job_id, the job's own id, comes with it (AdmitJob).
    job.array_pending = std::move(array->tasks);
    job.array_max_running = array->max_running;
  }
  job.held = req.hold;
  job.reason = job.held ? core::PendingReason::kJobHeldUser : core::PendingReason::kNone;
  // The QOS's and association's limits on submissions (the request is
  // lent to the job to count its TRES).
  job.req = std::move(req);
  MUSTER_RETURN_IF_ERROR(CheckLimitsAtSubmit(job, why));
  return job;
}

std::string Cluster::DefaultAccountOf(const std::string& user) const {
  const core::UserRecord* u = accounts_.FindUser(user);
  if (u != nullptr && !u->default_account.empty()) return u->default_account;
  // Unadministered users are charged to an account of their own name
  // (refused at submission when associations are enforced).
  return cfg_.enforce_associations ? "" : user;
}

util::Status Cluster::CheckDependency(const core::JobRequest& req) const {
  if (req.dependency.empty()) return util::Status::Ok();
  auto dep = sched::ParseDependency(req.dependency);
  if (dep.ok()) return util::Status::Ok();
  return util::InvalidArgument(std::string(sched::SlurmSubmitErrorText(dep.status())));
}

util::Status Cluster::CheckLimitsAtSubmit(const core::Job& job, sched::SubmitRefusal* why) const {
  const std::string kViolates =
      "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";
  // What the user has pending or running that a submission limit counts.
  auto count = [&](const std::function<bool(const core::Job&)>& counted) {
    int64_t have = 0;
    for (const core::Job& other : jobs_) {
      if (other.req.uid != job.req.uid || !counted(other)) continue;
      if (other.state != core::JobState::kPending && other.state != core::JobState::kRunning &&
          other.state != core::JobState::kCompleting) {
        continue;
      }
      have += other.IsArrayPendingPart() ? static_cast<int64_t>(other.array_pending.size()) : 1;
    }
    return have;
  };
  const int64_t adding =
      job.IsArrayPendingPart() ? static_cast<int64_t>(job.array_pending.size()) : 1;
  const core::QosRecord* q = accounts_.FindQos(job.req.qos);
  if (q != nullptr && q->max_submit_jobs_per_user >= 0) {
    const int64_t have = count([&](const core::Job& o) { return o.req.qos == q->name; });
    if (have + adding > q->max_submit_jobs_per_user) {
      why->slurm_line = "QOSMaxSubmitJobPerUserLimit";
      why->detail = fmt::format(
          "MaxSubmitJobsPerUser={} in QOS {}; {} has {} job(s) pending or running under it",
          q->max_submit_jobs_per_user, q->name, job.req.user_name, have);
      return util::PermissionDenied(kViolates);
    }
  }
  const core::AssocLimits assoc = accounts_.EffectiveMaxLimits(job.req.account, job.req.user_name);
  if (assoc.max_submit_jobs >= 0) {
    const int64_t have =
        count([&](const core::Job& o) { return o.req.account == job.req.account; });
    if (have + adding > assoc.max_submit_jobs) {
      why->slurm_line = "AssocMaxSubmitJobLimit";
      why->detail =
          fmt::format("MaxSubmitJobs={} for {} in account {}; {} job(s) pending or running",
                      assoc.max_submit_jobs, job.req.user_name, job.req.account, have);
      return util::PermissionDenied(kViolates);
    }
  }
  if (q == nullptr || !q->deny_on_limit) return util::Status::Ok();
  // With DenyOnLimit, the QOS limits that would hold the job even on an
  // idle cluster.
  std::string detail;
  sched::LimitUsage idle(&accounts_, cfg_, {});
  const core::PendingReason held = idle.Check(job, &detail);
  const std::string_view name = core::PendingReasonName(held);
  if (!name.starts_with("QOS") || held == core::PendingReason::kQosMaxJobsPerUser ||
      held == core::PendingReason::kQosGrpJobs) {
    return util::Status::Ok();
  }
  why->slurm_line = std::string(name);
  why->detail = detail + " (Flags=DenyOnLimit)";
  return util::PermissionDenied(kViolates);
}

JobId Cluster::Admit(Job job, int64_t now) {
  if (job.id == 0) job.id = NewJobId();
  if (!job.req.array_spec.empty()) job.array_job_id = job.id;
  // The script and environment are the driver's to keep (on disk in
  // musterd), not the job table's, so a pending job costs little memory.
  job.req.script.clear();
  job.req.script.shrink_to_fit();
  job.req.environment.clear();
  job.req.environment.shrink_to_fit();
  job.priority = PriorityOf(job, now);
  const JobId id = job.id;
  jobs_.Put(std::move(job));
  pending_ids_.insert(id);
  MarkJob(id);
  return id;
}

}  // namespace muster::cluster

// The QOS limits stage (see pipeline.h): what the running jobs hold under
// each QOS, and whether a job may start without passing a limit.
#include <fmt/format.h>

#include "core/tres.h"
#include "sched/pipeline.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::sched {

using core::PendingReason;

QosUsage::QosUsage(const core::AccountTable* table, const config::Config& cfg,
                   std::span<const RunningJob> running)
    : table_(table), cfg_(cfg) {
  if (table_ == nullptr) return;
  for (const RunningJob& r : running) Add(*r.job, r.job->alloc);
}

QosUsage::Held QosUsage::Of(const std::vector<core::NodeAlloc>& alloc) {
  Held h;
  h.jobs = 1;
  for (const core::NodeAlloc& a : alloc) {
    h.cpu += a.cpus;
    h.mem_mb += a.mem_mb;
    h.node += 1;
    h.gpu += static_cast<int64_t>(a.gpu_indices.size());
  }
  return h;
}

const core::QosRecord* QosUsage::QosOf(const core::Job& job) const {
  return table_->FindQos(job.req.qos.empty() ? "normal" : job.req.qos);
}

void QosUsage::Add(const core::Job& job, const std::vector<core::NodeAlloc>& alloc) {
  if (table_ == nullptr) return;
  const core::QosRecord* q = QosOf(job);
  if (q == nullptr) return;
  const Held h = Of(alloc);
  for (Held* into : {&by_qos_[q->name], &by_user_[{q->name, job.req.uid}]}) {
    into->jobs += h.jobs;
    into->cpu += h.cpu;
    into->mem_mb += h.mem_mb;
    into->node += h.node;
    into->gpu += h.gpu;
  }
}

PendingReason QosUsage::Check(const core::Job& job, std::string* detail) const {
  if (table_ == nullptr) return PendingReason::kNone;
  const core::QosRecord* q = QosOf(job);
  if (q == nullptr) return PendingReason::kNone;
  const core::Tres want = core::JobTres(job, cfg_.MemoryDefaultsFor(job));
  const std::string who = job.req.user_name.empty() ? fmt::format("uid {}", job.req.uid) : job.req.user_name;
  auto held = [](const auto& map, const auto& key) {
    auto it = map.find(key);
    return it == map.end() ? Held{} : it->second;
  };
  const Held user = held(by_user_, std::make_pair(q->name, job.req.uid));
  const Held all = held(by_qos_, q->name);
  struct Limit {
    int64_t limit;
    int64_t have;
    int64_t want;
    PendingReason reason;
    const char* key;
    const char* holder;  // whose holdings count: "user", "all", "job"
    const char* unit;
  };
  const Limit limits[] = {
      {q->max_wall_s, 0, job.time_limit_s < 0 ? INT64_MAX : job.time_limit_s,
       PendingReason::kQosMaxWall, "MaxWall", "job", ""},
      {q->max_tres_per_job.cpu, 0, want.cpus, PendingReason::kQosMaxCpuPerJob, "MaxTRESPerJob cpu", "job", ""},
      {q->max_tres_per_job.mem_mb, 0, want.mem_mb, PendingReason::kQosMaxMemPerJob, "MaxTRESPerJob mem", "job", "M"},
      {q->max_tres_per_job.node, 0, want.nodes, PendingReason::kQosMaxNodePerJob, "MaxTRESPerJob node", "job", ""},
      {q->max_tres_per_job.gpu, 0, want.gpus, PendingReason::kQosMaxGresPerJob, "MaxTRESPerJob gres/gpu", "job", ""},
      {q->max_jobs_per_user, user.jobs, 1, PendingReason::kQosMaxJobsPerUser, "MaxJobsPerUser", "user", ""},
      {q->max_tres_per_user.cpu, user.cpu, want.cpus, PendingReason::kQosMaxCpuPerUser, "MaxTRESPerUser cpu", "user", ""},
      {q->max_tres_per_user.mem_mb, user.mem_mb, want.mem_mb, PendingReason::kQosMaxMemPerUser, "MaxTRESPerUser mem", "user", "M"},
      {q->max_tres_per_user.node, user.node, want.nodes, PendingReason::kQosMaxNodePerUser, "MaxTRESPerUser node", "user", ""},
      {q->max_tres_per_user.gpu, user.gpu, want.gpus, PendingReason::kQosMaxGresPerUser, "MaxTRESPerUser gres/gpu", "user", ""},
      {q->grp_jobs, all.jobs, 1, PendingReason::kQosGrpJobs, "GrpJobs", "all", ""},
      {q->grp_tres.cpu, all.cpu, want.cpus, PendingReason::kQosGrpCpu, "GrpTRES cpu", "all", ""},
      {q->grp_tres.mem_mb, all.mem_mb, want.mem_mb, PendingReason::kQosGrpMem, "GrpTRES mem", "all", "M"},
      {q->grp_tres.node, all.node, want.nodes, PendingReason::kQosGrpNode, "GrpTRES node", "all", ""},
      {q->grp_tres.gpu, all.gpu, want.gpus, PendingReason::kQosGrpGres, "GrpTRES gres/gpu", "all", ""},
  };
  for (const Limit& l : limits) {
    if (l.limit < 0 || l.have + l.want <= l.limit) continue;
    const std::string holder = std::string(l.holder) == "job"    ? "the job asks for"
                               : std::string(l.holder) == "user" ? who + "'s running jobs hold"
                                                                 : "its running jobs hold";
    if (l.reason == PendingReason::kQosMaxWall) {
      *detail = fmt::format("MaxWall={} in QOS {}; the job's time limit is {}",
                            util::FormatDurationLong(l.limit), q->name,
                            job.time_limit_s < 0 ? "UNLIMITED" : util::FormatDurationLong(l.want));
    } else if (std::string(l.holder) == "job") {
      *detail = fmt::format("{}={}{} in QOS {}; {} {}{}", l.key, l.limit, l.unit, q->name, holder,
                            l.want, l.unit);
    } else {
      *detail = fmt::format("{}={}{} in QOS {}; {} {}{} and this job needs {} more", l.key, l.limit,
                            l.unit, q->name, holder, l.have, l.unit, l.want);
    }
    return l.reason;
  }
  return PendingReason::kNone;
}

}  // namespace muster::sched

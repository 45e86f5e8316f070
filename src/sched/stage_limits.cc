// The limits stage (see pipeline.h): what the running jobs hold under each
// QOS and association, and whether a job may start without passing a limit.
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "sched/pipeline.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::sched {
namespace {

using core::PendingReason;

// One limit against what is held and what the job adds.
struct Limit {
  int64_t limit;  // -1 = none
  int64_t have;
  int64_t want;
  PendingReason reason;
  const char* key;  // "MaxJobsPerUser", "GrpTRES gres/gpu", ...
};

// The words of a detail ("QOS tq", "account ml", "alice's running jobs"),
// made only for a limit passed: every waiting job is checked on every pass.
template <typename F>
concept Words = std::is_invocable_r_v<std::string, F>;

// The first limit the job would pass, with its detail: the limit, where it
// is set (`where`) and what holds it (`holder`).
PendingReason FirstPassed(std::span<const Limit> limits, const Words auto& where,
                          const Words auto& holder, std::string* detail) {
  for (const Limit& l : limits) {
    if (l.limit < 0 || l.have + l.want <= l.limit) continue;
    *detail = fmt::format("{}={} in {}; {} hold {} and this job needs {} more", l.key, l.limit,
                          where(), holder(), l.have, l.want);
    return l.reason;
  }
  return PendingReason::kNone;
}

// A per-job limit the job alone passes.
PendingReason FirstOverPerJob(std::span<const Limit> limits, const Words auto& where,
                              std::string* detail) {
  for (const Limit& l : limits) {
    if (l.limit < 0 || l.want <= l.limit) continue;
    *detail = fmt::format("{}={} in {}; the job asks for {}", l.key, l.limit, where(), l.want);
    return l.reason;
  }
  return PendingReason::kNone;
}

PendingReason CheckWall(int64_t max_wall_s, const core::Job& job, PendingReason reason,
                        const Words auto& where, std::string* detail) {
  if (max_wall_s < 0 || (job.time_limit_s >= 0 && job.time_limit_s <= max_wall_s)) {
    return PendingReason::kNone;
  }
  *detail = fmt::format(
      "MaxWall={} in {}; the job's time limit is {}", util::FormatDurationLong(max_wall_s), where(),
      job.time_limit_s < 0 ? "UNLIMITED" : util::FormatDurationLong(job.time_limit_s));
  return reason;
}

std::string RunningJobs() { return "its running jobs"; }

// Whether a QOS, an account or an association sets a limit that holds a
// job back from starting (the submission limits are checked elsewhere).
bool HoldsBack(const core::QosRecord& q) {
  return q.max_wall_s >= 0 || !q.max_tres_per_job.empty() || q.max_jobs_per_user >= 0 ||
         !q.max_tres_per_user.empty() || q.grp_jobs >= 0 || !q.grp_tres.empty();
}
bool HoldsBack(const core::AssocLimits& l) {
  return l.max_wall_s >= 0 || l.max_jobs >= 0 || l.grp_jobs >= 0 || !l.grp_tres.empty();
}

}  // namespace

LimitUsage::LimitUsage(const core::AccountTable* table, const config::Config& cfg,
                       std::span<const RunningJob> running)
    : table_(table), cfg_(cfg) {
  if (table_ == nullptr) return;
  // Without a limit anywhere there is nothing to count or check (most
  // sites, and every job of a pass is checked).
  const bool limited =
      std::any_of(table_->qos().begin(), table_->qos().end(),
                  [](const core::QosRecord& q) { return HoldsBack(q); }) ||
      std::any_of(table_->accounts().begin(), table_->accounts().end(),
                  [](const core::AccountRecord& a) { return HoldsBack(a.limits); }) ||
      std::any_of(table_->associations().begin(), table_->associations().end(),
                  [](const core::UserAssociation& a) { return HoldsBack(a.limits); });
  if (!limited) {
    table_ = nullptr;
    return;
  }
  for (const RunningJob& r : running) Add(*r.job, r.job->alloc);
}

LimitUsage::Held LimitUsage::Of(const std::vector<core::NodeAlloc>& alloc) {
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

const core::QosRecord* LimitUsage::QosOf(const core::Job& job) const {
  return table_->FindQos(core::QosName(job.req));
}

void LimitUsage::Add(const core::Job& job, const std::vector<core::NodeAlloc>& alloc) {
  if (table_ == nullptr) return;
  const Held h = Of(alloc);
  auto add = [&](Held* into) {
    into->jobs += h.jobs;
    into->cpu += h.cpu;
    into->mem_mb += h.mem_mb;
    into->node += h.node;
    into->gpu += h.gpu;
  };
  if (const core::QosRecord* q = QosOf(job)) {
    add(&by_qos_[q->name]);
    add(&by_user_[{q->name, job.req.uid}]);
  }
  add(&by_assoc_[{job.req.account, job.req.user_name}]);
  for (const core::AccountRecord* a : table_->Lineage(job.req.account)) add(&by_account_[a->name]);
}

PendingReason LimitUsage::Check(const core::Job& job, std::string* detail) const {
  if (table_ == nullptr) return PendingReason::kNone;
  return CheckWant(job, core::JobTres(job, MemoryDefaultsOf(job)), detail);
}

const core::MemoryDefaults& LimitUsage::MemoryDefaultsOf(const core::Job& job) const {
  // The partition as Config::PartitionOf reads it ("" is the default one).
  const std::string& named = job.partition.empty() ? job.req.partition : job.partition;
  auto it = memory_defaults_.find(named);
  if (it == memory_defaults_.end()) {
    it = memory_defaults_.emplace(named, cfg_.MemoryDefaultsFor(job)).first;
  }
  return it->second;
}

PendingReason LimitUsage::CheckAlloc(const core::Job& job,
                                     const std::vector<core::NodeAlloc>& alloc,
                                     std::string* detail) const {
  if (table_ == nullptr) return PendingReason::kNone;
  const Held h = Of(alloc);
  core::Tres want;
  want.cpus = h.cpu;
  want.mem_mb = h.mem_mb;
  want.nodes = h.node;
  want.gpus = h.gpu;
  return CheckWant(job, want, detail);
}

PendingReason LimitUsage::CheckWant(const core::Job& job, const core::Tres& want,
                                    std::string* detail) const {
  PendingReason r = CheckQos(job, want, detail);
  return r != PendingReason::kNone ? r : CheckAssoc(job, want, detail);
}

PendingReason LimitUsage::CheckQos(const core::Job& job, const core::Tres& want,
                                   std::string* detail) const {
  const core::QosRecord* q = QosOf(job);
  if (q == nullptr) return PendingReason::kNone;
  auto where = [q] { return "QOS " + q->name; };
  PendingReason r = CheckWall(q->max_wall_s, job, PendingReason::kQosMaxWall, where, detail);
  if (r != PendingReason::kNone) return r;
  const core::TresLimits& pj = q->max_tres_per_job;
  const Limit per_job[] = {
      {pj.cpu, 0, want.cpus, PendingReason::kQosMaxCpuPerJob, "MaxTRESPerJob cpu"},
      {pj.mem_mb, 0, want.mem_mb, PendingReason::kQosMaxMemPerJob, "MaxTRESPerJob mem"},
      {pj.node, 0, want.nodes, PendingReason::kQosMaxNodePerJob, "MaxTRESPerJob node"},
      {pj.gpu, 0, want.gpus, PendingReason::kQosMaxGresPerJob, "MaxTRESPerJob gres/gpu"}};
  r = FirstOverPerJob(per_job, where, detail);
  if (r != PendingReason::kNone) return r;
  const Held u = HeldIn(by_user_, std::make_pair(q->name, job.req.uid));
  const core::TresLimits& pu = q->max_tres_per_user;
  const Limit per_user[] = {
      {q->max_jobs_per_user, u.jobs, 1, PendingReason::kQosMaxJobsPerUser, "MaxJobsPerUser"},
      {pu.cpu, u.cpu, want.cpus, PendingReason::kQosMaxCpuPerUser, "MaxTRESPerUser cpu"},
      {pu.mem_mb, u.mem_mb, want.mem_mb, PendingReason::kQosMaxMemPerUser, "MaxTRESPerUser mem"},
      {pu.node, u.node, want.nodes, PendingReason::kQosMaxNodePerUser, "MaxTRESPerUser node"},
      {pu.gpu, u.gpu, want.gpus, PendingReason::kQosMaxGresPerUser, "MaxTRESPerUser gres/gpu"}};
  auto users_jobs = [&job] {
    return (job.req.user_name.empty() ? fmt::format("uid {}", job.req.uid) : job.req.user_name) +
           "'s running jobs";
  };
  r = FirstPassed(per_user, where, users_jobs, detail);
  if (r != PendingReason::kNone) return r;
  const Held g = HeldIn(by_qos_, q->name);
  const core::TresLimits& gt = q->grp_tres;
  const Limit group[] = {
      {q->grp_jobs, g.jobs, 1, PendingReason::kQosGrpJobs, "GrpJobs"},
      {gt.cpu, g.cpu, want.cpus, PendingReason::kQosGrpCpu, "GrpTRES cpu"},
      {gt.mem_mb, g.mem_mb, want.mem_mb, PendingReason::kQosGrpMem, "GrpTRES mem"},
      {gt.node, g.node, want.nodes, PendingReason::kQosGrpNode, "GrpTRES node"},
      {gt.gpu, g.gpu, want.gpus, PendingReason::kQosGrpGres, "GrpTRES gres/gpu"}};
  return FirstPassed(group, where, RunningJobs, detail);
}

PendingReason LimitUsage::CheckAssoc(const core::Job& job, const core::Tres& want,
                                     std::string* detail) const {
  const std::string& account = job.req.account;
  const std::string& user = job.req.user_name;
  auto where = [&] { return "the association of " + user + " in account " + account; };
  const core::AssocLimits max = table_->EffectiveMaxLimits(account, user);
  PendingReason r = CheckWall(max.max_wall_s, job, PendingReason::kAssocMaxWall, where, detail);
  if (r != PendingReason::kNone) return r;
  const Held mine = HeldIn(by_assoc_, std::make_pair(account, user));
  const Limit max_jobs[] = {{max.max_jobs, mine.jobs, 1, PendingReason::kAssocMaxJobs, "MaxJobs"}};
  r = FirstPassed(max_jobs, where, RunningJobs, detail);
  if (r != PendingReason::kNone) return r;
  auto group = [&](const core::AssocLimits& l, const Held& h, const Words auto& at) {
    const core::TresLimits& t = l.grp_tres;
    const Limit limits[] = {
        {l.grp_jobs, h.jobs, 1, PendingReason::kAssocGrpJobs, "GrpJobs"},
        {t.cpu, h.cpu, want.cpus, PendingReason::kAssocGrpCpu, "GrpTRES cpu"},
        {t.mem_mb, h.mem_mb, want.mem_mb, PendingReason::kAssocGrpMem, "GrpTRES mem"},
        {t.node, h.node, want.nodes, PendingReason::kAssocGrpNode, "GrpTRES node"},
        {t.gpu, h.gpu, want.gpus, PendingReason::kAssocGrpGres, "GrpTRES gres/gpu"}};
    return FirstPassed(limits, at, RunningJobs, detail);
  };
  if (const core::UserAssociation* a = table_->FindAssociation(account, user)) {
    r = group(a->limits, mine, where);
    if (r != PendingReason::kNone) return r;
  }
  for (const core::AccountRecord* a : table_->Lineage(account)) {
    r = group(a->limits, HeldIn(by_account_, a->name), [a] { return "account " + a->name; });
    if (r != PendingReason::kNone) return r;
  }
  return PendingReason::kNone;
}

}  // namespace muster::sched

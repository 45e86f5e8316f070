// The stage objects of a pass (see pipeline.h): the queue sorts, the job
// stages (pre-filters) and the preemption policies (post-filters), and the
// profile that assembles them from the configuration.
#include <algorithm>

#include "sched/pipeline.h"
#include "sched/priority.h"

namespace muster::sched {
namespace {

using core::PendingReason;

// priority/multifactor: the weighted factors (sched/priority.h).
class MultifactorSort final : public QueueSortStage {
 public:
  MultifactorSort(const Snapshot& s, const ShareTree* shares)
      : calc_(*s.config, shares, s.now, s.accounts) {}
  std::string_view name() const override { return "priority/multifactor"; }
  uint32_t Priority(const core::Job& job) const override { return calc_.Priority(job); }

 private:
  PriorityCalculator calc_;
};

// priority/basic: first come first served (or an operator's Priority=).
class BasicSort final : public QueueSortStage {
 public:
  std::string_view name() const override { return "priority/basic"; }
  uint32_t Priority(const core::Job& job) const override {
    return job.admin_priority > 0 ? job.admin_priority : BasicPriority(job);
  }
};

// Held, begin time, the partition's state and limits (stage_eligibility.cc).
class EligibilityStage final : public JobStage {
 public:
  explicit EligibilityStage(int64_t now) : now_(now) {}
  std::string_view name() const override { return "eligibility"; }
  PendingReason PreFilter(const core::Job& job, const core::Partition* part,
                          std::string* /*detail*/) override {
    return CheckEligibility(job, part, now_);
  }

 private:
  int64_t now_;
};

// The QOS and association limits on what runs at once (stage_limits.cc):
// checked on the request, then on what the selection took, and counted at
// each start of the pass.
class LimitsStage final : public JobStage {
 public:
  explicit LimitsStage(const Snapshot& s) : usage_(s.accounts, *s.config, s.running) {}
  std::string_view name() const override { return "limits"; }
  PendingReason PreFilter(const core::Job& job, const core::Partition* /*part*/,
                          std::string* detail) override {
    return usage_.Check(job, detail);
  }
  PendingReason Admit(const core::Job& job, const std::vector<core::NodeAlloc>& alloc,
                      std::string* detail) override {
    return usage_.CheckAlloc(job, alloc, detail);
  }
  void Started(const core::Job& job, const std::vector<core::NodeAlloc>& alloc) override {
    usage_.Add(job, alloc);
  }

 private:
  LimitUsage usage_;
};

// preempt/partition_prio: jobs of partitions of a lower PriorityTier, the
// lowest tier first.
class PartitionPrioStage final : public PreemptionStage {
 public:
  explicit PartitionPrioStage(const config::Config& cfg) : cfg_(cfg) {}
  std::string_view name() const override { return "preempt/partition_prio"; }
  std::optional<int64_t> Rank(const core::Job& /*job*/, int tier,
                              const core::Job& victim) const override {
    const core::Partition* vp = cfg_.FindPartition(victim.partition);
    if (vp == nullptr || vp->priority_tier >= tier) return std::nullopt;
    return vp->priority_tier;
  }

 private:
  const config::Config& cfg_;
};

// preempt/qos: jobs of the QOS the job's QOS names in Preempt=, the
// lowest QOS priority first.
class QosPreemptStage final : public PreemptionStage {
 public:
  explicit QosPreemptStage(const core::AccountTable* accounts) : accounts_(accounts) {}
  std::string_view name() const override { return "preempt/qos"; }
  std::optional<int64_t> Rank(const core::Job& job, int /*tier*/,
                              const core::Job& victim) const override {
    if (accounts_ == nullptr) return std::nullopt;
    const core::QosRecord* mine = accounts_->FindQos(core::QosName(job.req));
    const core::QosRecord* theirs = accounts_->FindQos(core::QosName(victim.req));
    if (mine == nullptr || theirs == nullptr) return std::nullopt;
    if (std::find(mine->preempt.begin(), mine->preempt.end(), theirs->name) ==
        mine->preempt.end()) {
      return std::nullopt;
    }
    return theirs->priority;
  }

 private:
  const core::AccountTable* accounts_;
};

}  // namespace

std::unique_ptr<QueueSortStage> QueueSortFor(const Snapshot& snapshot, const ShareTree* shares) {
  if (snapshot.config->priority.multifactor) {
    return std::make_unique<MultifactorSort>(snapshot, shares);
  }
  return std::make_unique<BasicSort>();
}

std::unique_ptr<PreemptionStage> PreemptionFor(const Snapshot& snapshot) {
  switch (snapshot.config->preempt_type) {
    case config::PreemptType::kNone:
      return nullptr;
    case config::PreemptType::kPartitionPrio:
      return std::make_unique<PartitionPrioStage>(*snapshot.config);
    case config::PreemptType::kQos:
      return std::make_unique<QosPreemptStage>(snapshot.accounts);
  }
  return nullptr;
}

std::vector<std::unique_ptr<JobStage>> JobStagesFor(const Snapshot& snapshot) {
  std::vector<std::unique_ptr<JobStage>> stages;
  stages.push_back(std::make_unique<EligibilityStage>(snapshot.now));
  if (snapshot.accounts != nullptr) stages.push_back(std::make_unique<LimitsStage>(snapshot));
  return stages;
}

}  // namespace muster::sched

// The job stages (pre-filters, see pipeline.h) and the profile that
// assembles them for a pass from its configuration.
#include "sched/pipeline.h"

namespace muster::sched {
namespace {

using core::PendingReason;

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

}  // namespace

std::vector<std::unique_ptr<JobStage>> JobStagesFor(const Snapshot& snapshot) {
  std::vector<std::unique_ptr<JobStage>> stages;
  stages.push_back(std::make_unique<EligibilityStage>(snapshot.now));
  if (snapshot.accounts != nullptr) stages.push_back(std::make_unique<LimitsStage>(snapshot));
  return stages;
}

}  // namespace muster::sched

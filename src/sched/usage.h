// The usage charged to each user association, in billing-seconds
// (TRESBillingWeights x seconds), decaying with PriorityDecayHalfLife and
// cleared at each PriorityUsageResetPeriod: what fairshare is computed
// from (sched/fairshare.h). Pure: time is an argument; the controller
// advances it, and saves and loads it with its state.
//
//   UsageLedger ledger(cfg.priority, now);
//   ledger.Advance(now, running);         // charges running jobs up to now
//   ledger.ChargeEnded(key, billing, start, end);   // a job that just ended
//   ShareTree::Build(assocs, ledger.usage(), ...);
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "config/config.h"
#include "sched/fairshare.h"
#include "util/status.h"

namespace muster::sched {

// Usage of each TRES besides billing, in TRES-seconds (memory in
// MB-seconds): what sshare's GrpTRESRaw shows, in minutes. Decays and is
// reset with the billing it accompanies.
struct TresUsage {
  double cpu = 0;
  double mem_mb = 0;
  double node = 0;
  double gpu = 0;
};

// A job holding resources: who is charged, how much per second, since when.
struct UsageCharge {
  AssocKey key;
  double billing = 0;  // billing units (core::BillingUnits)
  int64_t start = 0;
  TresUsage rate;      // each TRES held, per second
};

class UsageLedger {
 public:
  // Usage starts empty at `now` (and PriorityUsageResetPeriod=NOW clears
  // what Load brings, as Slurm clears it at each start).
  UsageLedger(const config::PriorityConfig& policy, int64_t now);

  // Brings the usage to `now`: clears it if a reset period began since the
  // last advance; else decays it by the half-life over the time passed;
  // then charges each running job for its part of that time. Time never
  // goes back: an earlier `now` changes nothing.
  void Advance(int64_t now, const std::vector<UsageCharge>& running);

  // Charges a job that ended at `end` for its time since the last advance
  // (the rest was charged while it ran).
  void ChargeEnded(const UsageCharge& job, int64_t end);

  const std::map<AssocKey, double>& usage() const { return usage_; }
  // Each association's TRES usage (only those charged since it began).
  const std::map<AssocKey, TresUsage>& tres_usage() const { return tres_usage_; }
  int64_t time() const { return time_; }

  // {"time": T, "usage": [[account, user, billing-seconds, [cpu, mem, node,
  // gpu TRES-seconds]], ...]}; Load also takes rows without the last item
  // (saved before Muster kept it).
  nlohmann::json ToJson() const;
  // Restores what ToJson saved, at its time: the next Advance decays it
  // and charges the running jobs for the time between (a reset period
  // begun meanwhile clears it). InvalidArgument for a malformed record,
  // changing nothing.
  util::Status Load(const nlohmann::json& saved);

 private:
  void Decay(int64_t seconds);
  // Adds `seconds` of `c` to its association.
  void Charge(const UsageCharge& c, int64_t seconds);

  config::PriorityConfig policy_;
  int64_t time_ = 0;
  int64_t next_reset_ = 0;  // 0 = none
  std::map<AssocKey, double> usage_;
  std::map<AssocKey, TresUsage> tres_usage_;
};

// The first moment after `t` at which `period` starts again, in local
// time (midnight; a week starts on Sunday; quarters in January, April, July
// and October); 0 for NONE and NOW.
int64_t NextUsageReset(config::UsageReset period, int64_t t);

}  // namespace muster::sched

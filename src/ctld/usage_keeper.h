// The usage behind fairshare, kept for the controller: the ledger of
// sched/usage.h, loaded from <StateSaveLocation>/assoc_usage.json at start
// and saved there (atomically) at most once per PriorityCalcPeriod and when
// the controller stops (Controller::Save, and again at destruction), as
// slurmctld keeps its assoc_usage file. A crash loses at most the charges
// of jobs that ended since the last save; running jobs are charged from the
// saved time on at the next advance.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/accounts.h"
#include "core/job.h"
#include "sched/fairshare.h"
#include "sched/usage.h"
#include "util/status.h"

namespace muster::ctld {

class UsageKeeper {
 public:
  // Loads the saved usage; a file that is missing starts empty, one that
  // cannot be read or parsed is logged and left in place (kept aside as
  // assoc_usage.json.bad) and usage starts empty.
  UsageKeeper(const config::Config& cfg, int64_t now);
  // Saves what it has.
  ~UsageKeeper();
  UsageKeeper(const UsageKeeper&) = delete;
  UsageKeeper& operator=(const UsageKeeper&) = delete;

  // What a job holding resources is charged: its association and billing
  // (its partition's TRESBillingWeights over its TRES, times its QOS's
  // UsageFactor).
  static sched::UsageCharge ChargeOf(const core::Job& job, const config::Config& cfg,
                                     const core::AccountTable& table);

  // Advances the ledger (sched::UsageLedger::Advance) and saves it when a
  // PriorityCalcPeriod has passed since the last save.
  void Advance(int64_t now, const std::vector<sched::UsageCharge>& running);
  void ChargeEnded(const sched::UsageCharge& job, int64_t end) { ledger_.ChargeEnded(job, end); }

  const sched::UsageLedger& ledger() const { return ledger_; }
  // Writes the usage now (the controller's shutdown, before it says it has
  // stopped).
  util::Status Save();

  // The fairshare tree: sacctmgr's accounts and associations, and for
  // every key with usage or in `also` (the jobs in the queue) that they
  // lack, a default one (sched::DefaultAssociations: one share, the
  // account under root).
  sched::ShareTree Shares(std::vector<sched::AssocKey> also, const core::AccountTable& table) const;

 private:
  std::string path_;
  bool fair_tree_ = true;
  int64_t calc_period_s_ = 300;
  sched::UsageLedger ledger_;
  int64_t saved_at_ = 0;
};

}  // namespace muster::ctld

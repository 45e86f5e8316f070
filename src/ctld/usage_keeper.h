// The fairshare usage the cluster keeps (cluster::Cluster::usage), kept on
// disk for the controller: loaded from <StateSaveLocation>/assoc_usage.json
// at start and saved there (atomically) at most once per
// PriorityCalcPeriod and when the controller stops (Controller::Save, and
// again at destruction), as slurmctld keeps its assoc_usage file. A crash
// loses at most the charges of jobs that ended since the last save;
// running jobs are charged from the saved time on at the next advance.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "sched/usage.h"
#include "util/status.h"

namespace muster::ctld {

class UsageKeeper {
 public:
  // Loads the saved usage into `ledger` (which must outlive this); a file
  // that is missing leaves it empty, one that cannot be read or parsed is
  // logged and kept aside as assoc_usage.json.bad.
  UsageKeeper(const config::Config& cfg, sched::UsageLedger* ledger, int64_t now);
  // Saves what the ledger has.
  ~UsageKeeper();
  UsageKeeper(const UsageKeeper&) = delete;
  UsageKeeper& operator=(const UsageKeeper&) = delete;

  // Saves the ledger when a PriorityCalcPeriod has passed since the last
  // save (call after advancing it).
  void SaveIfDue(int64_t now);
  // Writes the usage now (the controller's shutdown, before it says it has
  // stopped).
  util::Status Save();

 private:
  std::string path_;
  int64_t calc_period_s_ = 300;
  sched::UsageLedger& ledger_;
  int64_t saved_at_ = 0;
};

}  // namespace muster::ctld

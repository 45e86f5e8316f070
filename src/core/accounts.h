// Accounts, users and their associations: what sacctmgr administers and
// fairshare and AccountingStorageEnforce read. A tree of accounts under
// "root", each with shares among its siblings; a user association puts a
// user in an account with shares among that account's children; a user has
// a default account (the one a job without --account is charged to).
//
// Each operation works on the table in memory and returns what Slurm's
// sacctmgr prints about it, so the caller can show the change before it is
// committed (sacctmgr without -i) and store the table after. Pure; no I/O.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/partition.h"
#include "util/status.h"

namespace muster::core {

// TRES limits as sacctmgr writes them ("cpu=64,mem=100G,node=4,gres/gpu=8");
// -1 = no limit.
struct TresLimits {
  int64_t cpu = -1;
  int64_t mem_mb = -1;
  int64_t node = -1;
  int64_t gpu = -1;
  bool empty() const { return cpu < 0 && mem_mb < 0 && node < 0 && gpu < 0; }
};
// "cpu=64,gres/gpu=8" (names in any case; memory with a K/M/G/T suffix,
// else MB; -1 clears). Errors name the item.
util::Result<TresLimits> ParseTresLimits(std::string_view text);
// In Slurm's TRES order (cpu, mem, node, gres/gpu); "" when empty.
std::string FormatTresLimits(const TresLimits& t);

// An association's limits (sacctmgr's GrpTRES, GrpJobs, MaxJobs,
// MaxSubmitJobs, MaxWall); -1 = none. An account's Grp limits cover every
// job of it and of the accounts below it; its Max limits apply to each of
// its users that sets none of its own (the nearest account's, going up).
struct AssocLimits {
  TresLimits grp_tres;
  int64_t grp_jobs = -1;
  int64_t max_jobs = -1;         // running at once, per user association
  int64_t max_submit_jobs = -1;  // pending or running, per user association
  int64_t max_wall_s = -1;
};
struct AssocLimitSettings {
  std::optional<TresLimits> grp_tres;
  std::optional<int64_t> grp_jobs;
  std::optional<int64_t> max_jobs;
  std::optional<int64_t> max_submit_jobs;
  std::optional<int64_t> max_wall_s;
  bool any() const { return grp_tres || grp_jobs || max_jobs || max_submit_jobs || max_wall_s; }
};

struct AccountRecord {
  std::string name;
  std::string parent;  // "" for root
  std::string description;
  std::string organization;
  int64_t shares = 1;
  AssocLimits limits;
};

struct UserRecord {
  std::string name;
  std::string default_account;       // "" when it has no association left
  std::string admin_level = "None";  // None, Operator or Administrator
};

struct UserAssociation {
  std::string account;
  std::string user;
  int64_t shares = 1;
  AssocLimits limits;
};

// The settings of an add or modify; unset fields are left alone (modify)
// or defaulted (add).
struct AccountSettings {
  std::optional<std::string> description;
  std::optional<std::string> organization;
  std::optional<std::string> parent;
  std::optional<int64_t> shares;
  AssocLimitSettings limits;
};
struct UserSettings {
  std::vector<std::string> accounts;  // add: the accounts to associate with
  std::optional<std::string> default_account;
  std::optional<int64_t> shares;
  std::optional<std::string> admin_level;
  AssocLimitSettings limits;
};

// A quality of service: a priority, and limits on the jobs that run under
// it (sacctmgr add qos). -1 = no limit.
struct QosRecord {
  std::string name;
  std::string description;
  int64_t priority = 0;
  int64_t max_jobs_per_user = -1;         // running at once (MaxJobsPU)
  int64_t max_submit_jobs_per_user = -1;  // pending or running (MaxSubmitPU)
  int64_t grp_jobs = -1;                  // running at once, everyone's
  int64_t max_wall_s = -1;
  TresLimits max_tres_per_user;  // what one user's running jobs hold together
  TresLimits max_tres_per_job;
  TresLimits grp_tres;         // what all its running jobs hold together
  bool deny_on_limit = false;  // refuse at submission what a limit would hold
  double usage_factor = 1.0;   // fairshare usage is charged times this
  // PreemptType=preempt/qos: the QOS whose running jobs a job of this one
  // may preempt, and how this QOS's own jobs are preempted: PreemptMode
  // (unset: the cluster's), GraceTime between SIGTERM and the end, and
  // PreemptExemptTime (-1: the cluster's).
  std::vector<std::string> preempt;
  std::optional<PreemptMode> preempt_mode;
  int64_t grace_time_s = 0;
  int64_t preempt_exempt_time_s = -1;
};

struct QosSettings {
  std::optional<std::string> description;
  std::optional<int64_t> priority;
  std::optional<int64_t> max_jobs_per_user;
  std::optional<int64_t> max_submit_jobs_per_user;
  std::optional<int64_t> grp_jobs;
  std::optional<int64_t> max_wall_s;
  std::optional<TresLimits> max_tres_per_user;
  std::optional<TresLimits> max_tres_per_job;
  std::optional<TresLimits> grp_tres;
  std::optional<bool> deny_on_limit;
  std::optional<double> usage_factor;
  // Preempt=a,b replaces the list; Preempt+=a adds, Preempt-=a removes.
  std::optional<std::vector<std::string>> preempt;
  std::vector<std::string> preempt_add;
  std::vector<std::string> preempt_remove;
  // PreemptMode; kOff (sacctmgr's OFF or Cluster) means the cluster's.
  std::optional<PreemptMode> preempt_mode;
  std::optional<int64_t> grace_time_s;
  std::optional<int64_t> preempt_exempt_time_s;
};

// What an operation did: `changed` false means nothing was (sacctmgr then
// exits 1); `lines` are sacctmgr's report either way.
struct AccountsOutcome {
  bool changed = false;
  std::vector<std::string> lines;
};

class AccountTable {
 public:
  AccountTable();  // just the account "root" and the QOS "normal"

  AccountsOutcome AddAccounts(const std::vector<std::string>& names, const AccountSettings& set,
                              const std::string& cluster);
  AccountsOutcome AddUsers(const std::vector<std::string>& names, const UserSettings& set,
                           const std::string& cluster);
  AccountsOutcome ModifyAccounts(const std::vector<std::string>& names, const AccountSettings& set,
                                 const std::string& cluster);
  // `accounts` limits a change of shares to those associations (empty: all
  // of the users').
  AccountsOutcome ModifyUsers(const std::vector<std::string>& names,
                              const std::vector<std::string>& accounts, const UserSettings& set,
                              const std::string& cluster);
  // Deleting an account deletes its user associations; one with
  // sub-accounts is refused. Root cannot be deleted.
  AccountsOutcome DeleteAccounts(const std::vector<std::string>& names);
  // `accounts` empty: the users and all their associations; else only
  // those associations.
  AccountsOutcome DeleteUsers(const std::vector<std::string>& names,
                              const std::vector<std::string>& accounts, const std::string& cluster);

  AccountsOutcome AddQos(const std::vector<std::string>& names, const QosSettings& set);
  AccountsOutcome ModifyQos(const std::vector<std::string>& names, const QosSettings& set);
  // "normal" stays; a deleted QOS leaves the Preempt lists naming it.
  AccountsOutcome DeleteQos(const std::vector<std::string>& names);
  // InvalidArgument when a QOS's Preempt list names a QOS that does not
  // exist, or a QOS could preempt itself through the lists (sacctmgr's
  // messages); a change is checked on the changed table before it is kept.
  util::Status CheckPreemptLists() const;

  const std::vector<QosRecord>& qos() const { return qos_; }  // by name
  const QosRecord* FindQos(const std::string& name) const;
  const std::vector<AccountRecord>& accounts() const { return accounts_; }  // by name
  const std::vector<UserRecord>& users() const { return users_; }           // by name
  const std::vector<UserAssociation>& associations() const {
    return assocs_;
  }  // by (account, user)
  const AccountRecord* FindAccount(const std::string& name) const;
  const UserRecord* FindUser(const std::string& name) const;
  bool HasAssociation(const std::string& account, const std::string& user) const;
  const UserAssociation* FindAssociation(const std::string& account, const std::string& user) const;
  // The account and the accounts above it, nearest first (empty for an
  // unknown account).
  std::vector<const AccountRecord*> Lineage(const std::string& account) const;
  // The Max limits that hold a user association's jobs: each its own when
  // set, else the nearest account's going up.
  AssocLimits EffectiveMaxLimits(const std::string& account, const std::string& user) const;

  nlohmann::json ToJson() const;
  // InvalidArgument naming what is wrong for a malformed document.
  static util::Result<AccountTable> FromJson(const nlohmann::json& j);

 private:
  AccountRecord* MutableAccount(const std::string& name);
  UserRecord* MutableUser(const std::string& name);
  void Sort();

  std::vector<AccountRecord> accounts_;
  std::vector<UserRecord> users_;
  std::vector<UserAssociation> assocs_;
  std::vector<QosRecord> qos_;
};

}  // namespace muster::core

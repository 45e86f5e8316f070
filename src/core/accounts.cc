#include "core/accounts.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::core {
namespace {

bool Contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

std::string AssocLine(const std::string& account, const std::string& user,
                      const std::string& cluster) {
  return fmt::format("  C = {:<10} A = {:<20} U = {:<9}", cluster, account, user);
}

// sacctmgr's report of the QOS settings given, by Slurm's names.
void QosSettingLines(const QosSettings& set, std::vector<std::string>* lines) {
  auto line = [&](const char* key, const std::string& v, int width = 25) {
    lines->push_back(fmt::format("  {:<{}}= {}", key, width, v));
  };
  auto count = [](int64_t v) { return v < 0 ? std::string("-1") : std::to_string(v); };
  if (set.deny_on_limit) line("Flags", *set.deny_on_limit ? "DenyOnLimit" : "");
  if (set.grace_time_s) line("GraceTime", std::to_string(*set.grace_time_s));
  if (set.grp_jobs) line("GrpJobs", count(*set.grp_jobs));
  if (set.grp_tres) line("GrpTRES", FormatTresLimits(*set.grp_tres));
  if (set.max_jobs_per_user) line("MaxJobsPerUser", count(*set.max_jobs_per_user), 15);
  if (set.max_submit_jobs_per_user) {
    line("MaxSubmitJobsPerUser", count(*set.max_submit_jobs_per_user));
  }
  if (set.max_tres_per_job) line("MaxTRESPerJob", FormatTresLimits(*set.max_tres_per_job));
  if (set.max_tres_per_user) line("MaxTRESPerUser", FormatTresLimits(*set.max_tres_per_user));
  if (set.max_wall_s) line("MaxWall", *set.max_wall_s < 0 ? "-1" : util::FormatDurationLong(*set.max_wall_s));
  if (set.preempt) line("Preempt", util::Join(*set.preempt, ","));
  if (set.preempt_exempt_time_s) {
    line("PreemptExemptTime", *set.preempt_exempt_time_s < 0
                                  ? "-1"
                                  : util::FormatDurationLong(*set.preempt_exempt_time_s));
  }
  if (set.preempt_mode) {
    line("PreemptMode", *set.preempt_mode == PreemptMode::kOff
                            ? "CLUSTER"
                            : std::string(PreemptModeName(*set.preempt_mode)));
  }
  if (set.priority) line("Priority", std::to_string(*set.priority));
  if (set.usage_factor) line("UsageFactor", fmt::format("{:.6f}", *set.usage_factor));
}

void ApplyQos(const QosSettings& set, QosRecord* q) {
  if (set.description) q->description = *set.description;
  if (set.priority) q->priority = *set.priority;
  if (set.max_jobs_per_user) q->max_jobs_per_user = *set.max_jobs_per_user;
  if (set.max_submit_jobs_per_user) q->max_submit_jobs_per_user = *set.max_submit_jobs_per_user;
  if (set.grp_jobs) q->grp_jobs = *set.grp_jobs;
  if (set.max_wall_s) q->max_wall_s = *set.max_wall_s;
  if (set.max_tres_per_user) q->max_tres_per_user = *set.max_tres_per_user;
  if (set.max_tres_per_job) q->max_tres_per_job = *set.max_tres_per_job;
  if (set.grp_tres) q->grp_tres = *set.grp_tres;
  if (set.deny_on_limit) q->deny_on_limit = *set.deny_on_limit;
  if (set.usage_factor) q->usage_factor = *set.usage_factor;
  if (set.preempt) q->preempt = *set.preempt;
  for (const std::string& name : set.preempt_add) {
    if (!Contains(q->preempt, name)) q->preempt.push_back(name);
  }
  for (const std::string& name : set.preempt_remove) std::erase(q->preempt, name);
  if (set.preempt_mode) {
    q->preempt_mode = *set.preempt_mode == PreemptMode::kOff
                          ? std::nullopt
                          : std::optional<PreemptMode>(*set.preempt_mode);
  }
  if (set.grace_time_s) q->grace_time_s = *set.grace_time_s;
  if (set.preempt_exempt_time_s) q->preempt_exempt_time_s = *set.preempt_exempt_time_s;
}

void ApplyLimits(const AssocLimitSettings& set, AssocLimits* l) {
  if (set.grp_tres) l->grp_tres = *set.grp_tres;
  if (set.grp_jobs) l->grp_jobs = *set.grp_jobs;
  if (set.max_jobs) l->max_jobs = *set.max_jobs;
  if (set.max_submit_jobs) l->max_submit_jobs = *set.max_submit_jobs;
  if (set.max_wall_s) l->max_wall_s = *set.max_wall_s;
}

// sacctmgr's report of the limits given, by Slurm's names.
void LimitLines(const AssocLimitSettings& set, std::vector<std::string>* lines) {
  auto line = [&](const char* key, const std::string& v) {
    lines->push_back(fmt::format("  {:<14}= {}", key, v));
  };
  auto count = [](int64_t v) { return std::to_string(v); };
  if (set.grp_jobs) line("GrpJobs", count(*set.grp_jobs));
  if (set.grp_tres) line("GrpTRES", FormatTresLimits(*set.grp_tres));
  if (set.max_jobs) line("MaxJobs", count(*set.max_jobs));
  if (set.max_submit_jobs) line("MaxSubmitJobs", count(*set.max_submit_jobs));
  if (set.max_wall_s) line("MaxWall", *set.max_wall_s < 0 ? "-1" : util::FormatDurationLong(*set.max_wall_s));
}

nlohmann::json TresJson(const TresLimits& t);

nlohmann::json LimitsJson(const AssocLimits& l) {
  return {{"grp_tres", TresJson(l.grp_tres)},
          {"grp_jobs", l.grp_jobs},
          {"max_jobs", l.max_jobs},
          {"max_submit_jobs", l.max_submit_jobs},
          {"max_wall_s", l.max_wall_s}};
}

TresLimits TresFromJson(const nlohmann::json& j);

AssocLimits LimitsFromJson(const nlohmann::json& j) {
  AssocLimits l;
  if (!j.is_object()) return l;
  if (j.contains("grp_tres")) l.grp_tres = TresFromJson(j.at("grp_tres"));
  l.grp_jobs = j.value("grp_jobs", int64_t{-1});
  l.max_jobs = j.value("max_jobs", int64_t{-1});
  l.max_submit_jobs = j.value("max_submit_jobs", int64_t{-1});
  l.max_wall_s = j.value("max_wall_s", int64_t{-1});
  return l;
}

nlohmann::json TresJson(const TresLimits& t) {
  return {{"cpu", t.cpu}, {"mem_mb", t.mem_mb}, {"node", t.node}, {"gpu", t.gpu}};
}

TresLimits TresFromJson(const nlohmann::json& j) {
  return {j.at("cpu").get<int64_t>(), j.at("mem_mb").get<int64_t>(), j.at("node").get<int64_t>(),
          j.at("gpu").get<int64_t>()};
}

// A modification's report: each non-empty section under its heading, or
// " Nothing modified" when every section is empty.
AccountsOutcome ModifiedReport(
    std::initializer_list<std::pair<const char*, const std::vector<std::string>*>> sections) {
  AccountsOutcome out;
  for (const auto& [heading, lines] : sections) {
    if (lines->empty()) continue;
    out.changed = true;
    out.lines.push_back(heading);
    out.lines.insert(out.lines.end(), lines->begin(), lines->end());
  }
  if (!out.changed) out.lines = {" Nothing modified"};
  return out;
}

}  // namespace

util::Result<TresLimits> ParseTresLimits(std::string_view text) {
  TresLimits t;
  for (const std::string& raw : util::Split(text, ',')) {
    const std::string item(util::Trim(raw));
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return util::InvalidArgument(item + ": expected NAME=COUNT");
    const std::string name = util::ToLower(item.substr(0, eq));
    const std::string value = item.substr(eq + 1);
    int64_t* field = name == "cpu"        ? &t.cpu
                     : name == "mem"      ? &t.mem_mb
                     : name == "node"     ? &t.node
                     : name == "gres/gpu" ? &t.gpu
                                          : nullptr;
    if (field == nullptr) {
      return util::InvalidArgument(item + ": unknown TRES (expected cpu, mem, node or gres/gpu)");
    }
    if (value == "-1") {
      *field = -1;
      continue;
    }
    auto n = name == "mem" ? util::ParseMemoryMb(value) : util::ParseInt(value);
    if (!n.ok() || *n < 0) {
      return util::InvalidArgument(item + ": the limit must be a count of at least 0");
    }
    *field = *n;
  }
  return t;
}

std::string FormatTresLimits(const TresLimits& t) {
  std::vector<std::string> items;
  if (t.cpu >= 0) items.push_back(fmt::format("cpu={}", t.cpu));
  if (t.mem_mb >= 0) items.push_back("mem=" + util::FormatMemoryMb(t.mem_mb));
  if (t.node >= 0) items.push_back(fmt::format("node={}", t.node));
  if (t.gpu >= 0) items.push_back(fmt::format("gres/gpu={}", t.gpu));
  return util::Join(items, ",");
}

AccountTable::AccountTable() {
  accounts_.push_back({"root", "", "default root account", "root", 1, {}});
  QosRecord normal;
  normal.name = "normal";
  normal.description = "Normal QOS default";
  qos_.push_back(normal);
}

const QosRecord* AccountTable::FindQos(const std::string& name) const {
  auto it =
      std::find_if(qos_.begin(), qos_.end(), [&](const QosRecord& q) { return q.name == name; });
  return it == qos_.end() ? nullptr : &*it;
}

AccountsOutcome AccountTable::AddQos(const std::vector<std::string>& names,
                                     const QosSettings& set) {
  AccountsOutcome out;
  std::vector<std::string> added;
  for (const std::string& name : names) {
    if (name.empty() || FindQos(name) != nullptr || Contains(added, name)) continue;
    QosRecord q;
    q.name = name;
    q.description = name;
    ApplyQos(set, &q);
    qos_.push_back(std::move(q));
    added.push_back(name);
  }
  if (added.empty()) {
    out.lines = {" Nothing new added."};
    return out;
  }
  Sort();
  out.changed = true;
  out.lines.push_back(" Adding QOS(s)");
  for (const std::string& name : added) out.lines.push_back("  " + name);
  out.lines.push_back(" Settings");
  out.lines.push_back(
      fmt::format("  {:<15}= {}", "Description", set.description.value_or(added.front())));
  QosSettingLines(set, &out.lines);
  return out;
}

AccountsOutcome AccountTable::ModifyQos(const std::vector<std::string>& names,
                                        const QosSettings& set) {
  AccountsOutcome out;
  std::vector<std::string> changed;
  for (QosRecord& q : qos_) {
    if (!Contains(names, q.name)) continue;
    ApplyQos(set, &q);
    changed.push_back("  " + q.name);
  }
  if (changed.empty()) {
    out.lines = {" Nothing modified"};
    return out;
  }
  out.changed = true;
  out.lines.push_back(" Modified qos...");
  out.lines.insert(out.lines.end(), changed.begin(), changed.end());
  return out;
}

AccountsOutcome AccountTable::DeleteQos(const std::vector<std::string>& names) {
  AccountsOutcome out;
  std::vector<std::string> deleted;
  for (const QosRecord& q : qos_) {
    if (q.name != "normal" && Contains(names, q.name)) deleted.push_back(q.name);
  }
  if (deleted.empty()) {
    out.lines = {" Nothing deleted"};
    return out;
  }
  std::erase_if(qos_, [&](const QosRecord& q) { return Contains(deleted, q.name); });
  for (QosRecord& q : qos_) {
    std::erase_if(q.preempt, [&](const std::string& name) { return Contains(deleted, name); });
  }
  out.changed = true;
  out.lines.push_back(" Deleting QOS(s)...");
  for (const std::string& name : deleted) out.lines.push_back("  " + name);
  return out;
}

util::Status AccountTable::CheckPreemptLists() const {
  for (const QosRecord& q : qos_) {
    for (const std::string& name : q.preempt) {
      if (FindQos(name) != nullptr) continue;
      std::vector<std::string> valid;
      for (const QosRecord& v : qos_) valid.push_back(v.name);
      return util::InvalidArgument(fmt::format("You gave a bad qos '{}'. Valid QOS's are {}", name,
                                               util::Join(valid, ",")));
    }
  }
  // A loop: some QOS reaches itself through the lists.
  for (const QosRecord& start : qos_) {
    std::vector<const QosRecord*> stack = {&start};
    std::vector<std::string> seen;
    while (!stack.empty()) {
      const QosRecord* q = stack.back();
      stack.pop_back();
      for (const std::string& name : q->preempt) {
        if (name == start.name) {
          return util::InvalidArgument("Error with request: QOS Preemption loop detected");
        }
        if (Contains(seen, name)) continue;
        seen.push_back(name);
        stack.push_back(FindQos(name));
      }
    }
  }
  return util::Status::Ok();
}

const AccountRecord* AccountTable::FindAccount(const std::string& name) const {
  auto it = std::find_if(accounts_.begin(), accounts_.end(),
                         [&](const AccountRecord& a) { return a.name == name; });
  return it == accounts_.end() ? nullptr : &*it;
}

AccountRecord* AccountTable::MutableAccount(const std::string& name) {
  return const_cast<AccountRecord*>(FindAccount(name));
}

const UserRecord* AccountTable::FindUser(const std::string& name) const {
  auto it = std::find_if(users_.begin(), users_.end(),
                         [&](const UserRecord& u) { return u.name == name; });
  return it == users_.end() ? nullptr : &*it;
}

UserRecord* AccountTable::MutableUser(const std::string& name) {
  return const_cast<UserRecord*>(FindUser(name));
}

bool AccountTable::HasAssociation(const std::string& account, const std::string& user) const {
  return std::any_of(assocs_.begin(), assocs_.end(), [&](const UserAssociation& a) {
    return a.account == account && a.user == user;
  });
}

const UserAssociation* AccountTable::FindAssociation(const std::string& account,
                                                     const std::string& user) const {
  auto it = std::find_if(assocs_.begin(), assocs_.end(), [&](const UserAssociation& a) {
    return a.account == account && a.user == user;
  });
  return it == assocs_.end() ? nullptr : &*it;
}

std::vector<const AccountRecord*> AccountTable::Lineage(const std::string& account) const {
  std::vector<const AccountRecord*> out;
  for (const AccountRecord* a = FindAccount(account);
       a != nullptr && out.size() <= accounts_.size();
       a = a->parent.empty() ? nullptr : FindAccount(a->parent)) {
    out.push_back(a);
  }
  return out;
}

AssocLimits AccountTable::EffectiveMaxLimits(const std::string& account,
                                             const std::string& user) const {
  AssocLimits l;
  if (const UserAssociation* a = FindAssociation(account, user)) l = a->limits;
  for (const AccountRecord* up : Lineage(account)) {
    if (l.max_jobs < 0) l.max_jobs = up->limits.max_jobs;
    if (l.max_submit_jobs < 0) l.max_submit_jobs = up->limits.max_submit_jobs;
    if (l.max_wall_s < 0) l.max_wall_s = up->limits.max_wall_s;
  }
  return l;
}

void AccountTable::Sort() {
  std::sort(accounts_.begin(), accounts_.end(),
            [](const AccountRecord& a, const AccountRecord& b) { return a.name < b.name; });
  std::sort(users_.begin(), users_.end(),
            [](const UserRecord& a, const UserRecord& b) { return a.name < b.name; });
  std::sort(assocs_.begin(), assocs_.end(), [](const UserAssociation& a, const UserAssociation& b) {
    return std::tie(a.account, a.user) < std::tie(b.account, b.user);
  });
  std::sort(qos_.begin(), qos_.end(),
            [](const QosRecord& a, const QosRecord& b) { return a.name < b.name; });
}

AccountsOutcome AccountTable::AddAccounts(const std::vector<std::string>& names,
                                          const AccountSettings& set, const std::string& cluster) {
  AccountsOutcome out;
  const std::string parent = set.parent.value_or("root");
  if (FindAccount(parent) == nullptr) {
    out.lines = {fmt::format(" Parent account '{}' doesn't exist on cluster {}", parent, cluster),
                 "        Contact your admin to add this account.", " No associations created."};
    return out;
  }
  std::vector<std::string> added;
  for (const std::string& name : names) {
    if (name.empty() || FindAccount(name) != nullptr || Contains(added, name)) continue;
    added.push_back(name);
  }
  if (added.empty()) {
    out.lines = {" Nothing new added."};
    return out;
  }
  for (const std::string& name : added) {
    AccountRecord a;
    a.name = name;
    a.parent = parent;
    a.description = set.description.value_or(name);
    a.organization = set.organization.value_or(parent == "root" ? name : parent);
    a.shares = set.shares.value_or(1);
    ApplyLimits(set.limits, &a.limits);
    accounts_.push_back(std::move(a));
  }
  Sort();
  out.changed = true;
  out.lines.push_back(" Adding Account(s)");
  for (const std::string& name : added) out.lines.push_back("  " + name);
  out.lines.push_back(" Settings");
  out.lines.push_back(
      fmt::format("  {:<16}= {}", "Description", set.description.value_or("Account Name")));
  out.lines.push_back(fmt::format("  {:<16}= {}", "Organization",
                                  set.organization.value_or("Parent/Account Name")));
  out.lines.push_back(" Associations");
  for (const std::string& name : added) {
    out.lines.push_back(fmt::format("  A = {:<10} C = {:<10}", name, cluster));
  }
  if (set.shares || set.parent || set.limits.any()) {
    out.lines.push_back(" Settings");
    if (set.shares) out.lines.push_back(fmt::format("  {:<14}= {}", "Fairshare", *set.shares));
    LimitLines(set.limits, &out.lines);
    if (set.parent) out.lines.push_back(fmt::format("  {:<14}= {}", "Parent", *set.parent));
  }
  return out;
}

AccountsOutcome AccountTable::AddUsers(const std::vector<std::string>& names,
                                       const UserSettings& set, const std::string& cluster) {
  AccountsOutcome out;
  std::vector<std::string> accounts = set.accounts;
  if (accounts.empty() && set.default_account) accounts.push_back(*set.default_account);
  if (accounts.empty()) {
    out.lines = {" Need name of account to add user to."};
    return out;
  }
  for (const std::string& account : accounts) {
    if (FindAccount(account) == nullptr) {
      out.lines = {fmt::format(" This account '{}' doesn't exist.", account),
                   "        Contact your admin to add this account.",
                   " No associations or wckeys created."};
      return out;
    }
  }
  if (set.default_account && !Contains(accounts, *set.default_account) &&
      std::none_of(names.begin(), names.end(),
                   [&](const std::string& n) { return HasAssociation(*set.default_account, n); })) {
    out.lines = {fmt::format(" Default account '{}' is not one of the user's accounts.",
                             *set.default_account),
                 " No associations or wckeys created."};
    return out;
  }
  std::vector<std::string> new_users;
  std::vector<std::pair<std::string, std::string>> new_assocs;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    UserRecord* user = MutableUser(name);
    if (user == nullptr) {
      users_.push_back(
          {name, set.default_account.value_or(accounts.front()), set.admin_level.value_or("None")});
      new_users.push_back(name);
    } else if (user->default_account.empty()) {
      user->default_account = set.default_account.value_or(accounts.front());
    }
    for (const std::string& account : accounts) {
      if (HasAssociation(account, name)) continue;
      UserAssociation assoc{account, name, set.shares.value_or(1), {}};
      ApplyLimits(set.limits, &assoc.limits);
      assocs_.push_back(std::move(assoc));
      new_assocs.emplace_back(name, account);
    }
  }
  if (new_assocs.empty() && new_users.empty()) {
    out.lines = {" Nothing new added."};
    return out;
  }
  Sort();
  out.changed = true;
  if (!new_users.empty()) {
    out.lines.push_back(" Adding User(s)");
    for (const std::string& name : new_users) out.lines.push_back("  " + name);
  }
  if (!new_assocs.empty()) {
    out.lines.push_back(" Associations =");
    for (const auto& [user, account] : new_assocs) {
      out.lines.push_back(fmt::format("  U = {:<9} A = {:<10} C = {:<10}", user, account, cluster));
    }
  }
  out.lines.push_back(" Non Default Settings");
  if (set.shares) out.lines.push_back(fmt::format("  {:<14}= {}", "Fairshare", *set.shares));
  LimitLines(set.limits, &out.lines);
  return out;
}

AccountsOutcome AccountTable::ModifyAccounts(const std::vector<std::string>& names,
                                             const AccountSettings& set,
                                             const std::string& cluster) {
  AccountsOutcome out;
  if (set.parent) {
    if (FindAccount(*set.parent) == nullptr) {
      out.lines = {
          fmt::format(" Parent account '{}' doesn't exist on cluster {}", *set.parent, cluster)};
      return out;
    }
    // The new parent may not lie below an account that moves.
    for (std::string up = *set.parent; !up.empty(); up = FindAccount(up)->parent) {
      if (Contains(names, up)) {
        out.lines = {fmt::format(" Can't move account '{}' below its own sub-account '{}'", up,
                                 *set.parent)};
        return out;
      }
    }
  }
  std::vector<std::string> assoc_lines;
  std::vector<std::string> account_lines;
  for (const std::string& name : names) {
    AccountRecord* a = MutableAccount(name);
    if (a == nullptr || (name == "root" && set.parent)) continue;
    if (set.shares || set.parent || set.limits.any()) {
      if (set.shares) a->shares = *set.shares;
      if (set.parent) a->parent = *set.parent;
      ApplyLimits(set.limits, &a->limits);
      assoc_lines.push_back(fmt::format("  C = {:<10} A = {} of {}", cluster, a->name,
                                        a->parent.empty() ? "" : a->parent));
    }
    if (set.description || set.organization) {
      if (set.description) a->description = *set.description;
      if (set.organization) a->organization = *set.organization;
      account_lines.push_back("  " + a->name);
    }
  }
  return ModifiedReport({{" Modified accounts...", &account_lines},
                         {" Modified account associations...", &assoc_lines}});
}

AccountsOutcome AccountTable::ModifyUsers(const std::vector<std::string>& names,
                                          const std::vector<std::string>& accounts,
                                          const UserSettings& set, const std::string& cluster) {
  AccountsOutcome out;
  if (set.default_account) {
    std::vector<std::string> lacking;
    for (const std::string& name : names) {
      if (FindUser(name) != nullptr && !HasAssociation(*set.default_account, name)) {
        lacking.push_back(name);
      }
    }
    if (!lacking.empty()) {
      out.lines.push_back(fmt::format(
          " Can't modify because these users aren't associated with new default account '{}'...",
          *set.default_account));
      for (const std::string& name : lacking) {
        out.lines.push_back(fmt::format("  U = {} C = {}", name, cluster));
      }
      return out;
    }
  }
  std::vector<std::string> user_lines;
  std::vector<std::string> assoc_lines;
  for (const std::string& name : names) {
    UserRecord* u = MutableUser(name);
    if (u == nullptr) continue;
    if (set.default_account || set.admin_level) {
      if (set.default_account) u->default_account = *set.default_account;
      if (set.admin_level) u->admin_level = *set.admin_level;
      user_lines.push_back("  " + name);
    }
    if (!set.shares && !set.limits.any()) continue;
    for (UserAssociation& a : assocs_) {
      if (a.user != name || (!accounts.empty() && !Contains(accounts, a.account))) continue;
      if (set.shares) a.shares = *set.shares;
      ApplyLimits(set.limits, &a.limits);
      assoc_lines.push_back(AssocLine(a.account, a.user, cluster));
    }
  }
  return ModifiedReport(
      {{" Modified users...", &user_lines}, {" Modified user associations...", &assoc_lines}});
}

AccountsOutcome AccountTable::DeleteAccounts(const std::vector<std::string>& names) {
  AccountsOutcome out;
  std::vector<std::string> deleted;
  for (const std::string& name : names) {
    if (name == "root" || FindAccount(name) == nullptr || Contains(deleted, name)) continue;
    for (const AccountRecord& a : accounts_) {
      if (a.parent == name && !Contains(names, a.name)) {
        out.lines = {fmt::format(" Can't delete account '{}': account '{}' is below it (delete or "
                                 "move it first)",
                                 name, a.name),
                     " Nothing deleted"};
        return out;
      }
    }
    deleted.push_back(name);
  }
  if (deleted.empty()) {
    out.lines = {" Nothing deleted"};
    return out;
  }
  std::erase_if(accounts_, [&](const AccountRecord& a) { return Contains(deleted, a.name); });
  std::erase_if(assocs_, [&](const UserAssociation& a) { return Contains(deleted, a.account); });
  // A user whose default account went keeps another of its accounts.
  for (UserRecord& u : users_) {
    if (!Contains(deleted, u.default_account)) continue;
    auto other = std::find_if(assocs_.begin(), assocs_.end(),
                              [&](const UserAssociation& a) { return a.user == u.name; });
    u.default_account = other == assocs_.end() ? "" : other->account;
  }
  out.changed = true;
  out.lines.push_back(" Deleting accounts...");
  for (const std::string& name : deleted) out.lines.push_back("  " + name);
  return out;
}

AccountsOutcome AccountTable::DeleteUsers(const std::vector<std::string>& names,
                                          const std::vector<std::string>& accounts,
                                          const std::string& cluster) {
  AccountsOutcome out;
  std::vector<std::string> lines;
  if (accounts.empty()) {
    for (const std::string& name : names) {
      if (FindUser(name) == nullptr) continue;
      lines.push_back("  " + name);
      std::erase_if(users_, [&](const UserRecord& u) { return u.name == name; });
      std::erase_if(assocs_, [&](const UserAssociation& a) { return a.user == name; });
    }
    if (!lines.empty()) lines.insert(lines.begin(), " Deleting users...");
  } else {
    for (const std::string& name : names) {
      for (const std::string& account : accounts) {
        if (!HasAssociation(account, name)) continue;
        lines.push_back(AssocLine(account, name, cluster));
        std::erase_if(assocs_, [&](const UserAssociation& a) {
          return a.user == name && a.account == account;
        });
      }
      if (UserRecord* u = MutableUser(name);
          u != nullptr && Contains(accounts, u->default_account)) {
        auto other = std::find_if(assocs_.begin(), assocs_.end(),
                                  [&](const UserAssociation& a) { return a.user == name; });
        u->default_account = other == assocs_.end() ? "" : other->account;
      }
    }
    if (!lines.empty()) lines.insert(lines.begin(), " Deleting user associations...");
  }
  if (lines.empty()) {
    out.lines = {" Nothing deleted"};
    return out;
  }
  out.changed = true;
  out.lines = std::move(lines);
  return out;
}

nlohmann::json AccountTable::ToJson() const {
  nlohmann::json accounts = nlohmann::json::array();
  for (const AccountRecord& a : accounts_) {
    accounts.push_back({{"name", a.name},
                        {"parent", a.parent},
                        {"description", a.description},
                        {"organization", a.organization},
                        {"shares", a.shares},
                        {"limits", LimitsJson(a.limits)}});
  }
  nlohmann::json users = nlohmann::json::array();
  for (const UserRecord& u : users_) {
    users.push_back(
        {{"name", u.name}, {"default_account", u.default_account}, {"admin_level", u.admin_level}});
  }
  nlohmann::json assocs = nlohmann::json::array();
  for (const UserAssociation& a : assocs_) {
    assocs.push_back({{"account", a.account},
                      {"user", a.user},
                      {"shares", a.shares},
                      {"limits", LimitsJson(a.limits)}});
  }
  nlohmann::json qos = nlohmann::json::array();
  for (const QosRecord& q : qos_) {
    qos.push_back({{"name", q.name},
                   {"description", q.description},
                   {"priority", q.priority},
                   {"max_jobs_per_user", q.max_jobs_per_user},
                   {"max_submit_jobs_per_user", q.max_submit_jobs_per_user},
                   {"grp_jobs", q.grp_jobs},
                   {"max_wall_s", q.max_wall_s},
                   {"max_tres_per_user", TresJson(q.max_tres_per_user)},
                   {"max_tres_per_job", TresJson(q.max_tres_per_job)},
                   {"grp_tres", TresJson(q.grp_tres)},
                   {"deny_on_limit", q.deny_on_limit},
                   {"usage_factor", q.usage_factor},
                   {"preempt", q.preempt},
                   {"preempt_mode", q.preempt_mode ? std::string(PreemptModeName(*q.preempt_mode)) : ""},
                   {"grace_time_s", q.grace_time_s},
                   {"preempt_exempt_time_s", q.preempt_exempt_time_s}});
  }
  return {{"accounts", accounts}, {"users", users}, {"associations", assocs}, {"qos", qos}};
}

util::Result<AccountTable> AccountTable::FromJson(const nlohmann::json& j) {
  AccountTable t;
  try {
    t.accounts_.clear();
    for (const auto& a : j.at("accounts")) {
      t.accounts_.push_back({a.at("name").get<std::string>(), a.at("parent").get<std::string>(),
                             a.at("description").get<std::string>(),
                             a.at("organization").get<std::string>(), a.at("shares").get<int64_t>(),
                             LimitsFromJson(a.value("limits", nlohmann::json()))});
    }
    for (const auto& u : j.at("users")) {
      t.users_.push_back({u.at("name").get<std::string>(),
                          u.at("default_account").get<std::string>(),
                          u.at("admin_level").get<std::string>()});
    }
    for (const auto& a : j.at("associations")) {
      t.assocs_.push_back({a.at("account").get<std::string>(), a.at("user").get<std::string>(),
                           a.at("shares").get<int64_t>(),
                           LimitsFromJson(a.value("limits", nlohmann::json()))});
    }
    // Records written before QOS existed have none: "normal" stays.
    if (j.contains("qos")) t.qos_.clear();
    for (const auto& q : j.value("qos", nlohmann::json::array())) {
      QosRecord r;
      r.name = q.at("name").get<std::string>();
      r.description = q.at("description").get<std::string>();
      r.priority = q.at("priority").get<int64_t>();
      r.max_jobs_per_user = q.at("max_jobs_per_user").get<int64_t>();
      r.max_submit_jobs_per_user = q.at("max_submit_jobs_per_user").get<int64_t>();
      r.grp_jobs = q.at("grp_jobs").get<int64_t>();
      r.max_wall_s = q.at("max_wall_s").get<int64_t>();
      r.max_tres_per_user = TresFromJson(q.at("max_tres_per_user"));
      r.max_tres_per_job = TresFromJson(q.at("max_tres_per_job"));
      r.grp_tres = TresFromJson(q.at("grp_tres"));
      r.deny_on_limit = q.at("deny_on_limit").get<bool>();
      r.usage_factor = q.at("usage_factor").get<double>();
      // Records written before preempt/qos have none of these.
      r.preempt = q.value("preempt", std::vector<std::string>{});
      const std::string mode = q.value("preempt_mode", "");
      if (!mode.empty()) {
        r.preempt_mode = ParsePreemptMode(mode);
        if (!r.preempt_mode) return util::InvalidArgument("accounts record: bad preempt_mode " + mode);
      }
      r.grace_time_s = q.value("grace_time_s", int64_t{0});
      r.preempt_exempt_time_s = q.value("preempt_exempt_time_s", int64_t{-1});
      t.qos_.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    return util::InvalidArgument(std::string("accounts record: ") + e.what());
  }
  if (t.FindAccount("root") == nullptr) {
    return util::InvalidArgument("accounts record: no root account");
  }
  if (t.FindQos("normal") == nullptr) {
    return util::InvalidArgument("accounts record: no normal QOS");
  }
  t.Sort();
  return t;
}

}  // namespace muster::core

// sacctmgr's changes in the controller: the account table (core/accounts.h)
// is changed on a copy, stored in the accounting database, and only then
// swapped in, so a change that cannot be stored changes nothing.
#include <fmt/format.h>
#include <unistd.h>

#include <functional>

#include "ctld/controller.h"
#include "sched/pipeline.h"
#include "util/log.h"

namespace muster::ctld {

using nlohmann::json;

namespace {

std::vector<std::string> Names(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return {};
  std::vector<std::string> out;
  for (const auto& v : j[key]) {
    if (v.is_string() && !v.get<std::string>().empty()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::optional<std::string> Text(const json& set, const char* key) {
  if (!set.contains(key) || !set[key].is_string()) return std::nullopt;
  return set[key].get<std::string>();
}

util::Result<std::optional<int64_t>> Shares(const json& set) {
  if (!set.contains("fairshare")) return std::optional<int64_t>();
  if (!set["fairshare"].is_number_integer() || set["fairshare"].get<int64_t>() < 0 ||
      set["fairshare"].get<int64_t>() > UINT32_MAX) {
    return util::InvalidArgument("Fairshare must be a number of shares, 0 or more");
  }
  return std::optional<int64_t>(set["fairshare"].get<int64_t>());
}

// A count of a "set" (-1 = none), when given.
util::Status ReadCount(const json& set, const char* key, std::optional<int64_t>* out) {
  if (!set.contains(key)) return util::Status::Ok();
  if (!set[key].is_number_integer() || set[key].get<int64_t>() < -1) {
    return util::InvalidArgument(std::string(key) + ": expected a count, or -1 for none");
  }
  *out = set[key].get<int64_t>();
  return util::Status::Ok();
}

// TRES limits of a "set", as sacctmgr writes them, when given.
util::Status ReadTres(const json& set, const char* key, std::optional<core::TresLimits>* out) {
  if (!set.contains(key)) return util::Status::Ok();
  auto t = core::ParseTresLimits(set[key].is_string() ? set[key].get<std::string>() : "?");
  if (!t.ok()) return util::InvalidArgument(std::string(key) + ": " + t.status().message());
  *out = *t;
  return util::Status::Ok();
}

// The association limits of a "set" (account or user).
util::Result<core::AssocLimitSettings> LimitSettingsOf(const json& set) {
  core::AssocLimitSettings l;
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "grp_jobs", &l.grp_jobs));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "max_jobs", &l.max_jobs));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "max_submit_jobs", &l.max_submit_jobs));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "max_wall_s", &l.max_wall_s));
  MUSTER_RETURN_IF_ERROR(ReadTres(set, "grp_tres", &l.grp_tres));
  return l;
}

// The "set" of a QOS change: counts (-1 clears), MaxWall in seconds,
// TRES limits as sacctmgr writes them.
util::Result<core::QosSettings> QosSettingsOf(const json& set) {
  core::QosSettings s;
  s.description = Text(set, "description");
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "priority", &s.priority));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "max_jobs_per_user", &s.max_jobs_per_user));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "max_submit_jobs_per_user", &s.max_submit_jobs_per_user));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "grp_jobs", &s.grp_jobs));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "max_wall_s", &s.max_wall_s));
  MUSTER_RETURN_IF_ERROR(ReadTres(set, "max_tres_per_user", &s.max_tres_per_user));
  MUSTER_RETURN_IF_ERROR(ReadTres(set, "max_tres_per_job", &s.max_tres_per_job));
  MUSTER_RETURN_IF_ERROR(ReadTres(set, "grp_tres", &s.grp_tres));
  if (set.contains("deny_on_limit")) s.deny_on_limit = set.value("deny_on_limit", false);
  if (set.contains("usage_factor")) {
    if (!set["usage_factor"].is_number() || set["usage_factor"].get<double>() < 0) {
      return util::InvalidArgument("UsageFactor must be a number of at least 0");
    }
    s.usage_factor = set["usage_factor"].get<double>();
  }
  auto names = [&](const char* key) { return Names(set, key); };
  if (set.contains("preempt")) s.preempt = names("preempt");
  s.preempt_add = names("preempt_add");
  s.preempt_remove = names("preempt_remove");
  if (set.contains("preempt_mode")) {
    s.preempt_mode = core::ParsePreemptMode(set.value("preempt_mode", ""));
    if (!s.preempt_mode) return util::InvalidArgument("Bad Preempt Mode given");
  }
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "grace_time_s", &s.grace_time_s));
  MUSTER_RETURN_IF_ERROR(ReadCount(set, "preempt_exempt_time_s", &s.preempt_exempt_time_s));
  return s;
}

}  // namespace

util::Status Controller::LoadAccounts() {
  auto doc = acct_->LoadAccounts();
  if (!doc.ok()) {
    // The database may come back; without it every user is unadministered.
    util::LogError("accounts: {}", doc.status().message());
    return util::Status::Ok();
  }
  if (doc->empty()) return util::Status::Ok();
  json j = json::parse(*doc, nullptr, false);
  auto table = j.is_discarded()
                   ? util::Result<core::AccountTable>(util::InvalidArgument("not JSON"))
                   : core::AccountTable::FromJson(j);
  if (!table.ok()) {
    return util::Internal("accounts in " + cfg_.state_save_location +
                          "/accounting.db: " + table.status().message());
  }
  cluster_.accounts() = std::move(table).value();
  return util::Status::Ok();
}

util::Result<core::AccountsOutcome> Controller::ChangeAccounts(const json& request,
                                                               const Caller& caller) {
  // Operators, and the user musterd runs as (who started a laptop cluster).
  if (!caller.admin && caller.uid != ::getuid()) {
    return util::PermissionDenied("Your user doesn't have privilege to perform this action");
  }
  const std::string action = request.value("action", "");
  const std::string entity = request.value("entity", "");
  const std::vector<std::string> names = Names(request, "names");
  const json set = request.value("set", json::object());
  const std::vector<std::string> where_accounts =
      Names(request.value("where", json::object()), "accounts");
  if (names.empty()) return util::InvalidArgument("No names given");
  auto shares = Shares(set);
  if (!shares.ok()) return shares.status();
  core::AccountTable changed = cluster_.accounts();
  core::AccountsOutcome out;
  const std::string& cluster = cfg_.cluster_name;
  auto limits = LimitSettingsOf(set);
  if (!limits.ok()) return limits.status();
  if (entity == "account") {
    core::AccountSettings s{Text(set, "description"), Text(set, "organization"),
                            Text(set, "parent"), *shares, *limits};
    if (action == "add") {
      out = changed.AddAccounts(names, s, cluster);
    } else if (action == "modify") {
      out = changed.ModifyAccounts(names, s, cluster);
    } else if (action == "delete") {
      out = changed.DeleteAccounts(names);
    } else {
      return util::InvalidArgument("Unknown action '" + action + "'");
    }
  } else if (entity == "user") {
    core::UserSettings s{Names(set, "accounts"), Text(set, "default_account"), *shares,
                         Text(set, "admin_level"), *limits};
    if (action == "add") {
      out = changed.AddUsers(names, s, cluster);
    } else if (action == "modify") {
      out = changed.ModifyUsers(names, where_accounts, s, cluster);
    } else if (action == "delete") {
      out = changed.DeleteUsers(names, where_accounts, cluster);
    } else {
      return util::InvalidArgument("Unknown action '" + action + "'");
    }
  } else if (entity == "qos") {
    auto s = QosSettingsOf(set);
    if (!s.ok()) return s.status();
    if (action == "add") {
      out = changed.AddQos(names, *s);
    } else if (action == "modify") {
      out = changed.ModifyQos(names, *s);
    } else if (action == "delete") {
      out = changed.DeleteQos(names);
    } else {
      return util::InvalidArgument("Unknown action '" + action + "'");
    }
    MUSTER_RETURN_IF_ERROR(changed.CheckPreemptLists());
  } else {
    return util::InvalidArgument("Unknown entity '" + entity + "'");
  }
  if (!out.changed || !request.value("commit", false)) return out;
  MUSTER_RETURN_IF_ERROR(acct_->SaveAccounts(changed.ToJson().dump()));
  cluster_.accounts() = std::move(changed);
  util::LogInfo("accounts: {} {} {} by uid {}", action, entity, names.front(), caller.uid);
  // Fairshare follows the new tree at the next pass.
  RequestSchedule();
  return out;
}

}  // namespace muster::ctld

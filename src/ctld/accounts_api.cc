// sacctmgr's changes in the controller: the account table (core/accounts.h)
// is changed on a copy, stored in the accounting database, and only then
// swapped in, so a change that cannot be stored changes nothing.
#include <unistd.h>

#include "ctld/controller.h"
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
  auto table = j.is_discarded() ? util::Result<core::AccountTable>(util::InvalidArgument("not JSON"))
                                : core::AccountTable::FromJson(j);
  if (!table.ok()) {
    return util::Internal("accounts in " + cfg_.state_save_location +
                          "/accounting.db: " + table.status().message());
  }
  accounts_ = std::move(table).value();
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
  const std::vector<std::string> where_accounts = Names(request.value("where", json::object()), "accounts");
  if (names.empty()) return util::InvalidArgument("No names given");
  auto shares = Shares(set);
  if (!shares.ok()) return shares.status();
  core::AccountTable changed = accounts_;
  core::AccountsOutcome out;
  const std::string& cluster = cfg_.cluster_name;
  if (entity == "account") {
    core::AccountSettings s{Text(set, "description"), Text(set, "organization"), Text(set, "parent"), *shares};
    if (action == "add") {
      out = changed.AddAccounts(names, s, cluster);
    } else if (action == "modify") {
      out = changed.ModifyAccounts(names, s, cluster);
    } else if (action == "delete") {
      out = changed.DeleteAccounts(names, cluster);
    } else {
      return util::InvalidArgument("Unknown action '" + action + "'");
    }
  } else if (entity == "user") {
    core::UserSettings s{Names(set, "accounts"), Text(set, "default_account"), *shares,
                         Text(set, "admin_level")};
    if (action == "add") {
      out = changed.AddUsers(names, s, cluster);
    } else if (action == "modify") {
      out = changed.ModifyUsers(names, where_accounts, s, cluster);
    } else if (action == "delete") {
      out = changed.DeleteUsers(names, where_accounts, cluster);
    } else {
      return util::InvalidArgument("Unknown action '" + action + "'");
    }
  } else {
    return util::InvalidArgument("Unknown entity '" + entity + "'");
  }
  if (!out.changed || !request.value("commit", false)) return out;
  MUSTER_RETURN_IF_ERROR(acct_->SaveAccounts(changed.ToJson().dump()));
  accounts_ = std::move(changed);
  util::LogInfo("accounts: {} {} {} by uid {}", action, entity, names.front(), caller.uid);
  // Fairshare follows the new tree at the next pass.
  RequestSchedule();
  return out;
}

}  // namespace muster::ctld

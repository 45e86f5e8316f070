#include "core/reservation.h"

#include <algorithm>

#include "util/strings.h"

namespace muster::core {
namespace {

struct FlagName {
  uint32_t flag;
  const char* name;
};
// Slurm's order when it lists them.
constexpr FlagName kFlags[] = {
    {kResvMaint, "MAINT"},          {kResvFlex, "FLEX"},     {kResvIgnoreJobs, "IGNORE_JOBS"},
    {kResvDaily, "DAILY"},          {kResvWeekly, "WEEKLY"}, {kResvPurgeComp, "PURGE_COMP"},
    {kResvSpecNodes, "SPEC_NODES"},
};

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

bool Reservation::Admits(const std::string& user, const std::string& account) const {
  if (Has(kResvMaint) && users.empty() && accounts.empty()) return false;
  return Listed(users, user) || Listed(accounts, account);
}

bool Reservation::Covers(const std::string& node, int64_t from, int64_t to) const {
  return from < end && start < to && Listed(nodes, node);
}

util::Result<uint32_t> ParseReservationFlags(const std::string& text, uint32_t* removed) {
  uint32_t flags = 0;
  for (const std::string& item : util::Split(text, ',')) {
    std::string name = util::ToUpper(std::string(util::Trim(item)));
    if (name.empty()) continue;
    bool remove = false;
    if (name[0] == '-' || name[0] == '+') {
      remove = name[0] == '-';
      name.erase(0, 1);
    }
    // PURGE_COMP may carry its time (PURGE_COMP=00:05:00); Muster keeps 5 minutes.
    if (name.rfind("PURGE_COMP", 0) == 0) name = "PURGE_COMP";
    auto it = std::find_if(std::begin(kFlags), std::end(kFlags),
                           [&](const FlagName& f) { return name == f.name; });
    if (it == std::end(kFlags) || it->flag == kResvSpecNodes) {
      return util::InvalidArgument("Error parsing flags " + std::string(util::Trim(item)) + ".");
    }
    if (remove) {
      if (removed != nullptr) *removed |= it->flag;
    } else {
      flags |= it->flag;
    }
  }
  return flags;
}

std::string FormatReservationFlags(uint32_t flags) {
  std::string out;
  for (const FlagName& f : kFlags) {
    if ((flags & f.flag) == 0) continue;
    if (!out.empty()) out += ",";
    out += f.name;
    if (f.flag == kResvPurgeComp) out += "=00:05:00";
  }
  return out;
}

void to_json(nlohmann::json& j, const Reservation& r) {
  j = nlohmann::json{{"name", r.name},   {"id", r.id},
                     {"start", r.start}, {"end", r.end},
                     {"nodes", r.nodes}, {"partition", r.partition},
                     {"users", r.users}, {"accounts", r.accounts},
                     {"flags", r.flags}, {"idle_since", r.idle_since}};
}

void from_json(const nlohmann::json& j, Reservation& r) {
  r.name = j.value("name", "");
  r.id = j.value("id", int64_t{0});
  r.start = j.value("start", int64_t{0});
  r.end = j.value("end", int64_t{0});
  r.nodes = j.value("nodes", std::vector<std::string>{});
  r.partition = j.value("partition", "");
  r.users = j.value("users", std::vector<std::string>{});
  r.accounts = j.value("accounts", std::vector<std::string>{});
  r.flags = j.value("flags", uint32_t{0});
  r.idle_since = j.value("idle_since", int64_t{0});
}

}  // namespace muster::core

#include "sched/usage.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace muster::sched {

using config::UsageReset;

int64_t NextUsageReset(UsageReset period, int64_t t) {
  if (period == UsageReset::kNone || period == UsageReset::kNow) return 0;
  const time_t now = static_cast<time_t>(t);
  struct tm tm {};
  localtime_r(&now, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  switch (period) {
    case UsageReset::kDaily:
      tm.tm_mday += 1;
      break;
    case UsageReset::kWeekly:
      tm.tm_mday += 7 - tm.tm_wday;
      break;
    case UsageReset::kMonthly:
      tm.tm_mday = 1;
      tm.tm_mon += 1;
      break;
    case UsageReset::kQuarterly:
      tm.tm_mday = 1;
      tm.tm_mon = tm.tm_mon / 3 * 3 + 3;
      break;
    case UsageReset::kYearly:
      tm.tm_mday = 1;
      tm.tm_mon = 0;
      tm.tm_year += 1;
      break;
    default:
      return 0;
  }
  return static_cast<int64_t>(mktime(&tm));
}

UsageLedger::UsageLedger(const config::PriorityConfig& policy, int64_t now)
    : policy_(policy), time_(now), next_reset_(NextUsageReset(policy.usage_reset, now)) {}

void UsageLedger::Decay(int64_t seconds) {
  if (policy_.decay_half_life_s <= 0 || seconds <= 0) return;
  const double factor =
      std::exp2(-static_cast<double>(seconds) / static_cast<double>(policy_.decay_half_life_s));
  for (auto& [key, used] : usage_) used *= factor;
  for (auto& [key, used] : tres_usage_) {
    used.cpu *= factor;
    used.mem_mb *= factor;
    used.node *= factor;
    used.gpu *= factor;
  }
}

void UsageLedger::Charge(const UsageCharge& c, int64_t seconds) {
  const TresUsage& r = c.rate;
  if (c.billing <= 0 && r.cpu <= 0 && r.mem_mb <= 0 && r.node <= 0 && r.gpu <= 0) return;
  const double s = static_cast<double>(seconds);
  // Every key with TRES usage has a billing entry too (ToJson saves by it).
  usage_[c.key] += std::max(0.0, c.billing) * s;
  TresUsage& t = tres_usage_[c.key];
  t.cpu += c.rate.cpu * s;
  t.mem_mb += c.rate.mem_mb * s;
  t.node += c.rate.node * s;
  t.gpu += c.rate.gpu * s;
}

void UsageLedger::Advance(int64_t now, const std::vector<UsageCharge>& running) {
  if (now <= time_) return;
  if (next_reset_ != 0 && now >= next_reset_) {
    usage_.clear();
    tres_usage_.clear();
    // Running jobs are charged from the reset on.
    time_ = std::max(time_, next_reset_);
    next_reset_ = NextUsageReset(policy_.usage_reset, now);
  } else {
    Decay(now - time_);
  }
  for (const UsageCharge& c : running) {
    const int64_t from = std::max(c.start, time_);
    if (now > from) Charge(c, now - from);
  }
  time_ = now;
}

void UsageLedger::ChargeEnded(const UsageCharge& job, int64_t end) {
  const int64_t from = std::max(job.start, time_);
  if (end > from) Charge(job, end - from);
}

nlohmann::json UsageLedger::ToJson() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, used] : usage_) {
    const auto t = tres_usage_.find(key);
    const TresUsage tres = t == tres_usage_.end() ? TresUsage{} : t->second;
    rows.push_back({key.first, key.second, used, {tres.cpu, tres.mem_mb, tres.node, tres.gpu}});
  }
  return {{"time", time_}, {"usage", std::move(rows)}};
}

util::Status UsageLedger::Load(const nlohmann::json& saved) {
  if (!saved.is_object() || !saved.contains("time") || !saved["time"].is_number_integer() ||
      !saved.contains("usage") || !saved["usage"].is_array()) {
    return util::InvalidArgument("usage record: expected {\"time\": N, \"usage\": [...]}");
  }
  auto usage_figure = [](const nlohmann::json& v) { return v.is_number() && v.get<double>() >= 0; };
  std::map<AssocKey, double> loaded;
  std::map<AssocKey, TresUsage> loaded_tres;
  for (const auto& row : saved["usage"]) {
    const bool tres_ok =
        row.is_array() && (row.size() == 3 ||
                           (row.size() == 4 && row[3].is_array() && row[3].size() == 4 &&
                            std::all_of(row[3].begin(), row[3].end(), usage_figure)));
    if (!tres_ok || !row[0].is_string() || !row[1].is_string() || !usage_figure(row[2])) {
      return util::InvalidArgument("usage record: bad row " + row.dump());
    }
    const AssocKey key{row[0].get<std::string>(), row[1].get<std::string>()};
    loaded[key] = row[2].get<double>();
    if (row.size() == 4) {
      loaded_tres[key] = {row[3][0].get<double>(), row[3][1].get<double>(),
                          row[3][2].get<double>(), row[3][3].get<double>()};
    }
  }
  if (policy_.usage_reset == UsageReset::kNow) return util::Status::Ok();
  usage_ = std::move(loaded);
  tres_usage_ = std::move(loaded_tres);
  time_ = std::min(time_, saved["time"].get<int64_t>());
  next_reset_ = NextUsageReset(policy_.usage_reset, time_);
  return util::Status::Ok();
}

}  // namespace muster::sched

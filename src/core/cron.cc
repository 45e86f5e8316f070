#include "core/cron.h"

#include <time.h>

#include <array>
#include <vector>

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::core {
namespace {

struct FieldRange {
  const char* name;
  int min;
  int max;
  const char* const* names;  // the names of min.. (months, weekdays), or null
};

constexpr const char* kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                   "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kWeekdays[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"};

util::Result<int> Value(std::string_view text, const FieldRange& f) {
  if (f.names != nullptr) {
    for (int i = 0; i <= f.max - f.min; ++i) {
      if (util::EqualsIgnoreCase(text, f.names[i])) return f.min + i;
    }
  }
  util::Result<int64_t> n = util::ParseInt(text);
  if (!n.ok() || *n < f.min || *n > f.max) {
    return util::InvalidArgument(
        fmt::format("{} field: '{}' is not {}-{}", f.name, text, f.min, f.max));
  }
  return static_cast<int>(*n);
}

// Sets in `bits` the values `field` names (bits indexed by value).
template <size_t N>
util::Status ParseField(std::string_view field, const FieldRange& f, std::bitset<N>* bits) {
  for (const std::string& item : util::Split(field, ',', false)) {
    std::string range = item;
    int step = 1;
    if (size_t slash = item.find('/'); slash != std::string::npos) {
      util::Result<int64_t> n = util::ParseInt(item.substr(slash + 1));
      if (!n.ok() || *n < 1 || *n > f.max) {
        return util::InvalidArgument(fmt::format("{} field: bad step in '{}'", f.name, item));
      }
      step = static_cast<int>(*n);
      range = item.substr(0, slash);
    }
    int lo = f.min, hi = f.max;
    if (range != "*") {
      const size_t dash = range.find('-');
      util::Result<int> a = Value(range.substr(0, dash), f);
      if (!a.ok()) return a.status();
      lo = hi = *a;
      if (dash != std::string::npos) {
        util::Result<int> b = Value(range.substr(dash + 1), f);
        if (!b.ok()) return b.status();
        hi = *b;
        if (hi < lo) {
          return util::InvalidArgument(fmt::format("{} field: '{}' runs backwards", f.name, item));
        }
      } else if (step > 1) {
        hi = f.max;  // "a/n": from a on
      }
    }
    for (int v = lo; v <= hi; v += step) bits->set(static_cast<size_t>(v));
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<CronSchedule> ParseCronSchedule(std::string_view spec_in) {
  std::string spec(util::Trim(spec_in));
  static const std::array<std::pair<const char*, const char*>, 7> kShorthands = {{
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  if (!spec.empty() && spec[0] == '@') {
    bool found = false;
    for (const auto& [name, fields] : kShorthands) {
      if (util::EqualsIgnoreCase(spec, name)) {
        spec = fields;
        found = true;
      }
    }
    if (!found) return util::InvalidArgument("unknown schedule " + spec);
  }
  const std::vector<std::string> fields = util::Split(spec, ' ');
  if (fields.size() != 5) {
    return util::InvalidArgument(
        fmt::format("a schedule has 5 fields (minute hour day month weekday), not {}",
                    fields.size()));
  }
  CronSchedule s;
  MUSTER_RETURN_IF_ERROR(ParseField(fields[0], {"minute", 0, 59, nullptr}, &s.minutes));
  MUSTER_RETURN_IF_ERROR(ParseField(fields[1], {"hour", 0, 23, nullptr}, &s.hours));
  MUSTER_RETURN_IF_ERROR(ParseField(fields[2], {"day of month", 1, 31, nullptr}, &s.days));
  MUSTER_RETURN_IF_ERROR(ParseField(fields[3], {"month", 1, 12, kMonths}, &s.months));
  std::bitset<8> weekdays;
  MUSTER_RETURN_IF_ERROR(ParseField(fields[4], {"day of week", 0, 7, kWeekdays}, &weekdays));
  for (size_t d = 0; d < 7; ++d) s.weekdays[d] = weekdays[d];
  if (weekdays[7]) s.weekdays[0] = true;  // 7 is Sunday too
  s.any_day = fields[2][0] == '*';
  s.any_weekday = fields[4][0] == '*';
  return s;
}

int64_t NextCronTime(const CronSchedule& s, int64_t after) {
  time_t t = static_cast<time_t>(after - after % 60 + 60);
  struct tm tm;
  localtime_r(&t, &tm);
  tm.tm_sec = 0;
  for (int days = 0; days < 366 * 8; ++days) {
    const bool day_ok = s.days[static_cast<size_t>(tm.tm_mday)];
    const bool weekday_ok = s.weekdays[static_cast<size_t>(tm.tm_wday)];
    const bool day_matches = s.any_day && s.any_weekday ? true
                             : s.any_day               ? weekday_ok
                             : s.any_weekday           ? day_ok
                                                       : day_ok || weekday_ok;
    if (s.months[static_cast<size_t>(tm.tm_mon + 1)] && day_matches) {
      for (; tm.tm_hour < 24; ++tm.tm_hour, tm.tm_min = 0) {
        if (!s.hours[static_cast<size_t>(tm.tm_hour)]) continue;
        for (; tm.tm_min < 60; ++tm.tm_min) {
          if (!s.minutes[static_cast<size_t>(tm.tm_min)]) continue;
          struct tm probe = tm;
          probe.tm_isdst = -1;
          const time_t when = mktime(&probe);
          // A local time skipped by a DST change normalises elsewhere.
          if (when > after && probe.tm_hour == tm.tm_hour && probe.tm_min == tm.tm_min) {
            return static_cast<int64_t>(when);
          }
        }
      }
    }
    // The next day, at midnight.
    tm.tm_mday += 1;
    tm.tm_hour = tm.tm_min = 0;
    tm.tm_isdst = -1;
    time_t next = mktime(&tm);
    localtime_r(&next, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  }
  return -1;
}

}  // namespace muster::core

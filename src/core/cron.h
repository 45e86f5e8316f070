// The schedule of a crontab entry (scrontab): five fields, minute hour
// day-of-month month day-of-week, each "*", a number or name, a range
// "a-b", a step "*/n" or "a-b/n", or a list of those; or one of @yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly. As cron, an
// entry restricting both the day of month and the day of week runs on
// days matching either. Times are local. Pure.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace muster::core {

struct CronSchedule {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days;    // 1-31
  std::bitset<13> months;  // 1-12
  std::bitset<7> weekdays;  // 0 Sunday - 6 Saturday
  bool any_day = true;      // the day-of-month field is "*"
  bool any_weekday = true;  // the day-of-week field is "*"
};

// The schedule of `spec` (the five fields or an @ name); an error names the
// field and what is wrong with it.
util::Result<CronSchedule> ParseCronSchedule(std::string_view spec);

// The first minute after `after` (epoch seconds) the schedule names, in
// local time; -1 when none comes within eight years (31 February).
int64_t NextCronTime(const CronSchedule& s, int64_t after);

}  // namespace muster::core

#include "core/cron.h"

#include <stdlib.h>
#include <time.h>

#include <gtest/gtest.h>

namespace muster::core {
namespace {

class CronTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  // 2026-12-07 10:30:15 UTC, a Monday.
  static constexpr int64_t kNow = 1796639415;

  static int64_t Next(const char* spec, int64_t after = kNow) {
    util::Result<CronSchedule> s = ParseCronSchedule(spec);
    EXPECT_TRUE(s.ok()) << spec << ": " << s.status().message();
    return s.ok() ? NextCronTime(*s, after) : -2;
  }
};

TEST_F(CronTest, NextMinuteMatchesTheFields) {
  EXPECT_EQ(Next("* * * * *"), kNow - 15 + 60);           // 10:31
  EXPECT_EQ(Next("*/15 * * * *"), kNow - 15 - 30 * 60 + 45 * 60);  // 10:45
  EXPECT_EQ(Next("0 12 * * *"), kNow - 15 - 30 * 60 + 120 * 60);   // 12:00
  EXPECT_EQ(Next("30 10 * * *"), kNow - 15 + 86400);      // 10:30 tomorrow (now is past it)
  EXPECT_EQ(Next("0 0 * * sun"), kNow - 15 - 630 * 60 + 6 * 86400);  // Sunday 13th
  EXPECT_EQ(Next("@hourly"), kNow - 15 + 30 * 60);        // 11:00
  EXPECT_EQ(Next("0 0 1 jan *"), 1798761600);             // 2027-01-01
  EXPECT_EQ(Next("0 9-17/4 * * mon-fri"), kNow - 15 - 90 * 60 + 4 * 3600);  // 13:00
  // Day of month and day of week both restricted: either matches.
  EXPECT_EQ(Next("0 0 25 * 2"), kNow - 15 - 630 * 60 + 86400);  // Tuesday the 8th
  EXPECT_EQ(Next("0 0 31 2 *"), -1);                      // never
}

TEST_F(CronTest, BadSchedulesNameTheField) {
  for (const auto& [spec, want] : std::vector<std::pair<const char*, const char*>>{
           {"* * * *", "a schedule has 5 fields"},
           {"60 * * * *", "minute field: '60' is not 0-59"},
           {"* 5-2 * * *", "hour field: '5-2' runs backwards"},
           {"* * * foo *", "month field: 'foo' is not 1-12"},
           {"*/0 * * * *", "minute field: bad step"},
           {"@reboot", "unknown schedule @reboot"},
       }) {
    util::Result<CronSchedule> s = ParseCronSchedule(spec);
    ASSERT_FALSE(s.ok()) << spec;
    EXPECT_NE(s.status().message().find(want), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace muster::core

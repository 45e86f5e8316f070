#include "util/slurm_time.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace muster::util {
namespace {

struct ParseCase {
  std::string text;
  int64_t want_seconds;
};

TEST(ParseTimeLimitSecondsTest, AcceptsEveryForm) {
  const std::vector<ParseCase> cases = {
      {"0", 0},
      {"00", 0},
      {"1", 60},             // MM
      {"90", 5400},          // minutes are not capped
      {"30:15", 1815},       // MM:SS
      {"0:30", 30},
      {"1:90", 150},         // fields are not range-checked (as in Slurm)
      {"10:61", 661},
      {"2:03:04", 7384},     // HH:MM:SS
      {"25:00:00", 90000},
      {"1-0", 86400},        // D-HH
      {"2-12", 216000},
      {"1-25", 176400},
      {"1-01:30", 91800},    // D-HH:MM
      {"1-01:01:01", 90061}, // D-HH:MM:SS
      {"0-00:00:05", 5},
      {"UNLIMITED", kUnlimited},
      {"unlimited", kUnlimited},
      {"INFINITE", kUnlimited},
      {"Infinite", kUnlimited},
      {"-1", kUnlimited},
      {" 5 ", 300},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.text);
    Result<int64_t> got = ParseTimeLimitSeconds(c.text);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, c.want_seconds);
  }
}

TEST(ParseTimeLimitSecondsTest, RejectsBadInput) {
  const std::vector<std::string> cases = {
      "",     " ",      "abc",    "1:2:3:4", "1-2-3", "1-2:3:4:5", "1:",    ":1",
      "1::2", "-",      "-2",     "1-",      "-1-2",  "1.5",       "5m",    "+5",
      "1 2",  "1-a",    "a-1",    "UNLIMITEDX", "1-:2", "99999999999999999999",
      // Past a million days in any form (the fuzzer's "2-201224024" did not
      // read back from the form scontrol prints).
      "2-201224024", "1000000-24", "999999999:0:0",
  };
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    Result<int64_t> got = ParseTimeLimitSeconds(text);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument);
    EXPECT_NE(got.status().message().find("'" + text + "'"), std::string::npos)
        << got.status().message();
  }
}

struct FormatCase {
  int64_t seconds;
  std::string squeue;    // FormatDuration
  std::string scontrol;  // FormatDurationLong
};

TEST(FormatDurationTest, MatchesSqueueAndScontrol) {
  const std::vector<FormatCase> cases = {
      {0, "0:00", "00:00:00"},
      {5, "0:05", "00:00:05"},
      {59, "0:59", "00:00:59"},
      {65, "1:05", "00:01:05"},
      {307, "5:07", "00:05:07"},
      {3599, "59:59", "00:59:59"},
      {3600, "1:00:00", "01:00:00"},
      {3723, "1:02:03", "01:02:03"},
      {86399, "23:59:59", "23:59:59"},
      {86400, "1-00:00:00", "1-00:00:00"},
      {90061, "1-01:01:01", "1-01:01:01"},
      {93784, "1-02:03:04", "1-02:03:04"},
      {259200, "3-00:00:00", "3-00:00:00"},
      {100 * 86400 + 1, "100-00:00:01", "100-00:00:01"},
      {kUnlimited, "UNLIMITED", "UNLIMITED"},
      {-5, "INVALID", "INVALID"},
  };
  for (const FormatCase& c : cases) {
    SCOPED_TRACE(c.seconds);
    EXPECT_EQ(FormatDuration(c.seconds), c.squeue);
    EXPECT_EQ(FormatDurationLong(c.seconds), c.scontrol);
  }
}

TEST(ParseTimeLimitSecondsTest, AMillionDaysIsTheLongest) {
  EXPECT_EQ(ParseTimeLimitSeconds("1000000-00:00:00").value(), int64_t{1000000} * 86400);
  EXPECT_EQ(ParseTimeLimitSeconds(FormatDurationLong(int64_t{1000000} * 86400)).value(),
            int64_t{1000000} * 86400);
}

TEST(FormatDurationTest, RoundTripsThroughParse) {
  for (int64_t s : {0, 5, 65, 3600, 3723, 86400, 90061, 1000000}) {
    SCOPED_TRACE(s);
    Result<int64_t> back = ParseTimeLimitSeconds(FormatDurationLong(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
}

TEST(FormatTimestampTest, FormatsLocalTime) {
  // Pin the zone so the expected text is fixed.
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(FormatTimestamp(0), "Unknown");
  EXPECT_EQ(FormatTimestamp(1), "1970-01-01T00:00:01");
  EXPECT_EQ(FormatTimestamp(1796226063), "2026-12-02T15:41:03");
  if (old) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

// The forms Slurm 22.05 takes and refuses, as sbatch --begin and sacct -S
// answered on the oracle.
TEST(ParseNowOffsetTest, TakesSlurmsUnitsAndRefusesAbbreviations) {
  const std::pair<std::string, int64_t> taken[] = {
      {"now", 0},           {"now+1", 1},          {"now-1", -1},
      {"now+5second", 5},   {"now+5seconds", 5},   {"now+1minute", 60},
      {"now-2minutes", -120}, {"now+1hour", 3600}, {"NOW+1HOUR", 3600},
      {"now+01hour", 3600}, {"now+1 hours", 3600}, {"now-1day", -86400},
      {"now+2days", 172800}, {"now+1week", 604800}, {"now-1weeks", -604800},
  };
  for (const auto& [text, want] : taken) {
    Result<int64_t> got = ParseNowOffset(text);
    ASSERT_TRUE(got.ok()) << text;
    EXPECT_EQ(*got, want) << text;
  }
  for (const char* text : {"now+", "now-", "now+xyz", "now+1h", "now+2m", "now+2min", "now+3mins",
                           "now+1d", "now+1w", "now+5s", "now+5sec", "now+5secs", "now+1we",
                           "now+1hourx", "now+1hour5", "now*1", "later+1"}) {
    EXPECT_FALSE(ParseNowOffset(text).ok()) << text;
  }
  // A century is the bound either way (past it, the sum would overflow).
  EXPECT_TRUE(ParseNowOffset("now+5200weeks").ok());
  EXPECT_FALSE(ParseNowOffset("now-6000weeks").ok());
  EXPECT_FALSE(ParseNowOffset("now+444444444444444222hours").ok());
}

}  // namespace
}  // namespace muster::util

#include "sched/idle_gpus.h"

#include <gtest/gtest.h>

namespace muster::sched {
namespace {

config::IdleGpuConfig Policy() {
  config::IdleGpuConfig c;
  c.threshold_pct = 10;
  c.flag_after_s = 60;
  c.report_after_s = 120;
  c.cancel_after_s = 180;
  return c;
}

TEST(IdleGpus, FlagsThenReportsThenCancelsWhereAllowed) {
  IdleGpuState s;
  const auto c = Policy();
  EXPECT_EQ(NextIdleGpuAction(c, true, 1000, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(s.idle_since, 1000);
  EXPECT_EQ(NextIdleGpuAction(c, true, 1059, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(NextIdleGpuAction(c, true, 1060, true, &s), IdleGpuAction::kFlag);
  EXPECT_EQ(NextIdleGpuAction(c, true, 1100, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(NextIdleGpuAction(c, true, 1120, true, &s), IdleGpuAction::kReport);
  EXPECT_EQ(NextIdleGpuAction(c, true, 1180, true, &s), IdleGpuAction::kCancel);
  EXPECT_EQ(s.stage, 3);
  EXPECT_EQ(NextIdleGpuAction(c, true, 1300, true, &s), IdleGpuAction::kNone);
}

TEST(IdleGpus, NeverCancelsWhereThePartitionDoesNotAllowIt) {
  IdleGpuState s;
  const auto c = Policy();
  for (int64_t t = 0; t <= 10000; t += 30) {
    EXPECT_NE(NextIdleGpuAction(c, true, 1 + t, false, &s), IdleGpuAction::kCancel);
  }
  EXPECT_EQ(s.stage, 2);
}

TEST(IdleGpus, BusyAgainClearsTheFlagAndTheClock) {
  IdleGpuState s;
  const auto c = Policy();
  NextIdleGpuAction(c, true, 100, true, &s);
  EXPECT_EQ(NextIdleGpuAction(c, true, 160, true, &s), IdleGpuAction::kFlag);
  EXPECT_EQ(NextIdleGpuAction(c, false, 170, true, &s), IdleGpuAction::kUnflag);
  EXPECT_EQ(s.stage, 0);
  EXPECT_EQ(s.idle_since, 0);
  EXPECT_EQ(NextIdleGpuAction(c, true, 200, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(NextIdleGpuAction(c, true, 259, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(NextIdleGpuAction(c, true, 260, true, &s), IdleGpuAction::kFlag);
}

TEST(IdleGpus, OffWithoutAFlagTime) {
  IdleGpuState s;
  config::IdleGpuConfig c;
  EXPECT_EQ(NextIdleGpuAction(c, true, 100, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(NextIdleGpuAction(c, true, 100000, true, &s), IdleGpuAction::kNone);
  EXPECT_EQ(s.stage, 0);
}

TEST(IdleGpus, CancelsAfterTheFlagWhenNoReportIsConfigured) {
  IdleGpuState s;
  auto c = Policy();
  c.report_after_s = 0;
  NextIdleGpuAction(c, true, 0 + 1, true, &s);
  EXPECT_EQ(NextIdleGpuAction(c, true, 61, true, &s), IdleGpuAction::kFlag);
  EXPECT_EQ(NextIdleGpuAction(c, true, 181, true, &s), IdleGpuAction::kCancel);
}

}  // namespace
}  // namespace muster::sched

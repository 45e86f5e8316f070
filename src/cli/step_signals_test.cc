#include "cli/step_signals.h"

#include <gtest/gtest.h>

namespace muster::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class StepInterruptsTest : public ::testing::Test {
 protected:
  std::vector<int> sent_;
  int reports_ = 0;
  StepInterrupts interrupts_{"12.0", 30, [this](int sig) { sent_.push_back(sig); },
                             [this] { ++reports_; }};
  StepInterrupts::Clock::time_point t0_ = StepInterrupts::Clock::now();
};

TEST_F(StepInterruptsTest, OneCtrlCReportsTwoWithinASecondAbort) {
  interrupts_.Handle(SIGINT, t0_);
  EXPECT_EQ(reports_, 1);
  EXPECT_TRUE(sent_.empty());
  // A second later is a first again.
  interrupts_.Handle(SIGINT, t0_ + milliseconds(1500));
  EXPECT_EQ(reports_, 2);
  EXPECT_TRUE(sent_.empty());
  interrupts_.Handle(SIGINT, t0_ + milliseconds(1900));
  EXPECT_EQ(sent_, std::vector<int>{SIGINT});
  EXPECT_TRUE(interrupts_.aborting());
  // More Ctrl-C while aborting changes nothing; KillWait later, SIGKILL once.
  interrupts_.Handle(SIGINT, t0_ + seconds(2));
  interrupts_.CheckDeadlines(t0_ + seconds(20));
  EXPECT_EQ(sent_, std::vector<int>{SIGINT});
  interrupts_.CheckDeadlines(t0_ + seconds(32));
  interrupts_.CheckDeadlines(t0_ + seconds(33));
  EXPECT_EQ(sent_, (std::vector<int>{SIGINT, SIGKILL}));
  EXPECT_EQ(reports_, 2);
}

TEST_F(StepInterruptsTest, TermAndHangupAbortOtherSignalsGoToTheTasks) {
  interrupts_.Handle(SIGUSR1, t0_);
  interrupts_.Handle(SIGCONT, t0_);
  EXPECT_EQ(sent_, (std::vector<int>{SIGUSR1, SIGCONT}));
  EXPECT_FALSE(interrupts_.aborting());
  interrupts_.Handle(SIGTERM, t0_);
  EXPECT_TRUE(interrupts_.aborting());
  interrupts_.Handle(SIGHUP, t0_);
  EXPECT_EQ(sent_, (std::vector<int>{SIGUSR1, SIGCONT, SIGKILL}));
}

}  // namespace
}  // namespace muster::cli

#include "stepd/outcome.h"

#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

namespace muster::stepd {
namespace {

TEST(OutcomeTest, WaitStatusAndCauseGiveTheState) {
  struct Case {
    int status;
    EndCause cause;
    bool launch_failed;
    bool oom_killed;
    const char* state;
    int exit_code;
    int exit_signal;
  };
  const Case cases[] = {
      {W_EXITCODE(0, 0), EndCause::kNone, false, false, "COMPLETED", 0, 0},
      {W_EXITCODE(3, 0), EndCause::kNone, false, false, "FAILED", 3, 0},
      {W_EXITCODE(255, 0), EndCause::kNone, false, false, "FAILED", 255, 0},
      {W_EXITCODE(0, SIGKILL), EndCause::kNone, false, false, "FAILED", 0, 9},
      {W_EXITCODE(0, SIGTERM), EndCause::kCancelled, false, false, "CANCELLED", 0, 15},
      {W_EXITCODE(0, 0), EndCause::kCancelled, false, false, "CANCELLED", 0, 0},
      {W_EXITCODE(0, SIGKILL), EndCause::kTimeout, false, false, "TIMEOUT", 0, 9},
      {W_EXITCODE(1, 0), EndCause::kTimeout, false, false, "TIMEOUT", 1, 0},
      {W_EXITCODE(1, 0), EndCause::kNone, true, false, "FAILED", 1, 0},
      {0, EndCause::kNone, true, false, "FAILED", 1, 0},
      {0, EndCause::kCancelled, true, false, "CANCELLED", 1, 0},
      {W_EXITCODE(0, SIGKILL), EndCause::kNone, false, true, "OUT_OF_MEMORY", 0, 125},
      {W_EXITCODE(0, 0), EndCause::kNone, false, true, "OUT_OF_MEMORY", 0, 125},
      {W_EXITCODE(137, 0), EndCause::kNone, false, true, "OUT_OF_MEMORY", 0, 125},
      {W_EXITCODE(0, SIGKILL), EndCause::kCancelled, false, true, "CANCELLED", 0, 9},
      {W_EXITCODE(0, SIGKILL), EndCause::kTimeout, false, true, "TIMEOUT", 0, 9},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "status " << c.status << " cause " << static_cast<int>(c.cause));
    StepResult r;
    r.exit_signal = 99;  // stale values must be overwritten
    SetOutcome(c.status, c.cause, c.launch_failed, c.oom_killed, &r);
    EXPECT_EQ(r.state, c.state);
    EXPECT_EQ(r.exit_code, c.exit_code);
    EXPECT_EQ(r.exit_signal, c.exit_signal);
  }
}

}  // namespace
}  // namespace muster::stepd

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
    const char* state;
    int exit_code;
    int exit_signal;
  };
  const Case cases[] = {
      {W_EXITCODE(0, 0), EndCause::kNone, false, "COMPLETED", 0, 0},
      {W_EXITCODE(3, 0), EndCause::kNone, false, "FAILED", 3, 0},
      {W_EXITCODE(255, 0), EndCause::kNone, false, "FAILED", 255, 0},
      {W_EXITCODE(0, SIGKILL), EndCause::kNone, false, "FAILED", 0, 9},
      {W_EXITCODE(0, SIGTERM), EndCause::kCancelled, false, "CANCELLED", 0, 15},
      {W_EXITCODE(0, 0), EndCause::kCancelled, false, "CANCELLED", 0, 0},
      {W_EXITCODE(0, SIGKILL), EndCause::kTimeout, false, "TIMEOUT", 0, 9},
      {W_EXITCODE(1, 0), EndCause::kTimeout, false, "TIMEOUT", 1, 0},
      {W_EXITCODE(1, 0), EndCause::kNone, true, "FAILED", 1, 0},
      {0, EndCause::kNone, true, "FAILED", 1, 0},
      {0, EndCause::kCancelled, true, "CANCELLED", 1, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "status " << c.status << " cause " << static_cast<int>(c.cause));
    StepResult r;
    r.exit_signal = 99;  // stale values must be overwritten
    SetOutcome(c.status, c.cause, c.launch_failed, &r);
    EXPECT_EQ(r.state, c.state);
    EXPECT_EQ(r.exit_code, c.exit_code);
    EXPECT_EQ(r.exit_signal, c.exit_signal);
  }
}

}  // namespace
}  // namespace muster::stepd

#include "stepd/outcome.h"

#include <sys/wait.h>

namespace muster::stepd {

void SetOutcome(int wait_status, EndCause cause, bool launch_failed, bool oom_killed, StepResult* r) {
  r->exit_code = 0;
  r->exit_signal = 0;
  if (launch_failed) {
    r->exit_code = 1;
  } else if (WIFEXITED(wait_status)) {
    r->exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    r->exit_signal = WTERMSIG(wait_status);
  }
  switch (cause) {
    case EndCause::kCancelled: r->state = "CANCELLED"; return;
    case EndCause::kTimeout: r->state = "TIMEOUT"; return;
    case EndCause::kNodeFail: r->state = "NODE_FAIL"; return;
    case EndCause::kNone: break;
  }
  if (oom_killed && !launch_failed) {
    r->state = "OUT_OF_MEMORY";
    r->exit_code = 0;
    r->exit_signal = kOomExitSignal;
    return;
  }
  r->state = (r->exit_code == 0 && r->exit_signal == 0) ? "COMPLETED" : "FAILED";
}

}  // namespace muster::stepd

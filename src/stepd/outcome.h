// How a step's end maps to a Slurm job state: the pure decision behind
// result.json's state, exit_code and exit_signal.
#pragma once

#include "stepd/step.h"

namespace muster::stepd {

// Why muster-step itself ended the job, if it did. The first cause wins: a
// cancel that arrives while a timed-out job is being killed stays TIMEOUT.
enum class EndCause { kNone, kCancelled, kTimeout, kNodeFail };

// Sets r->state, r->exit_code and r->exit_signal from the batch shell's wait
// status. launch_failed means the shell never reached execve (bad output
// file, failed uid drop, ...): FAILED with exit code 1 like Slurm reports.
// CANCELLED and TIMEOUT take precedence over the exit status, which is still
// recorded (Slurm shows a cancelled job's ExitCode as 0:15). Next comes
// oom_killed (the cgroup's memory limit killed a process of the job, the
// batch shell or any other): OUT_OF_MEMORY with exit code 0 and signal
// kOomExitSignal, as sacct shows Slurm's OOM-killed batch steps (0:125).
void SetOutcome(int wait_status, EndCause cause, bool launch_failed, bool oom_killed, StepResult* r);

// The "signal" of an OUT_OF_MEMORY job's ExitCode in sacct (0:125).
constexpr int kOomExitSignal = 125;

}  // namespace muster::stepd

// srun's own signals while a step runs, the same on one host (srun's
// children) and across hosts (the agents' launchers): Ctrl-C once lists
// the tasks' states, twice within a second sends SIGINT to the tasks and
// aborts the step; SIGTERM and SIGHUP abort it with SIGKILL; other
// signals go to the tasks. A step with a time limit of its own (srun -t
// inside an allocation) gets SIGTERM when it passes, and is TIMEOUT. What
// still runs KillWait after an abort or a timeout is killed. The lines are
// Slurm's.
#pragma once

#include <signal.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace muster::cli {

// srun's signals, caught for the life of a step as bytes on a pipe that
// its loop polls; the old dispositions come back after. One at a time.
class SignalCatcher {
 public:
  explicit SignalCatcher(const std::vector<int>& signals);
  ~SignalCatcher();
  SignalCatcher(const SignalCatcher&) = delete;
  SignalCatcher& operator=(const SignalCatcher&) = delete;

  int fd() const { return fds_[0]; }
  // The signals caught since the last call, in order.
  std::vector<int> Take();

 private:
  int fds_[2] = {-1, -1};
  std::vector<std::pair<int, struct sigaction>> saved_;
};

// "srun: StepId=12.0 tasks 0-1: running", one line per state.
void PrintTaskStates(const std::string& step_id, const std::map<int, std::string>& states);

class StepInterrupts {
 public:
  using Clock = std::chrono::steady_clock;
  // `signal_tasks` sends a signal to every task of the step;
  // `report_states` prints their states.
  StepInterrupts(std::string step_id, int kill_wait_s, std::function<void(int)> signal_tasks,
                 std::function<void()> report_states)
      : step_id_(std::move(step_id)),
        kill_wait_s_(kill_wait_s),
        signal_tasks_(std::move(signal_tasks)),
        report_states_(std::move(report_states)) {}

  // The step's own time limit: at `deadline` the tasks get SIGTERM, and a
  // line for each of the step's `nodes` says so, as Slurm's step daemons'.
  void SetTimeLimit(Clock::time_point deadline, std::vector<std::string> nodes) {
    time_limit_ = deadline;
    nodes_ = std::move(nodes);
  }

  // srun's answer to `sig` (not SIGWINCH or SIGCHLD, which are the
  // caller's).
  void Handle(int sig, Clock::time_point now = Clock::now());
  // The step's time limit, and after an abort's grace whatever still runs
  // is killed (once).
  void CheckDeadlines(Clock::time_point now = Clock::now());
  // How long the caller's poll may sleep before CheckDeadlines has work
  // (ms; -1: no deadline pending).
  int PollTimeoutMs(Clock::time_point now = Clock::now()) const;
  bool aborting() const { return aborting_; }
  bool timed_out() const { return timed_out_; }

 private:
  const std::string step_id_;
  const int kill_wait_s_;
  std::function<void(int)> signal_tasks_;
  std::function<void()> report_states_;
  bool aborting_ = false, killed_ = false, timed_out_ = false;
  Clock::time_point last_interrupt_{};
  Clock::time_point abort_deadline_{};
  std::optional<Clock::time_point> time_limit_;
  std::vector<std::string> nodes_;
};

}  // namespace muster::cli

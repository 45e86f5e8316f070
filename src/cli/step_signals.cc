#include "cli/step_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <iostream>

#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

int signal_pipe = -1;

void OnSignal(int sig) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(sig);
  (void)!::write(signal_pipe, &b, 1);
  errno = saved;
}

}  // namespace

SignalCatcher::SignalCatcher(const std::vector<int>& signals) {
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) return;
  signal_pipe = fds_[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : signals) {
    struct sigaction old {};
    if (::sigaction(sig, &sa, &old) == 0) saved_.emplace_back(sig, old);
  }
}

SignalCatcher::~SignalCatcher() {
  for (const auto& [sig, old] : saved_) ::sigaction(sig, &old, nullptr);
  signal_pipe = -1;
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

std::vector<int> SignalCatcher::Take() {
  std::vector<int> got;
  unsigned char b[64];
  ssize_t n;
  while ((n = ::read(fds_[0], b, sizeof(b))) > 0) got.insert(got.end(), b, b + n);
  return got;
}

void PrintTaskStates(const std::string& step_id, const std::map<int, std::string>& states) {
  std::map<std::string, std::vector<int>> by_state;
  for (const auto& [rank, state] : states) by_state[state].push_back(rank);
  for (const auto& [state, ranks] : by_state) {
    std::cerr << "srun: StepId=" << step_id << (ranks.size() > 1 ? " tasks " : " task ")
              << util::FormatIndexRanges(ranks) << ": " << state << "\n";
  }
}

void StepInterrupts::Handle(int sig, Clock::time_point now) {
  if (sig == SIGINT && !aborting_ && now - last_interrupt_ > std::chrono::seconds(1)) {
    last_interrupt_ = now;
    std::cerr << "srun: interrupt (one more within 1 sec to abort)\n";
    report_states_();
  } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
    if (aborting_) return;
    aborting_ = true;
    if (sig == SIGINT) {
      std::cerr << "srun: sending Ctrl-C to StepId=" << step_id_ << "\n";
      signal_tasks_(SIGINT);
    } else {
      signal_tasks_(SIGKILL);
    }
    std::cerr << "srun: forcing job termination\n";
    std::cerr << "srun: Job step aborted: Waiting up to " << kill_wait_s_ + 2
              << " seconds for job step to finish.\n";
    abort_deadline_ = now + std::chrono::seconds(kill_wait_s_);
  } else {
    signal_tasks_(sig);
  }
}

void StepInterrupts::CheckDeadlines(Clock::time_point now) {
  if (time_limit_ && !aborting_ && now >= *time_limit_) {
    timed_out_ = aborting_ = true;
    const std::string at = util::FormatTimestamp(std::time(nullptr));
    for (const std::string& node : nodes_) {
      std::cerr << "slurmstepd-" << node << ": error: *** STEP " << step_id_ << " ON " << node
                << " CANCELLED AT " << at << " DUE TO TIME LIMIT ***\n";
    }
    signal_tasks_(SIGTERM);
    abort_deadline_ = now + std::chrono::seconds(kill_wait_s_);
  }
  if (aborting_ && !killed_ && now > abort_deadline_) {
    killed_ = true;
    signal_tasks_(SIGKILL);
  }
}

int StepInterrupts::PollTimeoutMs(Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  if (aborting_ && !killed_) {
    next = abort_deadline_;
  } else if (!aborting_ && time_limit_) {
    next = *time_limit_;
  }
  if (!next) return -1;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*next - now).count();
  // A millisecond past, so that the deadline has passed when it wakes.
  return static_cast<int>(std::clamp<int64_t>(ms + 1, 0, 60'000));
}

}  // namespace muster::cli

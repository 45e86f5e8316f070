#include "stepd/hooks.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "util/subprocess.h"

namespace muster::stepd {

std::vector<std::string> HookEnvironment(const StepSpec& spec, std::string_view context) {
  static constexpr std::string_view kPassed[] = {
      "SLURM_JOB_ID=",         "SLURM_JOBID=",         "SLURM_JOB_USER=",
      "SLURM_JOB_UID=",        "SLURM_JOB_GID=",       "SLURM_JOB_NAME=",
      "SLURM_JOB_PARTITION=",  "SLURM_JOB_ACCOUNT=",   "SLURM_JOB_NODELIST=",
      "SLURM_CLUSTER_NAME=",   "SLURMD_NODENAME=",     "SLURM_JOB_CONSTRAINTS=",
      "SLURM_ARRAY_JOB_ID=",   "SLURM_ARRAY_TASK_ID=", "SLURM_JOB_GPUS=",
      "CUDA_VISIBLE_DEVICES=", "SLURM_CONF=",          "SLURM_SUBMIT_DIR="};
  std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                  fmt::format("SLURM_SCRIPT_CONTEXT={}", context)};
  bool has_uid = false;
  for (const std::string& kv : spec.env) {
    for (std::string_view p : kPassed) {
      if (kv.starts_with(p)) {
        env.push_back(kv);
        has_uid = has_uid || p == "SLURM_JOB_UID=";
      }
    }
  }
  if (!has_uid) env.push_back(fmt::format("SLURM_JOB_UID={}", spec.uid));
  return env;
}

namespace {

int64_t MonotonicMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

util::Status RunHook(const std::string& path, const std::vector<std::string>& env, int timeout_s) {
  util::Result<util::Child> child = util::SpawnCapturing(path, env);
  if (!child.ok()) return child.status();
  // Its output (the last 4 KiB) until it closes it, or the time is up.
  std::string output;
  const int64_t deadline = MonotonicMs() + static_cast<int64_t>(timeout_s) * 1000;
  bool timed_out = false;
  for (;;) {
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{child->out_fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    char buf[1024];
    const ssize_t got = ::read(child->out_fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    output.append(buf, static_cast<size_t>(got));
    if (output.size() > 4096) output.erase(0, output.size() - 4096);
  }
  ::close(child->out_fd);
  if (timed_out) ::kill(child->pid, SIGKILL);
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  return util::HookOutcome(path, status, timed_out, timeout_s, output);
}

}  // namespace muster::stepd

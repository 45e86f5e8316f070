#include "util/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::util {

Result<Child> SpawnCapturing(const std::string& path, const std::vector<std::string>& env) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv = {const_cast<char*>(path.c_str()), nullptr};
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  Child child;
  const int rc = ::posix_spawn(&child.pid, path.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return Unavailable(fmt::format("{}: cannot run it: {}", path, std::strerror(rc)));
  }
  child.out_fd = out[0];
  return child;
}

Status HookOutcome(const std::string& path, int wait_status, bool timed_out, int timeout_s,
                   const std::string& output) {
  if (!timed_out && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) return Status::Ok();
  std::string last;
  for (const std::string& line : Split(output, '\n')) {
    if (!Trim(line).empty()) last = std::string(Trim(line));
  }
  const std::string how = timed_out ? fmt::format("killed after {} s", timeout_s)
                          : WIFEXITED(wait_status)
                              ? fmt::format("exit status {}", WEXITSTATUS(wait_status))
                              : fmt::format("signal {}", WTERMSIG(wait_status));
  return Internal(last.empty() ? fmt::format("{} failed ({})", path, how)
                               : fmt::format("{} failed ({}): {}", path, how, last));
}

}  // namespace muster::util

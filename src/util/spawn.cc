#include "util/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace muster::util {

Status SpawnDetached(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  return SpawnDetached(argv, env, std::nullopt);
}

Status SpawnDetached(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     const std::optional<SpawnIdentity>& as) {
  if (argv.empty() || argv[0].empty() || argv[0].front() != '/') {
    return InvalidArgument("not an absolute path: '" + (argv.empty() ? "" : argv[0]) + "'");
  }
  // Everything the children need is made before the fork: between fork
  // and exec they only make system calls (the caller may have threads).
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int report[2];  // the grandchild's exec errno, or EOF once it exec'd
  if (::pipe2(report, O_CLOEXEC) != 0)
    return Internal(std::string("pipe: ") + std::strerror(errno));
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return Internal(std::string("fork: ") + std::strerror(err));
  }
  if (child == 0) {
    ::close(report[0]);
    ::setsid();
    const pid_t grandchild = ::fork();
    if (grandchild != 0) ::_exit(grandchild < 0 ? 1 : 0);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd > 0) {
      ::dup2(null_fd, 0);
      ::close(null_fd);
    }
    ::dup2(2, 1);
    int err = 0;
    if (as && (as->uid != ::geteuid() || as->gid != ::getegid())) {
      if (::setgroups(as->groups.size(), as->groups.data()) != 0 || ::setgid(as->gid) != 0 ||
          ::setuid(as->uid) != 0) {
        err = errno;
      }
    }
    if (err == 0) {
      ::execve(args[0], args.data(), envp.data());
      err = errno;
    }
    (void)!::write(report[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(report[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int err = 0;
  ssize_t n;
  while ((n = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    return Unavailable("cannot run " + argv[0] + ": " + std::strerror(err));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Internal("cannot fork " + argv[0]);
  return Status::Ok();
}

}  // namespace muster::util

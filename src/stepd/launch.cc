#include "stepd/launch.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace muster::stepd {
namespace {

constexpr std::string_view kUmaskVar = "SLURM_UMASK=";

// Slurm's sbatch exports the submitting user's umask as SLURM_UMASK (octal);
// slurmstepd applies it before opening the output files.
std::optional<mode_t> UmaskFromEnv(const std::vector<std::string>& env) {
  for (const std::string& kv : env) {
    if (kv.compare(0, kUmaskVar.size(), kUmaskVar) != 0) continue;
    std::string_view v = std::string_view(kv).substr(kUmaskVar.size());
    if (v.empty() || v.size() > 4) return std::nullopt;
    mode_t m = 0;
    for (char c : v) {
      if (c < '0' || c > '7') return std::nullopt;
      m = static_cast<mode_t>(m * 8 + static_cast<mode_t>(c - '0'));
    }
    return m & 0777;
  }
  return std::nullopt;
}

void WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// ---- Child side: runs between fork and execve; system calls only. ----

struct ChildContext {
  int error_fd;      // pipe to the parent
  int job_err_fd;    // the job's stderr once open, for Slurm-like error lines
  const char* cwd;   // the directory relative paths resolve against
};

[[noreturn]] __attribute__((format(printf, 2, 3))) void Fail(const ChildContext& ctx,
                                                             const char* fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  size_t len = n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof(msg) - 1);
  WriteAll(ctx.error_fd, msg, len);
  if (ctx.job_err_fd >= 0) dprintf(ctx.job_err_fd, "muster-step: error: %s\n", msg);
  _exit(1);
}

// "path" as the user would recognise it: relative ones joined to the cwd.
const char* ShownPath(const ChildContext& ctx, const char* path, char* buf, size_t size) {
  if (path[0] == '/') return path;
  snprintf(buf, size, "%s/%s", ctx.cwd, path);
  return buf;
}

int OpenOutput(const ChildContext& ctx, const std::string& path, bool append, const char* what) {
  const char* p = path.empty() ? "/dev/null" : path.c_str();
  int flags = O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd = ::open(p, flags, 0644);
  if (fd < 0) {
    int err = errno;
    char buf[4096];
    Fail(ctx, "could not open %s file %s: %s", what, ShownPath(ctx, p, buf, sizeof(buf)),
         strerror(err));
  }
  return fd;
}

void ResetSignals() {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &sa, nullptr);  // fails harmlessly for libc-reserved signals
  }
}

[[noreturn]] void ChildMain(const LaunchPlan& plan, char* const* argv, char* const* envp,
                            char* pid_slot, size_t pid_slot_size, int error_fd, int release_fd) {
  ChildContext ctx{error_fd, -1, plan.work_dir.c_str()};
  // Held until the parent has placed us (see LaunchBatchShell); EOF without
  // the byte means the parent died, and nothing should run unsupervised.
  char go = 0;
  ssize_t got;
  do {
    got = ::read(release_fd, &go, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1) _exit(1);
  ::close(release_fd);
  // Also done by the parent; whichever runs first wins the race with exec.
  ::setpgid(0, 0);
  // An agent that ignores SIGPIPE (or anything else) must not pass that on:
  // ignored dispositions survive execve.
  ResetSignals();

  if (plan.set_identity) {
    if (::setgroups(plan.groups.size(), plan.groups.data()) != 0) {
      Fail(ctx, "could not set the supplementary groups of uid %u: %s", plan.uid, strerror(errno));
    }
    if (::setresgid(plan.gid, plan.gid, plan.gid) != 0) {
      Fail(ctx, "could not set gid %u: %s", plan.gid, strerror(errno));
    }
    if (::setresuid(plan.uid, plan.uid, plan.uid) != 0) {
      Fail(ctx, "could not set uid %u: %s", plan.uid, strerror(errno));
    }
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (::getresuid(&ru, &eu, &su) != 0 || ::getresgid(&rg, &eg, &sg) != 0 || ru != plan.uid ||
        eu != plan.uid || su != plan.uid || rg != plan.gid || eg != plan.gid || sg != plan.gid) {
      Fail(ctx, "dropping to uid %u gid %u did not take effect", plan.uid, plan.gid);
    }
  }
  if (plan.umask) ::umask(*plan.umask);

  // Slurm's behaviour for an unusable working directory: say so in the
  // job's stderr and run in /tmp.
  int chdir_errno = 0;
  if (::chdir(plan.work_dir.c_str()) != 0) {
    chdir_errno = errno;
    ctx.cwd = "/tmp";
    if (::chdir("/tmp") != 0) {
      Fail(ctx, "couldn't chdir to `%s': %s, nor to /tmp: %s", plan.work_dir.c_str(),
           strerror(chdir_errno), strerror(errno));
    }
  }

  // Opened after the uid drop, so the files are created owned by the user
  // and root's privileges never write where the user could not.
  int out_fd = OpenOutput(ctx, plan.std_out, plan.open_append, "output");
  int err_fd = out_fd;
  if (!plan.std_err.empty() && plan.std_err != plan.std_out) {
    err_fd = OpenOutput(ctx, plan.std_err, plan.open_append, "error");
  }
  ctx.job_err_fd = err_fd;
  if (chdir_errno != 0) {
    dprintf(err_fd, "muster-step: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
            plan.work_dir.c_str(), strerror(chdir_errno));
  }
  const char* in_path = plan.std_in.empty() ? "/dev/null" : plan.std_in.c_str();
  int in_fd = ::open(in_path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (in_fd < 0) {
    int err = errno;
    char buf[4096];
    Fail(ctx, "could not open input file %s: %s", ShownPath(ctx, in_path, buf, sizeof(buf)),
         strerror(err));
  }
  // muster-step keeps 0-2 open (RunStep), so these fds are all >= 3 and the
  // dup2s cannot clobber each other.
  if (::dup2(in_fd, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 ||
      ::dup2(err_fd, STDERR_FILENO) < 0) {
    Fail(ctx, "could not set up the standard streams: %s", strerror(errno));
  }
  ctx.job_err_fd = STDERR_FILENO;

  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // The shell's own pid, as Slurm gives a task (envp points at the slot).
  snprintf(pid_slot, pid_slot_size, "SLURM_TASK_PID=%d", static_cast<int>(::getpid()));
  ::execve(plan.script_path.c_str(), argv, envp);
  Fail(ctx, "could not execute batch script %s: %s", plan.script_path.c_str(), strerror(errno));
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

util::Result<LaunchPlan> MakeLaunchPlan(const StepSpec& spec, uid_t euid,
                                        const std::vector<uint32_t>& default_groups) {
  if (spec.script_path.empty()) return util::InvalidArgument("the step spec names no batch script");
  LaunchPlan plan;
  plan.set_identity = euid == 0;
  if (!plan.set_identity && spec.uid != euid) {
    return util::PermissionDenied(
        fmt::format("muster-step runs as uid {}, not root, and cannot start a job as uid {}", euid,
                    spec.uid));
  }
  plan.uid = spec.uid;
  plan.gid = spec.gid;
  const std::vector<uint32_t>& groups = spec.groups.empty() ? default_groups : spec.groups;
  plan.groups.assign(groups.begin(), groups.end());
  plan.umask = UmaskFromEnv(spec.env);
  plan.work_dir = spec.work_dir;
  plan.script_path = spec.script_path;
  plan.argv.push_back(spec.script_path);
  plan.argv.insert(plan.argv.end(), spec.argv.begin(), spec.argv.end());
  plan.env = spec.env;
  plan.std_out = spec.std_out;
  plan.std_err = spec.std_err;
  plan.std_in = spec.std_in;
  plan.open_append = spec.open_append;
  return plan;
}

util::Result<LaunchedShell> LaunchBatchShell(const LaunchPlan& plan,
                                             const std::function<void(pid_t)>& before_release) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return util::Internal(fmt::format("pipe2: {}", strerror(errno)));
  }
  // A socket, not a pipe, so the release can be sent with MSG_NOSIGNAL: a
  // child killed before it reads must not SIGPIPE muster-step.
  int release[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, release) != 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return util::Internal(fmt::format("socketpair: {}", strerror(err)));
  }
  std::vector<char*> argv = CStrings(plan.argv);
  // SLURM_TASK_PID is known only in the child, which writes it into this
  // slot (any given value is dropped).
  char pid_slot[40] = "SLURM_TASK_PID=";
  std::vector<char*> envp;
  envp.reserve(plan.env.size() + 2);
  for (const std::string& kv : plan.env) {
    if (!kv.starts_with("SLURM_TASK_PID=")) envp.push_back(const_cast<char*>(kv.c_str()));
  }
  envp.push_back(pid_slot);
  envp.push_back(nullptr);
  // Plain fork: muster-step is small and single-threaded, so copying it is
  // cheap and the child may safely run ordinary libc code before execve.
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(release[0]);
    ::close(release[1]);
    return util::Internal(fmt::format("fork: {}", strerror(err)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::close(release[1]);
    ChildMain(plan, argv.data(), envp.data(), pid_slot, sizeof(pid_slot), fds[1], release[0]);
  }
  ::close(fds[1]);
  ::close(release[0]);
  // Racing the child's own setpgid; EACCES once it has exec'd is harmless.
  ::setpgid(pid, pid);
  if (before_release) before_release(pid);
  ssize_t sent;
  do {
    sent = ::send(release[1], "g", 1, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  ::close(release[1]);
  return LaunchedShell{pid, fds[0]};
}

std::string ReadLaunchError(int fd) {
  std::string msg;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  return msg;
}

}  // namespace muster::stepd

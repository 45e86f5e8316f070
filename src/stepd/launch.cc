#include "stepd/launch.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>  // clone3's struct clone_args, CLONE_INTO_CGROUP
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

// Room for the child's frames while it shares muster-step's memory: it
// formats at most a few 4 KiB messages. On muster-step's own stack, just
// above the clone's frame, whose pages are already there.
constexpr size_t kChildStackBytes = 64 * 1024;

// A line the child writes before any error text when it could not join
// the job's cgroup and goes on without it.
constexpr char kJoinFailedTag = '\x01';

// ---- Child side: runs between clone and execve; system calls only. ----
// It may share muster-step's memory (CLONE_VM, muster-step suspended until
// the exec): nothing here allocates or takes a lock, and what it writes
// outside its own stack is the SLURM_TASK_PID slot alone.

struct ChildArgs {
  const LaunchPlan* plan;
  char* const* argv;
  char* const* envp;
  char* pid_slot;  // "SLURM_TASK_PID=" in envp, filled in by the child
  size_t pid_slot_size;
  int error_fd;           // pipe to the parent
  const int* join_fds;    // CgroupJoin::self_fds, written "0" first
  size_t join_count;
};

struct ChildContext {
  int error_fd;      // pipe to the parent
  int job_err_fd;    // the job's stderr once open, for Slurm-like error lines
  const char* cwd;   // the directory relative paths resolve against
};

// strerror without its translation lookup: the C locale's text, static.
const char* ErrorText(int err) {
  const char* text = ::strerrordesc_np(err);
  return text != nullptr ? text : "Unknown error";
}

__attribute__((format(printf, 3, 4))) void Print(int fd, char (&buf)[4096], const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  WriteAll(fd, buf, n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof(buf) - 1));
}

[[noreturn]] __attribute__((format(printf, 2, 3))) void Fail(const ChildContext& ctx,
                                                             const char* fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  size_t len = n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof(msg) - 1);
  WriteAll(ctx.error_fd, msg, len);
  if (ctx.job_err_fd >= 0) {
    char line[4096];
    Print(ctx.job_err_fd, line, "muster-step: error: %s\n", msg);
  }
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
    Fail(ctx, "could not open %s file %s: %s", what, ShownPath(ctx, p, buf, sizeof(buf)), ErrorText(err));
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

// Joins the cgroup (v1: "0" into each tasks file moves this thread, the
// only one). A failure is reported and the job runs on, unless the plan
// must join (its devices are confined): then the child exits.
void JoinCgroup(const ChildArgs& a, const ChildContext& ctx) {
  for (size_t i = 0; i < a.join_count; ++i) {
    if (::write(a.join_fds[i], "0", 1) == 1) continue;
    if (a.plan->must_join) {
      Fail(ctx, "cannot confine the job to its GPUs: writing to its cgroup's tasks file: %s",
           ErrorText(errno));
    }
    char line[4096];
    Print(a.error_fd, line, "%cwriting to its tasks file: %s\n", kJoinFailedTag, ErrorText(errno));
    return;
  }
}

[[noreturn]] void ChildMain(const ChildArgs& a) {
  const LaunchPlan& plan = *a.plan;
  ChildContext ctx{a.error_fd, -1, plan.work_dir.c_str()};
  // First, while still root and before anything of the job runs, so that
  // no process of the job starts outside the cgroup.
  JoinCgroup(a, ctx);
  ::setpgid(0, 0);
  // An agent that ignores SIGPIPE (or anything else) must not pass that on:
  // ignored dispositions survive execve.
  ResetSignals();

  if (plan.set_identity) {
    if (::setgroups(plan.groups.size(), plan.groups.data()) != 0) {
      Fail(ctx, "could not set the supplementary groups of uid %u: %s", plan.uid, ErrorText(errno));
    }
    if (::setresgid(plan.gid, plan.gid, plan.gid) != 0) {
      Fail(ctx, "could not set gid %u: %s", plan.gid, ErrorText(errno));
    }
    if (::setresuid(plan.uid, plan.uid, plan.uid) != 0) {
      Fail(ctx, "could not set uid %u: %s", plan.uid, ErrorText(errno));
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
           ErrorText(chdir_errno), ErrorText(errno));
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
    char line[4096];
    Print(err_fd, line, "muster-step: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
          plan.work_dir.c_str(), ErrorText(chdir_errno));
  }
  const char* in_path = plan.std_in.empty() ? "/dev/null" : plan.std_in.c_str();
  int in_fd = ::open(in_path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (in_fd < 0) {
    int err = errno;
    char buf[4096];
    Fail(ctx, "could not open input file %s: %s", ShownPath(ctx, in_path, buf, sizeof(buf)), ErrorText(err));
  }
  // muster-step keeps 0-2 open (RunStep), so these fds are all >= 3 and the
  // dup2s cannot clobber each other.
  if (::dup2(in_fd, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 ||
      ::dup2(err_fd, STDERR_FILENO) < 0) {
    Fail(ctx, "could not set up the standard streams: %s", ErrorText(errno));
  }
  ctx.job_err_fd = STDERR_FILENO;

  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // The shell's own pid, as Slurm gives a task (envp points at the slot).
  snprintf(a.pid_slot, a.pid_slot_size, "SLURM_TASK_PID=%d", static_cast<int>(::getpid()));
  ::execve(plan.script_path.c_str(), a.argv, a.envp);
  Fail(ctx, "could not execute batch script %s: %s", plan.script_path.c_str(), ErrorText(errno));
}

int ChildEntry(void* args) { ChildMain(*static_cast<const ChildArgs*>(args)); }

// clone3 with fork's memory semantics (no CLONE_VM, so returning into this
// frame in the child is safe): the child starts in the cgroup `cgroup_fd`
// names, and the parent waits for its exec. -1 with errno where the kernel
// lacks clone3 (before 5.3) or CLONE_INTO_CGROUP (before 5.7).
pid_t Clone3IntoCgroup(int cgroup_fd) {
  struct clone_args args;
  memset(&args, 0, sizeof(args));
  args.flags = CLONE_VFORK | CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cgroup_fd);
  return static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof(args)));
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Everything the child wrote before it exec'd or exited: the write end is
// closed by then (or a moment later, by the exec's close-on-exec).
std::string ReadReport(int fd) {
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
  plan.must_join = !spec.denied_devices.empty();
  return plan;
}

util::Result<LaunchedShell> LaunchBatchShell(const LaunchPlan& plan, const CgroupJoin* join) {
  if (plan.must_join && (join == nullptr || (join->clone_into_fd < 0 && join->self_fds.empty()))) {
    return util::Unavailable("cannot confine the job to its GPUs: it has no cgroup to start in");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return util::Internal(fmt::format("pipe2: {}", strerror(errno)));
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
  std::vector<int> join_fds;
  if (join != nullptr) join_fds = join->self_fds;
  ChildArgs args{&plan, argv.data(), envp.data(), pid_slot, sizeof(pid_slot), fds[1], join_fds.data(),
                 join_fds.size()};
  LaunchedShell shell;

  // No handler may run in a child sharing our memory, and none of ours
  // may run in it at all.
  sigset_t all, old;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &old);
  pid_t pid = -1;
  int fallback_fd = -1;
  bool cloned = false;
  if (join != nullptr && join->clone_into_fd >= 0) {
    pid = Clone3IntoCgroup(join->clone_into_fd);
    if (pid == 0) ChildMain(args);
    cloned = pid > 0 || errno == EAGAIN || errno == ENOMEM;
    if (!cloned) {
      // A kernel without CLONE_INTO_CGROUP: the child moves itself, by
      // writing "0" to cgroup.procs (the global lock, but no pid to race).
      const int clone3_errno = errno;
      fallback_fd = ::openat(join->clone_into_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
      if (fallback_fd >= 0) {
        join_fds.push_back(fallback_fd);
        args.join_fds = join_fds.data();
        args.join_count = join_fds.size();
      } else if (plan.must_join) {
        ::sigprocmask(SIG_SETMASK, &old, nullptr);
        ::close(fds[0]);
        ::close(fds[1]);
        return util::Unavailable(fmt::format(
            "cannot confine the job to its GPUs: clone3(CLONE_INTO_CGROUP): {}", strerror(clone3_errno)));
      } else {
        shell.cgroup_error = fmt::format("clone3(CLONE_INTO_CGROUP): {}", strerror(clone3_errno));
      }
    }
  }
  if (!cloned) {
    alignas(16) char stack[kChildStackBytes];
    pid = ::clone(ChildEntry, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  }
  const int clone_errno = errno;
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(fds[1]);
  if (fallback_fd >= 0) ::close(fallback_fd);
  if (pid < 0) {
    ::close(fds[0]);
    return util::Internal(fmt::format("clone: {}", strerror(clone_errno)));
  }
  shell.pid = pid;
  std::string report = ReadReport(fds[0]);
  ::close(fds[0]);
  if (!report.empty() && report[0] == kJoinFailedTag) {
    const size_t nl = report.find('\n');
    shell.cgroup_error = report.substr(1, nl == std::string::npos ? std::string::npos : nl - 1);
    report.erase(0, nl == std::string::npos ? report.size() : nl + 1);
  }
  shell.error = std::move(report);
  return shell;
}

}  // namespace muster::stepd

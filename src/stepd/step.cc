// muster-step's supervisor: one event loop over a signalfd, with the next
// deadline (warning signal, time limit, kill escalation, unkillable give-up)
// as the poll timeout. No polling intervals: the loop wakes only for a
// signal or a deadline.
#include "stepd/step.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "stepd/cgroup.h"
#include "stepd/hooks.h"
#include "stepd/launch.h"
#include "stepd/outcome.h"
#include "stepd/proctree.h"
#include "stepd/spool.h"
#include "util/log.h"
#include "util/rusage.h"
#include "util/slurm_time.h"
#include "util/users.h"

namespace muster::stepd {
namespace {

// SIGINT and SIGHUP mean cancel too: nothing else would send them to a
// process with its own session and no terminal.
constexpr int kHandledSignals[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1};

// sigqueue value layout for SIGUSR1 (see step.h).
constexpr int kSignalMask = 0xff;
constexpr int kBatchOnlyFlag = 0x100;
constexpr int kNewLimitFlag = 0x200;  // the rest: the new limit
constexpr int kLimitInMinutes = 0x400;
constexpr int kLimitShift = 11;
constexpr int kLimitMask = (1 << 20) - 1;  // all ones: unlimited
constexpr int kAllProcessesFlag = 0x800;  // only without kNewLimitFlag
constexpr int kNodeFailFlag = 0x1000;     // only without kNewLimitFlag

// After the batch shell exits, how long leftovers may take to die before
// muster-step reports anyway and leaves them (a process stuck in
// uninterruptible sleep ignores SIGKILL). Slurm's UnkillableStepTimeout
// defaults to 60 s.
constexpr int64_t kUnkillableTimeoutMs = 60'000;

constexpr int64_t kMaxTimeLimitS = int64_t{1} << 40;

// How often the peak memory is sampled where the kernel keeps no peak
// (cgroup v2 before memory.peak): a compromise between missing short
// spikes and waking an idle job's supervisor.
constexpr int64_t kMemorySampleMs = 1000;

int64_t MonotonicMs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

int64_t WallSeconds() { return static_cast<int64_t>(::time(nullptr)); }

// A copy of process `pid`'s stderr (close-on-exec), or -1.
int ShellStderr(pid_t pid) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    util::LogWarn("pidfd_open({}): {}; a stop will not be announced in the job's stderr", pid,
                  strerror(errno));
    return -1;
  }
  const int fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, STDERR_FILENO, 0));
  if (fd < 0) {
    util::LogWarn("pidfd_getfd({}): {}; a stop will not be announced in the job's stderr", pid,
                  strerror(errno));
  }
  ::close(pidfd);
  return fd;
}

// What the stop line says after the time, as Slurm words each cause.
std::string_view StopReason(StopCause cause) {
  switch (cause) {
    case StopCause::kRequeue:
      return " DUE TO JOB REQUEUE";
    case StopCause::kNodeFailure:
      return " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS";
    case StopCause::kPreemption:
      return " DUE TO PREEMPTION";
    case StopCause::kCancel:
      break;
  }
  return "";
}

// Supervises one batch shell and its process tree until all of it is gone.
// Owned by RunStep; single-threaded.
class Supervisor {
 public:
  Supervisor(const StepSpec& spec, int signal_fd) : spec_(spec), signal_fd_(signal_fd) {}

  // Launches the shell, runs the loop to the end, and returns the result.
  StepResult Run();

 private:
  void DrainSignals();
  void HandleSignal(const struct signalfd_siginfo& si);
  // Reaps every exited child; returns true when muster-step has none left.
  bool ReapChildren();
  void OnShellExit(int status);
  void HandleDeadlines(int64_t now);
  // Cancel or time limit: SIGCONT+SIGTERM to all, SIGKILL after kill_wait_s.
  // The first says so in the job's stderr, `why` after its time (" DUE TO
  // TIME LIMIT", or "" for a plain cancel).
  void BeginTermination(EndCause cause, int64_t now, std::string_view why);
  // Slurm's line for a stop, in the job's stderr (stderr_fd_).
  void AnnounceStop(std::string_view why);
  // Sends sig to the job's steps, the batch shell alone or every job process.
  void Deliver(int sig, SignalTarget target);
  // Signals every job process (those `select` picks, when given): the /proc
  // descendants and the cgroup's members. Returns how many were signalled.
  int SignalJob(std::span<const int> signals, const ProcessFilter& select = {});
  void SignalJob(int sig) { SignalJob(std::span<const int>(&sig, 1)); }
  // Creates the job's cgroup; leaves cgroup_ null (one warning) if unusable.
  // Fails only where the job's devices must be confined
  // (spec_.denied_devices) and cannot be: the job must not start then.
  [[nodiscard]] util::Status SetUpCgroup();
  // What the batch shell needs to start inside the cgroup; empty, with the
  // cgroup given up, when it cannot be opened (or there is none).
  CgroupJoin OpenCgroupJoin();
  // Runs on without the cgroup (one warning) because the shell is not in it.
  void GiveUpCgroup(const std::string& why);
  // Fills max_rss_kb, total_cpu_ms, oom_killed and removes the cgroup.
  void CollectUsage();
  int PollTimeoutMs(int64_t now) const;

  const StepSpec& spec_;
  const int signal_fd_;
  const pid_t self_ = ::getpid();
  StepResult result_;
  std::unique_ptr<JobCgroup> cgroup_;  // null: running without cgroups

  pid_t shell_pid_ = -1;
  bool shell_exited_ = false;
  int shell_status_ = 0;
  std::string launch_error_;
  // The batch shell's stderr, taken from it once it runs (pidfd_getfd), for
  // the stop line; -1 when it could not be had. It is the description the
  // job opened as its user, so the line goes nowhere the job cannot write.
  int stderr_fd_ = -1;
  EndCause cause_ = EndCause::kNone;
  bool terminating_ = false;
  bool finished_ = false;
  bool gave_up_ = false;  // finished with processes that would not die

  // Deadlines on the monotonic clock, in ms; unset = not pending.
  std::optional<int64_t> warn_at_;
  bool warned_ = false;  // the warning signal went out already
  std::optional<int64_t> limit_at_;
  int64_t start_ms_ = 0;  // the batch shell's start, monotonic
  int64_t time_limit_s_ = 0;  // spec_.time_limit_s, or as updated since
  // Arms the warning and the limit for `limit_s` (<= 0: none) from start_ms_.
  void SetLimit(int64_t limit_s);
  std::optional<int64_t> kill_at_;
  std::optional<int64_t> give_up_at_;
  std::optional<int64_t> sample_at_;
};

StepResult Supervisor::Run() {
  result_.job_id = spec_.job_id;
  result_.start_time = WallSeconds();
  const int64_t start = MonotonicMs();

  std::vector<uint32_t> default_groups;
  if (spec_.groups.empty() && ::geteuid() == 0) default_groups = util::UserGroups(spec_.uid, spec_.gid);
  util::Result<LaunchPlan> plan = MakeLaunchPlan(spec_, ::geteuid(), default_groups);
  if (plan.ok()) {
    util::Status confined = SetUpCgroup();
    if (!confined.ok()) plan = confined;
  }
  CgroupJoin join = OpenCgroupJoin();
  util::Result<LaunchedShell> shell = plan.ok() ? LaunchBatchShell(*plan, cgroup_ ? &join : nullptr)
                                                : util::Result<LaunchedShell>(plan.status());
  join.Close();
  if (!shell.ok()) {
    CollectUsage();
    util::LogError("job {}: cannot launch the batch script: {}", spec_.job_id, shell.status().message());
    SetOutcome(0, EndCause::kNone, /*launch_failed=*/true, /*oom_killed=*/false, &result_);
    result_.detail = shell.status().message();
    result_.end_time = WallSeconds();
    return result_;
  }
  shell_pid_ = shell->pid;
  launch_error_ = std::move(shell->error);
  if (!shell->cgroup_error.empty()) GiveUpCgroup("the batch shell could not join it: " + shell->cgroup_error);
  if (launch_error_.empty()) {
    util::LogInfo("job {}: batch script {} started as pid {}", spec_.job_id, spec_.script_path, shell_pid_);
    stderr_fd_ = ShellStderr(shell_pid_);
  }
  if (cgroup_ && cgroup_->NeedsSampling()) sample_at_ = start + kMemorySampleMs;

  start_ms_ = start;
  time_limit_s_ = spec_.time_limit_s;
  SetLimit(time_limit_s_);

  while (!finished_) {
    struct pollfd pfd = {signal_fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, PollTimeoutMs(MonotonicMs()));
    if (rc < 0 && errno != EINTR) {
      // Only a broken signalfd gets here; without it nothing can be supervised.
      util::LogError("job {}: poll on the signalfd: {}", spec_.job_id, strerror(errno));
      std::abort();
    }
    DrainSignals();
    // Reap before the deadlines: a script that exited just as its limit
    // came due completed in time.
    bool no_children = ReapChildren();
    HandleDeadlines(MonotonicMs());
    if (shell_exited_ && !finished_) {
      if (no_children) {
        finished_ = true;
      } else {
        // Slurm kills what a job leaves behind when its script ends.
        SignalJob(SIGKILL);
      }
    }
  }

  if (stderr_fd_ >= 0) ::close(stderr_fd_);
  stderr_fd_ = -1;
  CollectUsage();
  SetOutcome(shell_status_, cause_, !launch_error_.empty(), result_.oom_killed, &result_);
  if (!launch_error_.empty()) {
    result_.detail = launch_error_;
  } else if (gave_up_) {
    result_.detail = fmt::format("processes of the job could not be killed within {} s",
                                 kUnkillableTimeoutMs / 1000);
  } else if (result_.state == "OUT_OF_MEMORY") {
    // The exit code says OUT_OF_MEMORY the way sacct does; what the shell
    // really ended with is kept here.
    result_.detail =
        WIFSIGNALED(shell_status_)
            ? fmt::format("memory limit of {} MiB exceeded; the batch shell was killed by signal {}",
                          spec_.mem_limit_mb, WTERMSIG(shell_status_))
            : fmt::format("memory limit of {} MiB exceeded; the batch shell exited with code {}",
                          spec_.mem_limit_mb, WEXITSTATUS(shell_status_));
  }
  util::LogInfo("job {}: {} exit_code={} exit_signal={} max_rss_kb={} total_cpu_ms={}{}{}",
                spec_.job_id, result_.state, result_.exit_code, result_.exit_signal,
                result_.max_rss_kb, result_.total_cpu_ms, result_.detail.empty() ? "" : ": ",
                result_.detail);
  return result_;
}

void Supervisor::DrainSignals() {
  struct signalfd_siginfo si;
  for (;;) {
    ssize_t n = ::read(signal_fd_, &si, sizeof(si));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(si))) return;  // EAGAIN: drained
    HandleSignal(si);
  }
}

void Supervisor::HandleSignal(const struct signalfd_siginfo& si) {
  switch (si.ssi_signo) {
    case SIGCHLD:
      return;  // reaping follows every wake-up
    case SIGTERM:
    case SIGINT:
    case SIGHUP: {
      util::LogInfo("job {}: cancelled by signal {} from pid {}", spec_.job_id, si.ssi_signo, si.ssi_pid);
      const StopCause stop = si.ssi_signo == SIGTERM && si.ssi_code == SI_QUEUE
                                 ? static_cast<StopCause>(si.ssi_int)
                                 : StopCause::kCancel;
      BeginTermination(EndCause::kCancelled, MonotonicMs(), StopReason(stop));
      return;
    }
    case SIGUSR1: {
      if (si.ssi_code != SI_QUEUE) {
        util::LogWarn("job {}: ignoring SIGUSR1 without a sigqueue value from pid {}", spec_.job_id,
                      si.ssi_pid);
        return;
      }
      int value = si.ssi_int;
      if ((value & kNewLimitFlag) != 0) {
        // scontrol update TimeLimit= of a running job.
        const int amount = (value >> kLimitShift) & kLimitMask;
        time_limit_s_ = amount == kLimitMask ? -1
                                             : int64_t{amount} * ((value & kLimitInMinutes) ? 60 : 1);
        util::LogInfo("job {}: time limit now {} s", spec_.job_id, time_limit_s_);
        if (!terminating_) SetLimit(time_limit_s_);
        return;
      }
      if ((value & kNodeFailFlag) != 0) {
        // The agent lost its controller for SlurmdTimeout: the job is
        // being ended NODE_FAIL (and perhaps requeued) there, so nothing
        // of it may run on here. No grace: SIGKILL at once.
        util::LogWarn("job {}: its node is cut off from the controller: killing it", spec_.job_id);
        if (shell_exited_) return;
        cause_ = EndCause::kNodeFail;
        terminating_ = true;
        SignalJob(SIGKILL);
        kill_at_ = MonotonicMs();
        return;
      }
      int sig = value & kSignalMask;
      if (sig <= 0 || sig >= NSIG) {
        util::LogWarn("job {}: ignoring request to deliver invalid signal {}", spec_.job_id, sig);
        return;
      }
      const SignalTarget target = (value & kBatchOnlyFlag)      ? SignalTarget::kBatch
                                  : (value & kAllProcessesFlag) ? SignalTarget::kAll
                                                                : SignalTarget::kSteps;
      Deliver(sig, target);
      return;
    }
    default:
      return;
  }
}

bool Supervisor::ReapChildren() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      if (pid == shell_pid_) OnShellExit(status);
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    return pid < 0;  // ECHILD: no children at all; 0: some still running
  }
}

void Supervisor::OnShellExit(int status) {
  shell_exited_ = true;
  shell_status_ = status;
  result_.end_time = WallSeconds();
  warn_at_.reset();
  limit_at_.reset();
  kill_at_.reset();
  if (cgroup_) cgroup_->Sample();
  sample_at_.reset();
  give_up_at_ = MonotonicMs() + kUnkillableTimeoutMs;
}

void Supervisor::SetLimit(int64_t limit_s) {
  limit_at_.reset();
  if (!warned_) warn_at_.reset();
  if (limit_s <= 0 || shell_exited_) return;
  // Bounded so the ms arithmetic cannot overflow (2^40 s, some 35,000 years, is unlimited enough).
  limit_s = std::min<int64_t>(limit_s, kMaxTimeLimitS);
  limit_at_ = start_ms_ + limit_s * 1000;
  if (spec_.warn_signal > 0 && !warned_) {
    // A warning time longer than the limit sends the warning at once.
    int64_t warn_after_s = std::max<int64_t>(0, limit_s - std::max(0, spec_.warn_time_s));
    warn_at_ = start_ms_ + warn_after_s * 1000;
  }
}

void Supervisor::HandleDeadlines(int64_t now) {
  if (warn_at_ && now >= *warn_at_) {
    warn_at_.reset();
    warned_ = true;
    util::LogInfo("job {}: sending warning signal {}", spec_.job_id, spec_.warn_signal);
    Deliver(spec_.warn_signal, spec_.warn_batch_only ? SignalTarget::kBatch : SignalTarget::kSteps);
  }
  if (limit_at_ && now >= *limit_at_) {
    limit_at_.reset();
    util::LogInfo("job {}: time limit of {} s reached", spec_.job_id, time_limit_s_);
    BeginTermination(EndCause::kTimeout, now, " DUE TO TIME LIMIT");
  }
  if (kill_at_ && now >= *kill_at_) {
    kill_at_.reset();
    util::LogInfo("job {}: kill wait over, sending SIGKILL", spec_.job_id);
    SignalJob(SIGKILL);
  }
  if (sample_at_ && now >= *sample_at_) {
    cgroup_->Sample();
    sample_at_ = now + kMemorySampleMs;
  }
  if (give_up_at_ && now >= *give_up_at_) {
    give_up_at_.reset();
    util::LogError("job {}: processes left after {} s of SIGKILL; giving up on them", spec_.job_id,
                   kUnkillableTimeoutMs / 1000);
    finished_ = true;
    gave_up_ = true;
  }
}

void Supervisor::BeginTermination(EndCause cause, int64_t now, std::string_view why) {
  if (shell_exited_) return;  // already ending; the outcome is settled
  if (cause_ == EndCause::kNone) cause_ = cause;
  if (terminating_) return;
  terminating_ = true;
  AnnounceStop(why);
  // SIGCONT first so stopped processes can act on the SIGTERM.
  static constexpr int kTermSignals[] = {SIGCONT, SIGTERM};
  SignalJob(kTermSignals);
  kill_at_ = now + std::max(0, spec_.kill_wait_s) * int64_t{1000};
}

void Supervisor::AnnounceStop(std::string_view why) {
  if (stderr_fd_ < 0) return;
  // The node the batch step runs on, as the job sees it.
  std::string node = "localhost";
  for (const std::string& kv : spec_.env) {
    if (kv.starts_with("SLURMD_NODENAME=")) node = kv.substr(std::strlen("SLURMD_NODENAME="));
  }
  const std::string line =
      fmt::format("slurmstepd-{}: error: *** JOB {} ON {} CANCELLED AT {}{} ***\n", node,
                  spec_.job_id, node, util::FormatTimestamp(WallSeconds()), why);
  // One write: a full pipe or a dead reader must not hold the supervisor.
  const int flags = ::fcntl(stderr_fd_, F_GETFL);
  if (flags >= 0) ::fcntl(stderr_fd_, F_SETFL, flags | O_NONBLOCK);
  if (::write(stderr_fd_, line.data(), line.size()) < 0) {
    util::LogWarn("job {}: writing the stop line to its stderr: {}", spec_.job_id, strerror(errno));
  }
  if (flags >= 0) ::fcntl(stderr_fd_, F_SETFL, flags);
}

void Supervisor::Deliver(int sig, SignalTarget target) {
  switch (target) {
    case SignalTarget::kBatch:
      util::LogInfo("job {}: delivering signal {} to the batch shell", spec_.job_id, sig);
      // The shell is an unreaped child, so its pid cannot have been reused.
      if (!shell_exited_) ::kill(shell_pid_, sig);
      return;
    case SignalTarget::kSteps: {
      const int n = SignalJob(std::span<const int>(&sig, 1), InJobStep);
      util::LogInfo("job {}: delivered signal {} to {} step process(es)", spec_.job_id, sig, n);
      return;
    }
    case SignalTarget::kAll:
      util::LogInfo("job {}: delivering signal {} to every job process", spec_.job_id, sig);
      SignalJob(sig);
      return;
  }
}

int Supervisor::SignalJob(std::span<const int> signals, const ProcessFilter& select) {
  if (!cgroup_) return SignalDescendants(self_, signals, nullptr, select);
  // The cgroup first: it also holds processes that left the tree (a
  // debugger reparenting them, one started into it from outside). Each
  // process gets the signals once, whichever list it is found in.
  bool kill = !select && signals.size() == 1 && signals[0] == SIGKILL;
  std::unordered_set<pid_t> done;
  int n = 0;
  if (!(kill && cgroup_->KillAll())) n += SignalCgroup(*cgroup_, signals, &done, select);
  return n + SignalDescendants(self_, signals, &done, select);
}

util::Status Supervisor::SetUpCgroup() {
  CgroupLimits limits;
  // Bounded so the shift cannot overflow; anything that large is no limit.
  constexpr uint64_t kMaxMb = uint64_t{1} << 40;
  if (spec_.mem_limit_mb > 0 && spec_.mem_limit_mb < kMaxMb) limits.mem_limit_bytes = spec_.mem_limit_mb << 20;
  limits.cpuset = spec_.cpuset;
  for (const std::string& rule : spec_.denied_devices) {
    util::Result<DeviceRule> parsed = ParseDeviceRule(rule);
    if (!parsed.ok()) return parsed.status();
    limits.denied_devices.push_back(*parsed);
  }
  util::Result<std::unique_ptr<JobCgroup>> cg = CreateJobCgroup(kCgroupRoot, spec_.job_id, limits);
  if (!cg.ok()) {
    if (!limits.denied_devices.empty()) {
      return util::Unavailable("cannot confine the job to its GPUs (ConstrainDevices): " +
                               cg.status().message());
    }
    util::LogWarn("job {}: running without a cgroup (no memory limit, CPU confinement or cgroup accounting): {}",
                  spec_.job_id, cg.status().message());
    return util::Status::Ok();
  }
  cgroup_ = std::move(*cg);
  util::LogInfo("job {}: cgroup {} created (mem_limit_mb={} cpuset={} denied devices={})", spec_.job_id,
                cgroup_->Version(), spec_.mem_limit_mb, spec_.cpuset.empty() ? "-" : spec_.cpuset,
                limits.denied_devices.size());
  return util::Status::Ok();
}

CgroupJoin Supervisor::OpenCgroupJoin() {
  CgroupJoin join;
  if (!cgroup_) return join;
  util::Status st = cgroup_->OpenJoin(&join);
  if (!st.ok()) GiveUpCgroup(st.message());
  return join;
}

void Supervisor::GiveUpCgroup(const std::string& why) {
  util::LogWarn("job {}: running without a cgroup: {}", spec_.job_id, why);
  (void)cgroup_->Remove(kCgroupRemoveTries);
  cgroup_.reset();
}

void Supervisor::CollectUsage() {
  struct rusage ru;
  std::memset(&ru, 0, sizeof(ru));
  ::getrusage(RUSAGE_CHILDREN, &ru);
  result_.max_rss_kb = static_cast<uint64_t>(std::max<long>(0, ru.ru_maxrss));  // Linux: KiB
  result_.total_cpu_ms = static_cast<uint64_t>(util::CpuMillis(ru));
  result_.cgroup = cgroup_ != nullptr;
  if (!cgroup_) return;
  CgroupUsage usage = cgroup_->Usage();
  // The cgroup's peak is the memory charged to the job (all its processes
  // together) but misses pages first touched elsewhere, such as shared
  // libraries already in the page cache; the largest process's own RSS
  // counts those, so a small job is not shown smaller than its shell.
  result_.max_rss_kb = std::max<uint64_t>(result_.max_rss_kb, usage.peak_bytes / 1024);
  // Zero means the counter is missing (no cpuacct hierarchy): rusage stays.
  if (usage.cpu_ns > 0) result_.total_cpu_ms = usage.cpu_ns / 1'000'000;
  result_.oom_killed = usage.oom_killed;
  // Normally empty by now (no child is left), which one rmdir finds out
  // more cheaply than a read of its members. Anything else in it (not our
  // descendant, so never reaped by us) must not keep the cgroup alive.
  util::Status st = cgroup_->Remove(1);
  if (!st.ok() && !gave_up_) {
    SignalJob(SIGKILL);
    st = cgroup_->Remove(kCgroupRemoveTries);
  }
  if (!st.ok()) util::LogWarn("job {}: cannot remove its cgroup: {}", spec_.job_id, st.message());
  cgroup_.reset();
}

int Supervisor::PollTimeoutMs(int64_t now) const {
  std::optional<int64_t> next;
  for (const std::optional<int64_t>& d : {warn_at_, limit_at_, kill_at_, give_up_at_, sample_at_}) {
    if (d && (!next || *d < *next)) next = d;
  }
  if (!next) return -1;
  return static_cast<int>(std::clamp<int64_t>(*next - now, 0, INT_MAX));
}

// fds 0-2 must be open so that files opened later never land on them (the
// child dup2s its job files onto 0-2).
void EnsureStdFds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0 && null_fd != fd) ::close(null_fd);
  }
}

// Whatever the agent leaked to us must not reach the user's script.
void MarkInheritedFdsCloseOnExec() {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  for (int fd = 3; fd < 65536; ++fd) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

// The step's state file, open for writing: the pid line now, the result
// line after it at the end (stepd/spool.h).
class StateFile {
 public:
  // Writes the pid line as the whole of <spool_dir>/job<id>.state: a new
  // file, or one the agent recycled from a finished job (written over, not
  // truncated to zero first; see agent/file_recycler.h). Mode 0600: only
  // the agent reads it.
  static util::Result<StateFile> Create(const std::string& spool_dir, uint32_t job_id) {
    std::string path = spool_dir + "/" + StateFileName(job_id);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return util::Internal(fmt::format("cannot create {}: {}", path, strerror(errno)));
    StateFile f(fd, std::move(path));
    const std::string pid_line = fmt::format("{}\n", ::getpid());
    MUSTER_RETURN_IF_ERROR(f.Write(pid_line));
    if (::ftruncate(fd, static_cast<off_t>(pid_line.size())) != 0 || ::fchmod(fd, 0600) != 0) {
      return util::Internal(fmt::format("cannot set up {}: {}", f.path_, strerror(errno)));
    }
    return f;
  }
  StateFile(StateFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}
  ~StateFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Returns the process exit code: 0 once the result line is written.
  int WriteResult(const StepResult& result) {
    util::Status st = Write(ResultLine(result));
    if (st.ok()) return 0;
    util::LogError("cannot write the result of job {}: {}", result.job_id, st.message());
    return 1;
  }

 private:
  StateFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  // One write per line, so a reader never sees half a line from a live step.
  util::Status Write(std::string_view line) {
    while (!line.empty()) {
      ssize_t n = ::write(fd_, line.data(), line.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return util::Internal(fmt::format("cannot write {}: {}", path_, strerror(errno)));
      line.remove_prefix(static_cast<size_t>(n));
    }
    return util::Status::Ok();
  }

  int fd_;
  std::string path_;
};

StepResult FailedBeforeStart(uint32_t job_id, std::string detail) {
  StepResult result;
  result.job_id = job_id;
  result.state = "FAILED";
  result.exit_code = 1;
  result.detail = std::move(detail);
  result.start_time = result.end_time = WallSeconds();
  util::LogError("job {}: {}", job_id, result.detail);
  return result;
}

}  // namespace

int RunStep(const std::string& spool_dir, const StepSpec& spec) {
  EnsureStdFds();
  MarkInheritedFdsCloseOnExec();

  // Block first: a cancel that arrives while we start up must wait for the
  // signalfd, not kill muster-step before it can write a result. Exactly
  // these: a step forked by the agent inherits its mask too.
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : kHandledSignals) sigaddset(&handled, sig);
  ::sigprocmask(SIG_SETMASK, &handled, nullptr);
  // An inherited SIG_IGN for SIGCHLD would make children vanish unreaped,
  // and an inherited handler is the agent's.
  for (int sig : kHandledSignals) ::signal(sig, SIG_DFL);
  util::SetLogName(fmt::format("muster-step[{}]", spec.job_id));

  util::Result<StateFile> state = StateFile::Create(spool_dir, spec.job_id);
  if (!state.ok()) {
    util::LogError("{}", state.status().message());
    return 1;
  }
  // Own session: an agent restart (or its session's SIGHUP) must not take
  // the job down. Fails only if the agent made us a group leader.
  if (::setsid() < 0) util::LogWarn("setsid: {}", strerror(errno));
  // Orphans of the job reparent to us, not to init, so the whole tree stays
  // visible and killable.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    util::LogWarn("prctl(PR_SET_CHILD_SUBREAPER): {}", strerror(errno));
  }

  int signal_fd = ::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    return state->WriteResult(FailedBeforeStart(spec.job_id, fmt::format("signalfd: {}", strerror(errno))));
  }
  if (!spec.prolog.empty()) {
    util::Status prolog =
        RunHook(spec.prolog, HookEnvironment(spec, "prolog_slurmd"), spec.hook_timeout_s);
    if (!prolog.ok()) {
      ::close(signal_fd);
      StepResult failed = FailedBeforeStart(spec.job_id, "Prolog: " + prolog.message());
      failed.prolog_failed = true;
      return state->WriteResult(failed);
    }
  }
  Supervisor supervisor(spec, signal_fd);
  StepResult result = supervisor.Run();
  ::close(signal_fd);
  if (!spec.epilog.empty()) {
    util::Status epilog =
        RunHook(spec.epilog, HookEnvironment(spec, "epilog_slurmd"), spec.hook_timeout_s);
    if (!epilog.ok()) {
      util::LogError("job {}: Epilog: {}", spec.job_id, epilog.message());
      result.epilog_error = epilog.message();
    }
  }
  return state->WriteResult(result);
}

int RunStepFromSpecFile(const std::string& spool_dir, uint32_t job_id) {
  int dir_fd = ::open(spool_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    util::LogError("cannot open the spool directory {}: {}", spool_dir, strerror(errno));
    return 1;
  }
  util::Result<std::string> text = ReadFileAt(dir_fd, SpecFileName(job_id));
  ::close(dir_fd);
  util::Result<StepSpec> spec = text.status();
  if (text.ok()) {
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    spec = j.is_discarded() ? util::Result<StepSpec>(util::InvalidArgument("not valid JSON"))
                            : StepSpecFromJson(j);
  }
  if (spec.ok() && spec->job_id != job_id) {
    spec = util::InvalidArgument(fmt::format("it names job {}", spec->job_id));
  }
  if (spec.ok()) return RunStep(spool_dir, *spec);
  util::Result<StateFile> state = StateFile::Create(spool_dir, job_id);
  if (!state.ok()) {
    util::LogError("{}", state.status().message());
    return 1;
  }
  return state->WriteResult(FailedBeforeStart(
      job_id, fmt::format("invalid {}/{}: {}", spool_dir, SpecFileName(job_id), spec.status().message())));
}

StopCause StopCauseFromName(const std::string& name) {
  if (name == "requeue") return StopCause::kRequeue;
  if (name == "node_failure") return StopCause::kNodeFailure;
  if (name == "preemption") return StopCause::kPreemption;
  return StopCause::kCancel;
}

int EncodeSignal(int sig, SignalTarget target) {
  int flags = 0;
  if (target == SignalTarget::kBatch) flags = kBatchOnlyFlag;
  if (target == SignalTarget::kAll) flags = kAllProcessesFlag;
  return (sig & kSignalMask) | flags;
}

int EncodeNodeFailure() { return kNodeFailFlag | SIGKILL; }

int EncodeTimeLimit(int64_t seconds) {
  int64_t amount = kLimitMask;  // unlimited
  int units = 0;
  if (seconds >= 0 && seconds < kLimitMask) {
    amount = seconds;
  } else if (seconds >= 0) {
    amount = std::min<int64_t>((seconds + 59) / 60, kLimitMask - 1);
    units = kLimitInMinutes;
  }
  return kNewLimitFlag | units | static_cast<int>(amount << kLimitShift);
}

}  // namespace muster::stepd

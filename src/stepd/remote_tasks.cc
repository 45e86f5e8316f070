#include "stepd/remote_tasks.h"

#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "stepd/cgroup.h"
#include "stepd/pmix_server.h"
#include "util/cpu_bind.h"
#include "util/log.h"
#include "util/rusage.h"
#include "util/send_all.h"

extern char** environ;

namespace muster::stepd {
namespace {

using nlohmann::json;

int ConnectBack(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

struct Running {
  int rank = 0;
  pid_t pid = -1;
  int out = -1;  // on a terminal: its master side, read
  int err = -1;
  int in = -1;  // where its stdin is written (a pipe, or the master side)
  bool terminal = false;  // --pty's task 0: `out` and `in` are its terminal
  std::string to_stdin;  // srun's stdin not yet written
  bool stdin_ends = false;  // close `in` once to_stdin is written
  bool reaped = false;  // its process exited (status, usage)
  std::chrono::steady_clock::time_point reaped_at;
  bool ended = false;  // reported to srun
  int status = 0;
  rusage usage{};
};

// How long a task's output is still read after its process exited, while
// something it started holds the pipes open.
constexpr auto kOutputGrace = std::chrono::seconds(1);

// The descriptors one task starts with; -1: /dev/null.
struct TaskFds {
  int in = -1, out = -1, err = -1;
  int terminal = -1;  // the terminal's slave side (--pty): all three
};

// The child between fork and exec: the job's identity and directory, its
// descriptors as stdin/stdout/stderr, then the command. Writes errno to
// `report` when it cannot exec.
[[noreturn]] void ExecTask(const RemoteStepSpec& spec, const RemoteTask& task, int local_id,
                           TaskFds fds, const CgroupJoin* cgroup, int report) {
  auto fail = [report](int e) {
    (void)!::write(report, &e, sizeof(e));
    ::_exit(127);
  };
  if (cgroup != nullptr) {
    if (const int err = JoinSelf(*cgroup); err != 0) fail(err);
  }
  // On a terminal the task leads a session of its own, the terminal as its
  // controlling one, so job control and Ctrl-C work as on a login.
  if (fds.terminal >= 0) {
    if (::setsid() < 0 || ::ioctl(fds.terminal, TIOCSCTTY, 0) != 0) fail(errno);
    if (::geteuid() == 0 && ::fchown(fds.terminal, spec.uid, spec.gid) != 0) fail(errno);
    fds.in = fds.out = fds.err = fds.terminal;
  } else {
    ::setpgid(0, 0);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
  if (::geteuid() == 0) {
    std::vector<gid_t> groups(spec.groups.begin(), spec.groups.end());
    if (::setgroups(groups.size(), groups.data()) != 0 ||
        ::setresgid(spec.gid, spec.gid, spec.gid) != 0 ||
        ::setresuid(spec.uid, spec.uid, spec.uid) != 0) {
      fail(errno);
    }
  }
  if (::chdir(spec.work_dir.c_str()) != 0 && ::chdir("/tmp") != 0) fail(errno);
  const int null = ::open("/dev/null", O_RDWR);
  if (null < 0) fail(errno);
  if (::dup2(fds.in >= 0 ? fds.in : null, 0) < 0 || ::dup2(fds.out >= 0 ? fds.out : null, 1) < 0 ||
      ::dup2(fds.err >= 0 ? fds.err : null, 2) < 0) {
    fail(errno);
  }
  util::BindTaskCpus(spec.cpu_bind, spec.node, task.rank, local_id);
  std::vector<std::string> env = task.env;
  env.push_back(fmt::format("SLURM_TASK_PID={}", ::getpid()));
  std::vector<char*> envp;
  for (std::string& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // execvpe searches the PATH of `environ`: the task's own.
  environ = envp.data();
  ::execvpe(argv[0], argv.data(), envp.data());
  fail(errno);
  ::_exit(127);  // fail never returns; the compiler cannot see that
}

void CloseAll(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

// The two ends of what one task starts with: the child's (TaskFds) and
// ours (in `r`). False when a pipe or terminal could not be made.
bool MakeTaskFds(const TaskIo& io, Running* r, TaskFds* child) {
  if (io.pty && r->rank == 0) {
    winsize size{};
    size.ws_row = static_cast<unsigned short>(io.rows);
    size.ws_col = static_cast<unsigned short>(io.cols);
    int master = -1;
    if (::openpty(&master, &child->terminal, nullptr, nullptr, io.rows > 0 ? &size : nullptr) != 0) {
      return false;
    }
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
    ::fcntl(child->terminal, F_SETFD, FD_CLOEXEC);
    r->terminal = true;
    r->out = master;
    r->in = ::fcntl(master, F_DUPFD_CLOEXEC, 0);
    // Written as the terminal takes it (shared by both descriptors).
    ::fcntl(master, F_SETFL, O_NONBLOCK);
    return r->in >= 0;
  }
  if (io.pty) return true;  // the other tasks of --pty: /dev/null
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    CloseAll({out[0], out[1]});
    return false;
  }
  r->out = out[0];
  child->out = out[1];
  r->err = err[0];
  child->err = err[1];
  if (io.TakesStdin(r->rank)) {
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return false;
    child->in = in[0];
    r->in = in[1];
    // Written as the task reads: a task that never reads never blocks us.
    ::fcntl(r->in, F_SETFL, O_NONBLOCK);
  }
  return true;
}

// The cgroup the tasks of a step start in on this host.
struct TasksCgroup {
  bool usable = false;
  // Why the tasks may not start: their devices must be confined and no
  // cgroup could do it ("" when they may).
  std::string refusal;
  CgroupJoin join;
  std::unique_ptr<JobCgroup> owned;  // made for this step: removed after it
};

// The job's own cgroup when its batch step runs on this host (so the job's
// end stops these tasks too, and its devices are confined already), else
// one made here with the job's memory on this node as its limit and its
// refused devices. Without cgroups (not root, none mounted) the tasks run
// without (one warning), unless their devices must be confined.
TasksCgroup OpenTasksCgroup(const RemoteStepSpec& spec, const std::string& what) {
  TasksCgroup out;
  CgroupLimits limits;
  for (const std::string& rule : spec.denied_devices) {
    util::Result<DeviceRule> parsed = ParseDeviceRule(rule);
    if (!parsed.ok()) {
      out.refusal = parsed.status().message();
      return out;
    }
    limits.denied_devices.push_back(*parsed);
  }
  if (::geteuid() != 0) {
    if (!limits.denied_devices.empty()) out.refusal = "cannot confine the step to its GPUs: the launcher is not root";
    return out;
  }
  util::Result<CgroupJoin> existing =
      spec.batch_here ? OpenExistingJobCgroup(kCgroupRoot, spec.job_id)
                      : util::Result<CgroupJoin>(util::NotFound("no batch step here"));
  if (existing.ok()) {
    out.join = std::move(*existing);
    out.usable = true;
    return out;
  }
  limits.mem_limit_bytes = static_cast<uint64_t>(std::max<int64_t>(spec.mem_mb, 0)) << 20;
  // Its own name: another step of the job, or the job's other node on this
  // host, has a cgroup of its own, never killed with this one.
  util::Result<std::unique_ptr<JobCgroup>> made =
      CreateJobCgroup(kCgroupRoot, spec.job_id, limits,
                      fmt::format("job_{}_step_{}_{}", spec.job_id, spec.step_id, spec.node));
  util::Status st = made.ok() ? (*made)->OpenJoin(&out.join) : made.status();
  if (!st.ok()) {
    if (!limits.denied_devices.empty()) {
      out.refusal = "cannot confine the step to its GPUs (ConstrainDevices): " + st.message();
      if (made.ok()) (void)(*made)->Remove(kCgroupRemoveTries);
      return out;
    }
    util::LogWarn("{}: running without a cgroup: {}", what, st.message());
    if (made.ok()) (void)(*made)->Remove(kCgroupRemoveTries);
    return out;
  }
  out.owned = std::move(*made);
  out.usable = true;
  return out;
}

// SIGKILL to every process in the step's own cgroup.
void KillEveryone(JobCgroup& cgroup) {
  const int kill[] = {SIGKILL};
  if (!cgroup.KillAll()) SignalCgroup(cgroup, kill);
}

// Starts one task; on failure sends its "F" frame and leaves pid -1.
Running Start(const RemoteStepSpec& spec, const RemoteTask& task, int local_id,
              const CgroupJoin* cgroup, int sock) {
  Running r;
  r.rank = task.rank;
  TaskFds child;
  int report[2] = {-1, -1};
  const bool made = MakeTaskFds(spec.io, &r, &child) && ::pipe2(report, O_CLOEXEC) == 0;
  const int made_errno = errno;
  if (made) {
    r.pid = ::fork();
    if (r.pid == 0) ExecTask(spec, task, local_id, child, cgroup, report[1]);
  }
  CloseAll({child.in, child.out, child.err, child.terminal, report[1]});
  int e = made ? 0 : made_errno;
  ssize_t n = 0;
  if (made) {
    while ((n = ::read(report[0], &e, sizeof(e))) < 0 && errno == EINTR) {
    }
  }
  CloseAll({report[0]});
  if (!made || r.pid < 0 || n == static_cast<ssize_t>(sizeof(e))) {
    if (r.pid > 0) ::waitpid(r.pid, nullptr, 0);
    const std::string why =
        fmt::format("{}: task {}: Unable to exec command '{}': {}", spec.node, task.rank,
                    spec.argv.empty() ? "" : spec.argv[0], std::strerror(r.pid < 0 ? errno : e));
    util::SendAll(sock, fmt::format("F {} {}\n{}", task.rank, why.size(), why));
    CloseAll({r.out, r.err, r.in});
    r.out = r.err = r.in = -1;
    r.pid = -1;
    return r;
  }
  return r;
}

// Writes what it can of a task's pending stdin; closes its stdin once all
// is written and srun's has ended, or when the task closed it.
void FeedStdin(Running& t) {
  while (t.in >= 0 && !t.to_stdin.empty()) {
    ssize_t n = ::write(t.in, t.to_stdin.data(), t.to_stdin.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      t.to_stdin.clear();
      ::close(t.in);
      t.in = -1;
      return;
    }
    t.to_stdin.erase(0, static_cast<size_t>(n));
  }
  if (t.in >= 0 && t.stdin_ends && t.to_stdin.empty()) {
    ::close(t.in);
    t.in = -1;
  }
}

void KillAll(std::vector<Running>& tasks, int sig) {
  for (Running& t : tasks) {
    if (t.pid > 0 && !t.ended) ::kill(-t.pid, sig);
  }
}

}  // namespace

json ToJson(const TaskIo& io) {
  json in = io.stdin_rank == TaskIo::kAllTasks ? json("all")
            : io.stdin_rank == TaskIo::kNoTask ? json("none")
                                               : json(io.stdin_rank);
  return {{"stdin", in}, {"pty", io.pty}, {"rows", io.rows}, {"cols", io.cols}};
}

util::Result<TaskIo> TaskIoFromJson(const json& j) {
  TaskIo io;
  const json in = j.value("stdin", json("all"));
  if (in == "all") {
    io.stdin_rank = TaskIo::kAllTasks;
  } else if (in == "none") {
    io.stdin_rank = TaskIo::kNoTask;
  } else if (in.is_number_integer() && in.get<int64_t>() >= 0 && in.get<int64_t>() < (1 << 30)) {
    io.stdin_rank = in.get<int>();
  } else {
    return util::InvalidArgument("bad step launch: stdin is " + in.dump() +
                                 ", not \"all\", \"none\" or a task rank");
  }
  io.pty = j.value("pty", false);
  io.rows = std::clamp(j.value("rows", 0), 0, 65535);
  io.cols = std::clamp(j.value("cols", 0), 0, 65535);
  return io;
}

json ToJson(const RemoteStepSpec& s) {
  json tasks = json::array();
  for (const RemoteTask& t : s.tasks) tasks.push_back({{"rank", t.rank}, {"env", t.env}});
  json out = {{"job_id", s.job_id},     {"step_id", s.step_id}, {"node", s.node},
          {"uid", s.uid},           {"gid", s.gid},         {"groups", s.groups},
          {"work_dir", s.work_dir}, {"argv", s.argv},       {"tasks", tasks},
          {"io_host", s.io_host},   {"io_port", s.io_port}, {"token", s.token},
          {"io", ToJson(s.io)},
          {"cpu_bind",
           {{"cores", s.cpu_bind.cores},
            {"verbose", s.cpu_bind.verbose},
            {"cpus_per_task", s.cpu_bind.cpus_per_task}}},
          {"mem_mb", s.mem_mb}};
  if (!s.denied_devices.empty()) out["denied_devices"] = s.denied_devices;
  if (s.batch_here) out["batch_here"] = true;
  if (s.pmix) out["pmix"] = {{"nodes", s.step_nodes}, {"ranks", s.step_ranks}};
  return out;
}

util::Result<RemoteStepSpec> RemoteStepSpecFromJson(const json& j) {
  try {
    RemoteStepSpec s;
    s.job_id = j.at("job_id").get<uint32_t>();
    s.step_id = j.at("step_id").get<int>();
    s.node = j.at("node").get<std::string>();
    s.uid = j.at("uid").get<uint32_t>();
    s.gid = j.at("gid").get<uint32_t>();
    s.groups = j.value("groups", std::vector<uint32_t>{});
    s.work_dir = j.at("work_dir").get<std::string>();
    s.argv = j.at("argv").get<std::vector<std::string>>();
    for (const json& t : j.at("tasks")) {
      s.tasks.push_back({t.at("rank").get<int>(), t.at("env").get<std::vector<std::string>>()});
    }
    s.io_host = j.at("io_host").get<std::string>();
    s.io_port = j.at("io_port").get<int>();
    s.token = j.at("token").get<std::string>();
    util::Result<TaskIo> io = TaskIoFromJson(j.value("io", json::object()));
    if (!io.ok()) return io.status();
    s.io = *io;
    const json bind = j.value("cpu_bind", json::object());
    s.cpu_bind.cores = bind.value("cores", false);
    s.cpu_bind.verbose = bind.value("verbose", false);
    s.cpu_bind.cpus_per_task = std::clamp(bind.value("cpus_per_task", 1), 1, CPU_SETSIZE);
    s.mem_mb = j.value("mem_mb", int64_t{0});
    s.denied_devices = j.value("denied_devices", std::vector<std::string>{});
    s.batch_here = j.value("batch_here", false);
    if (j.contains("pmix")) {
      s.pmix = true;
      s.step_nodes = j.at("pmix").at("nodes").get<std::vector<std::string>>();
      s.step_ranks = j.at("pmix").at("ranks").get<std::vector<std::vector<int>>>();
      if (s.step_nodes.size() != s.step_ranks.size() ||
          std::find(s.step_nodes.begin(), s.step_nodes.end(), s.node) == s.step_nodes.end()) {
        return util::InvalidArgument("bad step launch: its PMIx layout does not hold its node");
      }
    }
    if (s.argv.empty()) return util::InvalidArgument("a step launch without a command");
    return s;
  } catch (const std::exception& e) {
    return util::InvalidArgument(std::string("bad step launch: ") + e.what());
  }
}

namespace {

// What srun sent, frame by frame (see the header); false on a frame that
// makes no sense, after which the rest is ignored.
bool TakeFromSrun(std::string& from_srun, std::vector<Running>& tasks, PmixServer* pmix) {
  for (;;) {
    const size_t nl = from_srun.find('\n');
    if (nl == std::string::npos) return true;
    int a = 0, b = 0;
    if (std::sscanf(from_srun.c_str(), "S %d", &a) == 1) {
      if (a > 0 && a < NSIG) KillAll(tasks, a);
    } else if (std::sscanf(from_srun.c_str(), "W %d %d", &a, &b) == 2) {
      winsize size{};
      size.ws_row = static_cast<unsigned short>(std::clamp(a, 0, 65535));
      size.ws_col = static_cast<unsigned short>(std::clamp(b, 0, 65535));
      // The kernel tells the terminal's foreground programs (SIGWINCH).
      for (Running& t : tasks) {
        if (t.terminal && t.in >= 0) ::ioctl(t.in, TIOCSWINSZ, &size);
      }
    } else if (std::sscanf(from_srun.c_str(), "C %d", &a) == 1 && a >= 0) {
      if (from_srun.size() < nl + 1 + static_cast<size_t>(a)) return true;  // more to come
      if (pmix != nullptr) pmix->CompleteFence(from_srun.substr(nl + 1, static_cast<size_t>(a)));
      from_srun.erase(0, nl + 1 + static_cast<size_t>(a));
      continue;
    } else if (const int got = std::sscanf(from_srun.substr(0, nl).c_str(), "I %d %d", &a, &b);
               got >= 1 && a >= 0) {
      if (from_srun.size() < nl + 1 + static_cast<size_t>(a)) return true;  // more to come
      const std::string_view data(from_srun.data() + nl + 1, static_cast<size_t>(a));
      for (Running& t : tasks) {
        if (t.in < 0 || (got == 2 && b >= 0 && t.rank != b)) continue;
        if (a == 0) t.stdin_ends = true;
        t.to_stdin.append(data);
        FeedStdin(t);
      }
      from_srun.erase(0, nl + 1 + static_cast<size_t>(a));
      continue;
    } else {
      return false;
    }
    from_srun.erase(0, nl + 1);
  }
}

}  // namespace

int RunRemoteTasks(const RemoteStepSpec& spec) {
  const std::string what = fmt::format("step {}.{} on {}", spec.job_id, spec.step_id, spec.node);
  int sock = ConnectBack(spec.io_host, spec.io_port);
  if (sock < 0 || !util::SendAll(sock, fmt::format("HELLO {} {}\n", spec.token, spec.node))) {
    util::LogError("{}: cannot reach srun at {}:{}", what, spec.io_host, spec.io_port);
    return 1;
  }
  // scancel N.S reaches the tasks through the agent: SIGUSR1 carrying the
  // signal (sigqueue), read here from a signalfd.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ::sigprocmask(SIG_BLOCK, &usr1, nullptr);
  const int signals = ::signalfd(-1, &usr1, SFD_CLOEXEC | SFD_NONBLOCK);
  TasksCgroup cgroup = OpenTasksCgroup(spec, what);
  if (!cgroup.refusal.empty()) {
    util::LogError("{}: {}", what, cgroup.refusal);
    for (const RemoteTask& t : spec.tasks) {
      const std::string why = fmt::format("{}: task {}: {}", spec.node, t.rank, cgroup.refusal);
      util::SendAll(sock, fmt::format("F {} {}\n{}", t.rank, why.size(), why));
    }
    ::close(sock);
    return 0;
  }
  // --mpi=pmix: the server the tasks' MPI connects to, its variables in
  // each task's environment.
  std::unique_ptr<PmixServer> pmix;
  RemoteStepSpec with_pmix = spec;
  if (spec.pmix) {
    PmixLayout layout;
    layout.nspace = fmt::format("muster.{}.{}", spec.job_id, spec.step_id);
    layout.nodes = spec.step_nodes;
    layout.ranks = spec.step_ranks;
    layout.node_index = static_cast<size_t>(
        std::find(spec.step_nodes.begin(), spec.step_nodes.end(), spec.node) - spec.step_nodes.begin());
    layout.uid = spec.uid;
    layout.gid = spec.gid;
    util::Result<std::unique_ptr<PmixServer>> started = PmixServer::Start(layout);
    util::Status st = started.ok() ? util::Status::Ok() : started.status();
    if (started.ok()) pmix = std::move(*started);
    for (RemoteTask& t : with_pmix.tasks) {
      if (!st.ok()) break;
      util::Result<std::vector<std::string>> env = pmix->TaskEnvironment(t.rank);
      if (!env.ok()) st = env.status();
      if (env.ok()) t.env.insert(t.env.end(), env->begin(), env->end());
    }
    if (!st.ok()) {
      util::LogError("{}: {}", what, st.message());
      for (const RemoteTask& t : spec.tasks) {
        const std::string why = fmt::format("{}: task {}: {}", spec.node, t.rank, st.message());
        util::SendAll(sock, fmt::format("F {} {}\n{}", t.rank, why.size(), why));
      }
      ::close(sock);
      return 0;
    }
  }
  std::vector<Running> tasks;
  for (size_t i = 0; i < with_pmix.tasks.size(); ++i) {
    tasks.push_back(Start(with_pmix, with_pmix.tasks[i], static_cast<int>(i),
                          cgroup.usable ? &cgroup.join : nullptr, sock));
  }
  std::string from_srun;
  bool srun_gone = false;
  bool leftovers_killed = false;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    bool all_done = true;
    bool exiting = false;  // a task whose output closed, not yet reaped
    bool draining = false;  // a task reaped whose output is still open
    for (Running& t : tasks) {
      if (t.pid <= 0 || t.ended) continue;
      // Not blocking: srun's going away must still be noticed meanwhile.
      if (!t.reaped && ::wait4(t.pid, &t.status, WNOHANG, &t.usage) == t.pid) {
        t.reaped = true;
        t.reaped_at = now;
      }
      // The task has ended once its output is read to the end, or after a
      // grace (what it left running may hold the pipes open; the step's
      // cgroup, below, ends that), so its "X" follows its last output.
      if (t.reaped && ((t.out < 0 && t.err < 0) || now - t.reaped_at > kOutputGrace)) {
        CloseAll({t.in, t.out, t.err});
        t.in = t.out = t.err = -1;
        t.ended = true;
        const int code = WIFEXITED(t.status) ? WEXITSTATUS(t.status) : 0;
        const int sig = WIFSIGNALED(t.status) ? WTERMSIG(t.status) : 0;
        // The task's peak memory (KiB) and CPU time (ms), for sacct.
        if (!srun_gone) {
          util::SendAll(sock, fmt::format("X {} {} {} {} {}\n", t.rank, code, sig, t.usage.ru_maxrss,
                                          util::CpuMillis(t.usage)));
        }
        continue;
      }
      all_done = false;
      exiting = exiting || (!t.reaped && t.out < 0 && t.err < 0);
      draining = draining || t.reaped;
    }
    if (all_done) break;
    // Every task has exited: what they left running in the step's own
    // cgroup goes, and with it what holds their output open.
    if (!leftovers_killed && cgroup.owned &&
        std::all_of(tasks.begin(), tasks.end(), [](const Running& t) { return t.pid <= 0 || t.reaped; })) {
      leftovers_killed = true;
      KillEveryone(*cgroup.owned);
    }
    // A negative fd is skipped: srun's closed socket would wake poll at once.
    std::vector<pollfd> fds{{srun_gone ? -1 : sock, POLLIN, 0},
                            {signals, POLLIN, 0},
                            {pmix ? pmix->wakeup_fd() : -1, POLLIN, 0}};
    struct Owner {
      Running* task;
      char what;  // 'O' stdout, 'E' stderr, 'I' its stdin wants more
    };
    std::vector<Owner> owners{{nullptr, 0}, {nullptr, 0}, {nullptr, 0}};
    for (Running& t : tasks) {
      if (t.out >= 0) {
        fds.push_back({t.out, POLLIN, 0});
        owners.push_back({&t, 'O'});
      }
      if (t.err >= 0) {
        fds.push_back({t.err, POLLIN, 0});
        owners.push_back({&t, 'E'});
      }
      if (t.in >= 0 && !t.to_stdin.empty()) {
        fds.push_back({t.in, POLLOUT, 0});
        owners.push_back({&t, 'I'});
      }
    }
    // A task's pipes close a moment before it can be reaped; a reaped one
    // is watched for its grace.
    if (::poll(fds.data(), fds.size(), exiting ? 5 : draining ? 50 : 1000) < 0 && errno != EINTR) {
      break;
    }
    if (fds[0].revents != 0 && !srun_gone) {
      char buf[65536];
      ssize_t n = ::recv(sock, buf, sizeof(buf), 0);
      if (n > 0) from_srun.append(buf, static_cast<size_t>(n));
      if (n <= 0 || !TakeFromSrun(from_srun, tasks, pmix.get())) {
        // srun is gone (or speaks nonsense): so is its step.
        srun_gone = true;
        util::LogWarn("{}: srun went away; killing the step's tasks", what);
        KillAll(tasks, SIGKILL);
      }
    }
    signalfd_siginfo info{};
    while (fds[1].revents != 0 && ::read(signals, &info, sizeof(info)) == sizeof(info)) {
      const int sig = info.ssi_code == SI_QUEUE ? info.ssi_int : SIGKILL;
      if (sig > 0 && sig < NSIG) {
        util::LogInfo("{}: signal {} to its tasks (scancel)", what, sig);
        KillAll(tasks, sig);
      }
    }
    if (fds[2].revents != 0) {
      // This node's part of a fence goes to srun, which gathers every node's.
      while (std::optional<std::string> part = pmix->TakeContribution()) {
        if (!srun_gone) util::SendAll(sock, fmt::format("C {}\n", part->size()) + *part);
      }
      if (pmix->TakeAbort()) KillAll(tasks, SIGKILL);
    }
    for (size_t i = 3; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto [t, kind] = owners[i];
      if (kind == 'I') {
        FeedStdin(*t);
        continue;
      }
      char buf[65536];
      ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        if (!srun_gone) {
          util::SendAll(sock, fmt::format("{} {} {}\n", kind, t->rank, n) +
                            std::string(buf, static_cast<size_t>(n)));
        }
        continue;
      }
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      // End of output (a terminal's: EIO once its last user closed it).
      ::close(fds[i].fd);
      (kind == 'O' ? t->out : t->err) = -1;
    }
  }
  ::close(sock);
  if (signals >= 0) ::close(signals);
  if (cgroup.owned) {
    // The step is over: what its tasks left running goes with it.
    KillEveryone(*cgroup.owned);
    if (util::Status st = cgroup.owned->Remove(kCgroupRemoveTries); !st.ok()) {
      util::LogWarn("{}: {}", what, st.message());
    }
  }
  return 0;
}

}  // namespace muster::stepd

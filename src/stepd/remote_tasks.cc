#include "stepd/remote_tasks.h"

#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "util/log.h"

extern char** environ;

namespace muster::stepd {
namespace {

using nlohmann::json;

bool SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

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
  int out = -1;
  int err = -1;
  bool ended = false;
  int status = 0;
};

// The child between fork and exec: the job's identity and directory, the
// pipes as stdout/stderr, then the command. Writes errno to `report` when
// it cannot exec.
[[noreturn]] void ExecTask(const RemoteStepSpec& spec, const RemoteTask& task, int out, int err,
                           int report) {
  auto fail = [report](int e) {
    (void)!::write(report, &e, sizeof(e));
    ::_exit(127);
  };
  ::setpgid(0, 0);
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
  int in = ::open("/dev/null", O_RDONLY);
  if (in < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) fail(errno);
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

// Starts one task; on failure sends its "F" frame and leaves pid -1.
Running Start(const RemoteStepSpec& spec, const RemoteTask& task, int sock) {
  Running r;
  r.rank = task.rank;
  int out[2], err[2], report[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(report, O_CLOEXEC) != 0) {
    SendAll(sock, fmt::format("F {} {}\n{}", task.rank, 4, "pipe"));
    return r;
  }
  r.pid = ::fork();
  if (r.pid == 0) ExecTask(spec, task, out[1], err[1], report[1]);
  for (int fd : {out[1], err[1], report[1]}) ::close(fd);
  int e = 0;
  ssize_t n;
  while ((n = ::read(report[0], &e, sizeof(e))) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (r.pid < 0 || n == static_cast<ssize_t>(sizeof(e))) {
    if (r.pid > 0) ::waitpid(r.pid, nullptr, 0);
    const std::string why =
        fmt::format("{}: task {}: Unable to exec command '{}': {}", spec.node, task.rank,
                    spec.argv.empty() ? "" : spec.argv[0], std::strerror(r.pid < 0 ? errno : e));
    SendAll(sock, fmt::format("F {} {}\n{}", task.rank, why.size(), why));
    ::close(out[0]);
    ::close(err[0]);
    r.pid = -1;
    return r;
  }
  r.out = out[0];
  r.err = err[0];
  return r;
}

void KillAll(std::vector<Running>& tasks, int sig) {
  for (Running& t : tasks) {
    if (t.pid > 0 && !t.ended) ::kill(-t.pid, sig);
  }
}

}  // namespace

json ToJson(const RemoteStepSpec& s) {
  json tasks = json::array();
  for (const RemoteTask& t : s.tasks) tasks.push_back({{"rank", t.rank}, {"env", t.env}});
  return {{"job_id", s.job_id},     {"step_id", s.step_id}, {"node", s.node},
          {"uid", s.uid},           {"gid", s.gid},         {"groups", s.groups},
          {"work_dir", s.work_dir}, {"argv", s.argv},       {"tasks", tasks},
          {"io_host", s.io_host},   {"io_port", s.io_port}, {"token", s.token}};
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
    if (s.argv.empty()) return util::InvalidArgument("a step launch without a command");
    return s;
  } catch (const std::exception& e) {
    return util::InvalidArgument(std::string("bad step launch: ") + e.what());
  }
}

int RunRemoteTasks(const RemoteStepSpec& spec) {
  const std::string what = fmt::format("step {}.{} on {}", spec.job_id, spec.step_id, spec.node);
  int sock = ConnectBack(spec.io_host, spec.io_port);
  if (sock < 0 || !SendAll(sock, fmt::format("HELLO {} {}\n", spec.token, spec.node))) {
    util::LogError("{}: cannot reach srun at {}:{}", what, spec.io_host, spec.io_port);
    return 1;
  }
  std::vector<Running> tasks;
  for (const RemoteTask& t : spec.tasks) tasks.push_back(Start(spec, t, sock));
  std::string from_srun;
  bool srun_gone = false;
  for (;;) {
    // Reap first, so an "X" follows the last of a task's output.
    // A negative fd is skipped: srun's closed socket would wake poll at once.
    std::vector<pollfd> fds{{srun_gone ? -1 : sock, POLLIN, 0}};
    std::vector<std::pair<Running*, bool>> owners{{nullptr, false}};
    for (Running& t : tasks) {
      if (t.out >= 0) {
        fds.push_back({t.out, POLLIN, 0});
        owners.push_back({&t, true});
      }
      if (t.err >= 0) {
        fds.push_back({t.err, POLLIN, 0});
        owners.push_back({&t, false});
      }
    }
    bool all_done = true;
    bool exiting = false;  // a task whose output closed, not yet reaped
    for (Running& t : tasks) {
      if (t.pid <= 0 || t.ended) continue;
      // Not blocking: a task that closed its output may still run, and
      // srun's going away must still be noticed meanwhile.
      if (t.out < 0 && t.err < 0 && ::waitpid(t.pid, &t.status, WNOHANG) == t.pid) {
        t.ended = true;
        const int code = WIFEXITED(t.status) ? WEXITSTATUS(t.status) : 0;
        const int sig = WIFSIGNALED(t.status) ? WTERMSIG(t.status) : 0;
        if (!srun_gone) SendAll(sock, fmt::format("X {} {} {}\n", t.rank, code, sig));
        continue;
      }
      all_done = false;
      exiting = exiting || (t.out < 0 && t.err < 0);
    }
    if (all_done) break;
    // A task's pipes close a moment before it can be reaped.
    if (::poll(fds.data(), fds.size(), exiting ? 5 : 1000) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0 && !srun_gone) {
      char buf[256];
      ssize_t n = ::recv(sock, buf, sizeof(buf), 0);
      if (n <= 0) {
        // srun is gone: so is its step.
        srun_gone = true;
        util::LogWarn("{}: srun went away; killing the step's tasks", what);
        KillAll(tasks, SIGKILL);
      } else {
        from_srun.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = from_srun.find('\n')) != std::string::npos) {
          int sig = 0;
          if (std::sscanf(from_srun.c_str(), "S %d", &sig) == 1 && sig > 0 && sig < NSIG) {
            KillAll(tasks, sig);
          }
          from_srun.erase(0, nl + 1);
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto [t, is_out] = owners[i];
      char buf[65536];
      ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        if (!srun_gone) {
          SendAll(sock, fmt::format("{} {} {}\n", is_out ? 'O' : 'E', t->rank, n) +
                            std::string(buf, static_cast<size_t>(n)));
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      ::close(fds[i].fd);
      (is_out ? t->out : t->err) = -1;
    }
  }
  ::close(sock);
  return 0;
}

}  // namespace muster::stepd

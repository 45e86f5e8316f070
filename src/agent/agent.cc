#include "agent/agent.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <fmt/format.h>

#include "auth/signed_lines.h"
#include "stepd/remote_tasks.h"
#include "util/log.h"
#include "util/strings.h"

namespace muster::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The CPU ids of a cpuset list ("0-2,8" -> 0 1 2 8); empty when malformed.
std::vector<int> ParseCpuList(const std::string& list) {
  std::vector<int> ids;
  for (const std::string& part : util::Split(list, ',')) {
    const size_t dash = part.find('-');
    const std::string lo = part.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : part.substr(dash + 1);
    auto digits = [](const std::string& t) {
      return !t.empty() && t.size() < 7 && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(lo) || !digits(hi) || std::stoi(hi) < std::stoi(lo)) return {};
    for (int c = std::stoi(lo); c <= std::stoi(hi); ++c) ids.push_back(c);
  }
  return ids;
}


int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

Agent::Agent(boost::asio::io_context& io, config::Config cfg, AgentOptions opts)
    : io_(io),
      cfg_(std::move(cfg)),
      opts_(std::move(opts)),
      spool_(config::AgentSpoolDir(cfg_, opts_.host)),
      files_(spool_),
      reconnect_(io),
      sigchld_(io, SIGCHLD) {
  if (opts_.nodes.empty()) {
    // One host: every node. Several: the nodes whose NodeHostname is this
    // host, as slurmd finds its own.
    for (const auto& n : cfg_.nodes) {
      if (opts_.auth == nullptr || n.hostname == opts_.host) opts_.nodes.push_back(n.name);
    }
  }
}

stepd::StepState Agent::ReadState(uint32_t job_id) const {
  util::Result<std::string> text = stepd::ReadFileAt(AT_FDCWD, SpoolFile(stepd::StateFileName(job_id)));
  return text.ok() ? stepd::ParseStepStateOf(job_id, *text) : stepd::StepState{};
}

void Agent::Start() {
  std::error_code ec;
  fs::create_directories(spool_, ec);
  if (ec) util::LogError("cannot create spool {}: {}", spool_, ec.message());
  // Steps an earlier agent left: ended ones are reported at registration,
  // running ones are watched through a pidfd (we are not their parent).
  for (const auto& entry : fs::directory_iterator(spool_, ec)) {
    std::optional<uint32_t> job_id = stepd::JobOfStateFile(entry.path().filename().string());
    if (!job_id) continue;
    stepd::StepState state = ReadState(*job_id);
    int fd = state.result || state.pid <= 0 ? -1 : PidfdOpen(state.pid);
    // Gone since the read: it may have written its result on the way out.
    if (!state.result && state.pid > 0 && fd < 0) state = ReadState(*job_id);
    Step step;
    if (state.result) {
      if (fd >= 0) ::close(fd);
      step.ended = true;
      steps_[*job_id] = std::move(step);
      continue;
    }
    // Gone without a result: the controller will mark the job failed.
    if (fd < 0) continue;
    step.pid = state.pid;
    step.pidfd = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
    steps_[*job_id] = std::move(step);
    WatchPidfd(*job_id);
  }
  WatchSignals();
  if (opts_.auth != nullptr) {
    // The local commands' credentials (a login host runs the agent for
    // this alone).
    auto kiosk = auth::KioskServer::Listen(io_, config::KioskSocketPath(cfg_, opts_.host), opts_.auth,
                                           config::ControllerAddress(cfg_), cfg_.slurmctld_port);
    if (kiosk.ok()) {
      kiosk_ = std::move(*kiosk);
    } else {
      util::LogError("{}", kiosk.status().message());
    }
    if (opts_.nodes.empty()) {
      util::LogInfo("no nodes of this host ({}) in {}: serving credentials only", opts_.host,
                    cfg_.path);
      return;
    }
  }
  Connect();
}

void Agent::Connect() {
  if (opts_.auth == nullptr) {
    auto socket = api::ConnectUnix(io_, config::AgentSocketPath(cfg_));
    if (!socket.ok()) {
      ScheduleReconnect();
      return;
    }
    Connected(std::move(*socket), "musterd");
    return;
  }
  // Asynchronous: a controller host that does not answer must not stop
  // this loop from reaping steps meanwhile.
  const std::string host = config::ControllerAddress(cfg_);
  const int port = cfg_.slurmctld_port;
  boost::asio::ip::tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) {
    util::LogWarn("cannot resolve the controller {}: {}; retrying", host, ec.message());
    ScheduleReconnect(std::chrono::seconds(1));
    return;
  }
  auto socket = std::make_shared<boost::asio::ip::tcp::socket>(io_);
  boost::asio::async_connect(
      *socket, endpoints,
      [this, socket, peer = fmt::format("musterd at {}:{}", host, port)](
          boost::system::error_code cec, const boost::asio::ip::tcp::endpoint&) {
        if (cec) {
          ScheduleReconnect(std::chrono::seconds(1));
          return;
        }
        socket->set_option(boost::asio::ip::tcp::no_delay(true), cec);
        Connected(api::LineConn::Socket(std::move(*socket)), peer);
      });
}

void Agent::Connected(api::LineConn::Socket socket, std::string peer) {
  std::shared_ptr<api::LineAuth> line_auth;
  if (opts_.auth != nullptr) line_auth = opts_.auth->ForConnection(auth::kToController, auth::kToAgent);
  conn_ = std::make_shared<api::LineConn>(std::move(socket), std::move(peer), std::move(line_auth));
  conn_->Start([this](const json& msg) { OnMessage(msg); },
               [this] {
                 // Refused over authentication: the key or the clocks need
                 // an operator; retrying at once would only fill the logs.
                 const bool refused = conn_->refused();
                 util::LogWarn("lost the controller; reconnecting{}", refused ? " in 10 s" : "");
                 conn_.reset();
                 ScheduleReconnect(refused ? std::chrono::seconds(10) : std::chrono::milliseconds(200));
               });
  Register();
}

void Agent::ScheduleReconnect(std::chrono::milliseconds delay) {
  reconnect_.expires_after(delay);
  reconnect_.async_wait([this](boost::system::error_code ec) {
    if (!ec) Connect();
  });
}

void Agent::Register() {
  json running = json::array();
  json finished = json::array();
  for (const auto& [id, step] : steps_) {
    if (!step.ended) {
      running.push_back(id);
      continue;
    }
    stepd::StepState state = ReadState(id);
    if (state.result) finished.push_back(stepd::ToJson(*state.result));
  }
  conn_->Send({{"type", "register"},
               {"host", opts_.host},
               {"nodes", opts_.nodes},
               {"boot_time", static_cast<int64_t>(::time(nullptr))},
               {"running", running},
               {"finished", finished}});
  util::LogInfo("registering {} nodes, {} running and {} ended steps", opts_.nodes.size(),
                running.size(), finished.size());
}

void Agent::OnMessage(const json& msg) {
  try {
    std::string type = msg.at("type").get<std::string>();
    if (type == "launch") {
      Launch(msg);
    } else if (type == "step_launch") {
      LaunchRemoteTasks(msg);
    } else if (type == "limit") {
      // A running job's new time limit, in seconds (-1 = unlimited).
      uint32_t id = msg.at("job_id").get<uint32_t>();
      auto it = steps_.find(id);
      if (it == steps_.end() || it->second.ended || it->second.pid <= 0) return;
      union sigval v {};
      v.sival_int = stepd::EncodeTimeLimit(msg.at("time_limit_s").get<int64_t>());
      ::sigqueue(it->second.pid, SIGUSR1, v);
    } else if (type == "cancel" || type == "signal") {
      uint32_t id = msg.at("job_id").get<uint32_t>();
      auto it = steps_.find(id);
      if (it == steps_.end() || it->second.ended || it->second.pid <= 0) return;
      if (type == "cancel") {
        ::kill(it->second.pid, SIGTERM);
      } else {
        union sigval v {};
        const std::string target = msg.value("target", "steps");
        v.sival_int = stepd::EncodeSignal(msg.at("signal").get<int>(),
                                          target == "all"     ? stepd::SignalTarget::kAll
                                          : target == "batch" ? stepd::SignalTarget::kBatch
                                                              : stepd::SignalTarget::kSteps);
        ::sigqueue(it->second.pid, SIGUSR1, v);
      }
    } else if (type == "step_signal") {
      SignalStep(msg);
    } else if (type == "reconfigure") {
      util::LogInfo("reconfigure: restarting on the configuration as it is now");
      if (opts_.on_reconfigure) opts_.on_reconfigure();
    } else if (type == "ack") {
      uint32_t id = msg.at("job_id").get<uint32_t>();
      files_.Recycle(stepd::ScriptFileName(id));
      files_.Recycle(stepd::StateFileName(id));
      steps_.erase(id);
    }
  } catch (const std::exception& e) {
    util::LogWarn("bad message from controller: {}", e.what());
  }
}

void Agent::ReportLaunchFailure(uint32_t job_id, const std::string& detail) {
  util::LogError("job {}: {}", job_id, detail);
  stepd::StepResult r;
  r.job_id = job_id;
  r.state = "FAILED";
  r.exit_code = 1;
  r.start_time = r.end_time = ::time(nullptr);
  r.detail = detail;
  if (conn_) conn_->Send({{"type", "ended"}, {"result", stepd::ToJson(r)}});
}

bool Agent::ConfinesCpus(const std::string& node, const std::string& cpuset) const {
  // Emulated nodes share this machine's CPUs under made-up ids; only the
  // node that is this machine (named as the agent's host) maps its CPU ids
  // onto real ones.
  if (node != opts_.host) return false;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
  const std::vector<int> ids = ParseCpuList(cpuset);
  const bool all_here = !ids.empty() && std::all_of(ids.begin(), ids.end(), [&](int c) {
    return c < CPU_SETSIZE && CPU_ISSET(c, &mask);
  });
  if (!all_here) {
    util::LogWarn("node {}: CPU ids {} are not all on this machine ({} CPUs); not confining", node,
                  cpuset, CPU_COUNT(&mask));
    return false;
  }
  return true;
}

void Agent::Launch(const json& msg) {
  uint32_t job_id = msg.at("job_id").get<uint32_t>();
  auto spec = stepd::StepSpecFromJson(msg.at("spec"));
  if (!spec.ok()) {
    ReportLaunchFailure(job_id, "bad launch spec: " + spec.status().message());
    return;
  }
  const std::string node = msg.value("node", "");
  if (!spec->cpuset.empty() && !ConfinesCpus(node, spec->cpuset)) spec->cpuset.clear();
  spec->script_path = SpoolFile(stepd::ScriptFileName(job_id));
  files_.Reuse(stepd::ScriptFileName(job_id), spec->uid);
  // chown before chmod: 0700 for the job's user alone, whoever had it before.
  if (!OverwriteFile(spec->script_path, msg.at("script").get<std::string>(), 0700) ||
      (::chown(spec->script_path.c_str(), spec->uid, spec->gid) != 0 &&
       (::geteuid() == 0 || spec->uid != ::geteuid())) ||
      ::chmod(spec->script_path.c_str(), 0700) != 0) {
    ReportLaunchFailure(job_id, "cannot write job script " + spec->script_path);
    return;
  }
  // A state file an earlier run of this id left here (its end never
  // acknowledged before a crash) must not pass for this run's.
  ::unlink(SpoolFile(stepd::StateFileName(job_id)).c_str());
  files_.Reuse(stepd::StateFileName(job_id), ::geteuid());
  pid_t pid = ForkStep(*spec);
  if (pid < 0) {
    ReportLaunchFailure(job_id, std::string("cannot fork the job's muster-step: ") + std::strerror(errno));
    return;
  }
  Step step;
  step.pid = pid;
  steps_[job_id] = std::move(step);
}

pid_t Agent::ForkStep(const stepd::StepSpec& spec) {
  return ForkSupervisor("muster-step [" + std::to_string(spec.job_id) + ".batch] " + spool_,
                        [this, &spec] { return stepd::RunStep(spool_, spec); });
}

void Agent::LaunchRemoteTasks(const json& msg) {
  auto spec = stepd::RemoteStepSpecFromJson(msg.value("step", json::object()));
  if (!spec.ok()) {
    util::LogWarn("{}", spec.status().message());
    return;
  }
  const std::string step = fmt::format("{}.{}", spec->job_id, spec->step_id);
  pid_t pid = ForkSupervisor(fmt::format("muster-step [{}] {}", step, spec->node), [&spec] {
    // Its own session, as the batch step's: it outlives an agent restart.
    ::setsid();
    return stepd::RunRemoteTasks(*spec);
  });
  if (pid < 0) {
    util::LogError("step {}: cannot fork its tasks' launcher: {}", step, std::strerror(errno));
    return;
  }
  util::LogInfo("step {}: {} tasks on {} (pid {})", step, spec->tasks.size(), spec->node, pid);
}

namespace {

std::string ReadProcFile(pid_t pid, const char* name) {
  std::ifstream in(fmt::format("/proc/{}/{}", pid, name), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The processes for which `pick(pid)` holds.
std::vector<pid_t> FindProcesses(const std::function<bool(pid_t)>& pick) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    util::Result<int64_t> pid = util::ParseInt(entry.path().filename().string());
    if (pid.ok() && *pid > 0 && pick(static_cast<pid_t>(*pid))) out.push_back(static_cast<pid_t>(*pid));
  }
  return out;
}

pid_t ParentOf(pid_t pid) {
  // "pid (comm) state ppid ...": comm may hold spaces, so after its ')'.
  const std::string stat = ReadProcFile(pid, "stat");
  const size_t close = stat.rfind(')');
  int ppid = 0;
  if (close == std::string::npos || std::sscanf(stat.c_str() + close + 1, " %*c %d", &ppid) != 1) {
    return 0;
  }
  return ppid;
}

}  // namespace

void Agent::SignalStep(const json& msg) {
  const auto job = msg.at("job_id").get<uint32_t>();
  const int step = msg.at("step_id").get<int>();
  const int sig = msg.at("signal").get<int>();
  // The launcher's title: "muster-step [<job>.<step>] <node>".
  const std::string title = fmt::format("muster-step [{}.{}] ", job, step);
  int reached = 0;
  for (pid_t pid : FindProcesses([&](pid_t p) { return ReadProcFile(p, "cmdline").starts_with(title); })) {
    union sigval v {};
    v.sival_int = sig;
    if (::sigqueue(pid, SIGUSR1, v) == 0) ++reached;
  }
  // One host: srun runs the tasks as its children. Checked to be that
  // job's srun, so a recycled pid is never hit.
  const pid_t srun = msg.value("srun_pid", 0);
  if (reached == 0 && srun > 0 && msg.value("srun_host", "") == opts_.host &&
      ReadProcFile(srun, "comm") == "srun\n") {
    const std::string env = ReadProcFile(srun, "environ");
    if (env.find(fmt::format("SLURM_JOB_ID={}", job) + '\0') != std::string::npos) {
      for (pid_t task : FindProcesses([&](pid_t p) { return ParentOf(p) == srun; })) {
        if (::kill(task, sig) == 0) ++reached;
      }
    }
  }
  util::LogInfo("step {}.{}: signal {} reached {} process(es) here", job, step, sig, reached);
}

pid_t Agent::ForkSupervisor(const std::string& title, const std::function<int()>& body) {
  // Every signal blocked across the fork, so the child never runs the
  // handlers it inherits (Boost.Asio's, writing to the agent's signal
  // pipe); the supervisor sets its own mask and dispositions.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &old);
  // A plain fork of this small, single-threaded process instead of a
  // posix_spawn of muster-step: no exec, dynamic loading or start-up of a
  // second binary per job.
  pid_t pid = ::fork();
  if (pid == 0) RunForked(title, body);
  int err = errno;
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return pid;
}

void Agent::RunForked(const std::string& title, const std::function<int()>& body) {
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd > 0) {
    ::dup2(null_fd, 0);
    ::close(null_fd);
  }
  // The supervisor logs to the agent's own log (stderr), not a file per
  // job: creating files is most of the cost of a trivial job.
  ::dup2(2, 1);
  // Nothing else of the agent's stays open in the child: an inherited
  // controller connection would keep it open after the agent died, hiding
  // the loss.
  ::close_range(3, ~0U, 0);
  ::prctl(PR_SET_NAME, "muster-step");
  if (!opts_.cmdline.empty()) {
    const size_t n = std::min(title.size(), opts_.cmdline.size() - 1);
    std::copy_n(title.begin(), n, opts_.cmdline.begin());
    std::fill(opts_.cmdline.begin() + static_cast<ptrdiff_t>(n), opts_.cmdline.end(), '\0');
  }
  int rc = 1;
  try {
    rc = body();
  } catch (...) {
    // Never back into the agent's own frames (its event loop) in this process.
    util::LogError("{}: failed: unexpected exception", title);
  }
  ::_exit(rc);
}

void Agent::WatchSignals() {
  sigchld_.async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    Reap();
    WatchSignals();
  });
}

void Agent::Reap() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto& [id, step] : steps_) {
      if (step.pid == pid && !step.ended) {
        StepEnded(id);
        break;
      }
    }
  }
}

void Agent::WatchPidfd(uint32_t job_id) {
  auto& step = steps_[job_id];
  step.pidfd->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         [this, job_id](boost::system::error_code ec) {
                           if (ec) return;
                           auto it = steps_.find(job_id);
                           // Reaped already: a restart in place keeps the
                           // supervisors its children.
                           if (it == steps_.end() || it->second.ended) return;
                           it->second.pidfd.reset();
                           StepEnded(job_id);
                         });
}

void Agent::StepEnded(uint32_t job_id) {
  auto& step = steps_[job_id];
  step.ended = true;
  step.pid = 0;
  stepd::StepState state = ReadState(job_id);
  if (!state.result) {
    // The supervisor died without a verdict (killed, crashed): record one so
    // the job is not lost. The leading newline ends a line it left torn.
    stepd::StepResult r;
    r.job_id = job_id;
    r.state = "NODE_FAIL";
    r.start_time = r.end_time = ::time(nullptr);
    r.detail = "muster-step ended without a result";
    util::Status st = stepd::AppendFileAt(AT_FDCWD, SpoolFile(stepd::StateFileName(job_id)),
                                          "\n" + stepd::ResultLine(r));
    if (!st.ok()) util::LogError("job {}: {}", job_id, st.message());
    state.result = std::move(r);
  }
  SendEnded(*state.result);
}

void Agent::SendEnded(const stepd::StepResult& result) {
  if (!conn_) return;  // reported at the next registration
  conn_->Send({{"type", "ended"}, {"result", stepd::ToJson(result)}});
}

}  // namespace muster::agent

#include "agent/agent.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "stepd/step.h"
#include "util/log.h"
#include "util/strings.h"

extern char** environ;

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


std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool WriteFile(const std::string& path, const std::string& data, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return ::close(fd) == 0;
}

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

Agent::Agent(boost::asio::io_context& io, config::Config cfg, AgentOptions opts)
    : io_(io), cfg_(std::move(cfg)), opts_(std::move(opts)), reconnect_(io), sigchld_(io, SIGCHLD) {
  if (opts_.nodes.empty()) {
    for (const auto& n : cfg_.nodes) opts_.nodes.push_back(n.name);
  }
  std::string spool = cfg_.slurmd_spool_dir;
  auto pos = spool.find("%n");
  if (pos != std::string::npos) spool.replace(pos, 2, opts_.host);
  spool_ = spool + "/" + opts_.host;
}

std::string Agent::JobDir(uint32_t job_id) const {
  return spool_ + "/job" + std::to_string(job_id);
}

void Agent::Start() {
  std::error_code ec;
  fs::create_directories(spool_, ec);
  if (ec) util::LogError("cannot create spool {}: {}", spool_, ec.message());
  // Steps an earlier agent left: ended ones are reported at registration,
  // running ones are watched through a pidfd (we are not their parent).
  for (const auto& entry : fs::directory_iterator(spool_, ec)) {
    std::string name = entry.path().filename();
    if (!util::StartsWith(name, "job")) continue;
    auto id = util::ParseInt(name.substr(3));
    if (!id.ok()) continue;
    uint32_t job_id = static_cast<uint32_t>(*id);
    Step step;
    if (fs::exists(entry.path() / "result.json")) {
      step.ended = true;
      steps_[job_id] = std::move(step);
      continue;
    }
    auto pid_text = ReadFile(entry.path() / "step.pid");
    auto pid = pid_text ? util::ParseInt(util::Trim(*pid_text)) : util::Result<int64_t>(util::Internal(""));
    if (!pid.ok()) continue;
    int fd = PidfdOpen(static_cast<pid_t>(*pid));
    if (fd < 0) {
      // Gone without a result: the controller will mark the job failed.
      continue;
    }
    step.pid = static_cast<pid_t>(*pid);
    step.pidfd = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
    steps_[job_id] = std::move(step);
    WatchPidfd(job_id);
  }
  WatchSignals();
  Connect();
}

void Agent::Connect() {
  auto socket = api::ConnectUnix(io_, config::AgentSocketPath(cfg_));
  if (!socket.ok()) {
    ScheduleReconnect();
    return;
  }
  conn_ = std::make_shared<api::LineConn>(std::move(*socket));
  conn_->Start([this](const json& msg) { OnMessage(msg); },
               [this] {
                 util::LogWarn("lost the controller; reconnecting");
                 conn_.reset();
                 ScheduleReconnect();
               });
  Register();
}

void Agent::ScheduleReconnect() {
  reconnect_.expires_after(std::chrono::milliseconds(200));
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
    auto text = ReadFile(JobDir(id) + "/result.json");
    json r = text ? json::parse(*text, nullptr, false) : json();
    if (r.is_object()) finished.push_back(r);
  }
  conn_->Send({{"type", "register"},
               {"host", opts_.host},
               {"nodes", opts_.nodes},
               {"boot_time", static_cast<int64_t>(::time(nullptr))},
               {"running", running},
               {"finished", finished}});
  util::LogInfo("registered {} nodes, {} running and {} ended steps", opts_.nodes.size(),
                running.size(), finished.size());
}

void Agent::OnMessage(const json& msg) {
  try {
    std::string type = msg.at("type").get<std::string>();
    if (type == "launch") {
      Launch(msg);
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
    } else if (type == "ack") {
      uint32_t id = msg.at("job_id").get<uint32_t>();
      std::error_code ec;
      fs::remove_all(JobDir(id), ec);
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
  std::string dir = JobDir(job_id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    ReportLaunchFailure(job_id, "cannot create " + dir + ": " + ec.message());
    return;
  }
  // The directory must be reachable by the job's user for its script.
  ::chmod(dir.c_str(), 0755);
  spec->script_path = dir + "/script";
  if (!WriteFile(spec->script_path, msg.at("script").get<std::string>(), 0700) ||
      ::chown(spec->script_path.c_str(), spec->uid, spec->gid) != 0) {
    if (::geteuid() == 0 || spec->uid != ::geteuid()) {
      ReportLaunchFailure(job_id, "cannot write job script " + spec->script_path);
      return;
    }
  }
  if (!WriteFile(dir + "/spec.json", stepd::ToJson(*spec).dump(), 0600)) {
    ReportLaunchFailure(job_id, "cannot write " + dir + "/spec.json");
    return;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  // The step logs to the agent's own log (stderr), not a file per job:
  // creating files is most of the cost of a trivial job.
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  // Nothing else of the agent's leaks into the step: an inherited controller
  // connection would keep it open after the agent died, hiding the loss.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv{const_cast<char*>(opts_.step_binary.c_str()), dir.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, opts_.step_binary.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    ReportLaunchFailure(job_id, "cannot start " + opts_.step_binary + ": " + std::strerror(rc));
    return;
  }
  Step step;
  step.pid = pid;
  steps_[job_id] = std::move(step);
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
                           if (it == steps_.end()) return;
                           it->second.pidfd.reset();
                           StepEnded(job_id);
                         });
}

void Agent::StepEnded(uint32_t job_id) {
  auto& step = steps_[job_id];
  step.ended = true;
  step.pid = 0;
  if (!fs::exists(JobDir(job_id) + "/result.json")) {
    // The supervisor died without a verdict (killed, crashed): record one so
    // the job is not lost.
    stepd::StepResult r;
    r.job_id = job_id;
    r.state = "NODE_FAIL";
    r.start_time = r.end_time = ::time(nullptr);
    r.detail = "muster-step ended without a result";
    WriteFile(JobDir(job_id) + "/result.json", stepd::ToJson(r).dump(), 0600);
  }
  SendEnded(job_id);
}

void Agent::SendEnded(uint32_t job_id) {
  if (!conn_) return;  // reported at the next registration
  auto text = ReadFile(JobDir(job_id) + "/result.json");
  json r = text ? json::parse(*text, nullptr, false) : json();
  if (!r.is_object()) return;
  conn_->Send({{"type", "ended"}, {"result", r}});
}

}  // namespace muster::agent

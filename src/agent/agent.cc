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
#include <set>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <fmt/format.h>

#include "auth/signed_lines.h"
#include "stepd/cgroup.h"
#include "stepd/hooks.h"
#include "stepd/remote_tasks.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/spawn.h"
#include "util/subprocess.h"

namespace muster::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// slurmd kills HealthCheckProgram when it has not ended within 60 s.
constexpr std::chrono::seconds kHealthProgramTimeout{60};

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
      watchdog_(io),
      sigchld_(io, SIGCHLD),
      usage_(stepd::kCgroupRoot),
      filesystems_(cfg_.watched_filesystems),
      sample_timer_(io) {
  if (opts_.nodes.empty()) {
    // One host: every node. Several: the nodes whose NodeHostname is this
    // host, as slurmd finds its own.
    for (const auto& n : cfg_.nodes) {
      if (opts_.auth == nullptr || n.hostname == opts_.host) opts_.nodes.push_back(n.name);
    }
  }
  tasks_.emplace("/proc", std::set<std::string>(opts_.nodes.begin(), opts_.nodes.end()));
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
  last_from_controller_ = std::chrono::steady_clock::now();
  // SlurmdTimeout=0: musterd never gives up on its agents, nor pings them.
  if (cfg_.slurmd_timeout_s > 0) WatchController();
  auto nvml = LoadNvml();
  if (nvml.ok()) {
    nvml_ = std::move(*nvml);
    util::LogInfo("NVML: driver {}, {} GPUs on {}", nvml_->DriverVersion(),
                  nvml_->Inventory().size(), opts_.host);
  } else {
    util::LogInfo("no NVML ({}): GPUs are emulated", nvml.status().message());
  }
  SetUpGpuDevices();
  auto hw = DetectHardware(nvml_.get());
  if (hw.ok()) {
    hardware_ = std::move(*hw);
    util::LogInfo("{}: {}", opts_.host, HardwareSummary(*hardware_));
  } else {
    util::LogWarn("cannot detect this machine's hardware: {}", hw.status().message());
  }
  ServeMetrics();
  ScheduleSample();
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
      // On one host musterd can only be down, never out of reach.
      connect_refused_ = true;
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
  // A controller out of reach does not answer at all: the attempt is
  // given up after a ping interval rather than the kernel's minutes.
  auto give_up = std::make_shared<boost::asio::steady_timer>(
      io_, std::chrono::seconds(std::max(1, cfg_.slurmd_timeout_s / 3)));
  give_up->async_wait([socket](boost::system::error_code ec) {
    if (!ec) socket->close(ec);
  });
  boost::asio::async_connect(
      *socket, endpoints,
      [this, socket, give_up, peer = fmt::format("musterd at {}:{}", host, port)](
          boost::system::error_code cec, const boost::asio::ip::tcp::endpoint&) {
        give_up->cancel();
        if (cec) {
          connect_refused_ = cec == boost::asio::error::connection_refused;
          ScheduleReconnect(std::chrono::seconds(1));
          return;
        }
        socket->set_option(boost::asio::ip::tcp::no_delay(true), cec);
        Connected(api::LineConn::Socket(std::move(*socket)), peer);
      });
}

void Agent::WatchController() {
  watchdog_.expires_after(std::chrono::seconds(1));
  watchdog_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    const auto silent = std::chrono::steady_clock::now() - last_from_controller_;
    const auto ping = std::chrono::seconds(std::max(1, cfg_.slurmd_timeout_s / 3));
    if (conn_ && silent > 2 * ping) {
      util::LogWarn("no word from the controller for {} s: reconnecting",
                    std::chrono::duration_cast<std::chrono::seconds>(silent).count());
      conn_->Close();  // its on_close reconnects
    }
    if (!conn_ && !connect_refused_ && !fenced_ &&
        silent >= std::chrono::seconds(std::max(1, cfg_.slurmd_timeout_s - 1))) {
      Fence();
    }
    WatchController();
  });
}

void Agent::Fence() {
  fenced_ = true;
  int count = 0;
  for (const auto& [id, step] : steps_) {
    if (step.ended || step.pid <= 0) continue;
    union sigval v {};
    v.sival_int = stepd::EncodeNodeFailure();
    if (::sigqueue(step.pid, SIGUSR1, v) == 0) ++count;
  }
  for (const auto& [pid, job] : launchers_) {
    union sigval v {};
    v.sival_int = SIGKILL;  // the launcher SIGKILLs its tasks and ends
    if (::sigqueue(pid, SIGUSR1, v) == 0) ++count;
  }
  util::LogError("cut off from the controller for SlurmdTimeout ({} s): its nodes are being set "
                 "DOWN there; killed {} job step(s) here so that none runs twice",
                 cfg_.slurmd_timeout_s, count);
}

void Agent::Connected(api::LineConn::Socket socket, std::string peer) {
  last_from_controller_ = std::chrono::steady_clock::now();
  connect_refused_ = false;
  fenced_ = false;
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
  // The node that is this machine (named as the agent's host), as
  // detected; emulated nodes share the machine and are not compared.
  json hardware = json::object();
  if (hardware_ &&
      std::find(opts_.nodes.begin(), opts_.nodes.end(), opts_.host) != opts_.nodes.end()) {
    const core::NodeConfig* node = cfg_.FindNode(opts_.host);
    json h = ToJson(*hardware_);
    h["summary"] = HardwareSummary(*hardware_);
    h["mismatches"] = node ? CompareHardware(*node, *hardware_) : std::vector<std::string>{};
    hardware[opts_.host] = h;
  }
  // Each MIG instance's UUID, which CUDA_VISIBLE_DEVICES names it by.
  json mig_uuids = json::object();
  for (const std::string& node : opts_.nodes) {
    std::vector<std::string> uuids = gpu_devices_.MigUuids(node);
    if (!uuids.empty()) mig_uuids[node] = std::move(uuids);
  }
  conn_->Send({{"type", "register"},
               {"host", opts_.host},
               {"nodes", opts_.nodes},
               {"hardware", hardware},
               {"mig_uuids", mig_uuids},
               {"boot_time", static_cast<int64_t>(::time(nullptr))},
               {"running", running},
               {"finished", finished}});
  util::LogInfo("registering {} nodes, {} running and {} ended steps", opts_.nodes.size(),
                running.size(), finished.size());
}

void Agent::OnMessage(const json& msg) {
  last_from_controller_ = std::chrono::steady_clock::now();
  try {
    std::string type = msg.at("type").get<std::string>();
    if (type == "ping") {
      if (conn_) conn_->Send({{"type", "pong"}});
    } else if (type == "launch") {
      Launch(msg);
    } else if (type == "step_launch") {
      LaunchRemoteTasks(msg);
    } else if (type == "prolog") {
      RunPrologs(msg);
    } else if (type == "reboot") {
      Reboot(msg);
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
        // Why, for the line the step writes in the job's stderr.
        union sigval v {};
        v.sival_int = static_cast<int>(stepd::StopCauseFromName(msg.value("cause", "")));
        ::sigqueue(it->second.pid, SIGTERM, v);
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
    } else if (type == "step_stats") {
      SendStepStats(msg);
    } else if (type == "health_check") {
      CheckHealth(msg);
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
  // The job's labels and GPUs on this node, from the environment musterd
  // gave it.
  core::JobLabels labels;
  labels.job_id = job_id;
  std::vector<int> gpus;
  for (const std::string& kv : spec->env) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "SLURM_JOB_USER") labels.user = value;
    if (key == "SLURM_JOB_ACCOUNT") labels.account = value;
    if (key == "SLURM_JOB_PARTITION") labels.partition = value;
    if (key == "SLURM_JOB_GPUS") {
      for (const std::string& g : util::Split(value, ',')) {
        util::Result<int64_t> i = util::ParseInt(g);
        if (i.ok()) gpus.push_back(static_cast<int>(*i));
      }
    }
  }
  if (!gpus.empty() && !RealGpus(node)) {
    PrepareGpuControl(node, gpus, spec->uid, spec->gid);
    spec->env.push_back("MUSTER_GPU_CONTROL_DIR=" + GpuControlDir(spool_, node));
    // Where the emulated GPUs' device files are, for a job to try them.
    if (!gpu_devices_.Of(node).empty()) {
      spec->env.push_back("MUSTER_GPU_DEVICE_DIR=" + GpuDeviceDir(spool_, node));
    }
  }
  spec->denied_devices = DeniedDevices(msg.value("job_gpus", json::object()));
  spec->script_path = SpoolFile(stepd::ScriptFileName(job_id));
  // This host's Prolog and Epilog, as slurmd reads its own slurm.conf; with
  // PrologFlags=Alloc the Prolog ran on every node before the launch.
  spec->prolog = cfg_.prolog_flags.alloc ? "" : cfg_.prolog;
  spec->epilog = cfg_.epilog;
  spec->hook_timeout_s = cfg_.prolog_epilog_timeout_s;
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
  step.node = node;
  step.gpus = gpus;
  step.labels = labels;
  steps_[job_id] = std::move(step);
}

void Agent::SetUpGpuDevices() {
  const bool root = ::geteuid() == 0;
  const std::string proc_devices = stepd::ReadFileOrEmpty("/proc/devices");
  std::optional<uint32_t> emulated_major;
  bool any = false;
  for (const std::string& name : opts_.nodes) {
    const core::NodeConfig* node = cfg_.FindNode(name);
    if (node == nullptr) continue;
    const std::vector<std::string> types = ConfiguredGpuTypes(*node);
    if (types.empty()) continue;
    std::vector<std::string> problems;
    std::vector<GresDevice> devices = DevicesFromFiles(*node, &problems);
    if (devices.size() != types.size() && RealGpus(name)) {
      devices = NvmlDevices(nvml_->Inventory(),
                            stepd::ReadFileOrEmpty("/proc/driver/nvidia-caps/mig-minors"),
                            proc_devices, &problems);
    } else if (devices.size() != types.size()) {
      // Emulated: gres.conf names no devices of its own for it.
      problems.clear();
      if (!emulated_major) {
        util::Result<uint32_t> major = FreeCharMajor(proc_devices);
        if (!major.ok()) {
          util::LogError("emulated GPU devices: {}", major.status().message());
          return;
        }
        emulated_major = *major;
      }
      const auto slot = static_cast<uint32_t>(node - cfg_.nodes.data());
      util::Result<std::vector<GresDevice>> made =
          MakeEmulatedDevices(GpuDeviceDir(spool_, name), cfg_.cluster_name, name,
                              *emulated_major, slot, types, root);
      if (!made.ok()) {
        util::LogError("node {}: emulated GPU devices: {}", name, made.status().message());
        continue;
      }
      devices = std::move(*made);
    }
    for (const std::string& p : problems) util::LogWarn("{}", p);
    any = any || !devices.empty();
    gpu_devices_.Set(name, std::move(devices));
  }
  confine_devices_ = cfg_.cgroup.constrain_devices && any;
  if (confine_devices_ && !root) {
    util::LogError("ConstrainDevices=yes needs muster-agent to run as root (it makes the jobs' "
                   "cgroups): jobs on {} see every GPU device", util::Join(opts_.nodes, ","));
    confine_devices_ = false;
  }
}

std::vector<std::string> Agent::DeniedDevices(const json& job_gpus) const {
  std::vector<std::string> out;
  if (!confine_devices_) return out;
  std::map<std::string, std::vector<int>> held;
  if (job_gpus.is_object()) {
    for (const auto& [node, indices] : job_gpus.items()) {
      if (indices.is_array()) held[node] = indices.get<std::vector<int>>();
    }
  }
  for (const stepd::DeviceRule& rule : gpu_devices_.DeniedFor(held)) out.push_back(rule.ToString());
  return out;
}

void Agent::RunPrologs(const json& msg) {
  const auto job_id = msg.at("job_id").get<uint32_t>();
  const int run = msg.at("run").get<int>();
  const auto base_env = msg.value("env", std::vector<std::string>{});
  const json job_gpus = msg.value("job_gpus", json::object());
  for (const json& n : msg.value("nodes", json::array())) {
    const std::string node = n.get<std::string>();
    if (std::find(opts_.nodes.begin(), opts_.nodes.end(), node) == opts_.nodes.end()) continue;
    std::vector<std::string> env = base_env;
    env.push_back("SLURMD_NODENAME=" + node);
    const std::vector<int> gpus = job_gpus.value(node, std::vector<int>{});
    if (!gpus.empty()) {
      env.push_back("CUDA_VISIBLE_DEVICES=" + util::JoinInts(gpus));
      env.push_back("SLURM_JOB_GPUS=" + util::JoinInts(gpus));
    }
    const std::string result_path = SpoolFile(fmt::format("job{}.prolog.{}", job_id, node));
    const std::string program = cfg_.prolog;
    const int timeout_s = cfg_.prolog_epilog_timeout_s;
    ::unlink(result_path.c_str());
    pid_t pid = ForkSupervisor(
        fmt::format("muster-prolog [{}] {}", job_id, node), [program, env, timeout_s, result_path] {
          util::Status st = stepd::RunHook(program, env, timeout_s);
          // The verdict for the agent, which reaps this process.
          (void)stepd::AppendFileAt(AT_FDCWD, result_path, st.ok() ? "" : st.message());
          return st.ok() ? 0 : 1;
        });
    if (pid < 0) {
      const std::string why = std::string("cannot fork the Prolog: ") + std::strerror(errno);
      if (conn_) {
        conn_->Send({{"type", "prolog_done"}, {"job_id", job_id}, {"run", run}, {"node", node},
                     {"ok", false}, {"detail", why}});
      }
      continue;
    }
    prolog_runs_[pid] = {job_id, run, node, result_path};
  }
}

void Agent::Reboot(const json& msg) {
  const std::string node = msg.at("node").get<std::string>();
  if (std::find(opts_.nodes.begin(), opts_.nodes.end(), node) == opts_.nodes.end()) return;
  if (node == opts_.host) {
    // This machine: RebootProgram takes it down, and the agent registers
    // again when it is back.
    util::LogWarn("node {}: rebooting with {}", node, cfg_.reboot_program);
    util::Status st = util::SpawnDetached({cfg_.reboot_program},
                                          {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + node,
                                           "SLURM_CLUSTER_NAME=" + cfg_.cluster_name});
    if (!st.ok()) util::LogError("node {}: RebootProgram: {}", node, st.message());
    return;
  }
  const std::string control = GpuControlDir(spool_, node);
  if (::access((control + "/boot_fails").c_str(), F_OK) == 0) {
    util::LogWarn("node {} (emulated): reboot played; it stays away ({}/boot_fails)", node, control);
    return;
  }
  int64_t seconds = 1;
  if (util::Result<int64_t> s = util::ParseInt(util::Trim(stepd::ReadFileOrEmpty(control + "/boot_seconds")));
      s.ok() && *s >= 0) {
    seconds = *s;
  }
  util::LogInfo("node {} (emulated): reboot played; back in {} s", node, seconds);
  auto& timer = reboots_[node];
  timer = std::make_unique<boost::asio::steady_timer>(io_, std::chrono::seconds(seconds));
  timer->async_wait([this, node](boost::system::error_code ec) {
    if (ec) return;
    reboots_.erase(node);
    if (conn_) {
      conn_->Send({{"type", "node_booted"}, {"node", node}, {"boot_time", static_cast<int64_t>(::time(nullptr))}});
    }
  });
}

void Agent::FinishPrologRun(pid_t pid, int status) {
  PrologRun r = std::move(prolog_runs_.at(pid));
  prolog_runs_.erase(pid);
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::string detail = stepd::ReadFileOrEmpty(r.result_path);
  ::unlink(r.result_path.c_str());
  if (!ok && detail.empty()) detail = fmt::format("{} did not finish", cfg_.prolog);
  util::LogInfo("job {}: Prolog on {} {}", r.job_id, r.node, ok ? "succeeded" : "failed: " + detail);
  // Lost with the connection, it is asked for again when the agent
  // registers.
  if (conn_) {
    conn_->Send({{"type", "prolog_done"}, {"job_id", r.job_id}, {"run", r.run}, {"node", r.node},
                 {"ok", ok}, {"detail", detail}});
  }
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
  spec->denied_devices = DeniedDevices(json{{spec->node, msg.value("job_gpus", json::array())}});
  const auto batch = steps_.find(spec->job_id);
  spec->batch_here = batch != steps_.end() && !batch->second.ended;
  pid_t pid = ForkSupervisor(fmt::format("muster-step [{}] {}", step, spec->node), [&spec] {
    // Its own session, as the batch step's: it outlives an agent restart.
    ::setsid();
    return stepd::RunRemoteTasks(*spec);
  });
  if (pid < 0) {
    util::LogError("step {}: cannot fork its tasks' launcher: {}", step, std::strerror(errno));
    return;
  }
  launchers_[pid] = spec->job_id;
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
    if (auto run = health_runs_.find(pid); run != health_runs_.end()) {
      run->second.exited = true;
      run->second.status = status;
      FinishHealthRun(pid);
      continue;
    }
    if (prolog_runs_.count(pid) != 0) {
      FinishPrologRun(pid, status);
      continue;
    }
    if (launchers_.erase(pid) != 0) continue;
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
  usage_.Forget(job_id);
  if (!step.gpus.empty() && !RealGpus(step.node)) {
    PrepareGpuControl(step.node, step.gpus, ::geteuid(), ::getegid());
  }
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

void Agent::PrepareGpuControl(const std::string& node, const std::vector<int>& gpus, uid_t uid,
                              gid_t gid) {
  for (int index : gpus) {
    const std::string dir = fmt::format("{}/{}", GpuControlDir(spool_, node), index);
    std::error_code ec;
    fs::create_directories(dir, ec);
    // What the last job set goes with it: each job starts on an idle GPU.
    for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove(entry.path(), ec);
    if (::chown(dir.c_str(), uid, gid) != 0 && ::geteuid() == 0) {
      util::LogWarn("cannot hand {} to uid {}: {}", dir, uid, std::strerror(errno));
    }
    ::chmod(dir.c_str(), 0755);
  }
}

void Agent::ScheduleSample() {
  if (cfg_.acct_gather_frequency_s <= 0) return;
  sample_timer_.expires_after(std::chrono::seconds(cfg_.acct_gather_frequency_s));
  sample_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    last_samples_ = TakeSamples();
    if (conn_) conn_->Send({{"type", "samples"}, {"samples", core::ToJson(last_samples_)}});
    ScheduleSample();
  });
}

core::NodeSamples Agent::TakeSamples() {
  core::NodeSamples s;
  s.time = ::time(nullptr);
  for (const std::string& name : opts_.nodes) {
    std::vector<core::GpuSample> gpus = SampleGpus(name);
    s.gpus.insert(s.gpus.end(), std::make_move_iterator(gpus.begin()),
                  std::make_move_iterator(gpus.end()));
  }
  for (const auto& [id, step] : steps_) {
    if (step.ended || step.pid <= 0) continue;
    s.jobs.push_back(usage_.Read(id, step.node, step.pid));
  }
  s.filesystems = filesystems_.Sample(opts_.nodes);
  // Between two sstat, the tasks' peaks.
  tasks_->Scan();
  return s;
}

void Agent::SendStepStats(const json& msg) {
  const uint32_t job_id = msg.at("job_id").get<uint32_t>();
  json tasks = json::array();
  for (const core::TaskStats& t : tasks_->Scan()) {
    if (t.job_id == job_id) tasks.push_back(core::ToJson(t));
  }
  if (conn_) {
    conn_->Send({{"type", "step_stats"}, {"request", msg.at("request")}, {"tasks", tasks}});
  }
}

std::vector<core::GpuSample> Agent::SampleGpus(const std::string& name) const {
  if (RealGpus(name)) return nvml_->Sample(name);
  std::vector<core::GpuSample> out;
  const core::NodeConfig* node = cfg_.FindNode(name);
  if (node == nullptr) return out;
  const std::vector<std::string> types = ConfiguredGpuTypes(*node);
  const EmulatedNodeControl control =
      ReadEmulatedNodeControl(GpuControlDir(spool_, name), static_cast<int>(types.size()));
  // A GPU "lost" through the control file is not sampled.
  for (size_t i = 0; i < types.size() && static_cast<int>(i) < control.count; ++i) {
    out.push_back(EmulatedGpuSample(cfg_.cluster_name, name, types[i], static_cast<int>(i),
                                    GpuControlDir(spool_, name)));
  }
  return out;
}

void Agent::CheckHealth(const json& msg) {
  for (const json& n : msg.value("nodes", json::array())) {
    const std::string name = n.get<std::string>();
    if (std::find(opts_.nodes.begin(), opts_.nodes.end(), name) == opts_.nodes.end()) continue;
    // The program still runs for this node from the last time: its answer
    // is the one musterd gets.
    if (std::any_of(health_runs_.begin(), health_runs_.end(),
                    [&](const auto& run) { return run.second.node == name; })) {
      continue;
    }
    HealthInputs in;
    in.node = cfg_.FindNode(name);
    in.spool = spool_;
    std::string driver;
    in.gpus = SampleGpus(name);
    if (RealGpus(name)) {
      in.detected_gpus = static_cast<int>(nvml_->Inventory().size());
      driver = nvml_->DriverVersion();
      if (driver.empty()) in.nvml_error = "NVML does not answer (no driver version)";
    } else {
      const int configured = in.node ? static_cast<int>(ConfiguredGpuTypes(*in.node).size()) : 0;
      const EmulatedNodeControl control =
          ReadEmulatedNodeControl(GpuControlDir(spool_, name), configured);
      in.detected_gpus = control.count;
      in.nvml_error = control.nvml_error;
      driver = configured > 0 ? control.driver_version : "";
    }
    std::vector<HealthFailure> failures = RunBuiltinChecks(cfg_.health, in);
    if (cfg_.health.program.empty()) {
      SendHealth(name, failures, driver);
    } else {
      StartHealthProgram(name, std::move(failures), std::move(driver));
    }
  }
}

void Agent::SendHealth(const std::string& node, const std::vector<HealthFailure>& failures,
                       const std::string& driver) {
  if (!conn_) return;
  json list = json::array();
  for (const HealthFailure& f : failures) {
    list.push_back({{"check", f.check}, {"detail", f.detail}});
  }
  conn_->Send({{"type", "health"}, {"node", node}, {"driver_version", driver}, {"failures", list}});
}

void Agent::StartHealthProgram(const std::string& node, std::vector<HealthFailure> failures,
                               std::string driver) {
  // Reaped by Reap() (SIGCHLD), which hands its status to the run.
  util::Result<util::Child> child = util::SpawnCapturing(
      cfg_.health.program, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + node,
                            "SLURM_CLUSTER_NAME=" + cfg_.cluster_name, "SLURM_CONF=" + cfg_.path});
  if (!child.ok()) {
    failures.push_back({"program", child.status().message()});
    SendHealth(node, failures, driver);
    return;
  }
  HealthRun& run = health_runs_[child->pid];
  run.node = node;
  run.failures = std::move(failures);
  run.driver = std::move(driver);
  run.out = std::make_unique<boost::asio::posix::stream_descriptor>(io_, child->out_fd);
  // A node that joins waits for this answer before it takes a job: a
  // program that hangs must not hold it back for ever.
  run.deadline = std::make_unique<boost::asio::steady_timer>(io_, kHealthProgramTimeout);
  run.deadline->async_wait([this, pid = child->pid](boost::system::error_code ec) {
    auto it = health_runs_.find(pid);
    if (ec || it == health_runs_.end() || it->second.exited) return;
    util::LogWarn("node {}: {} still running after {} s: killed", it->second.node,
                  cfg_.health.program, kHealthProgramTimeout.count());
    it->second.timed_out = true;
    ::kill(pid, SIGKILL);
    // What it started may keep its output open: its verdict is in.
    boost::system::error_code closed;
    it->second.out->close(closed);
  });
  ReadHealthOutput(child->pid);
}

void Agent::ReadHealthOutput(pid_t pid) {
  HealthRun& run = health_runs_.at(pid);
  run.out->async_read_some(boost::asio::buffer(run.buf),
                           [this, pid](boost::system::error_code ec, size_t n) {
                             auto it = health_runs_.find(pid);
                             if (it == health_runs_.end()) return;
                             HealthRun& r = it->second;
                             // The last 4 KiB are enough for its verdict.
                             r.output.append(r.buf.data(), n);
                             if (r.output.size() > 4096) r.output.erase(0, r.output.size() - 4096);
                             if (!ec) {
                               ReadHealthOutput(pid);
                               return;
                             }
                             r.eof = true;
                             FinishHealthRun(pid);
                           });
}

void Agent::FinishHealthRun(pid_t pid) {
  auto it = health_runs_.find(pid);
  if (it == health_runs_.end() || !it->second.eof || !it->second.exited) return;
  HealthRun run = std::move(it->second);
  health_runs_.erase(it);
  if (run.deadline) run.deadline->cancel();
  util::Status outcome = util::HookOutcome(cfg_.health.program, run.status, run.timed_out,
                                           kHealthProgramTimeout.count(), run.output);
  if (!outcome.ok()) run.failures.push_back({"program", outcome.message()});
  SendHealth(run.node, run.failures, run.driver);
}

std::string Agent::MetricsText() const {
  core::LabelLookup labels;
  labels.gpu_holder = [this](const std::string& node, int index) -> std::optional<core::JobLabels> {
    for (const auto& [id, step] : steps_) {
      if (!step.ended && step.node == node &&
          std::find(step.gpus.begin(), step.gpus.end(), index) != step.gpus.end()) {
        return step.labels;
      }
    }
    return std::nullopt;
  };
  labels.job = [this](uint32_t id) -> std::optional<core::JobLabels> {
    auto it = steps_.find(id);
    if (it == steps_.end() || it->second.ended || it->second.labels.job_id == 0) {
      return std::nullopt;
    }
    return it->second.labels;
  };
  std::string out;
  core::RenderNodeSamples({&last_samples_}, labels, &out);
  return out;
}

void Agent::ServeMetrics() {
  if (cfg_.agent_metrics_port <= 0) return;
  auto listening = api::PublicHttpServer::Listen(
      io_, cfg_.agent_metrics_host, cfg_.agent_metrics_port,
      api::MetricsOnlyHandler([this] { return MetricsText(); }), cfg_.api);
  if (!listening.ok()) {
    util::LogError("MusterAgentMetricsAddress: {}", listening.status().message());
    return;
  }
  metrics_ = std::move(*listening);
}

}  // namespace muster::agent

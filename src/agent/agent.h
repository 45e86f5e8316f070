// muster-agent: hosts one or more nodes on this machine. It registers them
// with musterd over the agent socket, launches each job through a
// muster-step supervisor (a fork of this process that runs stepd::RunStep:
// no exec), reports each step's end and keeps the result until musterd
// acknowledges it. Steps are detached: an agent restart reattaches to
// running steps (pidfd) and reports the ones that ended meanwhile. One event
// loop and no threads, which is also what makes the fork safe.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "agent/file_recycler.h"
#include "agent/gpu_devices.h"
#include "agent/filesystems.h"
#include "agent/gpus.h"
#include "agent/hardware.h"
#include "agent/health.h"
#include "agent/job_usage.h"
#include "agent/task_scanner.h"
#include "api/http.h"
#include "api/line_conn.h"
#include "auth/kiosk_server.h"
#include "auth/service.h"
#include "config/config.h"
#include "core/node_samples.h"
#include "stepd/spool.h"
#include "stepd/step.h"

namespace muster::agent {

struct AgentOptions {
  std::string host;                // this agent's name (default: short host name)
  std::vector<std::string> nodes;  // nodes hosted; empty = every node of the config
  // The memory of this process's command line (argv's strings, back to
  // back): a forked step writes its own title there, so ps and
  // /proc/<pid>/cmdline show "muster-step [<id>.batch] <spool>". May be empty.
  std::span<char> cmdline;
  // Set under AuthType=auth/slurm or auth/munge: the agent reaches musterd
  // over TCP (SlurmctldHost:SlurmctldPort) and signs every line; null on
  // one host, where it uses the controller's unix socket.
  std::shared_ptr<const auth::ServiceAuth> auth;
  // scontrol reconfigure reached the agent: main stops it and restarts it
  // in place on the configuration as it is now. Running steps go on.
  std::function<void()> on_reconfigure;
};

class Agent {
 public:
  Agent(boost::asio::io_context& io, config::Config cfg, AgentOptions opts);
  // Scans the spool for steps left by an earlier agent, then connects.
  void Start();

 private:
  struct Step {
    pid_t pid = 0;
    std::unique_ptr<boost::asio::posix::stream_descriptor> pidfd;  // reattached steps
    bool ended = false;
    // Known for the steps this agent launched (not reattached ones): the
    // batch node, the GPUs the job holds there and its labels.
    std::string node;
    std::vector<int> gpus;
    core::JobLabels labels;
  };

  void Connect();
  void Connected(api::LineConn::Socket socket, std::string peer);
  // Every second: a controller silent for two of its ping intervals
  // (SlurmdTimeout/3) is given up on and reconnected to (a cut link
  // leaves a TCP connection open but dead); one unreachable for
  // SlurmdTimeout - 1 s while its port did not refuse (a network partition,
  // not a controller restarting) makes the agent fence its jobs: it is
  // about to set the nodes DOWN and requeue their jobs, which must then
  // run nowhere else but there.
  void WatchController();
  // SIGKILLs every job and srun step of this host at once (they end
  // NODE_FAIL); once per loss of the controller.
  void Fence();
  void ScheduleReconnect(std::chrono::milliseconds delay = std::chrono::milliseconds(200));
  void Register();
  void OnMessage(const nlohmann::json& msg);
  void Launch(const nlohmann::json& msg);
  // An srun step's tasks on one of this agent's nodes (stepd/remote_tasks.h),
  // in a forked launcher of their own.
  void LaunchRemoteTasks(const nlohmann::json& msg);
  // scancel N.S: the signal to the step's launcher on this host (which
  // passes it to its tasks), or, where srun started the tasks itself (one
  // host), to srun's tasks.
  void SignalStep(const nlohmann::json& msg);
  void WatchSignals();
  void Reap();
  void WatchPidfd(uint32_t job_id);
  void StepEnded(uint32_t job_id);
  void SendEnded(const stepd::StepResult& result);
  // Forks the batch step's supervisor; returns its pid, or -1 with errno set.
  pid_t ForkStep(const stepd::StepSpec& spec);
  // Forks a supervisor (a batch step's, or an srun step's tasks' launcher)
  // that runs `body` to its end and exits with its status; returns its pid,
  // or -1 with errno set.
  pid_t ForkSupervisor(const std::string& title, const std::function<int()>& body);
  // The forked child: sheds the agent's descriptors, takes `title` as its
  // command line (ps, /proc/<pid>/cmdline) and runs `body`.
  [[noreturn]] void RunForked(const std::string& title, const std::function<int()>& body);
  // <spool>/<name>.
  std::string SpoolFile(const std::string& name) const { return spool_ + "/" + name; }
  // The job's state file as the step left it (stepd/spool.h).
  stepd::StepState ReadState(uint32_t job_id) const;
  void ReportLaunchFailure(uint32_t job_id, const std::string& detail);
  // Samples GPUs and running jobs every JobAcctGatherFrequency seconds
  // and sends them to musterd (core/node_samples.h).
  void ScheduleSample();
  core::NodeSamples TakeSamples();
  // musterd's "step_stats" (sstat): the tasks of the job on this host's
  // nodes, read now, in a "step_stats" reply naming the request.
  void SendStepStats(const nlohmann::json& msg);
  // musterd's "prolog" (PrologFlags=Alloc): the Prolog for each of this
  // agent's nodes named, each in a forked child; its end is reported as a
  // "prolog_done" (Reap).
  void RunPrologs(const nlohmann::json& msg);
  // musterd's "reboot" (scontrol reboot): the node that is this machine
  // runs RebootProgram; an emulated node's reboot is played: it is away
  // for <control dir>/boot_seconds (1 s unless set), then "node_booted"
  // is sent; with a file boot_fails there it never comes back (so
  // ResumeTimeout can be tried).
  void Reboot(const nlohmann::json& msg);
  void FinishPrologRun(pid_t pid, int status);
  // musterd's "health_check": the built-in checks of each node named, then
  // HealthCheckProgram (in the background), then a "health" message per node.
  void CheckHealth(const nlohmann::json& msg);
  // The samples of `node`'s GPUs now, and how many GPUs it has.
  std::vector<core::GpuSample> SampleGpus(const std::string& node) const;
  void StartHealthProgram(const std::string& node, std::vector<HealthFailure> failures,
                          std::string driver);
  void ReadHealthOutput(pid_t pid);
  void FinishHealthRun(pid_t pid);
  void SendHealth(const std::string& node, const std::vector<HealthFailure>& failures,
                  const std::string& driver);
  // Serves the latest samples at MusterAgentMetricsAddress.
  void ServeMetrics();
  std::string MetricsText() const;
  // Whether `node`'s GPUs are real (NVML, on the node that is this
  // machine) rather than emulated.
  bool RealGpus(const std::string& node) const { return nvml_ != nullptr && node == opts_.host; }
  // Hands the control directories of an emulated node's GPUs `gpus` to
  // `uid` (a job starting: owner = its user) or back to the agent, reset.
  void PrepareGpuControl(const std::string& node, const std::vector<int>& gpus, uid_t uid,
                         gid_t gid);
  // Whether a job on `node` is confined to `cpuset`: only on the node that is
  // this machine, and only when every id exists here.
  bool ConfinesCpus(const std::string& node, const std::string& cpuset) const;
  // Finds the device files of every hosted node's GPUs (gpu_devices.h),
  // making an emulated node's.
  void SetUpGpuDevices();
  // The devices, as "c MAJOR:MINOR", that a job holding `job_gpus` (a
  // launch's "job_gpus": node -> GRES indices) may not open on this host;
  // empty without ConstrainDevices=yes.
  std::vector<std::string> DeniedDevices(const nlohmann::json& job_gpus) const;

  boost::asio::io_context& io_;
  config::Config cfg_;
  AgentOptions opts_;
  std::string spool_;
  FileRecycler files_;  // finished jobs' spool files, for the next jobs
  std::shared_ptr<api::LineConn> conn_;
  std::unique_ptr<auth::KioskServer> kiosk_;  // under auth/slurm
  boost::asio::steady_timer reconnect_;
  boost::asio::steady_timer watchdog_;
  // When the controller last said anything (a ping at least every
  // SlurmdTimeout/3); whether the last connection attempt was refused
  // (nothing listens: musterd is down, not out of reach); whether the
  // jobs were fenced since the last connection.
  std::chrono::steady_clock::time_point last_from_controller_;
  bool connect_refused_ = false;
  bool fenced_ = false;
  // srun steps' task launchers running on this host, by pid, with their job.
  std::map<pid_t, uint32_t> launchers_;
  boost::asio::signal_set sigchld_;
  std::map<uint32_t, Step> steps_;
  std::unique_ptr<Nvml> nvml_;                // null without NVML
  GpuDevices gpu_devices_;                    // the hosted nodes' GPU device files
  // Whether jobs' devices are confined (ConstrainDevices=yes, and this
  // agent runs as root: it makes the cgroups).
  bool confine_devices_ = false;
  std::optional<DetectedHardware> hardware_;  // this machine, as hwloc and NVML see it
  JobUsageReader usage_;
  FilesystemWatch filesystems_;  // MusterWatchedFilesystems
  std::optional<TaskScanner> tasks_;  // made once the nodes are known
  boost::asio::steady_timer sample_timer_;
  core::NodeSamples last_samples_;
  std::unique_ptr<api::PublicHttpServer> metrics_;
  // HealthCheckProgram runs in flight, by pid: the node's built-in
  // results, and the program's output until it ends.
  struct HealthRun {
    std::string node;
    std::vector<HealthFailure> failures;
    std::string driver;
    std::string output;
    std::unique_ptr<boost::asio::posix::stream_descriptor> out;
    std::array<char, 1024> buf{};
    bool eof = false;
    bool exited = false;
    int status = 0;
    // HealthCheckProgram is killed after 60 s, as slurmd kills it.
    std::unique_ptr<boost::asio::steady_timer> deadline;
    bool timed_out = false;
  };
  std::map<pid_t, HealthRun> health_runs_;
  // Prolog runs in flight, by pid: for whom, and the file its child leaves
  // its verdict in.
  struct PrologRun {
    uint32_t job_id = 0;
    int run = 0;
    std::string node;
    std::string result_path;
  };
  std::map<pid_t, PrologRun> prolog_runs_;
  // Emulated nodes away for a reboot, until their timer fires.
  std::map<std::string, std::unique_ptr<boost::asio::steady_timer>> reboots_;
};

}  // namespace muster::agent

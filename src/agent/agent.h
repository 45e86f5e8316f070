// muster-agent: hosts one or more nodes on this machine. It registers them
// with musterd over the agent socket, launches each job through a
// muster-step supervisor (posix_spawn, no fork of this process), reports
// each step's end and keeps the result until musterd acknowledges it.
// Steps are detached: an agent restart reattaches to running steps (pidfd)
// and reports the ones that ended meanwhile. One event loop, no threads.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "api/line_conn.h"
#include "config/config.h"

namespace muster::agent {

struct AgentOptions {
  std::string host;                // this agent's name (default: short host name)
  std::vector<std::string> nodes;  // nodes hosted; empty = every node of the config
  std::string step_binary;         // path to muster-step
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
  };

  void Connect();
  void ScheduleReconnect();
  void Register();
  void OnMessage(const nlohmann::json& msg);
  void Launch(const nlohmann::json& msg);
  void WatchSignals();
  void Reap();
  void WatchPidfd(uint32_t job_id);
  void StepEnded(uint32_t job_id);
  void SendEnded(uint32_t job_id);
  std::string JobDir(uint32_t job_id) const;
  void ReportLaunchFailure(uint32_t job_id, const std::string& detail);
  // Whether a job on `node` is confined to `cpuset`: only on the node that is
  // this machine, and only when every id exists here.
  bool ConfinesCpus(const std::string& node, const std::string& cpuset) const;

  boost::asio::io_context& io_;
  config::Config cfg_;
  AgentOptions opts_;
  std::string spool_;
  std::shared_ptr<api::LineConn> conn_;
  boost::asio::steady_timer reconnect_;
  boost::asio::signal_set sigchld_;
  std::map<uint32_t, Step> steps_;
};

}  // namespace muster::agent

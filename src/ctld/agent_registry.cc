#include "ctld/agent_registry.h"

#include <algorithm>

namespace muster::ctld {

void AgentRegistry::Register(const std::string& host, Conn conn, std::vector<std::string> nodes) {
  timers_.erase(host);
  Forget(host);
  for (const std::string& node : nodes) host_of_[node] = host;
  agents_[host] = Agent{std::move(conn), std::move(nodes), time_.Now()};
}

void AgentRegistry::Heard(const Conn& conn, int64_t now) {
  for (auto& [host, agent] : agents_) {
    if (agent.conn == conn) agent.last_heard = now;
  }
}

std::vector<AgentRegistry::Conn> AgentRegistry::SilentSince(int64_t since) const {
  std::vector<Conn> out;
  for (const auto& [host, agent] : agents_) {
    if (agent.last_heard < since) out.push_back(agent.conn);
  }
  return out;
}

void AgentRegistry::Forget(const std::string& host) {
  auto it = agents_.find(host);
  if (it == agents_.end()) return;
  for (const std::string& node : it->second.nodes) {
    auto at = host_of_.find(node);
    if (at != host_of_.end() && at->second == host) host_of_.erase(at);
  }
  agents_.erase(it);
}

std::optional<std::pair<std::string, AgentRegistry::Agent>> AgentRegistry::Closed(
    const Conn& conn) {
  auto it = std::find_if(agents_.begin(), agents_.end(),
                         [&](const auto& entry) { return entry.second.conn == conn; });
  if (it == agents_.end()) return std::nullopt;
  std::pair<std::string, Agent> gone = *it;
  Forget(gone.first);
  // SlurmdTimeout=0: a node is never set DOWN for not responding (Slurm's
  // meaning of 0).
  if (timeout_s_ <= 0) return gone;
  auto& timer = timers_[gone.first];
  timer = time_.MakeTimer([this, host = gone.first, nodes = gone.second.nodes] {
    timers_.erase(host);  // this timer with it
    on_timeout_(host, nodes);
  });
  timer->ArmAt(time_.Now() + timeout_s_);
  return gone;
}

AgentRegistry::Conn AgentRegistry::ConnOf(const std::string& node) const {
  auto at = host_of_.find(node);
  if (at == host_of_.end()) return nullptr;
  return agents_.at(at->second).conn;
}

std::string AgentRegistry::HostOf(const Conn& conn) const {
  for (const auto& [host, agent] : agents_) {
    if (agent.conn == conn) return host;
  }
  return "";
}

bool AgentRegistry::Holds(const Conn& conn, const std::string& node) const {
  const Conn holder = ConnOf(node);
  return holder != nullptr && holder == conn;
}

}  // namespace muster::ctld

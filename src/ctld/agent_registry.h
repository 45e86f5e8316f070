// The agents connected to the controller: which host's agent holds which
// nodes over which connection, with a node -> host index so a message for
// a job's node costs a lookup, and for each host whose agent went away the
// timer that gives up on its nodes after SlurmdTimeout (unless it registers
// again first; never with SlurmdTimeout=0). It knows nothing of jobs: what a timeout does is the
// controller's callback.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/line_conn.h"
#include "util/clock.h"

namespace muster::ctld {

class AgentRegistry {
 public:
  using Conn = std::shared_ptr<api::LineConn>;
  struct Agent {
    Conn conn;
    std::vector<std::string> nodes;
    int64_t last_heard = 0;  // when it last said anything (a pong at least)
  };
  using OnTimeout =
      std::function<void(const std::string& host, const std::vector<std::string>& nodes)>;

  AgentRegistry(util::TimeSystem& time, int64_t timeout_s, OnTimeout on_timeout)
      : time_(time), timeout_s_(timeout_s), on_timeout_(std::move(on_timeout)) {}

  // `host`'s agent holds `nodes` over `conn`, instead of what it held
  // before; a timeout running for the host stops.
  void Register(const std::string& host, Conn conn, std::vector<std::string> nodes);
  // `conn` closed: its agent is forgotten and the host's timeout starts.
  // Returns the host and what it held (nothing when `conn` was no agent's).
  std::optional<std::pair<std::string, Agent>> Closed(const Conn& conn);

  // The connection of the agent holding `node`; null when none does.
  Conn ConnOf(const std::string& node) const;
  // The host whose agent speaks over `conn`; empty when none does.
  std::string HostOf(const Conn& conn) const;
  // Whether `conn` is the connection of the agent holding `node`.
  bool Holds(const Conn& conn, const std::string& node) const;
  // `conn` said something at `now`.
  void Heard(const Conn& conn, int64_t now);
  // The connections of the agents that have said nothing since `since`:
  // silent through two pings, a link that is cut (a TCP connection stays
  // open, dead, when no packet gets through).
  std::vector<Conn> SilentSince(int64_t since) const;
  // Every connected agent, by host.
  const std::map<std::string, Agent>& agents() const { return agents_; }
  // Whether a timeout runs for `host` (its agent is away).
  bool Away(const std::string& host) const { return timers_.count(host) != 0; }

 private:
  void Forget(const std::string& host);

  util::TimeSystem& time_;
  int64_t timeout_s_;
  OnTimeout on_timeout_;
  std::map<std::string, Agent> agents_;                   // by host
  std::unordered_map<std::string, std::string> host_of_;  // node -> host
  std::map<std::string, std::unique_ptr<util::Timer>> timers_;
};

}  // namespace muster::ctld

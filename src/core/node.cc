#include "core/node.h"

#include <array>
#include <utility>

#include "util/strings.h"

namespace muster::core {
namespace {

bool Matches(const GresSpec& g, const std::string& name, const std::string& type) {
  return g.name == name && (type.empty() || g.type == type);
}

constexpr std::array<std::pair<NodeInitialState, std::string_view>, 8> kInitialStateNames = {{
    {NodeInitialState::kUnknown, "UNKNOWN"},
    {NodeInitialState::kIdle, "IDLE"},
    {NodeInitialState::kCloud, "CLOUD"},
    {NodeInitialState::kDown, "DOWN"},
    {NodeInitialState::kDrain, "DRAIN"},
    {NodeInitialState::kFail, "FAIL"},
    {NodeInitialState::kFailing, "FAILING"},
    {NodeInitialState::kFuture, "FUTURE"},
}};

constexpr std::array<std::pair<ReasonSource, std::string_view>, 7> kReasonSourceNames = {{
    {ReasonSource::kNone, ""},
    {ReasonSource::kOperator, "operator"},
    {ReasonSource::kHealth, "health"},
    {ReasonSource::kProlog, "prolog"},
    {ReasonSource::kEpilog, "epilog"},
    {ReasonSource::kConfig, "config"},
    {ReasonSource::kNotResponding, "not_responding"},
}};

}  // namespace

std::string_view ReasonSourceName(ReasonSource s) {
  for (const auto& [source, name] : kReasonSourceNames) {
    if (source == s) return name;
  }
  return "";
}

std::optional<ReasonSource> ParseReasonSource(std::string_view s) {
  for (const auto& [source, name] : kReasonSourceNames) {
    if (s == name) return source;
  }
  return std::nullopt;
}

std::string_view NodeInitialStateName(NodeInitialState s) {
  for (const auto& [state, name] : kInitialStateNames) {
    if (state == s) return name;
  }
  return "UNKNOWN";
}

std::optional<NodeInitialState> ParseNodeInitialState(std::string_view s) {
  for (const auto& [state, name] : kInitialStateNames) {
    if (util::EqualsIgnoreCase(s, name)) return state;
  }
  return std::nullopt;
}

const std::vector<int>* GpuCores(const NodeConfig& node, int index) {
  for (const GresSpec& g : node.gres) {
    if (g.name != "gpu") continue;
    if (index < g.count) {
      const auto k = static_cast<size_t>(index);
      if (k >= g.device_cores.size() || g.device_cores[k].empty()) return nullptr;
      return &g.device_cores[k];
    }
    index -= static_cast<int>(g.count);
  }
  return nullptr;
}

std::vector<int> CpusNearGpu(const NodeConfig& node, int index) {
  const std::vector<int>* cores = GpuCores(node, index);
  if (cores == nullptr) return {};
  const int threads =
      node.cpus == node.sockets * node.cores_per_socket * node.threads_per_core
          ? node.threads_per_core
          : 1;
  std::vector<int> cpus;
  cpus.reserve(cores->size() * static_cast<size_t>(threads));
  for (int core : *cores) {
    for (int t = 0; t < threads; ++t) {
      if (core * threads + t < node.cpus) cpus.push_back(core * threads + t);
    }
  }
  return cpus;
}

NodeBase Node::Base() const {
  if (down) return NodeBase::kDown;
  bool gpus_used = false;
  for (bool used : gpu_used) gpus_used = gpus_used || used;
  if (alloc_cpus == 0 && !gpus_used) return NodeBase::kIdle;
  if (alloc_cpus >= config.cpus) return NodeBase::kAllocated;
  return NodeBase::kMixed;
}

std::string Node::SinfoState(bool long_form) const {
  // Precedence as sinfo shows it: DOWN+DRAIN shows as drained (observed on
  // Slurm 22.05); DRAIN shows as draining
  // while work remains and drained after; a node that never registered and
  // runs nothing is "unknown". "*" marks a node that is not responding.
  NodeBase base = Base();
  bool busy = alloc_cpus > 0 || running_jobs > 0 || base == NodeBase::kMixed ||
              base == NodeBase::kAllocated;
  std::string out;
  // A node to be rebooted shows it while it runs nothing (Slurm's BOOT and
  // BOOT^); a busy one keeps its state, marked "@".
  // (Issued, the node is away and DOWN: BOOT^ whatever it ran.)
  const bool reboot_shown = (reboot != RebootState::kNone && !busy) || Rebooting();
  if (reboot_shown && Rebooting()) {
    out = long_form ? "reboot^" : "boot^";
  } else if (reboot_shown) {
    out = long_form ? "reboot" : "boot";
  } else if (base == NodeBase::kDown && !drain) {
    out = "down";
  } else if (fail) {
    // FAIL before DRAIN, as Slurm names a node with both.
    out = busy ? (long_form ? "failing" : "failg") : "fail";
  } else if (drain) {
    if (busy) {
      out = long_form ? "draining" : "drng";
    } else {
      out = long_form ? "drained" : "drain";
    }
  } else if (base == NodeBase::kIdle && !registered) {
    out = long_form ? "unknown" : "unk";
  } else if (base == NodeBase::kAllocated) {
    out = long_form ? "allocated" : "alloc";
  } else if (base == NodeBase::kMixed) {
    out = long_form ? "mixed" : "mix";
  } else {
    out = "idle";
  }
  if (reboot != RebootState::kNone && !reboot_shown) out += reboot == RebootState::kIssued ? '^' : '@';
  if (!Responding()) out += '*';
  return out;
}

std::string Node::ScontrolState() const {
  // Base name, then flags in Slurm's order (DRAIN before NOT_RESPONDING).
  std::string out;
  // A reboot issued takes the node DOWN until it is back, as in Slurm.
  switch (Rebooting() ? NodeBase::kDown : Base()) {
    case NodeBase::kDown: out = "DOWN"; break;
    case NodeBase::kAllocated: out = "ALLOCATED"; break;
    case NodeBase::kMixed: out = "MIXED"; break;
    case NodeBase::kFuture: out = "FUTURE"; break;
    case NodeBase::kUnknown: out = "UNKNOWN"; break;
    case NodeBase::kIdle: out = registered ? "IDLE" : "UNKNOWN"; break;
  }
  if (drain) out += "+DRAIN";
  if (fail) out += "+FAIL";
  if (reboot == RebootState::kRequested) out += "+REBOOT_REQUESTED";
  if (reboot == RebootState::kIssued) out += "+REBOOT_ISSUED";
  if (!Responding()) out += "+NOT_RESPONDING";
  return out;
}

int64_t Node::TotalGres(const std::string& name, const std::string& type) const {
  int64_t total = 0;
  for (const GresSpec& g : config.gres) {
    if (Matches(g, name, type)) total += g.count;
  }
  return total;
}

int64_t Node::FreeGres(const std::string& name, const std::string& type) const {
  if (name != "gpu") return TotalGres(name, type);  // only GPUs are tracked so far
  int64_t free = 0;
  size_t index = 0;
  for (const GresSpec& g : config.gres) {
    if (g.name != "gpu") continue;
    for (int64_t k = 0; k < g.count; ++k, ++index) {
      bool used = index < gpu_used.size() && gpu_used[index];
      if (!used && (type.empty() || g.type == type)) ++free;
    }
  }
  return free;
}

std::string Node::GpuType(int index) const {
  if (index < 0) return "";
  int64_t remaining = index;
  for (const GresSpec& g : config.gres) {
    if (g.name != "gpu") continue;
    if (remaining < g.count) return g.type;
    remaining -= g.count;
  }
  return "";
}

int Node::TotalGpus() const { return static_cast<int>(TotalGres("gpu", "")); }

namespace {

void ClearReason(Node& node) {
  node.reason.clear();
  node.reason_uid = 0;
  node.reason_time = 0;
  node.reason_actor.clear();
  node.reason_source = ReasonSource::kNone;
}

void ForgetReboot(Node& node) {
  node.reboot = RebootState::kNone;
  node.reboot_asap = false;
  node.reboot_next_state.clear();
  node.reboot_issued_time = 0;
}

}  // namespace

void RequestReboot(Node& node, const RebootRequest& req, int64_t now) {
  node.reboot = RebootState::kRequested;
  node.reboot_asap = req.asap;
  node.reboot_next_state = req.next_state;
  if (req.asap) node.drain = true;
  // Slurm's reasons: its own words unless one is given.
  node.reason = !req.reason.empty() ? req.reason : req.asap ? "Reboot ASAP" : "reboot requested";
  node.reason_uid = req.uid;
  node.reason_time = now;
  node.reason_actor.clear();
  // An operator's maintenance (the alerts keep quiet about it).
  node.reason_source = ReasonSource::kOperator;
}

bool RebootDue(const Node& node) {
  return node.reboot == RebootState::kRequested && node.running_jobs == 0 && node.alloc_cpus == 0;
}

void IssueReboot(Node& node, int64_t now) {
  node.reboot = RebootState::kIssued;
  node.reboot_issued_time = now;
  node.reason += " : reboot issued";
  node.reason_time = now;
}

void FinishReboot(Node& node) {
  if (node.reboot_next_state == "DOWN") {
    node.down = true;
  } else {
    // ASAP and nextstate=RESUME undrain it; the reboot's reason goes
    // unless something else keeps it out of service.
    if (node.reboot_asap || node.reboot_next_state == "RESUME") node.drain = false;
    if (!node.drain && !node.fail) {
      node.down = false;
      ClearReason(node);
    }
  }
  ForgetReboot(node);
}

void RebootTimedOut(Node& node, int64_t now) {
  ForgetReboot(node);
  node.down = true;
  node.drain = false;
  node.reason += " : reboot timed out";
  node.reason_time = now;
  node.reason_source = ReasonSource::kNotResponding;
}

bool CancelReboot(Node& node) {
  if (node.reboot != RebootState::kRequested) return false;
  if (node.reboot_asap) node.drain = false;
  ForgetReboot(node);
  // The request's reason goes with it (the oracle: back to MIXED, no reason).
  if (!node.drain && !node.down && !node.fail) ClearReason(node);
  return true;
}

}  // namespace muster::core

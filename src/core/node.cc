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
  if (base == NodeBase::kDown && !drain) {
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
  if (!Responding()) out += '*';
  return out;
}

std::string Node::ScontrolState() const {
  // Base name, then flags in Slurm's order (DRAIN before NOT_RESPONDING).
  std::string out;
  switch (Base()) {
    case NodeBase::kDown: out = "DOWN"; break;
    case NodeBase::kAllocated: out = "ALLOCATED"; break;
    case NodeBase::kMixed: out = "MIXED"; break;
    case NodeBase::kFuture: out = "FUTURE"; break;
    case NodeBase::kUnknown: out = "UNKNOWN"; break;
    case NodeBase::kIdle: out = registered ? "IDLE" : "UNKNOWN"; break;
  }
  if (drain) out += "+DRAIN";
  if (fail) out += "+FAIL";
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

}  // namespace muster::core

// The pass's overlay of free resources, and GPU counting by type. GPU index
// i of a node is the i-th GPU across its "gpu" gres entries in config order
// (Gres=gpu:a100:2,gpu:h100:2: 0-1 a100, 2-3 h100), as Node::gpu_used and
// CUDA_VISIBLE_DEVICES number them.
#include <algorithm>
#include <cassert>

#include "sched/pipeline.h"

namespace muster::sched {

int GpuCount(const core::NodeConfig& node) {
  int64_t n = 0;
  for (const auto& g : node.gres) {
    if (g.name == "gpu") n += g.count;
  }
  return static_cast<int>(n);
}

namespace {

// The node's only "gpu" entry when it has exactly one (most nodes: one
// model), else null.
const core::GresSpec* SoleGpuEntry(const core::NodeConfig& node) {
  const core::GresSpec* sole = nullptr;
  for (const auto& g : node.gres) {
    if (g.name != "gpu") continue;
    if (sole != nullptr) return nullptr;
    sole = &g;
  }
  return sole;
}

}  // namespace

int64_t GpuCountOfType(const core::NodeConfig& node, std::string_view type) {
  if (const core::GresSpec* sole = SoleGpuEntry(node)) {
    return type.empty() || sole->type == type ? sole->count : 0;
  }
  return GpusOfOneType(node, type, [](int) { return true; });
}

int64_t FreeGpus(const core::NodeConfig& node, const Overlay& ov, int i, std::string_view type) {
  const NodeFree& f = ov.at(i);
  if (f.gpus_free == 0) return 0;
  // One model: every free GPU is of it.
  if (const core::GresSpec* sole = SoleGpuEntry(node)) {
    return type.empty() || sole->type == type ? f.gpus_free : 0;
  }
  const int total = static_cast<int>(f.gpu_count);
  return GpusOfOneType(node, type,
                       [&](int index) { return index < total && !ov.GpuUsed(i, index); });
}

std::string_view GpuTypeFor(const core::NodeConfig& node, std::string_view type, int64_t want,
                            const std::function<bool(int)>& usable) {
  if (!type.empty()) return type;
  // One model (most nodes): the selection has seen that it has enough.
  if (const core::GresSpec* sole = SoleGpuEntry(node)) return sole->type;
  for (const auto& candidate : node.gres) {
    if (candidate.name != "gpu") continue;
    // Those of exactly this type (an entry without a type is one too).
    int64_t n = 0;
    int index = 0;
    for (const auto& g : node.gres) {
      if (g.name != "gpu") continue;
      for (int64_t k = 0; k < g.count; ++k, ++index) {
        if (g.type == candidate.type && usable(index)) ++n;
      }
    }
    if (n >= want) return candidate.type;
  }
  return {};
}

Overlay Overlay::FromNodes(std::span<const core::Node* const> nodes) {
  Overlay ov;
  ov.free_.resize(nodes.size());
  size_t total = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ov.free_[i].gpu_count = static_cast<uint32_t>(GpuCount(nodes[i]->config));
    total += ov.free_[i].gpu_count;
  }
  ov.gpu_used_.assign(total, 0);
  uint32_t offset = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const core::Node& n = *nodes[i];
    NodeFree& f = ov.free_[i];
    f.cpus = std::max(0, n.config.cpus - n.alloc_cpus);
    f.mem_mb = std::max<int64_t>(0, n.config.real_memory_mb - n.alloc_mem_mb);
    f.gpu_begin = offset;
    // gpu_used may be shorter than the configured count (missing = free).
    const size_t known = std::min<size_t>(f.gpu_count, n.gpu_used.size());
    uint32_t used = 0;
    for (size_t g = 0; g < known; ++g) {
      if (n.gpu_used[g]) {
        ov.gpu_used_[offset + g] = 1;
        ++used;
      }
    }
    f.gpus_free = f.gpu_count - used;
    f.idle = n.alloc_cpus == 0 && n.alloc_mem_mb == 0 && n.running_jobs == 0 && used == 0;
    offset += f.gpu_count;
  }
  return ov;
}

Overlay Overlay::Empty(std::span<const core::NodeConfig* const> configs) {
  Overlay ov;
  ov.free_.resize(configs.size());
  uint32_t offset = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    NodeFree& f = ov.free_[i];
    f.cpus = configs[i]->cpus;
    f.mem_mb = configs[i]->real_memory_mb;
    f.idle = true;
    f.gpu_begin = offset;
    f.gpu_count = static_cast<uint32_t>(GpuCount(*configs[i]));
    f.gpus_free = f.gpu_count;
    offset += f.gpu_count;
  }
  ov.gpu_used_.assign(offset, 0);
  return ov;
}

void Overlay::Reserve(int node, const core::NodeAlloc& share) {
  NodeFree& f = free_[node];
  // The selection only hands out shares that fit; anything else is a bug.
  assert(share.cpus <= f.cpus && share.mem_mb <= f.mem_mb);
  f.cpus -= share.cpus;
  f.mem_mb -= share.mem_mb;
  f.idle = false;
  for (int g : share.gpu_indices) {
    assert(g >= 0 && static_cast<uint32_t>(g) < f.gpu_count && !gpu_used_[f.gpu_begin + g]);
    gpu_used_[f.gpu_begin + g] = 1;
    --f.gpus_free;
  }
}

void Overlay::Release(int node, const core::NodeAlloc& share, const core::NodeConfig& config) {
  NodeFree& f = free_[node];
  f.cpus = std::min(f.cpus + share.cpus, config.cpus);
  f.mem_mb = std::min(f.mem_mb + share.mem_mb, config.real_memory_mb);
  for (int g : share.gpu_indices) {
    if (g < 0 || static_cast<uint32_t>(g) >= f.gpu_count || !gpu_used_[f.gpu_begin + g]) continue;
    gpu_used_[f.gpu_begin + g] = 0;
    ++f.gpus_free;
  }
  f.idle = f.cpus == config.cpus && f.mem_mb == config.real_memory_mb && f.gpus_free == f.gpu_count;
}

}  // namespace muster::sched

#include "core/tres.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::core {

int64_t MemoryPerCpuMb(const JobRequest& req, int64_t def_mem_per_cpu_mb) {
  if (req.mem_per_cpu_mb > 0) return req.mem_per_cpu_mb;
  if (req.mem_per_node_mb > 0 || req.mem_whole_node) return 0;
  return std::max<int64_t>(def_mem_per_cpu_mb, 0);
}

int RequestedNodes(const Job& job) { return std::max(job.req.min_nodes, 1); }

int64_t JobMemoryTotalMb(const Job& job, const MemoryDefaults& defaults) {
  if (!job.alloc.empty()) {
    int64_t sum = 0;
    for (const NodeAlloc& a : job.alloc) sum += a.mem_mb;
    return sum;
  }
  const JobRequest& r = job.req;
  const int64_t nodes = RequestedNodes(job);
  if (const int64_t per_cpu = MemoryPerCpuMb(r, defaults.def_mem_per_cpu_mb); per_cpu > 0) {
    return per_cpu * job.NumCpus();
  }
  if (r.mem_per_node_mb > 0 && !r.mem_whole_node) return r.mem_per_node_mb * nodes;
  return defaults.node_memory_mb * nodes;
}

int64_t JobGpuTotal(const Job& job) {
  int64_t sum = 0;
  if (!job.alloc.empty()) {
    for (const NodeAlloc& a : job.alloc) sum += static_cast<int64_t>(a.gpu_indices.size());
    return sum;
  }
  for (const GresRequest& g : job.req.gres) {
    if (g.name != "gpu") continue;
    sum += g.per_job ? g.count : g.count * RequestedNodes(job);
  }
  return sum;
}

Tres JobTres(const Job& job, const MemoryDefaults& defaults) {
  Tres t;
  t.cpus = job.NumCpus();
  t.mem_mb = JobMemoryTotalMb(job, defaults);
  t.nodes = job.alloc.empty() ? RequestedNodes(job) : static_cast<int64_t>(job.alloc.size());
  t.billing = t.cpus;
  t.gpus = JobGpuTotal(job);
  return t;
}

std::string FormatTres(const Tres& tres) {
  std::string out = fmt::format("cpu={},mem={},node={},billing={}", tres.cpus,
                                util::FormatMemoryMb(tres.mem_mb), tres.nodes, tres.billing);
  if (tres.gpus > 0) out += fmt::format(",gres/gpu={}", tres.gpus);
  return out;
}

}  // namespace muster::core

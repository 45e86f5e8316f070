#include "core/tres.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::core {

int64_t MemoryPerCpuMb(const JobRequest& req, int64_t def_mem_per_cpu_mb) {
  if (req.mem_per_cpu_mb > 0) return req.mem_per_cpu_mb;
  if (req.mem_per_node_mb > 0 || req.mem_whole_node || req.mem_per_gpu_mb > 0) return 0;
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
  if (r.mem_per_gpu_mb > 0) return r.mem_per_gpu_mb * JobGpuTotal(job);
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

util::Result<std::vector<TresWeight>> ParseTresWeights(std::string_view text) {
  std::vector<TresWeight> out;
  for (std::string_view item : util::Split(text, ',')) {
    item = util::Trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = util::ToLower(util::Trim(item.substr(0, eq)));
    std::string value(eq == std::string_view::npos ? "" : util::Trim(item.substr(eq + 1)));
    const bool known = name == "cpu" || name == "mem" || name == "node" ||
                       (name.starts_with("gres/") && name.size() > 5);
    if (!known) {
      return util::InvalidArgument(std::string(item) +
                                   ": unknown TRES (expected CPU, Mem, Node or GRES/<name>)");
    }
    // Memory's weight is per MB, or per the unit its suffix names.
    double per_mb = 1;
    if (name == "mem" && !value.empty()) {
      const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(value.back())));
      const double scale = unit == 'K' ? 1.0 / 1024 : unit == 'M' ? 1 : unit == 'G' ? 1024
                           : unit == 'T' ? 1024.0 * 1024 : 0;
      if (scale != 0) {
        per_mb = 1 / scale;
        value.pop_back();
      }
    }
    char* end = nullptr;
    const double w = value.empty() ? -1 : std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(w >= 0) || std::isinf(w)) {
      return util::InvalidArgument(std::string(item) + ": the weight must be a number of at least 0");
    }
    out.push_back({name, w * per_mb});
  }
  return out;
}

double BillingUnits(const Tres& tres, const std::vector<TresWeight>& weights) {
  if (weights.empty()) return static_cast<double>(tres.cpus);
  double sum = 0;
  for (const TresWeight& w : weights) {
    const int64_t amount = w.name == "cpu"        ? tres.cpus
                           : w.name == "mem"      ? tres.mem_mb
                           : w.name == "node"     ? tres.nodes
                           : w.name == "gres/gpu" ? tres.gpus
                                                  : 0;
    sum += w.weight * static_cast<double>(amount);
  }
  return sum;
}

std::string FormatTres(const Tres& tres) {
  std::string out = fmt::format("cpu={},mem={},node={},billing={}", tres.cpus,
                                util::FormatMemoryMb(tres.mem_mb), tres.nodes, tres.billing);
  if (tres.gpus > 0) out += fmt::format(",gres/gpu={}", tres.gpus);
  return out;
}

}  // namespace muster::core

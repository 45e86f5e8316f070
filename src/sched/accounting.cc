// Applying a plan's starts to live nodes, and giving resources back: the
// one place the controller's accounting and the scheduler's overlay agree
// on (NodeAlloc.cpus/mem_mb/gpu_indices/cpu_ids added to alloc_cpus/
// alloc_mem_mb/gpu_used/cpu_used, one running_jobs per job per node).
#include <algorithm>
#include <string>

#include "sched/pipeline.h"

namespace muster::sched {
namespace {

NodeLookup Linear(const std::vector<core::Node*>& nodes) {
  return [&nodes](const std::string& name) -> core::Node* {
    for (core::Node* n : nodes) {
      if (n != nullptr && n->config.name == name) return n;
    }
    return nullptr;
  };
}

}  // namespace

util::Status ApplyStart(const StartDecision& start, const std::vector<core::Node*>& nodes) {
  return ApplyStart(start.alloc, nodes);
}

util::Status ApplyStart(const std::vector<core::NodeAlloc>& alloc,
                        const std::vector<core::Node*>& nodes) {
  return ApplyStart(alloc, Linear(nodes));
}

util::Status ReleaseJob(const std::vector<core::NodeAlloc>& alloc,
                        const std::vector<core::Node*>& nodes) {
  return ReleaseJob(alloc, Linear(nodes));
}

util::Status ApplyStart(const std::vector<core::NodeAlloc>& alloc, const NodeLookup& lookup) {
  // Check everything first so a stale plan changes nothing.
  std::vector<core::Node*> targets;
  targets.reserve(alloc.size());
  for (const auto& a : alloc) {
    core::Node* n = lookup(a.node);
    if (n == nullptr) return util::FailedPrecondition("node " + a.node + " is not known");
    if (std::find(targets.begin(), targets.end(), n) != targets.end()) {
      return util::FailedPrecondition("node " + a.node + " appears twice in the allocation");
    }
    if (a.cpus < 0 || a.mem_mb < 0 || n->alloc_cpus + a.cpus > n->config.cpus) {
      return util::FailedPrecondition("node " + a.node + ": " + std::to_string(a.cpus) +
                                      " CPUs do not fit (" + std::to_string(n->alloc_cpus) +
                                      " of " + std::to_string(n->config.cpus) + " in use)");
    }
    if (n->alloc_mem_mb + a.mem_mb > n->config.real_memory_mb) {
      return util::FailedPrecondition("node " + a.node + ": " + std::to_string(a.mem_mb) +
                                      "M memory does not fit (" + std::to_string(n->alloc_mem_mb) +
                                      "M of " + std::to_string(n->config.real_memory_mb) +
                                      "M in use)");
    }
    const int total = GpuCount(n->config);
    for (size_t k = 0; k < a.gpu_indices.size(); ++k) {
      const int g = a.gpu_indices[k];
      if (g < 0 || g >= total) {
        return util::FailedPrecondition("node " + a.node + ": GPU index " + std::to_string(g) +
                                        " out of range (node has " + std::to_string(total) + ")");
      }
      const bool used = static_cast<size_t>(g) < n->gpu_used.size() && n->gpu_used[g];
      const bool twice = std::find(a.gpu_indices.begin(), a.gpu_indices.begin() + k, g) !=
                         a.gpu_indices.begin() + k;
      if (used || twice) {
        return util::FailedPrecondition("node " + a.node + ": GPU " + std::to_string(g) +
                                        " is already allocated");
      }
    }
    if (!a.cpu_ids.empty()) {
      if (static_cast<int>(a.cpu_ids.size()) != a.cpus) {
        return util::FailedPrecondition("node " + a.node + ": " + std::to_string(a.cpu_ids.size()) +
                                        " CPU ids for " + std::to_string(a.cpus) + " CPUs");
      }
      for (size_t k = 0; k < a.cpu_ids.size(); ++k) {
        const int c = a.cpu_ids[k];
        if (c < 0 || c >= n->config.cpus) {
          return util::FailedPrecondition("node " + a.node + ": CPU id " + std::to_string(c) +
                                          " out of range (node has " +
                                          std::to_string(n->config.cpus) + ")");
        }
        const bool used = static_cast<size_t>(c) < n->cpu_used.size() && n->cpu_used[c];
        const bool twice = std::find(a.cpu_ids.begin(), a.cpu_ids.begin() + k, c) !=
                           a.cpu_ids.begin() + k;
        if (used || twice) {
          return util::FailedPrecondition("node " + a.node + ": CPU " + std::to_string(c) +
                                          " is already allocated");
        }
      }
    }
    targets.push_back(n);
  }
  for (size_t k = 0; k < alloc.size(); ++k) {
    const core::NodeAlloc& a = alloc[k];
    core::Node* n = targets[k];
    n->alloc_cpus += a.cpus;
    n->alloc_mem_mb += a.mem_mb;
    n->running_jobs += 1;
    const size_t total = static_cast<size_t>(GpuCount(n->config));
    if (n->gpu_used.size() < total) n->gpu_used.resize(total, false);
    for (int g : a.gpu_indices) n->gpu_used[static_cast<size_t>(g)] = true;
    if (n->cpu_used.size() < static_cast<size_t>(n->config.cpus)) {
      n->cpu_used.resize(static_cast<size_t>(n->config.cpus), false);
    }
    for (int c : a.cpu_ids) n->cpu_used[static_cast<size_t>(c)] = true;
  }
  return util::Status::Ok();
}

void AssignCpuIds(std::vector<core::NodeAlloc>* alloc, const NodeLookup& lookup) {
  for (core::NodeAlloc& a : *alloc) {
    if (!a.cpu_ids.empty() || a.cpus <= 0) continue;
    const core::Node* n = lookup(a.node);
    if (n == nullptr) continue;
    for (int c = 0; c < n->config.cpus && static_cast<int>(a.cpu_ids.size()) < a.cpus; ++c) {
      if (static_cast<size_t>(c) >= n->cpu_used.size() || !n->cpu_used[c]) a.cpu_ids.push_back(c);
    }
    // Fewer free ids than free CPUs: allocations restored from before CPU
    // ids were kept hold counts without ids. Such a job runs unconfined.
    if (static_cast<int>(a.cpu_ids.size()) < a.cpus) a.cpu_ids.clear();
  }
}

util::Status ReleaseJob(const core::Job& job, const std::vector<core::Node*>& nodes) {
  return ReleaseJob(job.alloc, nodes);
}

util::Status ReleaseJob(const std::vector<core::NodeAlloc>& alloc, const NodeLookup& lookup) {
  std::string problem;
  auto note = [&](const std::string& what) {
    if (problem.empty()) problem = what;
  };
  for (const auto& a : alloc) {
    core::Node* n = lookup(a.node);
    if (n == nullptr) continue;  // removed from the configuration
    if (n->alloc_cpus < a.cpus) note("node " + a.node + ": releasing more CPUs than allocated");
    if (n->alloc_mem_mb < a.mem_mb) {
      note("node " + a.node + ": releasing more memory than allocated");
    }
    if (n->running_jobs < 1) note("node " + a.node + ": no running job to release");
    n->alloc_cpus = std::max(0, n->alloc_cpus - a.cpus);
    n->alloc_mem_mb = std::max<int64_t>(0, n->alloc_mem_mb - a.mem_mb);
    n->running_jobs = std::max(0, n->running_jobs - 1);
    for (int g : a.gpu_indices) {
      if (g < 0 || static_cast<size_t>(g) >= n->gpu_used.size() || !n->gpu_used[g]) {
        note("node " + a.node + ": GPU " + std::to_string(g) + " was not allocated");
        continue;
      }
      n->gpu_used[static_cast<size_t>(g)] = false;
    }
    for (int c : a.cpu_ids) {
      if (c < 0 || static_cast<size_t>(c) >= n->cpu_used.size() || !n->cpu_used[c]) {
        note("node " + a.node + ": CPU " + std::to_string(c) + " was not allocated");
        continue;
      }
      n->cpu_used[static_cast<size_t>(c)] = false;
    }
  }
  if (!problem.empty()) return util::FailedPrecondition(problem);
  return util::Status::Ok();
}

}  // namespace muster::sched

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

// GPU indices and CPU ids are kept alike: one flag per id on the node.
struct IdKind {
  const char* item;   // "GPU", "CPU": "GPU 3 is already allocated"
  const char* index;  // "GPU index", "CPU id": "... 9 out of range"
};
constexpr IdKind kGpuIds{"GPU", "GPU index"};
constexpr IdKind kCpuIds{"CPU", "CPU id"};

// Each id in [0, total), free in `used` (missing flags count as free), and
// named once.
util::Status CheckFreeIds(const std::string& node, const std::vector<int>& ids, int total,
                          const std::vector<bool>& used, const IdKind& kind) {
  for (size_t k = 0; k < ids.size(); ++k) {
    const int id = ids[k];
    if (id < 0 || id >= total) {
      return util::FailedPrecondition("node " + node + ": " + kind.index + " " + std::to_string(id) +
                                      " out of range (node has " + std::to_string(total) + ")");
    }
    const bool taken = static_cast<size_t>(id) < used.size() && used[id];
    const bool twice = std::find(ids.begin(), ids.begin() + k, id) != ids.begin() + k;
    if (taken || twice) {
      return util::FailedPrecondition("node " + node + ": " + kind.item + " " + std::to_string(id) +
                                      " is already allocated");
    }
  }
  return util::Status::Ok();
}

void MarkIds(const std::vector<int>& ids, int total, std::vector<bool>* used) {
  if (used->size() < static_cast<size_t>(total)) used->resize(static_cast<size_t>(total), false);
  for (int id : ids) (*used)[static_cast<size_t>(id)] = true;
}

// Frees ids; one not allocated is noted (the accounting was inconsistent).
template <typename Note>
void ClearIds(const std::string& node, const std::vector<int>& ids, std::vector<bool>* used,
              const IdKind& kind, Note& note) {
  for (int id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= used->size() || !(*used)[id]) {
      note("node " + node + ": " + kind.item + " " + std::to_string(id) + " was not allocated");
      continue;
    }
    (*used)[static_cast<size_t>(id)] = false;
  }
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
    MUSTER_RETURN_IF_ERROR(
        CheckFreeIds(a.node, a.gpu_indices, GpuCount(n->config), n->gpu_used, kGpuIds));
    if (!a.cpu_ids.empty()) {
      if (static_cast<int>(a.cpu_ids.size()) != a.cpus) {
        return util::FailedPrecondition("node " + a.node + ": " + std::to_string(a.cpu_ids.size()) +
                                        " CPU ids for " + std::to_string(a.cpus) + " CPUs");
      }
      MUSTER_RETURN_IF_ERROR(CheckFreeIds(a.node, a.cpu_ids, n->config.cpus, n->cpu_used, kCpuIds));
    }
    targets.push_back(n);
  }
  for (size_t k = 0; k < alloc.size(); ++k) {
    const core::NodeAlloc& a = alloc[k];
    core::Node* n = targets[k];
    n->alloc_cpus += a.cpus;
    n->alloc_mem_mb += a.mem_mb;
    n->running_jobs += 1;
    MarkIds(a.gpu_indices, GpuCount(n->config), &n->gpu_used);
    MarkIds(a.cpu_ids, n->config.cpus, &n->cpu_used);
  }
  return util::Status::Ok();
}

void AssignCpuIds(std::vector<core::NodeAlloc>* alloc, const NodeLookup& lookup) {
  for (core::NodeAlloc& a : *alloc) {
    if (!a.cpu_ids.empty() || a.cpus <= 0) continue;
    const core::Node* n = lookup(a.node);
    if (n == nullptr) continue;
    auto is_free = [&](int c) {
      return static_cast<size_t>(c) >= n->cpu_used.size() || !n->cpu_used[c];
    };
    // The CPUs gres.conf Cores= puts near the share's GPUs first, then
    // the lowest others.
    std::vector<int> near;
    for (int g : a.gpu_indices) {
      for (int c : core::CpusNearGpu(n->config, g)) near.push_back(c);
    }
    std::sort(near.begin(), near.end());
    near.erase(std::unique(near.begin(), near.end()), near.end());
    for (int c : near) {
      if (static_cast<int>(a.cpu_ids.size()) < a.cpus && is_free(c)) a.cpu_ids.push_back(c);
    }
    for (int c = 0; c < n->config.cpus && static_cast<int>(a.cpu_ids.size()) < a.cpus; ++c) {
      if (is_free(c) && !std::binary_search(near.begin(), near.end(), c)) a.cpu_ids.push_back(c);
    }
    std::sort(a.cpu_ids.begin(), a.cpu_ids.end());
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
    ClearIds(a.node, a.gpu_indices, &n->gpu_used, kGpuIds, note);
    ClearIds(a.node, a.cpu_ids, &n->cpu_used, kCpuIds, note);
  }
  if (!problem.empty()) return util::FailedPrecondition(problem);
  return util::Status::Ok();
}

}  // namespace muster::sched

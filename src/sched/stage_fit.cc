// Stage: does a job's share fit on one node? Slurm's cons_tres per-node
// test with CR_Core_Memory: CPUs (tasks * --cpus-per-task, or
// --ntasks-per-node * --cpus-per-task, or the whole node with --exclusive),
// memory (--mem per node, --mem-per-cpu/DefMemPerCPU times the CPUs taken
// there, or the whole node's memory), GPUs of the requested type. A share
// without GPUs leaves the GpuReserve of each free GPU alone.
#include <algorithm>

#include "sched/pipeline.h"

namespace muster::sched {

int NeedCpus(const ResourceRequest& r, int tasks, int64_t gpus) {
  const int64_t for_tasks =
      static_cast<int64_t>(r.ntasks_per_node > 0 ? r.ntasks_per_node : tasks) * r.cpus_per_task;
  return static_cast<int>(std::min<int64_t>(std::max(for_tasks, gpus * r.cpus_per_gpu), 1 << 30));
}

int ShareCpus(const ResourceRequest& r, const core::NodeConfig& node, int tasks, int64_t gpus) {
  return r.exclusive ? node.cpus : NeedCpus(r, tasks, gpus);
}

int64_t ShareMem(const ResourceRequest& r, const core::NodeConfig& node, int cpus, int64_t gpus) {
  if (r.mem_per_gpu_mb > 0) return gpus * r.mem_per_gpu_mb;
  if (r.whole_node_mem) return node.real_memory_mb;
  if (r.mem_per_node_mb > 0) return r.mem_per_node_mb;
  return r.mem_per_cpu_mb * cpus;
}

FilterResult FitShare(const ResourceRequest& r, const core::NodeConfig& node, const Overlay& ov,
                      int i, const Share& share) {
  const NodeFree& f = ov.at(i);
  if (NeedCpus(r, share.tasks, share.gpus) > node.cpus) {
    return {Verdict::kNeverSchedulable, "too few CPUs"};
  }
  const int cpus = ShareCpus(r, node, share.tasks, share.gpus);
  const int64_t mem = ShareMem(r, node, cpus, share.gpus);
  if (mem > node.real_memory_mb) return {Verdict::kNeverSchedulable, "too little memory"};
  if (share.gpus > 0 && GpuCountOfType(node, r.gpu_type) < share.gpus) {
    return {Verdict::kNeverSchedulable, "too few GPUs of the type"};
  }
  if (r.exclusive && !f.idle) return {Verdict::kUnschedulableNow, "node not idle (--exclusive)"};
  const Overlay::Room room = ov.RoomFor(i, share.gpus > 0 || r.exclusive);
  if (cpus > room.cpus) {
    return {Verdict::kUnschedulableNow,
            cpus > f.cpus ? "CPUs busy" : "CPUs kept for the node's free GPUs (GpuReserve)"};
  }
  if (mem > room.mem_mb) {
    return {Verdict::kUnschedulableNow,
            mem > f.mem_mb ? "memory busy" : "memory kept for the node's free GPUs (GpuReserve)"};
  }
  if (share.gpus > 0 && FreeGpus(node, ov, i, r.gpu_type) < share.gpus) {
    return {Verdict::kUnschedulableNow, "GPUs busy"};
  }
  return {};
}

int64_t TaskCapacity(const ResourceRequest& r, const core::NodeConfig& node, int cpus_free,
                     int64_t mem_free_mb, bool idle) {
  if (r.exclusive && !idle) return 0;
  const int cpt = r.cpus_per_task;
  // With --exclusive the node is idle, so all its CPUs are free.
  if (r.exclusive) cpus_free = node.cpus;
  int64_t cap;
  if (r.ntasks_per_node > 0) {
    cap = cpus_free >= r.ntasks_per_node * cpt ? r.ntasks_per_node : 0;
  } else {
    cap = cpus_free / cpt;
  }
  if (cap <= 0) return 0;
  if (r.whole_node_mem) {
    if (mem_free_mb < node.real_memory_mb) return 0;
  } else if (r.mem_per_node_mb > 0) {
    if (mem_free_mb < r.mem_per_node_mb) return 0;
  } else if (r.exclusive) {
    if (mem_free_mb < r.mem_per_cpu_mb * node.cpus) return 0;
  } else if (r.ntasks_per_node > 0) {
    if (mem_free_mb < r.mem_per_cpu_mb * r.ntasks_per_node * cpt) return 0;
  } else if (r.mem_per_cpu_mb > 0) {
    cap = std::min<int64_t>(cap, mem_free_mb / (r.mem_per_cpu_mb * cpt));
  }
  return cap;
}

int MaxTasksOnNode(const ResourceRequest& r, const core::NodeConfig& node, const Overlay& ov, int i,
                   int64_t gpus, int want) {
  const NodeFree& f = ov.at(i);
  if (want <= 0) return 0;
  if (gpus > 0 && FreeGpus(node, ov, i, r.gpu_type) < gpus) return 0;
  // --cpus-per-gpu and --mem-per-gpu: what the GPUs bring must fit too.
  if (gpus * r.cpus_per_gpu > (r.exclusive ? node.cpus : f.cpus)) return 0;
  if (gpus * r.mem_per_gpu_mb > f.mem_mb) return 0;
  const Overlay::Room room = ov.RoomFor(i, gpus > 0 || r.exclusive);
  return static_cast<int>(
      std::min<int64_t>(TaskCapacity(r, node, room.cpus, room.mem_mb, f.idle), want));
}

namespace {

// Of the free GPUs `free` (in index order), puts first `want` that share
// their gres.conf Cores= (one socket, say), from the group with the fewest
// free that still has enough, so a job's GPUs sit near one set of cores
// and whole groups stay free for larger jobs. Unchanged when no group has
// enough.
void KeepNearTogether(const core::NodeConfig& node, int64_t want, std::vector<int>* free) {
  const std::vector<int>* best = nullptr;
  int64_t best_count = 0;
  for (int g : *free) {
    const std::vector<int>* cores = core::GpuCores(node, g);
    if (cores == nullptr) continue;
    const int64_t count = std::count_if(free->begin(), free->end(), [&](int other) {
      const std::vector<int>* c = core::GpuCores(node, other);
      return c != nullptr && *c == *cores;
    });
    if (count >= want && (best == nullptr || count < best_count)) {
      best = cores;
      best_count = count;
    }
  }
  if (best == nullptr) return;
  std::stable_partition(free->begin(), free->end(), [&](int g) {
    const std::vector<int>* c = core::GpuCores(node, g);
    return c != nullptr && *c == *best;
  });
}

}  // namespace

void MakeShareAlloc(const ResourceRequest& r, const core::NodeConfig& node, const Overlay& ov,
                    int i, const Share& share, core::NodeAlloc* out) {
  out->node = node.name;
  out->node_index = i;
  // --ntasks-per-node: every node counts that many tasks, as Slurm's
  // SLURM_TASKS_PER_NODE and NumTasks do (-N 2 -n 3 --ntasks-per-node=2:
  // 2(x2), NumTasks=4), though fewer may be started there.
  out->tasks = r.ntasks_per_node > 0 ? r.ntasks_per_node : share.tasks;
  out->cpus = ShareCpus(r, node, share.tasks, share.gpus);
  out->mem_mb = ShareMem(r, node, out->cpus, share.gpus);
  out->gpu_indices.clear();
  if (share.gpus <= 0) return;
  out->gpu_indices.reserve(static_cast<size_t>(share.gpus));
  // Free indices of one type (the first with enough, untyped).
  const int total = static_cast<int>(ov.at(i).gpu_count);
  auto free = [&](int index) { return index < total && !ov.GpuUsed(i, index); };
  const std::string_view type = GpuTypeFor(node, r.gpu_type, share.gpus, free);
  // With gres.conf Cores= for the type, every free one is a candidate for
  // KeepNearTogether; without, the lowest free indices, in index order.
  const bool affinity = std::any_of(node.gres.begin(), node.gres.end(), [&](const auto& g) {
    return g.name == "gpu" && g.type == type && !g.device_cores.empty();
  });
  int index = 0;
  for (const auto& g : node.gres) {
    if (g.name != "gpu") continue;
    const bool match = g.type == type;
    for (int64_t k = 0; k < g.count && index < total; ++k, ++index) {
      if (!match || !free(index)) continue;
      out->gpu_indices.push_back(index);
      if (!affinity && static_cast<int64_t>(out->gpu_indices.size()) == share.gpus) return;
    }
  }
  if (affinity) KeepNearTogether(node, share.gpus, &out->gpu_indices);
  if (static_cast<int64_t>(out->gpu_indices.size()) > share.gpus) {
    out->gpu_indices.resize(static_cast<size_t>(share.gpus));
  }
}

}  // namespace muster::sched

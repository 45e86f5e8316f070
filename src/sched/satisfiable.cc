// CheckSatisfiable: could some set of the partition's configured nodes ever
// run the job (ignoring use and node state)? Slurm answers such a job at
// submission with "Requested node configuration is not available", after a
// line of its own when the CPUs or the memory asked per node exceed every
// node ("CPU count per node can not be satisfied", "Memory specification
// can not be satisfied"); Muster gives the same lines and a detail naming
// the resource, the request and the best the partition offers.
//
// Checks, in order (the first that fails is reported):
//   bad input Slurm names on its own: -w/-x names not in the configuration
//   ("Invalid node name specified"), a GRES the cluster does not have
//   ("Invalid generic resource (gres) specification"), a feature no node of
//   the cluster has ("Invalid feature specification");
//   then, per partition: CPUs per node, memory per node, GPU type, GPUs per
//   node, other GRES per node, node count, -w nodes outside the partition,
//   features, CPU and GPU totals when spreading; then the same maxima over
//   only the nodes matching -C/-x/--gres; finally a placement on the idle
//   partition, for combinations no single maximum shows.
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "sched/pipeline.h"
#include "util/strings.h"

namespace muster::sched {
namespace {

constexpr const char* kUnavailableMsg = "Requested node configuration is not available";

// Tasks the busiest node must hold, and the GPUs it must offer.
int64_t PerNodeTasks(const ResourceRequest& r) {
  if (r.ntasks_per_node > 0) return r.ntasks_per_node;
  if (!r.ntasks_set) return 1;
  if (r.min_nodes == r.max_nodes) return (r.ntasks + r.min_nodes - 1) / r.min_nodes;
  return 1;
}

int64_t PerNodeGpus(const ResourceRequest& r) {
  int64_t g = r.gpus_per_node;
  if (r.gpus_per_job > 0 && r.min_nodes == r.max_nodes) {
    g += (r.gpus_per_job + r.min_nodes - 1) / r.min_nodes;
  }
  return g;
}

std::string GresLabel(const ResourceRequest& r) {
  return r.gpu_type.empty() ? "gres/gpu" : "gres/gpu:" + r.gpu_type;
}

std::string FeatureGroup(const std::vector<std::string>& group, const char* sep) {
  return util::Join(group, sep);
}

// The maxima and totals checks over a set of nodes. `most` completes "the
// most <most> has"; `where` and `suffix` complete "<where> has N<suffix>".
// Returns the detail line of the first failing check, or "".
std::string CheckMaxima(const ResourceRequest& r, NodeConfigs nodes, const std::string& most,
                        const std::string& where, const std::string& suffix) {
  const auto n_nodes = static_cast<int64_t>(nodes.size());
  if (n_nodes == 0) {
    return "nodes: requested " + std::to_string(r.min_nodes) + ", " + where + " has 0" + suffix;
  }
  int max_cpus = 0;
  int64_t max_mem = 0, max_gpus = 0, sum_cpus = 0, sum_gpus = 0, any_gpus = 0;
  for (const core::NodeConfig* n : nodes) {
    max_cpus = std::max(max_cpus, n->cpus);
    max_mem = std::max(max_mem, n->real_memory_mb);
    const int64_t g = GpuCountOfType(*n, r.gpu_type);
    max_gpus = std::max(max_gpus, g);
    sum_cpus += n->cpus;
    sum_gpus += g;
    any_gpus += GpuCount(*n);
  }
  const int64_t gpn = PerNodeGpus(r);
  const int64_t for_gpus = gpn * r.cpus_per_gpu;
  const int64_t cpn = std::max<int64_t>(PerNodeTasks(r) * r.cpus_per_task, for_gpus);
  if (cpn > max_cpus) {
    return "cpus: requested " + std::to_string(cpn) + " per node" +
           (cpn == for_gpus ? " (" + std::to_string(gpn) + " GPUs x --cpus-per-gpu=" +
                                  std::to_string(r.cpus_per_gpu) + ")"
                            : std::string()) +
           ", the most " + most + " has is " + std::to_string(max_cpus);
  }
  if (!r.whole_node_mem) {
    const int64_t mem = r.mem_per_gpu_mb > 0    ? r.mem_per_gpu_mb * gpn
                        : r.mem_per_node_mb > 0 ? r.mem_per_node_mb
                                                : r.mem_per_cpu_mb * cpn;
    if (mem > max_mem) {
      return "memory: requested " + std::to_string(mem) + "M per node, the most " + most +
             " has is " + std::to_string(max_mem) + "M";
    }
  }
  const bool wants_gpus = r.gpus_per_node > 0 || r.gpus_per_job > 0;
  if (wants_gpus && !r.gpu_type.empty() && max_gpus == 0 && any_gpus > 0) {
    std::vector<std::string> types;
    for (const core::NodeConfig* n : nodes) {
      for (const auto& g : n->gres) {
        if (g.name == "gpu" && !g.type.empty()) types.push_back(g.type);
      }
    }
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    return GresLabel(r) + ": no node in " + where + suffix + " has GPUs of type " + r.gpu_type +
           "; types there: " +
           (types.empty() ? std::string("untyped only") : util::Join(types, ","));
  }
  if (wants_gpus && gpn > max_gpus) {
    return GresLabel(r) + ": requested " + std::to_string(std::max<int64_t>(gpn, 1)) +
           " per node, the most " + most + " has is " + std::to_string(max_gpus);
  }
  for (const auto& want : r.other_gres) {
    int64_t best = 0;
    for (const core::NodeConfig* n : nodes) {
      int64_t have = 0;
      for (const auto& g : n->gres) {
        if (g.name == want.name && (want.type.empty() || g.type == want.type)) have += g.count;
      }
      best = std::max(best, have);
    }
    if (want.count > best) {
      std::string label = "gres/" + want.name + (want.type.empty() ? "" : ":" + want.type);
      if (best == 0) return label + ": no node in " + where + suffix + " has " + label;
      return label + ": requested " + std::to_string(want.count) + " per node, the most " + most +
             " has is " + std::to_string(best);
    }
  }
  if (r.min_nodes > n_nodes) {
    return "nodes: requested " + std::to_string(r.min_nodes) + ", " + where + " has " +
           std::to_string(n_nodes) + suffix;
  }
  if (r.ntasks_set && static_cast<int64_t>(r.ntasks) * r.cpus_per_task > sum_cpus) {
    return "cpus: requested " + std::to_string(static_cast<int64_t>(r.ntasks) * r.cpus_per_task) +
           " in total, " + where + " has " + std::to_string(sum_cpus) + suffix;
  }
  const int64_t total_gpus = r.gpus_per_job + r.gpus_per_node * r.min_nodes;
  if (wants_gpus && total_gpus > sum_gpus) {
    return GresLabel(r) + ": requested " + std::to_string(total_gpus) + " in total, " + where +
           " has " + std::to_string(sum_gpus) + suffix;
  }
  return "";
}

// The line Slurm prints before "Requested node configuration is not
// available" for the per-node maxima it checks first, as observed on the
// 22.05 oracle (32-CPU, 64000 MB nodes): the CPUs a node must give
// explicitly (-c 33, --ntasks-per-node=33, --ntasks-per-node=2 -c 17; not
// -N 1 -n 33, whose per-node share Slurm derives later), then the memory of
// --mem or of one CPU's --mem-per-cpu (--mem=64001, --mem-per-cpu=64001;
// not -c 2 --mem-per-cpu=32001). "" when neither exceeds the largest node.
std::string SlurmLine(const ResourceRequest& r, NodeConfigs nodes) {
  if (nodes.empty()) return "";
  int max_cpus = 0;
  int64_t max_mem = 0;
  for (const core::NodeConfig* n : nodes) {
    max_cpus = std::max(max_cpus, n->cpus);
    max_mem = std::max(max_mem, n->real_memory_mb);
  }
  const int64_t cpus = static_cast<int64_t>(std::max(r.ntasks_per_node, 1)) * r.cpus_per_task;
  if (cpus > max_cpus) return "CPU count per node can not be satisfied";
  if (!r.whole_node_mem && std::max(r.mem_per_node_mb, r.mem_per_cpu_mb) > max_mem) {
    return "Memory specification can not be satisfied";
  }
  return "";
}

// CheckSatisfiable for a request already built.
util::Status CheckRequest(const ResourceRequest& r, const core::Partition& part,
                          const config::Config& cfg, SubmitRefusal* why) {
  std::string* detail = &why->detail;
  // The cluster's nodes by name, and the partition's in Slurm's order.
  std::unordered_map<std::string_view, int> by_name;
  by_name.reserve(cfg.nodes.size());
  std::vector<const core::NodeConfig*> all;
  all.reserve(cfg.nodes.size());
  for (const auto& n : cfg.nodes) {
    if (by_name.emplace(n.name, static_cast<int>(all.size())).second) all.push_back(&n);
  }

  // Slurm: "Invalid node name specified" (sbatch -w gpu09).
  for (const auto* list : {&r.required_nodes, &r.excluded_nodes}) {
    for (const auto& name : *list) {
      if (!by_name.count(name)) {
        *detail = "nodes: " + name + " is not a node of this cluster";
        return util::InvalidArgument("Invalid node name specified");
      }
    }
  }
  // Slurm: "Invalid generic resource (gres) specification" (--gres=nic:1
  // where GresTypes has no nic).
  std::vector<std::string> gres_names;
  if (r.gpus_per_node > 0 || r.gpus_per_job > 0) gres_names.push_back("gpu");
  for (const auto& g : r.other_gres) gres_names.push_back(g.name);
  for (const auto& name : gres_names) {
    if (!cfg.HasGres(name)) {
      *detail = "gres/" + name + ": not a GRES of this cluster";
      return util::InvalidArgument("Invalid generic resource (gres) specification");
    }
  }
  // Slurm: "Invalid feature specification" (-C nosuch), but a feature that
  // exists elsewhere in the cluster is "not available" (-p train -C cpu).
  auto cluster_has_feature = [&](const std::string& f) {
    return std::any_of(all.begin(), all.end(),
                       [&](const core::NodeConfig* n) { return HasFeature(*n, f); });
  };
  for (const auto& f : r.features) {
    if (!cluster_has_feature(f)) {
      *detail = "features: no node in the cluster has feature '" + f + "'";
      return util::InvalidArgument("Invalid feature specification");
    }
  }
  for (const auto& group : r.feature_any) {
    if (std::none_of(group.begin(), group.end(), cluster_has_feature)) {
      *detail = "features: no node in the cluster has any of '" + FeatureGroup(group, "|") + "'";
      return util::InvalidArgument("Invalid feature specification");
    }
  }
  for (const auto& c : r.feature_counts) {
    for (const auto& f : c.names) {
      if (!cluster_has_feature(f)) {
        *detail = "features: no node in the cluster has feature '" + f + "'";
        return util::InvalidArgument("Invalid feature specification");
      }
    }
  }

  std::vector<int> members;
  members.reserve(part.nodes.size());
  for (const auto& name : part.nodes) {
    auto it = by_name.find(name);
    if (it != by_name.end()) members.push_back(it->second);
  }
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  std::vector<const core::NodeConfig*> nodes;
  nodes.reserve(members.size());
  for (int i : members) nodes.push_back(all[i]);

  // From here on every refusal is Slurm's "not available", with its line.
  auto unavailable = [why, line = SlurmLine(r, nodes)] {
    why->slurm_line = line;
    return util::Unavailable(kUnavailableMsg);
  };
  const std::string where = "partition " + part.name;
  const std::string most = "any node in " + where;
  *detail = CheckMaxima(r, nodes, most, where, "");
  if (!detail->empty()) return unavailable();

  for (const auto& name : r.required_nodes) {
    const int i = by_name.at(name);
    if (!std::binary_search(members.begin(), members.end(), i)) {
      *detail = "nodes: " + name + " (-w) is not in " + where;
      return unavailable();
    }
  }
  for (const auto& f : r.features) {
    if (std::none_of(nodes.begin(), nodes.end(),
                     [&](const core::NodeConfig* n) { return HasFeature(*n, f); })) {
      *detail = "features: no node in " + where + " has feature '" + f + "'";
      return unavailable();
    }
  }
  for (const auto& group : r.feature_any) {
    auto has_any = [&](const core::NodeConfig* n) {
      return std::any_of(group.begin(), group.end(),
                         [&](const std::string& f) { return HasFeature(*n, f); });
    };
    if (std::none_of(nodes.begin(), nodes.end(), has_any)) {
      *detail = "features: no node in " + where + " has any of '" + FeatureGroup(group, "|") + "'";
      return unavailable();
    }
  }

  for (const auto& c : r.feature_counts) {
    const auto meeting = std::count_if(nodes.begin(), nodes.end(), [&](const core::NodeConfig* n) {
      return MeetsCount(*n, c);
    });
    if (meeting < c.count) {
      *detail = fmt::format("features: '{}*{}' needs {} nodes, {} has {}",
                            FeatureGroup(c.names, c.any ? "|" : "&"), c.count, c.count, where,
                            meeting);
      return unavailable();
    }
  }

  // The same maxima over the nodes the job's predicates allow.
  NodeMatch m;
  m.request = &r;
  for (const auto& name : r.excluded_nodes) m.excluded.push_back(by_name.at(name));
  for (const auto& name : r.required_nodes) m.required.push_back(by_name.at(name));
  std::sort(m.excluded.begin(), m.excluded.end());
  std::sort(m.required.begin(), m.required.end());
  std::vector<const core::NodeConfig*> matching;
  for (int i : members) {
    if (FilterNodeMatch(m, *all[i], i).ok()) matching.push_back(all[i]);
  }
  if (matching.size() != nodes.size()) {
    if (!r.features.empty() && matching.empty() && r.excluded_nodes.empty() &&
        r.other_gres.empty()) {
      *detail =
          "features: no node in " + where + " has all of '" + FeatureGroup(r.features, "&") + "'";
      return unavailable();
    }
    *detail =
        CheckMaxima(r, matching, most + " matching -C/-x/--gres", where, " matching -C/-x/--gres");
    if (!detail->empty()) return unavailable();
  }

  // Finally: would the idle partition take it? (E.g. the node with enough
  // CPUs is not the one with the GPUs.)
  Overlay empty = Overlay::Empty(all);
  SortByWeight(all, &members);
  SelectScratch scratch;
  std::vector<core::NodeAlloc> alloc;
  if (!SelectNodes(m, all, empty, members, &scratch, &alloc)) {
    *detail = "resources: no set of nodes in " + where +
              " can hold the job's CPUs, memory and GPUs together";
    return unavailable();
  }
  return util::Status::Ok();
}

}  // namespace

util::Status CheckSatisfiable(const core::JobRequest& req, const core::Partition& part,
                              const config::Config& cfg, SubmitRefusal* why,
                              SatisfiableCache* cache) {
  SubmitRefusal ignored;
  if (why == nullptr) why = &ignored;
  *why = SubmitRefusal{};
  std::string* detail = &why->detail;
  RequestError kind;
  auto rr = BuildResourceRequest(req, cfg.def_mem_per_cpu_mb, &kind);
  if (!rr.ok()) {
    *detail = rr.status().message();
    // sbatch -N 1 -n 3 --ntasks-per-node=2: Slurm reports the node
    // configuration, not the options.
    if (kind == RequestError::kCounts) return util::Unavailable(kUnavailableMsg);
    return rr.status();
  }
  const ResourceRequest& r = *rr;
  if (cache == nullptr) return CheckRequest(r, part, cfg, why);
  std::string key = part.name + "|" + RequestKey(r);
  auto known = cache->verdicts.find(key);
  if (known == cache->verdicts.end()) {
    // (A bound no real cluster's variety of requests reaches.)
    if (cache->verdicts.size() >= SatisfiableCache::kMaxVerdicts) cache->verdicts.clear();
    SubmitRefusal refusal;
    util::Status st = CheckRequest(r, part, cfg, &refusal);
    known = cache->verdicts.try_emplace(std::move(key), std::move(st), std::move(refusal)).first;
  }
  *why = known->second.second;
  return known->second.first;
}

}  // namespace muster::sched

// MakeResourceRequest: sbatch's -N/-n/--ntasks-per-node/-c/--mem/--gres/
// --gpus/-C/-w/-x reduced to the numbers placement works with. The rules
// mirror Slurm 22.05 (man sbatch, and what sbatch --test-only answers on
// the oracle cluster):
//   -n 64 on 32-CPU nodes spreads over 2 nodes; -N 2 -n 1 is lowered to one
//   node ("can't run 1 processes on 2 nodes, setting nnodes to 1");
//   -n 5 --ntasks-per-node=2 takes 3 nodes; -w gpu[01-02] implies -N 2 and
//   with -N 1 is "invalid number of nodes (-N 2-1)"; --gpus=12 without -N
//   spreads over as many nodes as it needs.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sched/pipeline.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::sched {
namespace {

using util::Status;

// A list of names in first-seen order without duplicates.
void AppendUnique(std::vector<std::string>* v, std::string name) {
  if (std::find(v->begin(), v->end(), name) == v->end()) v->push_back(std::move(name));
}

Status ExpandList(const std::string& expr, const char* option, std::vector<std::string>* out) {
  if (util::Trim(expr).empty()) return Status::Ok();
  auto hosts = util::ExpandHostlist(expr);
  if (!hosts.ok()) {
    return util::InvalidArgument(std::string(option) + ": " + hosts.status().message());
  }
  for (auto& h : *hosts) AppendUnique(out, std::move(h));
  return Status::Ok();
}

Status ParseGres(const std::vector<core::GresRequest>& gres, ResourceRequest* r) {
  bool have_gpu = false;
  for (const auto& g : gres) {
    if (g.count < 0) {
      return util::InvalidArgument("--gres: negative count for " + g.name);
    }
    if (g.count == 0) continue;  // "gpu:0" asks for nothing
    if (g.name == "gpu") {
      if (have_gpu && g.type != r->gpu_type) {
        return util::InvalidArgument("--gres/--gpus: GPUs of two types ('" + r->gpu_type +
                                     "' and '" + g.type + "') in one job are not supported");
      }
      have_gpu = true;
      r->gpu_type = g.type;
      (g.per_job ? r->gpus_per_job : r->gpus_per_node) += g.count;
      continue;
    }
    auto same = std::find_if(
        r->other_gres.begin(), r->other_gres.end(),
        [&](const core::GresRequest& o) { return o.name == g.name && o.type == g.type; });
    if (same != r->other_gres.end()) {
      same->count += g.count;
    } else {
      r->other_gres.push_back(g);
      r->other_gres.back().per_job = false;
    }
  }
  return Status::Ok();
}

std::string NodeRange(int lo, int hi) {
  return "invalid number of nodes (-N " + std::to_string(lo) + "-" + std::to_string(hi) + ")";
}

}  // namespace

// -C: "a&b", "a,b" (all required) or "a|b" (any one). Slurm's bracketed
// and counted forms ("[a|b]", "a*2") are not supported yet and say so.
util::Status ParseConstraint(std::string_view text, ResourceRequest* r) {
  std::string_view s = util::Trim(text);
  if (s.empty()) return util::Status::Ok();
  if (s.find_first_of("[]()*") != std::string_view::npos) {
    return util::InvalidArgument("unsupported --constraint syntax '" + std::string(s) +
                                 "': only '&', ',' and '|' are supported");
  }
  bool has_and = s.find_first_of("&,") != std::string_view::npos;
  bool has_or = s.find('|') != std::string_view::npos;
  if (has_and && has_or) {
    return util::InvalidArgument("--constraint '" + std::string(s) +
                                 "': mixing '&' and '|' is not supported");
  }
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find_first_of(has_or ? "|" : "&,", start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view name = util::Trim(s.substr(start, end - start));
    if (name.empty()) {
      return util::InvalidArgument("--constraint '" + std::string(s) + "': empty feature name");
    }
    AppendUnique(&names, std::string(name));
    start = end + 1;
  }
  if (has_or && names.size() > 1) {
    r->feature_any.push_back(std::move(names));
  } else {
    for (auto& n : names) AppendUnique(&r->features, std::move(n));
  }
  return util::Status::Ok();
}

util::Result<ResourceRequest> BuildResourceRequest(const core::JobRequest& req,
                                                   int64_t def_mem_per_cpu_mb, RequestError* kind) {
  *kind = RequestError::kMalformed;
  ResourceRequest r;
  if (req.min_nodes < 0 || req.max_nodes < 0) {
    return util::InvalidArgument("invalid number of nodes");
  }
  if (req.ntasks < 0) return util::InvalidArgument("invalid number of tasks (-n)");
  if (req.ntasks_per_node < 0) return util::InvalidArgument("invalid --ntasks-per-node");
  if (req.cpus_per_task < 1) return util::InvalidArgument("invalid --cpus-per-task");
  r.cpus_per_task = req.cpus_per_task;
  r.ntasks_per_node = req.ntasks_per_node;
  r.exclusive = req.exclusive;

  // Memory: --mem (per node), --mem-per-cpu, --mem-per-gpu, else
  // DefMemPerCPU, else the whole node (Slurm's behaviour without
  // DefMemPerCPU); --mem=0 = whole node.
  const int mem_options = (req.mem_per_node_mb > 0 || req.mem_whole_node ? 1 : 0) +
                          (req.mem_per_cpu_mb > 0 ? 1 : 0) + (req.mem_per_gpu_mb > 0 ? 1 : 0);
  if (mem_options > 1) {
    return util::InvalidArgument("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  }
  if (req.cpus_per_gpu < 0 || req.mem_per_gpu_mb < 0) {
    return util::InvalidArgument("invalid --cpus-per-gpu or --mem-per-gpu");
  }
  if (req.cpus_per_gpu > 0 && req.cpus_per_task_set) {
    return util::InvalidArgument("--cpus-per-gpu is mutually exclusive with --cpus-per-task");
  }
  r.cpus_per_gpu = req.cpus_per_gpu;
  if (req.mem_per_gpu_mb > 0) {
    r.mem_per_gpu_mb = req.mem_per_gpu_mb;
  } else if (req.mem_whole_node) {
    r.whole_node_mem = true;
  } else if (req.mem_per_node_mb > 0) {
    r.mem_per_node_mb = req.mem_per_node_mb;
  } else if (req.mem_per_cpu_mb > 0) {
    r.mem_per_cpu_mb = req.mem_per_cpu_mb;
  } else if (def_mem_per_cpu_mb > 0) {
    r.mem_per_cpu_mb = def_mem_per_cpu_mb;
  } else {
    r.whole_node_mem = true;
  }

  MUSTER_RETURN_IF_ERROR(ParseGres(req.gres, &r));
  if (r.mem_per_gpu_mb > 0 && r.gpus_per_node == 0 && r.gpus_per_job == 0) {
    return util::InvalidArgument(
        fmt::format("Requested mem_per_tres=gres:gpu:{} but did not request any GPU.",
                    r.mem_per_gpu_mb));
  }
  MUSTER_RETURN_IF_ERROR(ParseConstraint(req.constraint, &r));
  MUSTER_RETURN_IF_ERROR(ExpandList(req.nodelist, "-w/--nodelist", &r.required_nodes));
  MUSTER_RETURN_IF_ERROR(ExpandList(req.exclude, "-x/--exclude", &r.excluded_nodes));
  for (const auto& n : r.required_nodes) {
    if (std::find(r.excluded_nodes.begin(), r.excluded_nodes.end(), n) != r.excluded_nodes.end()) {
      return util::InvalidArgument("node " + n + " is both required (-w) and excluded (-x)");
    }
  }

  // Node count and tasks.
  const bool nodes_given = req.min_nodes > 0;
  const int npn = req.ntasks_per_node;
  int min_nodes = nodes_given ? req.min_nodes : 1;
  // The most -N allows (0 = -N not given).
  int hi = nodes_given ? std::max(req.min_nodes, req.max_nodes) : 0;
  if (nodes_given && req.max_nodes > 0 && req.max_nodes < req.min_nodes) {
    return util::InvalidArgument(NodeRange(req.min_nodes, req.max_nodes));
  }
  int max_nodes = 0;
  *kind = RequestError::kCounts;
  if (req.ntasks > 0) {
    r.ntasks_set = true;
    r.ntasks = req.ntasks;
    if (nodes_given && min_nodes > r.ntasks) {
      // sbatch: "can't run 1 processes on 2 nodes, setting nnodes to 1".
      min_nodes = r.ntasks;
      hi = std::min(hi, r.ntasks);
    }
    if (npn > 0) {
      int need = (r.ntasks + npn - 1) / npn;
      if (nodes_given && need > hi) {
        return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) +
                                     " with --ntasks-per-node=" + std::to_string(npn) + " needs " +
                                     std::to_string(need) + " nodes, but -N allows at most " +
                                     std::to_string(hi));
      }
      min_nodes = std::max(min_nodes, need);
      max_nodes = nodes_given ? hi : need;
    } else {
      max_nodes = nodes_given ? hi : r.ntasks;  // -n alone may spread
    }
  } else {
    r.ntasks_set = false;
    if (!nodes_given && r.gpus_per_job > 0) {
      // --gpus=N alone: as many nodes as the GPUs need, at most N.
      max_nodes = static_cast<int>(std::min<int64_t>(r.gpus_per_job, 1 << 20));
    } else {
      max_nodes = nodes_given ? hi : 1;
    }
  }

  // -w names nodes that must all be in the allocation.
  int named = static_cast<int>(r.required_nodes.size());
  if (named > min_nodes) {
    if (nodes_given && hi < named) {
      *kind = RequestError::kMalformed;
      return util::InvalidArgument(NodeRange(named, hi));
    }
    if (r.ntasks_set && r.ntasks < named) {
      return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) + " is less than the " +
                                   std::to_string(named) + " nodes named by -w");
    }
    min_nodes = named;
    max_nodes = std::max(max_nodes, named);
  }
  if (npn > 0 && r.ntasks_set && static_cast<int64_t>(max_nodes) * npn < r.ntasks) {
    return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) +
                                 " is more than --ntasks-per-node=" + std::to_string(npn) + " on " +
                                 std::to_string(max_nodes) + " node(s)");
  }
  r.min_nodes = min_nodes;
  r.max_nodes = std::max(max_nodes, min_nodes);
  if (!r.ntasks_set) r.ntasks = r.min_nodes * std::max(npn, 1);
  *kind = RequestError::kNone;
  return r;
}

util::Result<ResourceRequest> MakeResourceRequest(const core::JobRequest& req,
                                                  int64_t def_mem_per_cpu_mb) {
  RequestError kind;
  return BuildResourceRequest(req, def_mem_per_cpu_mb, &kind);
}

}  // namespace muster::sched

#include "cli/srun_env.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

// A positive count from the job's environment; 0 when absent or malformed.
int EnvCount(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return 0;
  util::Result<int64_t> n = util::ParseInt(it->second);
  return n.ok() && *n > 0 && *n <= (1 << 30) ? static_cast<int>(*n) : 0;
}

}  // namespace

std::vector<std::string> ApplyJobDefaults(const EnvMap& env, SrunCounts* c) {
  std::vector<std::string> warnings;
  const bool npn_given = c->ntasks_per_node > 0;
  if (c->ntasks == 0) c->ntasks = EnvCount(env, "SLURM_NTASKS");
  if (c->nodes == 0) c->nodes = EnvCount(env, "SLURM_NNODES");
  if (c->ntasks > 0 && c->nodes > c->ntasks) {
    warnings.push_back(fmt::format("can't run {} processes on {} nodes, setting nnodes to {}",
                                   c->ntasks, c->nodes, c->ntasks));
    c->nodes = c->ntasks;
  }
  if (!npn_given) c->ntasks_per_node = EnvCount(env, "SLURM_NTASKS_PER_NODE");
  if (c->ntasks_per_node > 0 && c->ntasks > 0 && c->nodes > 0 &&
      static_cast<int64_t>(c->ntasks_per_node) * c->nodes != c->ntasks) {
    if (npn_given) {
      warnings.push_back(fmt::format(
          "can't honor --ntasks-per-node set to {} which doesn't match the requested tasks {} "
          "with the number of requested nodes {}. Ignoring --ntasks-per-node.",
          c->ntasks_per_node, c->ntasks, c->nodes));
    }
    c->ntasks_per_node = 0;
  }
  return warnings;
}

void Distribute(StepView* step, bool cyclic) {
  for (StepNodeView& n : step->nodes) {
    n.ranks.clear();
    for (int k = 0; k < n.tasks; ++k) {
      if (!cyclic) n.ranks.push_back(n.first_task + k);
    }
  }
  if (!cyclic) return;
  int rank = 0;
  for (bool placed = true; placed;) {
    placed = false;
    for (StepNodeView& n : step->nodes) {
      if (static_cast<int>(n.ranks.size()) < n.tasks) {
        n.ranks.push_back(rank++);
        placed = true;
      }
    }
  }
}

bool ParseDistribution(const std::string& spec, bool* cyclic) {
  std::vector<std::string> levels = util::Split(spec, ':');
  if (levels.empty() || levels.size() > 3) return false;
  if (levels[0] != "block" && levels[0] != "cyclic" && levels[0] != "*") return false;
  for (size_t i = 1; i < levels.size(); ++i) {
    if (levels[i] != "block" && levels[i] != "cyclic" && levels[i] != "fcyclic" &&
        levels[i] != "*") {
      return false;
    }
  }
  *cyclic = levels[0] == "cyclic";
  return true;
}

EnvMap StepEnvironment(const EnvMap& job_env, const StepView& step, unsigned umask) {
  EnvMap env = job_env;
  std::vector<int> tasks;
  for (const StepNodeView& n : step.nodes) tasks.push_back(n.tasks);
  const std::string nodes = std::to_string(step.nodes.size());
  const std::string ntasks = std::to_string(step.ntasks);
  const std::string per_node = util::CompressCounts(tasks);
  env["SLURM_STEP_ID"] = env["SLURM_STEPID"] = std::to_string(step.step_id);
  env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = env["SLURM_STEP_NUM_TASKS"] = ntasks;
  env["SLURM_STEP_NUM_NODES"] = env["SLURM_NNODES"] = nodes;
  env["SLURM_STEP_NODELIST"] = step.nodelist;
  env["SLURM_STEP_TASKS_PER_NODE"] = env["SLURM_TASKS_PER_NODE"] = per_node;
  std::string distribution = step.distribution;
  if (distribution.empty()) {
    distribution = step.ntasks > static_cast<int>(step.nodes.size()) ? "block" : "cyclic";
  }
  env["SLURM_DISTRIBUTION"] = std::move(distribution);
  if (auto cpus = job_env.find("SLURM_JOB_CPUS_PER_NODE"); cpus != job_env.end()) {
    // Heterogeneous jobs' naming, set for every job by srun 22.05.
    env["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"] = cpus->second;
  }
  env["SLURM_UMASK"] = fmt::format("{:04o}", umask & 07777);
  // srun's log level (info); -v would raise it, which Muster's srun ignores.
  env["SRUN_DEBUG"] = "3";
  return env;
}

EnvMap TaskEnvironment(const EnvMap& step_env, const StepView& step, size_t node_index,
                       int local_id) {
  EnvMap env = step_env;
  const StepNodeView& n = step.nodes.at(node_index);
  std::vector<int> ranks(static_cast<size_t>(std::max(n.tasks, 0)));
  for (size_t k = 0; k < ranks.size(); ++k) ranks[k] = n.Rank(static_cast<int>(k));
  std::sort(ranks.begin(), ranks.end());
  env["SLURM_PROCID"] = std::to_string(n.Rank(local_id));
  env["SLURM_LOCALID"] = std::to_string(local_id);
  env["SLURM_NODEID"] = std::to_string(node_index);
  env["SLURM_GTIDS"] = util::JoinInts(ranks);
  env["SLURMD_NODENAME"] = env["SLURM_TOPOLOGY_ADDR"] = n.node;
  env["SLURM_CPUS_ON_NODE"] = std::to_string(n.cpus);
  if (!n.gpus.empty()) {
    // The task's share of the step's GPUs there, as positions in n.gpus.
    size_t from = 0;
    size_t to = n.gpus.size();
    if (step.gpus_per_task > 0) {
      from = std::min(n.gpus.size(), static_cast<size_t>(local_id) * static_cast<size_t>(step.gpus_per_task));
      to = std::min(n.gpus.size(), from + static_cast<size_t>(step.gpus_per_task));
      env["SLURM_GPUS_PER_TASK"] = std::to_string(step.gpus_per_task);
    }
    std::vector<std::string> mine;
    for (size_t k = from; k < to; ++k) {
      mine.push_back(k < n.gpu_names.size() ? n.gpu_names[k] : std::to_string(n.gpus[k]));
    }
    const std::string list = util::Join(mine, ",");
    env["CUDA_VISIBLE_DEVICES"] = env["GPU_DEVICE_ORDINAL"] = list;
    env["ROCR_VISIBLE_DEVICES"] = env["ZE_AFFINITY_MASK"] = list;
    env["SLURM_STEP_GPUS"] = util::JoinInts(n.gpus);
    env["SLURM_GPUS_ON_NODE"] = std::to_string(n.gpus.size());
  }
  return env;
}

}  // namespace muster::cli

// The pure parts of srun inside a batch job: the counts it takes from the
// job's environment when its options leave them out, and the environment
// each task starts with, as Slurm 22.05's srun sets them (compared with
// `srun env` inside jobs on the oracle).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace muster::cli {

using EnvMap = std::map<std::string, std::string>;

// srun's -n, -N and --ntasks-per-node; 0 = not given.
struct SrunCounts {
  int ntasks = 0;
  int nodes = 0;
  int ntasks_per_node = 0;
};

// Fills what the options left out from the job's SLURM_NTASKS, SLURM_NNODES
// and SLURM_NTASKS_PER_NODE, as Slurm's srun does. Returns the warnings to
// print ("can't run 1 processes on 2 nodes, setting nnodes to 1", when there
// are fewer tasks than nodes; "can't honor --ntasks-per-node ...", when a
// --ntasks-per-node given on the command line does not match the tasks and
// nodes, which drops it). A SLURM_NTASKS_PER_NODE inherited from the job
// that does not match is dropped without a word.
std::vector<std::string> ApplyJobDefaults(const EnvMap& env, SrunCounts* counts);

// One node of a created step, as musterd laid it out.
struct StepNodeView {
  std::string node;
  int tasks = 0;
  int first_task = 0;
  int cpus = 0;  // the job's CPUs there (SLURM_CPUS_ON_NODE)
  std::vector<int> gpus;
  // What CUDA_VISIBLE_DEVICES calls the job's GPUs there, in the order of
  // gpus before srun takes fewer (musterd's: a MIG UUID, or 0.. under
  // ConstrainDevices); empty: their indices.
  std::vector<std::string> gpu_names;
  // The global ranks of its tasks, by local id: first_task onwards (block),
  // unless Distribute() dealt them out cyclically.
  std::vector<int> ranks;
  // The part of a heterogeneous step (srun's ':' groups) it belongs to.
  int part = 0;

  int Rank(int local_id) const {
    return static_cast<size_t>(local_id) < ranks.size() ? ranks[static_cast<size_t>(local_id)]
                                                         : first_task + local_id;
  }
};

struct StepView {
  int step_id = 0;
  int ntasks = 0;
  // srun -m: "block" or "cyclic" (SLURM_DISTRIBUTION, as given, with a
  // second level such as "cyclic:block"); empty: srun's default.
  std::string distribution;
  // --gpus-per-task: each task sees its own that many of its node's GPUs
  // (Slurm's implied --gpu-bind=per_task); 0: every task sees them all.
  int gpus_per_task = 0;
  std::string nodelist;
  std::vector<StepNodeView> nodes;
};

// srun -m's first level: cyclic deals rank r to the r-th node with room
// left, round and round (as the oracle: 4,1 tasks on two nodes give ranks
// 0,2,3,4 and 1); block keeps each node's ranks consecutive.
void Distribute(StepView* step, bool cyclic);

// Whether srun takes `spec` for -m (block|cyclic, optionally
// ":block|cyclic|fcyclic" and a third level); cyclic in *cyclic.
bool ParseDistribution(const std::string& spec, bool* cyclic);

// The variables every task of the step shares, over the job's environment
// `job_env`: SLURM_STEP_*, SLURM_NTASKS / SLURM_NPROCS, SLURM_NNODES and
// SLURM_TASKS_PER_NODE of the step, SLURM_DISTRIBUTION (-m as given, or
// block when the step has more tasks than nodes, else cyclic, srun's default),
// SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0, SLURM_UMASK (`umask`, e.g. 022)
// and SRUN_DEBUG.
EnvMap StepEnvironment(const EnvMap& job_env, const StepView& step, unsigned umask);

// One task's environment: `step_env` plus its ranks (SLURM_PROCID,
// SLURM_LOCALID, SLURM_NODEID, SLURM_GTIDS = the ranks on its node), its
// node (SLURMD_NODENAME, SLURM_TOPOLOGY_ADDR, SLURM_CPUS_ON_NODE) and the
// node's GPUs (CUDA_VISIBLE_DEVICES and its AMD/Intel twins, SLURM_STEP_GPUS,
// SLURM_GPUS_ON_NODE).
EnvMap TaskEnvironment(const EnvMap& step_env, const StepView& step, size_t node_index,
                       int local_id);

}  // namespace muster::cli

// How an srun step inside a job spreads its tasks over the job's
// allocation: Slurm 22.05's default (block) step layout, as the oracle
// shows it. Pure; no state.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "util/status.h"

namespace muster::sched {

// What srun asked for; 0 = not given.
struct StepRequest {
  int ntasks = 0;
  int nodes = 0;
  int ntasks_per_node = 0;
  // srun -c. Slurm 22.05's srun does not take SLURM_CPUS_PER_TASK from the
  // job, so a step counts one CPU per task unless -c says otherwise.
  int cpus_per_task = 1;
  // srun -w: nodes of the job the step must include (as many as its node
  // count allows); the others are the job's first ones, as Slurm's.
  std::vector<std::string> nodelist;
};

// One node of the step: the index of its share in the job's allocation,
// its tasks and the rank of the first.
struct StepNode {
  int alloc_index = 0;
  int tasks = 0;
  int first_task = 0;
};

struct StepLayout {
  int ntasks = 0;
  std::vector<StepNode> nodes;  // in allocation order
};

// Lays a step out over the first nodes of `alloc` (in order), one node per
// task at most. Defaults: ntasks = ntasks_per_node x nodes, else nodes, else
// `job_tasks`; nodes = enough for ntasks_per_node, else as many as the
// allocation has, up to ntasks. Each node's tasks are bounded by its CPUs
// (NodeAlloc::cpus / cpus_per_task). The tasks go in blocks (the first
// ntasks % nodes nodes one more, as `srun -n5` over CPUs 28,12 gives
// 3,2); a block larger than its node holds is cut to fit and the rest goes
// to the first nodes with room (over CPUs 3,1 srun -n4 gives 3,1, over 6,2
// 2,2). --ntasks-per-node puts that many on each node (the last the rest).
// Errors (Slurm's texts): "Requested node configuration is not available"
// for more nodes than the job has or than tasks, and "More processors
// requested than permitted" when the tasks do not fit the CPUs.
util::Result<StepLayout> LayoutStep(const std::vector<core::NodeAlloc>& alloc, int job_tasks,
                                    const StepRequest& request);

}  // namespace muster::sched

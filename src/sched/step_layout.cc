#include "sched/step_layout.h"

#include <algorithm>
#include <cstdint>

namespace muster::sched {
namespace {

constexpr const char* kNodesUnavailable = "Requested node configuration is not available";
constexpr const char* kTooManyTasks = "More processors requested than permitted";

// The counts srun leaves out, filled in as Slurm's srun does inside a job.
util::Status Resolve(int nalloc, int job_tasks, StepRequest* r) {
  if (r->nodes > nalloc) return util::InvalidArgument(kNodesUnavailable);
  if (r->ntasks == 0) {
    if (r->ntasks_per_node > 0) {
      r->ntasks = r->ntasks_per_node * (r->nodes > 0 ? r->nodes : nalloc);
    } else {
      r->ntasks = r->nodes > 0 ? r->nodes : job_tasks;
    }
  }
  if (r->nodes == 0) {
    r->nodes = r->ntasks_per_node > 0 ? (r->ntasks + r->ntasks_per_node - 1) / r->ntasks_per_node
                                      : std::min(nalloc, r->ntasks);
  }
  if (r->ntasks <= 0 || r->nodes <= 0 || r->nodes > nalloc || r->nodes > r->ntasks) {
    return util::InvalidArgument(kNodesUnavailable);
  }
  // (srun itself drops a --ntasks-per-node that does not match, with a
  // warning, before it asks.)
  if (r->ntasks_per_node > 0 &&
      static_cast<int64_t>(r->ntasks_per_node) * r->nodes < r->ntasks) {
    return util::InvalidArgument(kNodesUnavailable);
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<StepLayout> LayoutStep(const std::vector<core::NodeAlloc>& alloc, int job_tasks,
                                    const StepRequest& request) {
  StepRequest r = request;
  r.cpus_per_task = std::max(r.cpus_per_task, 1);
  MUSTER_RETURN_IF_ERROR(Resolve(static_cast<int>(alloc.size()), job_tasks, &r));
  const int n = r.nodes;
  std::vector<int> room(n), tasks(n);
  for (int j = 0; j < n; ++j) room[j] = alloc[j].cpus / r.cpus_per_task;
  int placed = 0;
  for (int j = 0; j < n; ++j) {
    const int block = r.ntasks_per_node > 0 ? std::min(r.ntasks_per_node, r.ntasks - placed)
                                            : r.ntasks / n + (j < r.ntasks % n ? 1 : 0);
    if (r.ntasks_per_node > 0 && block > room[j]) return util::InvalidArgument(kTooManyTasks);
    tasks[j] = std::min(block, room[j]);
    if (tasks[j] <= 0) return util::InvalidArgument(kTooManyTasks);
    placed += tasks[j];
  }
  // What did not fit its block goes to the first nodes with room left.
  for (int j = 0; j < n && placed < r.ntasks; ++j) {
    const int more = std::min(room[j] - tasks[j], r.ntasks - placed);
    tasks[j] += more;
    placed += more;
  }
  if (placed < r.ntasks) return util::InvalidArgument(kTooManyTasks);
  StepLayout out;
  out.ntasks = r.ntasks;
  int first = 0;
  for (int j = 0; j < n; ++j) {
    out.nodes.push_back(StepNode{j, tasks[j], first});
    first += tasks[j];
  }
  return out;
}

}  // namespace muster::sched

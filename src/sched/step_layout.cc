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
  // -w's nodes must be among the step's; they are the step's when the
  // counts do not say more.
  std::vector<bool> wanted(alloc.size(), false);
  int nwanted = 0;
  for (const std::string& name : r.nodelist) {
    auto it = std::find_if(alloc.begin(), alloc.end(),
                           [&](const core::NodeAlloc& a) { return a.node == name; });
    if (it == alloc.end()) return util::InvalidArgument(kNodesUnavailable);
    const size_t j = static_cast<size_t>(it - alloc.begin());
    if (!wanted[j]) ++nwanted;
    wanted[j] = true;
  }
  MUSTER_RETURN_IF_ERROR(Resolve(static_cast<int>(alloc.size()), job_tasks, &r));
  const int n = r.nodes;
  // The step's nodes in the allocation's order: the wanted ones first
  // (as many as fit), then the others.
  std::vector<int> usable;
  for (const bool wanted_pass : {true, false}) {
    if (wanted_pass && nwanted == 0) continue;
    for (int j = 0; j < static_cast<int>(alloc.size()); ++j) {
      if (wanted[static_cast<size_t>(j)] == wanted_pass && static_cast<int>(usable.size()) < n) {
        usable.push_back(j);
      }
    }
  }
  std::sort(usable.begin(), usable.end());
  std::vector<int> room(n), tasks(n);
  for (int j = 0; j < n; ++j) room[j] = alloc[usable[j]].cpus / r.cpus_per_task;
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
    out.nodes.push_back(StepNode{usable[j], tasks[j], first});
    first += tasks[j];
  }
  return out;
}

}  // namespace muster::sched

// The pure scheduling core. Given a snapshot of the cluster (nodes with
// their free resources, partitions, the queue in priority order) and "now",
// it returns a plan: which jobs start where (nodes, CPUs, memory, GPU
// indices) and, for every pending job not started, Slurm's reason. No I/O,
// no clock, no globals; deterministic for the same input.
//
// Policy for now (Slurm's main scheduler without backfill): jobs are tried
// in the order given; a job that cannot start for lack of resources blocks
// later jobs of the same partition (they get reason Priority), so a big job
// is not starved by small ones. Held jobs and jobs not yet eligible do not
// block. Each job is placed on the first nodes (config order, then Weight)
// that have the CPUs, memory and GPUs it asks for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/job.h"
#include "core/node.h"
#include "util/status.h"

namespace muster::sched {

// A job's request reduced to numbers the placement works with.
struct ResourceRequest {
  int min_nodes = 1;
  int max_nodes = 1;        // == min_nodes unless the job may spread (-n without -N)
  int ntasks = 1;
  int ntasks_per_node = 0;  // 0 = free distribution
  int cpus_per_task = 1;
  int64_t mem_per_node_mb = 0;  // exactly one of mem_per_node / mem_per_cpu is set
  int64_t mem_per_cpu_mb = 0;
  bool whole_node_mem = false;
  std::string gpu_type;      // "" = any
  int64_t gpus_per_node = 0;
  int64_t gpus_per_job = 0;  // --gpus=N, spread over nodes
  bool exclusive = false;
  std::vector<std::string> features;  // all required (-C a&b or a,b)
  std::vector<std::string> required_nodes;  // -w
  std::vector<std::string> excluded_nodes;  // -x
};

// Derives the request; `def_mem_per_cpu_mb` is DefMemPerCPU (0 = whole node).
util::Result<ResourceRequest> MakeResourceRequest(const core::JobRequest& req,
                                                  int64_t def_mem_per_cpu_mb);

struct Snapshot {
  const config::Config* config = nullptr;
  std::vector<const core::Node*> nodes;     // config order
  std::vector<const core::Job*> pending;    // priority order, state PENDING
  int64_t now = 0;
};

struct StartDecision {
  core::JobId job_id = 0;
  std::string partition;
  std::vector<core::NodeAlloc> alloc;  // in node order
};

struct PendingDecision {
  core::JobId job_id = 0;
  core::PendingReason reason = core::PendingReason::kNone;
};

struct Plan {
  std::vector<StartDecision> starts;
  std::vector<PendingDecision> pending;  // every pending job not started
};

// One scheduling pass.
Plan Schedule(const Snapshot& snapshot);

// Checks at submission that some set of nodes of the partition could ever run
// the job (ignoring what is in use and node state). On failure returns
// kUnavailable with message = Slurm's line ("Requested node configuration is
// not available") and `detail` filled with a line naming the resource, what
// was asked and the most any node offers, e.g. "gres/gpu: requested 16 per
// node, the most any node in partition gpu has is 8".
util::Status CheckSatisfiable(const core::JobRequest& req, const core::Partition& part,
                              const config::Config& cfg, std::string* detail);

}  // namespace muster::sched

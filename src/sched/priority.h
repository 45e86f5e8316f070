// A pending job's priority: the order the scheduler tries jobs in, and
// what squeue's PRIORITY and sprio show. Pure and deterministic.
//
// priority/basic (PriorityType unset, Slurm 22.05's default): first come
// first served, a fixed value counting down in submission order (an array
// shares its first id's), less the job's nice.
//
// priority/multifactor: the sum of each factor, in [0, 1], times its
// PriorityWeight*, less nice, truncated to a whole number of at least 1:
//   age        time eligible / PriorityMaxAge (1.0 from then on; 0 for a job
//              not yet eligible)
//   fairshare  the job's association's factor (sched/fairshare.h)
//   job size   (nodes asked / nodes of the cluster + CPUs asked / CPUs of
//              the cluster) / 2, as Slurm 22.05 computes it; one minus that
//              with PriorityFavorSmall=YES
//   partition  the partition's PriorityJobFactor / the highest of any
//   QOS        the job's QOS's Priority / the highest of any QOS (sacctmgr)
//   assoc      0: associations carry no priority of their own yet
//   TRES       for each PriorityWeightTRES entry, what the job asks of it /
//              the partition's total
// A job listing several partitions is weighed in the first one listed.
// An operator's scontrol update Priority=N replaces the computed value.
// Held jobs have priority 0; the controller sets that, not this.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/accounts.h"
#include "core/job.h"
#include "core/tres.h"
#include "sched/fairshare.h"

namespace muster::sched {

struct Snapshot;  // sched/scheduler.h

uint32_t BasicPriority(const core::Job& job);

struct PriorityFactors {
  double age = 0;
  double assoc = 0;
  double fairshare = 0;
  double job_size = 0;
  double partition = 0;
  double qos = 0;
  std::vector<double> tres;  // one per config PriorityWeightTRES entry
  int nice = 0;
  uint32_t priority = 0;  // the weighted sum, as above
};

class PriorityCalculator {
 public:
  // `shares` may be null (every fairshare factor is then 0), `accounts`
  // too (every job's QOS factor is then 0); they and `cfg` must outlive
  // the calculator.
  PriorityCalculator(const config::Config& cfg, const ShareTree* shares, int64_t now,
                     const core::AccountTable* accounts = nullptr);

  // The factors of a pending job under priority/multifactor.
  PriorityFactors Factors(const core::Job& job) const;

  // What the queue is sorted by: BasicPriority, or Factors(job).priority.
  uint32_t Priority(const core::Job& job) const;

 private:
  struct PartitionTotals {
    double partition_factor = 0;
    core::MemoryDefaults memory;  // what its jobs get when they do not say
    std::vector<double> tres;     // per weight_tres entry: the partition's total
  };
  const PartitionTotals* TotalsOf(const core::Job& job) const;

  const config::Config& cfg_;
  const ShareTree* shares_;
  int64_t now_;
  const core::AccountTable* accounts_;
  double max_qos_priority_ = 0;
  double total_nodes_ = 0;
  double total_cpus_ = 0;
  std::map<std::string, PartitionTotals> partitions_;
};

// The order jobs are tried in: by decreasing PriorityTier of their (first)
// partition, as Slurm evaluates higher tiers first, then decreasing
// priority, then increasing id.
void OrderByPriority(std::vector<const core::Job*>* jobs, const config::Config& cfg);

// The queue's order, decided in the core: each pending job's priority by
// the queue sort of the configuration (QueueSortFor: multifactor over
// `shares`, or basic), and snapshot->pending in OrderByPriority's order of
// those priorities. The caller stores them in its jobs before the pass
// (which reads them for bf_min_prio_reserve), and squeue and sprio show
// them.
struct JobPriority {
  core::JobId job_id = 0;
  uint32_t priority = 0;
};
std::vector<JobPriority> OrderQueue(Snapshot* snapshot, const ShareTree* shares);

}  // namespace muster::sched

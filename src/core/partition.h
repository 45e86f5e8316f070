// A partition: a named set of nodes with limits, as PartitionName= lines
// declare it. Value type owned by the configuration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tres.h"

namespace muster::core {

// State= of a partition. UP takes and runs jobs; DOWN takes jobs that wait
// (PartitionDown); DRAIN runs what it has and refuses new jobs; INACTIVE
// neither takes nor runs them (PartitionInactive).
enum class PartitionState { kUp, kDown, kDrain, kInactive };
// "UP", "DOWN", "DRAIN", "INACTIVE", as slurm.conf and scontrol write them.
std::string_view PartitionStateName(PartitionState s);
// Case-insensitive; nullopt for any other word.
std::optional<PartitionState> ParsePartitionState(std::string_view s);

// PreemptMode of a partition (or the cluster's default): what happens to
// its jobs when a job of a partition with a higher PriorityTier needs
// their resources (PreemptType=preempt/partition_prio).
enum class PreemptMode { kOff, kCancel, kRequeue };
std::string_view PreemptModeName(PreemptMode m);
// OFF, CANCEL or REQUEUE, any case; nullopt otherwise.
std::optional<PreemptMode> ParsePreemptMode(std::string_view s);

struct Partition {
  std::string name;
  std::string nodes_expr;           // as written, e.g. "gpu[01-04]" or "ALL"
  std::vector<std::string> nodes;   // expanded, config order
  bool is_default = false;
  int64_t max_time_s = -1;          // -1 = UNLIMITED
  int64_t default_time_s = -1;      // -1 = not set (falls back to max_time)
  PartitionState state = PartitionState::kUp;
  // Access lists, as configured (AllowGroups holds group names; the
  // scheduler resolves them to gids). Empty allow lists mean ALL. As in
  // Slurm, a Deny list is not enforced when the matching Allow list is set.
  std::vector<std::string> allow_groups;    // empty = ALL
  std::vector<std::string> allow_accounts;  // empty = ALL
  std::vector<std::string> deny_accounts;   // empty = none denied
  std::vector<std::string> allow_qos;       // empty = ALL; stored, not enforced yet
  std::vector<std::string> deny_qos;        // stored, not enforced yet
  // Hidden=YES: sinfo and `scontrol show partition` leave it out unless
  // -a/--all, -p naming it, or a privileged caller (root, SlurmUser).
  bool hidden = false;
  // OverSubscribe as scontrol prints it: NO, EXCLUSIVE, YES:<n>, FORCE:<n>.
  // Accepted and shown; jobs never share a CPU in Muster.
  std::string oversubscribe = "NO";
  // IdleGpuCancel=YES (Muster's own): the idle-GPU policy may cancel jobs
  // here (interactive partitions); elsewhere it only flags and reports.
  bool idle_gpu_cancel = false;
  int priority_tier = 1;
  int priority_job_factor = 1;
  // TRESBillingWeights, and as written ("" = unset: a job's billing is
  // its CPUs).
  std::vector<TresWeight> billing_weights;
  std::string billing_weights_text;
  int max_nodes = -1;               // -1 = UNLIMITED
  int min_nodes = 1;
  // PreemptMode= (unset: the cluster's) and GraceTime= (seconds a job it
  // preempts has between SIGTERM and its end).
  std::optional<PreemptMode> preempt_mode;
  int64_t grace_time_s = 0;
  // LLN=YES: jobs go to the least loaded nodes (as CR_LLN, this partition only).
  bool least_loaded = false;
};

}  // namespace muster::core

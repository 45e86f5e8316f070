// Submit-time partition decisions: which of the partitions a job asks for
// it may be queued in, or the line sbatch prints when it may not. Pure: the
// configuration, the request and an injected group lookup in, a list out;
// no I/O (group names are resolved through GroupLookup so tests need no
// /etc/group). Thread-safe in that it touches only its arguments.
//
// Observed on the Slurm 22.05 oracle (EnforcePartLimits=NO, partitions
// short MaxTime=4:00:00 on 6 nodes, train MaxTime=3-00:00:00), as root:
//   sbatch -p nosuch            -> "Invalid partition name specified", after
//                                  "invalid partition specified: nosuch"
//   sbatch -p short,nosuch      -> the same: one unknown name refuses all
//                                  (the line names the first unknown one)
//   sbatch -p "short, train"    -> the same (" train" is not a name)
//   sbatch -p ,                 -> the same, the line naming "(null)"
//   sbatch -p short,,train      -> accepted; empty items are skipped
//   sbatch -p short -t 5:00:00  -> accepted, pends PartitionTimeLimit
//   sbatch -p short -N 7        -> accepted, pends PartitionNodeLimit (more
//                                  nodes than the partition has counts as a
//                                  node limit, MaxNodes=UNLIMITED or not)
//   State=DRAIN or INACTIVE     -> sbatch -p train: "Required partition not
//                                  available (inactive or drain)"; with
//                                  -p short,train the job is queued in short
//                                  only (squeue %P shows "short")
//   State=DOWN                  -> accepted, kept in the list
//   AllowAccounts=ml, DenyAccounts=research, AllowGroups=daemon,adm: root
//   is never refused (slurm.conf(5): jobs of root or SlurmUser may use any
//   partition). The messages for other users come from Slurm's error table
//   (strings of libslurmfull): "Invalid account or account/partition
//   combination specified" and "User's group not permitted to use this
//   partition"; the oracle has no non-root user with an association.
//   With EnforcePartLimits=ALL/ANY (slurm.conf(5), not observable on the
//   oracle): a time over MaxTime is "Requested time limit is invalid
//   (missing or exceeds some limit)"; a node count outside MinNodes..MaxNodes
//   is "Node count specification invalid".
//   No -p and no Default=YES partition: "No partition specified or system
//   default partition".
//
// squeue while pending shows the partition list as the user wrote it after
// dropping refused partitions: `sbatch -p short,train` shows "short,train",
// `-p train,short` shows "train,short", `-p short,,train` "short,,train";
// once running, the partition the job started in ("train").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/job.h"
#include "core/partition.h"
#include "sched/refusal.h"
#include "util/status.h"

namespace muster::sched {

// Resolves a group name from AllowGroups to its gid; nullopt for an unknown
// group (which then admits nobody, as Slurm logs and skips it). The daemon
// passes util::LookupGid; tests a map.
using GroupLookup = std::function<std::optional<uint32_t>(const std::string& name)>;

// Slurm's submit-time refusal lines.
inline constexpr const char* kInvalidPartitionMsg = "Invalid partition name specified";
inline constexpr const char* kNoDefaultPartitionMsg =
    "No partition specified or system default partition";
inline constexpr const char* kInvalidAccountMsg =
    "Invalid account or account/partition combination specified";
inline constexpr const char* kGroupNotPermittedMsg =
    "User's group not permitted to use this partition";
inline constexpr const char* kPartitionNotAvailableMsg =
    "Required partition not available (inactive or drain)";
inline constexpr const char* kInvalidTimeLimitMsg =
    "Requested time limit is invalid (missing or exceeds some limit)";
inline constexpr const char* kInvalidNodeCountMsg = "Node count specification invalid";

// The names a job asks for: req.partition split at ',' with empty items
// dropped (items are not trimmed: " train" is a name no partition has).
std::vector<std::string> RequestedPartitionNames(const std::string& partition);

// Whether the submitter may use `part` at all: state (INACTIVE and DRAIN
// refuse new jobs, DOWN queues them), AllowGroups (req.gid or any of
// req.groups among the resolved gids), AllowAccounts, else DenyAccounts
// (req.account, compared ignoring case; the caller fills in the default
// account first). uid 0 and cfg.slurm_user (by req.user_name) pass the
// group and account checks. Returns Ok or the refusal with Slurm's line:
// kUnavailable (state), kPermissionDenied (group, account).
util::Status CheckPartitionAccess(const core::JobRequest& req, const core::Partition& part,
                                  const config::Config& cfg, const GroupLookup& groups);

// Whether the job is within the partition's limits: `time_limit_s` (-2 =
// not given, never over; -1 = UNLIMITED, over any MaxTime) against MaxTime;
// -N (req.min_nodes, 0 = 1) against MaxNodes and the partition's node count;
// req.max_nodes (or -N when not given) against MinNodes. Returns Ok, or
// kInvalidArgument with kInvalidTimeLimitMsg / kInvalidNodeCountMsg; the
// scheduler's pending reasons are PartitionTimeLimit / PartitionNodeLimit.
util::Status CheckPartitionLimits(const core::JobRequest& req, int64_t time_limit_s,
                                  const core::Partition& part);

// The partitions the job may be queued in, in the order asked (the
// default partition when req.partition is empty), or the refusal:
//   any unknown name: kInvalidArgument kInvalidPartitionMsg;
//   no name and no default partition: kInvalidArgument kNoDefaultPartitionMsg;
//   access (CheckPartitionAccess): a partition refused is dropped; when none
//     is left, the first refusal (with EnforcePartLimits=ALL any refusal
//     refuses the job, slurm.conf(5));
//   limits (CheckPartitionLimits) with cfg.enforce_part_limits:
//     kAll: refused when any kept partition's limits are exceeded;
//     kAny: refused only when every kept one's are;
//     kNo:  accepted; all kept partitions are returned and the job pends.
//   In the last two cases the partitions over their limits stay in the list
//   (the scheduler never starts the job there).
// Error messages are Slurm's text alone; sbatch prints them after
// "sbatch: error: Batch job submission failed: ". For an unknown name,
// `why` (may be null) gets Slurm's line before that one ("invalid partition
// specified: nosuch") and a detail listing the cluster's partitions.
util::Result<std::vector<const core::Partition*>> ResolveJobPartitions(
    const core::JobRequest& req, int64_t time_limit_s, const config::Config& cfg,
    const GroupLookup& groups, SubmitRefusal* why = nullptr);

}  // namespace muster::sched

// A compute node: its configured hardware (from NodeName= lines and
// gres.conf) and its live state as the controller tracks it. Value type,
// owned by the controller's cluster state; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gres.h"

namespace muster::core {

// Base state of a node; flags (drain, ...) are separate, as in Slurm.
enum class NodeBase { kUnknown, kIdle, kAllocated, kMixed, kDown, kFuture };

// State= of a NodeName= line (or DownNodes=): where the node starts.
// DOWN and DRAIN start it with that state and the reason "Configured";
// FUTURE keeps it out of scheduling; the others start it as its agent
// reports (FAIL and FAILING are accepted, as Slurm does, without effect).
enum class NodeInitialState { kUnknown, kIdle, kCloud, kDown, kDrain, kFail, kFailing, kFuture };
// Upper case, as slurm.conf writes it: "UNKNOWN", "FUTURE", ...
std::string_view NodeInitialStateName(NodeInitialState s);
// Case-insensitive; nullopt for a name slurm.conf does not have.
std::optional<NodeInitialState> ParseNodeInitialState(std::string_view s);

// Who took a node out of service (DRAIN, DOWN or FAIL, with its reason):
// an operator (scontrol update, REST), a health check, a failed Prolog or
// Epilog, the configuration (State=DOWN or DRAIN), or musterd for an agent
// that stopped responding. Alerts tell an operator's maintenance from a
// fault by it (muster_node_state's `by`, docs/metrics.md).
enum class ReasonSource { kNone, kOperator, kHealth, kProlog, kEpilog, kConfig, kNotResponding };
// "" for kNone, else "operator", "health", "prolog", "epilog", "config",
// "not_responding".
std::string_view ReasonSourceName(ReasonSource s);
std::optional<ReasonSource> ParseReasonSource(std::string_view s);

struct NodeConfig {
  std::string name;
  // NodeHostname: the host whose agent serves this node (default: the
  // node's name); NodeAddr: where that host is reached (default: the
  // hostname); Port: the agent's port there (0 = SlurmdPort).
  std::string hostname;
  std::string addr;
  int port = 0;
  int cpus = 1;
  int sockets = 1;
  int cores_per_socket = 1;
  int threads_per_core = 1;
  int64_t real_memory_mb = 1;
  int64_t tmp_disk_mb = 0;
  std::vector<GresSpec> gres;
  std::vector<std::string> features;
  int weight = 1;
  NodeInitialState initial_state = NodeInitialState::kUnknown;
};

// The cores gres.conf Cores= puts near GPU `index` of the node (indices
// as Node::gpu_used counts them); null when it gives none.
const std::vector<int>* GpuCores(const NodeConfig& node, int index);
// The same as CPU ids (Node::cpu_used numbering): each core's threads when
// the node schedules threads (CPUs = Sockets x CoresPerSocket x
// ThreadsPerCore, a core's threads numbered together), else the core ids.
std::vector<int> CpusNearGpu(const NodeConfig& node, int index);

// scontrol reboot: requested (done once the node runs nothing), issued
// (its agent was told; the node is away until it boots again, or until
// ResumeTimeout sets it DOWN).
enum class RebootState { kNone, kRequested, kIssued };

struct Node {
  NodeConfig config;

  // Live state.
  bool registered = false;  // the agent hosting it has connected
  bool down = false;        // DOWN set by an admin or lost agent
  bool drain = false;       // DRAIN flag
  // FAIL flag (scontrol update State=FAIL): expected to fail; takes no new
  // jobs, lets its running ones end, as DRAIN does, until RESUME.
  bool fail = false;
  std::string reason;
  uint32_t reason_uid = 0;
  int64_t reason_time = 0;
  // Who set the reason when it was no user: "health" for a health check's
  // drain (sinfo -R's USER); empty: reason_uid's user.
  std::string reason_actor;
  ReasonSource reason_source = ReasonSource::kNone;
  int64_t boot_time = 0;
  // Health checks (config::HealthConfig): what failed at the last run
  // ("ecc: GPU 3: 2 uncorrectable ECC errors"; empty: all passed), when it
  // ran (0: never), and the check that drained the node (empty: health did
  // not drain it, or an operator has resumed it since).
  std::vector<std::string> health_failures;
  int64_t health_time = 0;
  std::string health_drained_by;
  // Joined (its agent registered, or it was resumed) and not yet checked:
  // it takes no job until its health check answers.
  bool health_pending = false;
  // scontrol reboot [ASAP] [nextstate=RESUME|DOWN]: where the reboot
  // stands, whether ASAP drained the node for it, the state it returns in
  // ("", "RESUME" or "DOWN"), and when it was issued (for ResumeTimeout).
  RebootState reboot = RebootState::kNone;
  bool reboot_asap = false;
  std::string reboot_next_state;
  int64_t reboot_issued_time = 0;
  // The node that is its agent's own machine: what hwloc and NVML found
  // ("CPUs=8 Sockets=1 ..."), and each way it differs from the
  // configuration (empty for emulated nodes).
  std::string detected_hardware;
  std::vector<std::string> hardware_mismatches;
  // The UUID of each MIG instance among the node's GPUs, by GPU index ("" for
  // a whole GPU; empty: none), as its agent found them: what
  // CUDA_VISIBLE_DEVICES names a MIG instance by.
  std::vector<std::string> mig_uuids;
  int64_t last_busy = 0;

  int alloc_cpus = 0;
  int64_t alloc_mem_mb = 0;
  // One flag per GPU of the node (true = allocated). GPU index i counts
  // across all "gpu" entries of config.gres in order, so with
  // Gres=gpu:a100:2,gpu:h100:2 indices 0-1 are a100 and 2-3 h100; the index
  // is what CUDA_VISIBLE_DEVICES names.
  std::vector<bool> gpu_used;
  // One flag per CPU id 0..config.cpus-1 (true = allocated); as many set as
  // alloc_cpus for allocations that name their ids.
  std::vector<bool> cpu_used;

  int running_jobs = 0;

  // The derived base state: DOWN, else ALLOCATED/MIXED/IDLE from use.
  NodeBase Base() const;
  // Slurm's long state, lower case, as sinfo prints it: "idle", "mixed",
  // "allocated", "down", "drained", "draining", "unknown", with "*" appended
  // when not responding.
  std::string SinfoState(bool long_form) const;
  // The state as scontrol prints it: "IDLE", "MIXED+DRAIN", "DOWN+NOT_RESPONDING".
  std::string ScontrolState() const;
  // Whether it is away for a reboot that was issued (REBOOT_ISSUED).
  bool Rebooting() const { return reboot == RebootState::kIssued; }
  bool Responding() const { return registered; }
  // Number of free GRES of a name/type ("" type = any).
  int64_t FreeGres(const std::string& name, const std::string& type) const;
  int64_t TotalGres(const std::string& name, const std::string& type) const;
  // The type of GPU index i ("" when untyped).
  std::string GpuType(int index) const;
  int TotalGpus() const;
};

// scontrol reboot, as Slurm's: what it asks of one node.
struct RebootRequest {
  bool asap = false;       // ASAP: drained meanwhile, so it frees up
  std::string next_state;  // "", "RESUME" or "DOWN" (upper case)
  std::string reason;      // "" = Slurm's default for the request
  uint32_t uid = 0;        // who asked
};

// Marks `node` for a reboot (REBOOT_REQUESTED): with ASAP it is drained
// with the reason (default "Reboot ASAP"); with a next state the reason
// defaults to "reboot requested"; a reason given is always set.
void RequestReboot(Node& node, const RebootRequest& req, int64_t now);
// Whether a requested reboot may be issued now: the node runs nothing.
bool RebootDue(const Node& node);
// The reboot was handed to the node's agent (REBOOT_ISSUED).
void IssueReboot(Node& node, int64_t now);
// The node is back from its reboot: the flags go, and the state it
// returns in is applied (DOWN; RESUME or ASAP: undrained, reason cleared).
void FinishReboot(Node& node);
// It did not come back within ResumeTimeout: DOWN, "reboot timed out".
void RebootTimedOut(Node& node, int64_t now);
// scontrol cancel_reboot: the request goes, and ASAP's drain with it.
// Fails when there is no pending request (or it was issued already).
[[nodiscard]] bool CancelReboot(Node& node);

}  // namespace muster::core

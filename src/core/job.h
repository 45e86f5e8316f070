// A batch job: what was asked (JobRequest, fixed at submission apart from
// admin updates) and what happened (state, allocation, times, exit). Value
// type owned by the controller's job table; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gres.h"
#include "util/status.h"

namespace muster::core {

using JobId = uint32_t;

// Slurm's job states (base states; COMPLETING is a flag in Slurm, a state here).
enum class JobState {
  kPending,
  kRunning,
  kSuspended,
  kCompleting,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
};

// "PENDING", "RUNNING", ... as squeue %T and scontrol print them.
std::string_view JobStateName(JobState s);
// "PD", "R", "CA", ... as squeue %t prints them.
std::string_view JobStateShort(JobState s);
// Parses long or short names, case-insensitive ("pd", "running", "CD").
std::optional<JobState> ParseJobState(std::string_view s);
bool IsFinished(JobState s);

// Why a pending job waits, with Slurm's reason names.
enum class PendingReason {
  kNone,
  kPriority,
  kResources,
  kJobHeldUser,
  kJobHeldAdmin,
  kBeginTime,
  kReqNodeNotAvail,
  kPartitionDown,
  kPartitionInactive,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kBadConstraints,
  kNodeDown,
  kDependency,
  kDependencyNeverSatisfied,
  kJobArrayTaskLimit,
  kReservation,
  kJobRequeuedHeld,  // scontrol requeuehold; Slurm shows job_requeued_in_held_state
  // Limits of the job's QOS (sacctmgr), as Slurm names them.
  kQosMaxJobsPerUser,
  kQosGrpJobs,
  kQosMaxWall,
  kQosMaxCpuPerUser,
  kQosMaxMemPerUser,
  kQosMaxNodePerUser,
  kQosMaxGresPerUser,
  kQosMaxCpuPerJob,
  kQosMaxMemPerJob,
  kQosMaxNodePerJob,
  kQosMaxGresPerJob,
  kQosGrpCpu,
  kQosGrpMem,
  kQosGrpNode,
  kQosGrpGres,
  // Limits of the job's association (its user in its account, and the
  // accounts above).
  kAssocGrpJobs,
  kAssocGrpCpu,
  kAssocGrpMem,
  kAssocGrpNode,
  kAssocGrpGres,
  kAssocMaxJobs,
  kAssocMaxWall,
};
std::string_view PendingReasonName(PendingReason r);
// Parses a reason name as PendingReasonName prints it; nullopt when unknown.
std::optional<PendingReason> ParsePendingReason(std::string_view name);

// --export: ALL (default), NONE, or a list (optionally starting with ALL).
enum class ExportMode { kAll, kNone, kList };

// One node's share of a job's allocation.
struct NodeAlloc {
  std::string node;
  int cpus = 0;
  int64_t mem_mb = 0;
  int tasks = 0;
  // GPU indices allocated on that node (see Node::gpu_used).
  std::vector<int> gpu_indices;
  // CPU ids allocated on that node, ascending (see Node::cpu_used); what the
  // job's cpuset confines it to on a real node, and scontrol's CPU_IDs=.
  std::vector<int> cpu_ids;
  // Where the scheduler found the node in its snapshot (the cluster's node
  // order): a hint that spares a pass a lookup by name, used only where
  // the name there matches; -1 = none (not kept on disk).
  int node_index = -1;
};

// Slurm's range for a job's nice value (--nice, scontrol update Nice=).
inline constexpr int64_t kMaxNice = 2147483645;

// SchedulerParameters=max_script_size's default: 4 MiB (slurm.conf(5)).
inline constexpr int64_t kDefaultMaxScriptSize = 4 << 20;

// Whether a batch script of `bytes` is within `max_bytes`. Slurm refuses a
// larger one with the text of its ESLURM_PATHNAME_TOO_LONG (observed on the
// 22.05 oracle: 4194304 bytes pass the default limit, 4194305 get "Batch
// job submission failed: Pathname of a file, directory or other parameter
// too long"). Returns Ok, or InvalidArgument with that text and *detail (not
// null) naming the size, the limit and the key that sets it.
util::Status CheckScriptSize(size_t bytes, int64_t max_bytes, std::string* detail);

struct JobRequest {
  std::string name;
  std::string partition;  // empty = default partition
  std::string account;
  std::string comment;
  std::string qos;
  std::string reservation;
  std::string wckey;
  std::string constraint;  // -C; '&' or ',' separated features, all required

  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user_name;
  std::vector<uint32_t> groups;  // supplementary groups of the submitter

  std::string work_dir;    // where the script runs (-D, else submit_dir)
  std::string submit_dir;  // sbatch's working directory: SLURM_SUBMIT_DIR
  std::string submit_host;
  std::string std_out;  // pattern, empty = slurm-%j.out
  std::string std_err;  // pattern, empty = same as stdout
  std::string std_in;   // empty = /dev/null
  bool open_append = false;
  // salloc, or srun outside an allocation: an allocation with no batch
  // script. It runs (holds its resources) until its client completes it,
  // or it is cancelled.
  bool interactive = false;
  // scrontab: the schedule of the crontab entry this job runs (empty: not
  // a cron job) and the entry's line in its user's crontab. A cron job
  // that ends goes back to the queue until its schedule's next minute.
  std::string cron_spec;
  int cron_line = 0;

  int min_nodes = 0;        // 0 = not given (-N)
  int max_nodes = 0;
  int ntasks = 0;           // 0 = not given (-n)
  int ntasks_per_node = 0;  // 0 = not given
  int cpus_per_task = 1;
  bool cpus_per_task_set = false;
  int64_t mem_per_node_mb = 0;  // --mem; 0 = not given
  int64_t mem_per_cpu_mb = 0;   // --mem-per-cpu; 0 = not given
  // --cpus-per-gpu, --mem-per-gpu (0 = not given): CPUs and memory per GPU
  // allocated on a node (Slurm's CpusPerTres / MemPerTres of gres:gpu).
  int cpus_per_gpu = 0;
  int64_t mem_per_gpu_mb = 0;
  bool mem_whole_node = false;  // --mem=0
  std::vector<GresRequest> gres;
  int64_t time_limit_s = -2;  // -2 = not given; -1 = UNLIMITED
  bool exclusive = false;
  bool hold = false;
  int64_t begin_time = 0;
  // --switches=N[@max-time]: at most N leaf switches (0 = any), waiting up
  // to max-time for them (-1: max_switch_wait of the configuration).
  int switches = 0;
  int64_t switches_wait_s = -1;
  bool requeue = true;       // Slurm's default (JobRequeue=1); --no-requeue clears it
  bool requeue_set = false;  // --requeue or --no-requeue was given
  int nice = 0;  // within +/- kMaxNice
  std::string signal_spec;  // --signal as given
  std::string array_spec;   // --array as given ("0-19%4"); "" = not an array
  std::string dependency;   // --dependency as given ("afterok:12,singleton")
  int kill_invalid_dep = -1;  // --kill-on-invalid-dep: -1 not given, 0 no, 1 yes
  std::string nodelist;     // -w
  std::string exclude;      // -x

  ExportMode export_mode = ExportMode::kAll;
  std::vector<std::string> environment;  // "K=V", what the job starts with
  std::vector<std::string> argv;         // script arguments
  std::string script;                    // the batch script text
  std::string command;                   // script path as given, or "(null)"
};

// The variables a heterogeneous job's batch shell has once per component,
// with _HET_GROUP_<offset> after the name (srun --het-group=N takes
// component N's as its own).
inline constexpr std::string_view kHetGroupVariables[] = {
    "SLURM_JOB_ACCOUNT",   "SLURM_JOB_CPUS_PER_NODE", "SLURM_JOB_ID",       "SLURM_JOB_NAME",
    "SLURM_JOB_NODELIST",  "SLURM_JOB_NUM_NODES",     "SLURM_JOB_PARTITION", "SLURM_JOB_QOS",
    "SLURM_MEM_PER_CPU",   "SLURM_MEM_PER_NODE",      "SLURM_NPROCS",        "SLURM_NTASKS",
    "SLURM_TASKS_PER_NODE", "SLURM_CPUS_PER_TASK"};

// --signal=[{R|B}:]SIG[@TIME]: the signal a job is sent TIME seconds
// (default 60) before its time limit, to its batch shell only with B:.
struct WarnSignal {
  int sig = 0;
  int time_s = 60;
  bool batch_only = false;
};
// An error "Invalid --signal specification: SPEC" when malformed.
util::Result<WarnSignal> ParseSignalSpec(const std::string& spec);

// A job's QOS: its --qos, else "normal" (Slurm's default QOS).
const std::string& QosName(const JobRequest& req);

struct Job {
  JobId id = 0;
  JobRequest req;

  JobState state = JobState::kPending;
  PendingReason reason = PendingReason::kNone;
  // With ReqNodeNotAvail: the unavailable nodes the scheduler found holding
  // it back, as a hostlist ("" = no particular ones; see
  // sched::PendingDecision). Set with reason by the scheduling pass.
  std::string reason_nodes;
  // With ReqNodeNotAvail: the nodes it asks for (-w) are held by another's
  // reservation (Slurm: "May be reserved for other job").
  bool reason_reserved = false;
  uint32_t priority = 0;
  // scontrol update Priority=N by an operator: the job's priority from
  // then on, whatever its factors (0 = none set).
  uint32_t admin_priority = 0;
  bool held = false;
  bool held_by_admin = false;

  int64_t submit_time = 0;
  int64_t eligible_time = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  int64_t time_limit_s = -1;  // effective limit after partition defaults

  std::string partition;  // the partition chosen
  std::vector<NodeAlloc> alloc;
  std::string batch_host;
  std::string nodelist;  // compressed alloc nodes

  int exit_code = 0;    // exit status of the batch script
  int exit_signal = 0;  // terminating signal, 0 if none
  uint32_t cancelled_by = UINT32_MAX;
  // The job whose start preempted this one (PreemptType); 0 = none.
  JobId preempted_by = 0;
  int restart_count = 0;
  // The end already decided while its processes are being stopped
  // (CANCELLED after scancel, NODE_FAIL after its node was set DOWN);
  // kPending = none. Journalled with the job, so a controller restart in
  // between still ends it that way.
  JobState ending_as = JobState::kPending;
  // scontrol requeue of a running job: 1 = back to the queue, 2 = back and
  // held, once its processes are gone; 0 = no requeue asked.
  int requeue_on_end = 0;
  // Running, its nodes' Prolog not yet done on all of them (PrologFlags=
  // Alloc): nothing of it has started; shown as CONFIGURING (CF).
  bool configuring = false;
  // The run before this one was requeued by a node failure (its accounting
  // row is NODE_FAIL, not REQUEUED).
  bool last_run_node_failed = false;
  std::string failure_detail;  // e.g. could not open output file
  int64_t max_rss_kb = 0;      // peak memory of the batch step (cgroup), KiB
  int64_t total_cpu_ms = 0;    // user+system CPU of the batch step
  // Its GPUs as the agents sampled them while it ran (JobAcctGatherFrequency):
  // utilisation (percent) times seconds, summed over its GPUs; the
  // GPU-seconds sampled; the most memory one of them held (-1: none
  // sampled). Journalled with the job's changes, not at every sample.
  int64_t gpu_util_pct_s = 0;
  int64_t gpu_sampled_s = 0;
  int64_t gpu_mem_max_bytes = -1;
  // The idle-GPU policy (ctld/idle_gpus.h): since when every GPU of the job
  // has been under the threshold (0: not idle), and how far the policy has
  // gone with it (0 nothing, 1 flagged and its user told, 2 told again and
  // reported to the operators, 3 cancelled).
  int64_t gpu_idle_since = 0;
  int gpu_idle_stage = 0;
  // The id the job's next srun step gets. Journalled with the job, so steps
  // made after a controller restart never reuse an id (and its sacct row).
  int next_step_id = 0;

  // Job arrays (--array). A task that has started (or ended) is a Job of
  // its own with array_job_id = the array's id and array_task_id = its
  // index, and an id of its own from the job id counter. The tasks that have
  // not started yet stay together in one record, the array's pending part:
  // id == array_job_id, array_task_id == -1, array_pending = their indices
  // (ascending). When the last of them starts, that record becomes the task
  // itself, so (as in Slurm) the last task started keeps the array's id.
  JobId array_job_id = 0;  // 0 = not an array job
  int array_task_id = -1;
  std::vector<int> array_pending;
  int array_max_running = 0;  // the %N throttle (in every record); 0 = none

  // Why it waits, for people: one line naming what blocks it and what would
  // unblock it (squeue -O Explanation, scontrol show job). Set with reason.
  std::string explanation;
  int64_t estimated_start = 0;  // squeue --start; 0 = unknown
  std::string estimated_nodes;  // where it would start then (SCHEDNODES)
  // What is left of its dependency as scontrol prints Dependency=
  // ("afterok:12(unfulfilled)"); "" = none left ("(null)").
  std::string dependency_state;
  // Its dependency was found never satisfiable: it stays so (as in Slurm,
  // even if the job it named is requeued and later succeeds) until
  // scontrol update Dependency= replaces it.
  bool dependency_failed = false;

  // Heterogeneous jobs (sbatch's ":" and "#SBATCH hetjob"): each component
  // is a Job of its own, the first (offset 0, the leader) runs the batch
  // script; their ids follow each other from the leader's, which is
  // het_job_id in every one. They start together or not at all (the
  // scheduler places them on distinct nodes, as Slurm does) and end
  // together. 0: not a component.
  JobId het_job_id = 0;
  int het_job_offset = -1;
  int het_job_size = 0;  // the number of components, in every one

  bool IsArrayPendingPart() const { return array_job_id != 0 && array_task_id < 0; }
  bool IsHetComponent() const { return het_job_id != 0; }
  // Whether it runs a batch script: not an allocation (salloc, srun's
  // own), nor a heterogeneous job's component past the first.
  bool HasBatchStep() const { return !req.interactive && het_job_offset <= 0; }
  // The reason a held job shows: JobHeldAdmin or JobHeldUser.
  PendingReason HoldReason() const {
    return held_by_admin ? PendingReason::kJobHeldAdmin : PendingReason::kJobHeldUser;
  }
  int NumNodes() const;
  int NumCpus() const;
  int NumTasks() const;
  // The state as sacct/scontrol print it with its suffix: "CANCELLED by 1000".
  std::string StateWithSuffix() const;
};

// The state squeue and scontrol show: CONFIGURING (CF) for a running job
// whose nodes are still being prepared (Job::configuring), else the state.
std::string_view ShownStateName(const Job& job);
std::string_view ShownStateShort(const Job& job);

// Expands an --output/--error pattern: %j job id, %x name, %u user, %N first
// node, %A array job id (the job id outside arrays), %a array task id
// (4294967294 outside arrays, as sbatch writes it), %% percent; other %
// codes kept as written.
// As sbatch does for the batch script: %J is the job id, %s "batch", %t and
// %n 0; "%<width><code>" zero-pads numeric codes (width capped at 10, ignored
// for %x %u %N); %N stays as written until the job has a node; a backslash
// anywhere turns expansion off and the backslashes are dropped.
std::string ExpandOutputPattern(std::string_view pattern, const Job& job);

}  // namespace muster::core

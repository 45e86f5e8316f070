// The cluster configuration: muster.conf in slurm.conf syntax, gres.conf
// beside it, Include'd files. Parsed once, at start-up, into typed structs;
// nothing else in Muster looks at the text. A real slurm.conf for the same
// cluster loads unchanged: keys Slurm has but Muster does not use are
// accepted (and listed in `ignored_keys` for a warning); unknown keys and
// bad values are errors naming file:line and the key.
//
// Syntax (slurm.conf's): `Key=Value` pairs, several per line allowed; keys
// case-insensitive; `#` starts a comment, even inside quotes as in Slurm
// (`\#` is a literal '#'); a trailing backslash joins the next line; values
// may be "quoted". `Include <file>` (relative to the including file's
// directory, `%c` replaced by ClusterName, shell globs allowed) reads a file
// inline. NodeName=, PartitionName=, NodeSet=, DownNodes= and FrontendName=
// lines take the rest of their line as attributes; `NodeName=DEFAULT` and
// `PartitionName=DEFAULT` set defaults for the lines after them. gres.conf
// beside the main file fills in GresSpec files/cores; a count there that
// differs from the node's Gres= is an error.
//
// Muster extension: a relative StateSaveLocation or SlurmdSpoolDir is
// resolved against the directory of the file it is written in, so a test
// cluster's directory can be moved as a whole. Slurm requires absolute
// paths there, so real slurm.conf files are unaffected.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/tres.h"
#include "util/status.h"

namespace muster::config {

// EnforcePartLimits (slurm.conf(5)): whether a job over a partition's
// MaxTime/MaxNodes/MinNodes is refused at submission. kAll: when any asked
// partition's limits are exceeded (YES is a synonym); kAny: only when every
// one's are; kNo (Slurm's default): accepted, the job pends with
// PartitionTimeLimit / PartitionNodeLimit.
enum class EnforcePartLimits { kNo, kAny, kAll };

// PreemptType (see Config::preempt_type).
enum class PreemptType { kNone, kPartitionPrio, kQos };

// AuthType: how hosts prove who sent a message. kLocal (AuthType unset,
// Muster's zero-setup default): everything stays on this host, over unix
// sockets whose peers the kernel names. kSlurm (auth/slurm, as Slurm 23.11
// names it): a key shared by every host (slurm.key beside the main file,
// auth/shared_key.h), and musterd also serves other hosts over TCP on
// SlurmctldPort. kMunge (auth/munge, Slurm's default): through munged.
enum class AuthType { kLocal, kSlurm, kMunge };

// MusterApiParameters (Muster's own key, in SchedulerParameters' form):
//   MusterApiParameters=max_body_size=BYTES,max_header_size=BYTES,
//                       max_connections=N,max_connections_per_user=N
// Bounds on the API socket, so that no client makes musterd read without
// end or holds all its connections. A request whose headers or body exceed
// a size is answered 431 or 413 (the body judged from Content-Length, or as
// a chunked body grows) and its connection closed without reading the
// rest; a connection over a count is answered 503 at once. Operators
// (root and AdminUsers) are never refused for the counts, so they can still
// connect while a user floods; their connections count all the same.
struct ApiLimits {
  int64_t max_header_size = 64 << 10;
  // Unless set: 2 * max_script_size + 8 MiB (16 MiB by default), room for
  // the largest script JSON-escaped, its environment and its options. Set,
  // it may not be below max_script_size.
  int64_t max_body_size = 16 << 20;
  // Open API connections of everyone together.
  int max_connections = 1024;
  // Open API connections of one uid.
  int max_connections_per_user = 64;
};

// PriorityUsageResetPeriod: when every association's usage goes back to 0.
enum class UsageReset { kNone, kNow, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };

// PriorityType and the keys of priority/multifactor (slurm.conf(5)); what
// sched/priority.h computes from them.
struct PriorityConfig {
  // priority/multifactor; else priority/basic (Slurm 22.05's default: the
  // order of submission, less nice).
  bool multifactor = false;
  int64_t weight_age = 0;
  int64_t weight_assoc = 0;
  int64_t weight_fairshare = 0;
  int64_t weight_job_size = 0;
  int64_t weight_partition = 0;
  int64_t weight_qos = 0;
  std::vector<core::TresWeight> weight_tres;  // PriorityWeightTRES, as written
  std::string weight_tres_text;         // PriorityWeightTRES as written ("" = unset)
  int64_t max_age_s = 7 * 86400;        // PriorityMaxAge (the age factor's 1.0)
  bool favor_small = false;             // PriorityFavorSmall
  // PriorityFlags: FAIR_TREE (the default) or NO_FAIR_TREE (classic
  // fairshare, 2^(-usage/shares)).
  bool fair_tree = true;
  int64_t decay_half_life_s = 7 * 86400;  // PriorityDecayHalfLife; 0 = no decay
  UsageReset usage_reset = UsageReset::kNone;
  int64_t calc_period_s = 300;  // PriorityCalcPeriod: how often usage is charged and saved
};

// The backfill planner's SchedulerParameters (bf_*, Slurm's names and
// units). Muster plans every pending job by default, where Slurm's default
// bf_max_job_test stops at 500.
struct BackfillConfig {
  int64_t window_s = 24 * 3600;  // bf_window=MINUTES: how far ahead starts are planned
  int64_t resolution_s = 60;     // bf_resolution=SECONDS: planned starts are rounded up to it
  int max_job_test = 0;          // bf_max_job_test=N: jobs planned per pass (0 = all)
  int max_job_user = 0;          // bf_max_job_user=N: jobs of one user planned per pass (0 = all)
  int64_t min_prio_reserve = 0;  // bf_min_prio_reserve=P: below it, start now or not at all
  int interval_s = 30;           // bf_interval=SECONDS: the longest time between passes
  bool continue_after_yield = false;  // bf_continue: accepted; a Muster pass never yields
};

// One switch of topology.conf (TopologyPlugin=topology/tree).
struct Switch {
  std::string name;
  std::vector<std::string> nodes;  // a leaf's nodes (Nodes=)
  std::vector<int> children;       // child switches (Switches=), as indices
  int parent = -1;                 // -1 for a top switch
  int level = 0;                   // 0 for a leaf, else one above its highest child
  std::string link_speed;          // LinkSpeed=, kept as written
};

// The idle-GPU policy (Muster's own keys): a running job all of whose GPUs
// stay under IdleGpuThreshold percent is flagged after IdleGpuFlagTime and
// its user told (IdleGpuNotifyProgram), told again and reported to the
// operators after IdleGpuReportTime, and cancelled after IdleGpuCancelTime,
// only in partitions with IdleGpuCancel=YES. Times count from when it went
// idle; 0 leaves that stage out (IdleGpuFlagTime=0: no policy).
struct IdleGpuConfig {
  int threshold_pct = 5;
  int64_t flag_after_s = 0;
  int64_t report_after_s = 0;
  int64_t cancel_after_s = 0;
  std::string notify_program;
  bool enabled() const { return flag_after_s > 0; }
};

// Health checks. musterd asks each agent every HealthCheckInterval seconds
// to check its nodes in the states HealthCheckNodeState names; the agent
// runs HealthCheckProgram (exit status 0 = healthy) and the built-in checks
// of MusterHealthChecks, and musterd drains a failing node with the
// check's name and what it saw as the reason ("health" as the actor), and
// resumes one that health drained once its checks pass, if the check that
// drained it is in MusterHealthAutoResume. Past MusterHealthMaxDrainPercent
// of the nodes failing one check at once, the failures are taken for a
// shared cause and no further node is drained for that check.
struct HealthConfig {
  std::string program;
  int interval_s = 0;  // 0: no health checks
  // HealthCheckNodeState: any of idle, alloc, mixed (empty: ANY);
  // NONDRAINED_IDLE adds idle and leaves drained nodes out.
  std::vector<std::string> node_states;
  bool skip_drained = false;
  // CYCLE: the nodes are checked a few at a time, spread over the
  // interval, rather than all at once; START_ONLY: only when a node
  // (re)joins (its agent registers, it is resumed or rebooted), never on
  // the interval.
  bool cycle = false;
  bool start_only = false;
  // Built-in checks: gpu_count, gpu_model, driver_version, mounts,
  // spool_space, ecc, remapped_rows, xid, nvml.
  std::vector<std::string> checks;
  std::vector<std::string> mounts;  // MusterHealthMounts: paths that must be mount points
  int64_t spool_min_free_mb = 1024;  // MusterHealthSpoolMinFree
  std::vector<std::string> auto_resume;  // MusterHealthAutoResume: checks allowed to self-heal
  int max_drain_percent = 100;           // MusterHealthMaxDrainPercent
  // Whether there is anything to check. A node is checked when it
  // (re)joins whenever there is, before it is given a job (as slurmd runs
  // HealthCheckProgram before it registers); on the interval only with
  // one and without START_ONLY.
  bool any() const { return !program.empty() || !checks.empty(); }
  bool enabled() const { return interval_s > 0 && any() && !start_only; }
};

// The built-in health checks, and those that may never resume a node by
// themselves (hardware faults: an operator must look).
inline constexpr std::string_view kHealthChecks[] = {
    "gpu_count", "gpu_model", "driver_version", "mounts", "spool_space",
    "ecc",       "remapped_rows", "xid",        "nvml"};
inline constexpr std::string_view kHealthChecksNeverResumed[] = {"ecc", "remapped_rows", "xid"};

// PrologFlags (slurm.conf). Alloc: the Prolog runs on every node of a job
// as it is allocated (salloc's too), and nothing of the job starts until it
// has succeeded on all of them (Slurm's Alloc with DeferBatch); a failure
// drains that node and requeues the job held, as on the batch node.
// Contain (which implies Alloc): each job also has an extern step on its
// nodes (sacct's N.extern), from its allocation to its end.
struct PrologFlags {
  bool alloc = false;
  bool contain = false;
};

// cgroup.conf beside the main file (Slurm's file and keys). Muster always
// confines a job's memory (--mem) and, on a node that is the machine
// itself, its CPUs; of cgroup.conf's keys ConstrainDevices acts, the others
// are accepted without effect (ignored_keys).
struct CgroupConfig {
  // ConstrainDevices=yes: every step of a job may open only the device
  // files of its own GPUs, not those of the rest of its node
  // (stepd/device_filter.h), and CUDA numbers its GPUs from 0
  // (CUDA_VISIBLE_DEVICES=0,1; SLURM_JOB_GPUS keeps the node's indices).
  bool constrain_devices = false;
};

struct Config {
  std::string path;  // the main file, absolute
  std::string cluster_name = "cluster";
  std::string control_host;     // SlurmctldHost, name part
  std::string control_addr;     // SlurmctldHost, (addr) part if any
  // Further SlurmctldHost lines (or BackupController), in order: Slurm's
  // backup controllers. Accepted; Muster runs a single controller.
  std::vector<std::string> backup_control_hosts;
  std::string state_save_location = "/var/spool/muster/ctld";  // absolute
  std::string slurmd_spool_dir = "/var/spool/muster/d";         // absolute; may hold %n, %h
  int64_t def_mem_per_cpu_mb = 0;  // 0 = unset: a job gets the whole node's memory
  int64_t max_mem_per_cpu_mb = 0;
  int kill_wait_s = 30;
  std::string mpi_default = "none";  // MpiDefault: srun's --mpi when it gives none
  int min_job_age_s = 300;
  int slurmd_timeout_s = 300;
  // JobRequeue: whether batch jobs are requeued after a node failure unless
  // they say otherwise (--requeue / --no-requeue). Slurm's default is 1.
  int job_requeue = 1;
  int slurmctld_port = 6817;
  // SlurmdPort: the agents' port (sinfo -o %P... and `scontrol show config`
  // show it; agents listen on it once they serve TCP).
  int slurmd_port = 6818;
  // AuthInfo=cred_expire=N: Slurm's job credential lifetime, which also
  // holds a requeued job back: it may start again cred_expire + 1 seconds
  // after the requeue (Slurm's default 120, so 121 s). The rest of AuthInfo
  // (socket=, ttl=) has no effect in Muster.
  int cred_expire_s = 120;
  // AuthInfo=ttl=N: how long a message's credential stays valid (munge's
  // default, 300 s); a credential signed longer ago, or further ahead on a
  // clock out of step, is refused.
  int auth_ttl_s = 300;
  AuthType auth_type = AuthType::kLocal;
  // SchedulerType: sched/backfill (Slurm's default: a job behind one that
  // waits for resources may start if it cannot delay that one's earliest
  // start) or sched/builtin (strict priority order in each partition).
  bool backfill = true;
  BackfillConfig bf;  // SchedulerParameters=bf_*
  // Of the nodes of one Weight a job fits on, the busiest go first
  // (fewest free GPUs, then CPUs), so whole nodes stay free for jobs that
  // need them. SelectTypeParameters=CR_Pack_Nodes also fills a job's
  // first nodes with its tasks when it has more room than they need
  // (--exclusive); CR_LLN takes the least loaded first (most idle CPUs).
  bool pack_nodes = false;
  bool least_loaded = false;
  // GpuReserve=CPUs=N,Mem=SIZE (Muster's own): each free GPU of a node
  // keeps N CPUs and SIZE of memory there from jobs that take no GPU on
  // that node (except --exclusive ones), so CPU-only work never leaves a
  // GPU without the CPUs and memory a job needs to use it. Unset: none.
  int gpu_reserve_cpus = 0;
  int64_t gpu_reserve_mem_mb = 0;
  // TopologyPlugin=topology/tree: topology.conf's switches (read from
  // beside the main file), and each node's leaf switch (index into
  // switches). A multi-node job goes under as few leaf switches as it can,
  // within one tree; sbatch --switches=N[@wait] waits up to
  // max_switch_wait (SchedulerParameters, seconds) for at most N leaves.
  bool topology_tree = false;
  std::vector<Switch> switches;
  std::map<std::string, int> leaf_of_node;
  int64_t max_switch_wait_s = 300;
  // PreemptType: which running jobs a job that cannot start may stop.
  // preempt/partition_prio: those of partitions with a lower PriorityTier;
  // preempt/qos: those whose QOS its QOS names in Preempt (sacctmgr);
  // preempt/none: none. PreemptMode= is the default of partitions (and
  // QOS) that set none; PreemptExemptTime= protects jobs that have run
  // less than it (a QOS's own PreemptExemptTime comes first).
  PreemptType preempt_type = PreemptType::kNone;
  core::PreemptMode preempt_mode = core::PreemptMode::kOff;
  int64_t preempt_exempt_time_s = 0;
  PriorityConfig priority;
  // AccountingStorageEnforce=associations (or limits, qos, safe, all): a
  // job's user must have an association with its account (sacctmgr).
  bool enforce_associations = false;
  // AuthInfo=socket=PATH: munged's socket (empty: munge's default).
  std::string auth_socket;
  // TmpFS: the TMPDIR a job gets when its environment has none.
  std::string tmp_fs = "/tmp";
  std::vector<std::string> gres_types;
  std::vector<std::string> admin_users;  // user names that may act on any job/node
  int64_t max_job_count = 10000;
  int first_job_id = 1;
  std::string slurm_user = "root";
  EnforcePartLimits enforce_part_limits = EnforcePartLimits::kNo;
  // MaxArraySize: array indices must be below it; 0 disables arrays.
  // Slurm's default is 1001 and its ceiling 4000001.
  int max_array_size = 1001;
  // SchedulerParameters, split at commas as written ("bf_interval=30"
  // kept whole); flags Muster acts on are also decoded below.
  std::vector<std::string> scheduler_parameters;
  // kill_invalid_depend: a job whose dependency can never be satisfied is
  // cancelled instead of pending with DependencyNeverSatisfied.
  bool kill_invalid_depend = false;
  // enable_user_top: users may `scontrol top` their own jobs (else only
  // operators may).
  bool enable_user_top = false;
  // max_script_size=BYTES: the largest batch script accepted (Slurm's
  // default, 4 MiB); sbatch and musterd refuse a larger one.
  int64_t max_script_size = core::kDefaultMaxScriptSize;
  ApiLimits api;  // MusterApiParameters
  // MusterMetricsAddress=ADDRESS:PORT: musterd also serves /metrics over
  // plain HTTP there, for Prometheus (port 0: on its API socket only).
  std::string metrics_host;
  int metrics_port = 0;
  // MusterAgentMetricsAddress=ADDRESS:PORT: each agent serves its own
  // nodes' GPU and job series there (port 0: none; agents on one machine
  // each need their own, muster-agent --metrics-address).
  std::string agent_metrics_host;
  int agent_metrics_port = 0;
  // JobAcctGatherFrequency=N (or task=N): the agents sample GPUs and
  // running jobs every N seconds (0: never), for /metrics, accounting,
  // health checks and the idle-GPU policy.
  int acct_gather_frequency_s = 30;
  // MusterWatchedFilesystems=PATH,...: mount points (shared storage,
  // scratch) whose size and free space the agents sample with the rest,
  // as muster_node_filesystem_* series per node (docs/metrics.md).
  std::vector<std::string> watched_filesystems;
  IdleGpuConfig idle_gpu;
  HealthConfig health;
  CgroupConfig cgroup;
  // Prolog/Epilog: run as root on the batch step's node before and after
  // the job (a Prolog failure drains the node and requeues the job; an
  // Epilog failure drains the node). PrologSlurmctld/EpilogSlurmctld: run
  // by musterd as a job starts (a failure requeues a batch job, cancels an
  // allocation) and after it ends. Each gets PrologEpilogTimeout seconds.
  std::string prolog;
  std::string epilog;
  std::string prolog_slurmctld;
  std::string epilog_slurmctld;
  int prolog_epilog_timeout_s = 300;
  PrologFlags prolog_flags;
  // RebootProgram: what an agent runs to reboot its node (scontrol
  // reboot); empty: reboot is refused. ResumeTimeout: how long a node may
  // take to come back before it is set DOWN.
  std::string reboot_program;
  int resume_timeout_s = 60;
  // SlurmctldParameters=enable_configless: musterd serves this
  // configuration to agents that start with --conf-server.
  bool enable_configless = false;

  std::vector<core::NodeConfig> nodes;  // config order
  std::vector<core::Partition> partitions;

  // Every top-level Key=Value (not NodeName/PartitionName attributes), the
  // key spelled as last written and the value unquoted (last wins, keys
  // compared case-insensitively), for `scontrol show config`.
  std::map<std::string, std::string> raw;
  // Keys recognised as Slurm's but with no effect in Muster ("file:line: Key").
  std::vector<std::string> ignored_keys;

  // The Default=YES partition (when several say so, the last one, as in
  // Slurm); nullptr when none does.
  const core::Partition* DefaultPartition() const;
  // Exact (case-sensitive) lookups by name; nullptr when absent. Linear.
  const core::Partition* FindPartition(const std::string& name) const;
  const core::NodeConfig* FindNode(const std::string& name) const;
  // The partition a job runs in or would: the one it was given, else the
  // one it asked for, else the default; nullptr when none exists.
  const core::Partition* PartitionOf(const core::Job& job) const;
  // The memory a job gets when it does not say (core/tres.h): DefMemPerCPU
  // and the RealMemory of the first node of its partition.
  core::MemoryDefaults MemoryDefaultsFor(const core::Job& job) const;
  // Whether `name` ("gpu", "nic") is a GRES of this cluster: in GresTypes
  // or configured on some node. Linear.
  bool HasGres(const std::string& name) const;
};

// Loads a configuration file (and gres.conf in the same directory when it
// exists). Errors name the file (relative to the main file's directory when
// inside it), the line and the key: "muster.conf:3: DefMemPerCPU: invalid
// value 'abc'", "muster.conf:12: NodeName gpu[01-04]: CPUs: invalid value
// 'x'", "muster.conf:7: unknown key 'Foo'".
util::Result<Config> LoadConfig(const std::string& path);

// Parses configuration text as if read from `path` (gres.conf is looked up
// beside `path` only when `gres_text` is empty and `read_gres_file`;
// cgroup.conf whenever `read_gres_file`).
util::Result<Config> ParseConfig(const std::string& text, const std::string& path,
                                 const std::string& gres_text = {},
                                 bool read_gres_file = true);

inline constexpr char kEtcConfigPath[] = "/etc/muster/muster.conf";
// Where a configless agent (--conf-server) keeps the configuration musterd
// served it, for itself and the commands of its host.
inline constexpr char kConfiglessCacheDir[] = "/run/muster/conf";
inline constexpr char kConfiglessCachePath[] = "/run/muster/conf/muster.conf";

// Finds the configuration path: MUSTER_CONF, else SLURM_CONF, else
// /etc/muster/muster.conf, else (a configless host) the cache at
// /run/muster/conf/muster.conf.
std::string DefaultConfigPath();

// The controller's unix socket, derived from the config:
// <StateSaveLocation>/musterd.sock.
std::string ControllerSocketPath(const Config& cfg);
std::string AgentSocketPath(const Config& cfg);
// The spool of the agent of `host`: <SlurmdSpoolDir, %n as host>/<host>.
std::string AgentSpoolDir(const Config& cfg, const std::string& host);
// The credential service of `host`'s agent (auth/kiosk.h), in its spool.
std::string KioskSocketPath(const Config& cfg, const std::string& host);
// The auth/slurm key: slurm.key in the main file's directory, as Slurm has it.
std::string AuthKeyPath(const Config& cfg);
// The host musterd serves other hosts on: SlurmctldHost's address, else its
// name.
std::string ControllerAddress(const Config& cfg);

}  // namespace muster::config

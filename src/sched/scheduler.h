// The pure scheduling core. Given a snapshot of the cluster (nodes with
// their free resources, partitions, the queue in priority order) and "now",
// it returns a plan: which jobs start where (nodes, CPUs, memory, GPU
// indices) and, for every pending job not started, Slurm's reason. No I/O,
// no clock, no globals; deterministic for the same input. Thread-safe in the
// sense that it touches nothing but its arguments (which it never mutates).
//
// Policy (Slurm's main scheduler and backfill in one pass): jobs are tried
// in the order given (sched/priority.h's OrderQueue decides it). With
// sched/builtin a job that cannot start for lack of resources blocks later
// jobs of the same partition (they get reason Priority). With
// sched/backfill (the default) it is planned instead: its earliest start is
// reserved and later jobs start only where they cannot delay it (see
// Schedule), so a big job is not starved by small ones and small ones still
// run in the gaps. Held jobs, jobs not yet eligible and jobs that can never
// run (BadConstraints) do not block. Each job is placed on the first nodes
// (lower Weight first, then config order; nodes without GPUs first for a
// job that asks for none) that have the CPUs, memory and GPUs it asks for.
//
// What the scheduler reads of a core::Node:
//   config (cpus, real_memory_mb, gres entries named "gpu" with their types
//   and counts, features, weight, initial_state "FUTURE"), registered, down,
//   drain, alloc_cpus, alloc_mem_mb, gpu_used (index i = i-th GPU across the
//   node's "gpu" gres entries in order; missing entries count as free) and
//   running_jobs. A node is usable when registered, not down, not drained
//   and not FUTURE. A node with nothing allocated (alloc_cpus == 0,
//   alloc_mem_mb == 0, running_jobs == 0, no GPU used) is idle: only idle
//   nodes take --exclusive jobs, and an exclusive job takes all CPUs, so
//   "alloc_cpus == cpus" is what keeps everything else off its node.
//
// The controller applies a StartDecision with ApplyStart and gives the
// resources back with ReleaseJob, so both sides agree on the accounting.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/accounts.h"
#include "core/job.h"
#include "core/node.h"
#include "core/reservation.h"
#include "sched/refusal.h"
#include "util/status.h"

namespace muster::sched {

// A job's request reduced to numbers the placement works with.
//
// Node count and task layout (sbatch -N/-n/--ntasks-per-node):
//   min_nodes == max_nodes: exactly that many nodes; with -n each node in
//     turn takes as many tasks as fit, leaving one for each further node
//     (Slurm: -N 2 -n 4 is 3,1), except with --ntasks-per-node, --exclusive
//     or --gpus, which spread them in blocks (the first ntasks % nodes nodes
//     get one more; see stage_select.cc).
//   max_nodes > min_nodes: the job may spread (-n without -N, --gpus without
//     -N or -n, or -N min-max); nodes are filled greedily in preference
//     order with as many tasks (and --gpus GPUs) as fit, all or nothing.
//   ntasks_set == false: one task per node (ntasks_per_node when given), so
//     the task count follows the node count.
// CPUs on a node = tasks there * cpus_per_task, or ntasks_per_node *
// cpus_per_task when --ntasks-per-node is given (Slurm reserves the full
// per-node count: -n 5 --ntasks-per-node=2 gets 6 CPUs), or all of the
// node's CPUs with --exclusive.
struct ResourceRequest {
  int min_nodes = 1;
  int max_nodes = 1;  // == min_nodes unless the job may spread (-n without -N)
  int ntasks = 1;
  bool ntasks_set = false;  // -n given (else one task per node, see above)
  int ntasks_per_node = 0;  // 0 = free distribution
  int cpus_per_task = 1;
  int64_t mem_per_node_mb = 0;  // exactly one of mem_per_node / mem_per_cpu is set
  int64_t mem_per_cpu_mb = 0;   // (or neither, with whole_node_mem)
  bool whole_node_mem = false;  // --mem=0, or no memory option and no DefMemPerCPU
  // --cpus-per-gpu: a node's share takes at least this many CPUs per GPU
  // it gets there; --mem-per-gpu: its memory is this much per GPU (then
  // neither mem_per_node nor mem_per_cpu is set).
  int cpus_per_gpu = 0;
  int64_t mem_per_gpu_mb = 0;
  std::string gpu_type;         // "" = any
  int64_t gpus_per_node = 0;
  int64_t gpus_per_job = 0;  // --gpus=N, spread over nodes
  bool exclusive = false;
  std::vector<std::string> features;  // all required (-C a&b or a,b)
  // Each group needs at least one of its features on the node (-C a|b).
  // A matching OR's alternatives are one such group too.
  std::vector<std::vector<std::string>> feature_any;
  // -C [a|b|c] (matching OR): every node of the job has the same one of
  // these, tried in order.
  std::vector<std::string> feature_match;
  // -C a*2 (a count), [a*2&b*4] (multiple counts), (a&b)*2: that many of
  // the job's nodes (distinct ones for each count) have every feature of
  // `names` (with `any`, one of them).
  struct FeatureCount {
    std::vector<std::string> names;
    bool any = false;
    int count = 0;
  };
  std::vector<FeatureCount> feature_counts;
  std::vector<std::string> required_nodes;  // -w
  std::vector<std::string> excluded_nodes;  // -x
  // --gres entries other than "gpu" (e.g. "nic:1"): a node must have that
  // many configured. Node keeps no usage for them, so they are not counted
  // against other jobs.
  std::vector<core::GresRequest> other_gres;
};

// Every field of a request, as one string of bytes (a key, not for display):
// requests alike have the same key.
std::string RequestKey(const ResourceRequest& r);

// -C, Slurm's syntax: "a&b", "a,b" (all required, into r->features), "a|b"
// (any one, a group of r->feature_any), "(a|b)&c" (parentheses group),
// "a*2" and "(a&b)*2" (counts, with AND only), "[a|b]" (matching OR) and
// "[a*2&b*4]" (multiple counts), one bracket per job as in Slurm.
util::Status ParseConstraint(std::string_view text, ResourceRequest* r);

// Derives the request; `def_mem_per_cpu_mb` is DefMemPerCPU (0 = whole node).
// Returns InvalidArgument naming the option for inconsistent or malformed
// input (e.g. "--ntasks=3 is more than --ntasks-per-node=2 on 1 node(s)",
// a bad -w hostlist, both --mem and --mem-per-cpu). As sbatch does, -N
// larger than -n is lowered to -n, and -w naming k nodes raises -N to k.
util::Result<ResourceRequest> MakeResourceRequest(const core::JobRequest& req,
                                                  int64_t def_mem_per_cpu_mb);

// A cap on one job's starts in a pass, and the reason its tasks left over
// show when the cap (not the %N throttle or resources) stopped them.
struct StartLimit {
  int count = 0;
  core::PendingReason reason = core::PendingReason::kJobArrayTaskLimit;
};

// A job holding resources, and when it gives them back.
struct RunningJob {
  const core::Job* job;  // RUNNING, with alloc filled
  // start_time + time limit (the caller passes now + a horizon for UNLIMITED jobs).
  int64_t expected_end;
};

struct Snapshot {
  const config::Config* config = nullptr;
  std::vector<const core::Node*> nodes;   // config order
  // Priority order, state PENDING, and free to start as far as anything
  // outside the cluster's resources goes (the controller keeps jobs waiting
  // on a dependency out). job.partition may list several ("short,long").
  std::vector<const core::Job*> pending;
  // Tasks of each job array (by array id) that hold resources now, for the
  // arrays' %N throttles (Job::array_max_running).
  std::map<core::JobId, int> array_running;
  // At most this many starts of a job this pass (an array whose tasks'
  // dependencies are checked one task at a time); absent = no limit.
  std::map<core::JobId, StartLimit> start_limit;
  // The jobs holding resources and when they end, from which backfill
  // plans when a blocked job could start (empty: it never plans, and a job
  // waiting for resources holds back its partition, as sched/builtin).
  std::vector<RunningJob> running;
  // Accounts and QOS (sacctmgr), for the QOS limits; null = none.
  const core::AccountTable* accounts = nullptr;
  // Advance reservations (scontrol create reservation): in its window a
  // reservation's nodes take only jobs that name it (sbatch
  // --reservation), and those jobs only its nodes (all nodes with FLEX).
  std::vector<const core::Reservation*> reservations;
  // Running jobs already told to stop for a preemption (in their
  // GraceTime): their resources count as coming free, and they are not
  // preempted again.
  std::set<core::JobId> preempting;
  int64_t now = 0;
  // Node name -> index in `nodes`, kept by a caller whose nodes never
  // change (null: each pass builds it, a hash of every node's name).
  const std::unordered_map<std::string_view, int>* node_index = nullptr;
  // Partition name -> its nodes as a pass tries them (PartitionNodes),
  // kept by the same caller (null: each pass works them out).
  const std::unordered_map<std::string, std::vector<int>>* partition_nodes = nullptr;
  // Plan every job that cannot start now (its planned start is squeue
  // --start's estimate and the explanations'). False: plan only as far as
  // that can change what starts now: once the usable nodes have fewer CPUs
  // free than any later job asks for (and nothing is preempted), the later
  // jobs wait unplanned, with Priority behind a job waiting for resources,
  // else Resources. The simulator, which reads only the starts, runs so.
  bool plan_all = true;
};

// For each partition of the configuration, the indices in snapshot.nodes
// of its nodes in the order a pass tries them: by Weight, then index.
std::unordered_map<std::string, std::vector<int>> PartitionNodes(const Snapshot& snapshot);

struct StartDecision {
  core::JobId job_id = 0;
  std::string partition;
  std::vector<core::NodeAlloc> alloc;  // in node order
  // Started past a job of higher priority left waiting for resources
  // (sdiag's and the simulator's backfilled jobs).
  bool backfilled = false;
};

struct PendingDecision {
  core::JobId job_id = 0;
  core::PendingReason reason = core::PendingReason::kNone;
  // ReqNodeNotAvail: the unusable nodes that hold it back, as a hostlist
  // (Slurm's "ReqNodeNotAvail, UnavailableNodes:gpu03"): those of -w, else
  // with -C those of the partition that have the features; "" when it
  // asked for no particular nodes (Slurm then says "Nodes required for job
  // are DOWN, DRAINED or reserved for jobs in higher priority partitions").
  std::string unavailable_nodes;
  // ReqNodeNotAvail because a node named by -w is held by a reservation
  // the job is not in, over its time limit from now.
  bool reserved = false;
  // When a job stage (see JobStage) held it back: the stage's name
  // ("eligibility", "limits") and, where it has numbers, what holds it
  // (a QOS limit: which, and what holds it). For BadConstraints, stage
  // "placement" and the detail its submission would be refused with now.
  std::string_view stage;
  std::string detail;
};

// With backfill, a job that cannot start now but is planned: its earliest
// start, on which nodes, reserved in the availability profile so no later
// job delays it (squeue --start, scontrol show job's StartTime).
struct PlannedStart {
  core::JobId job_id = 0;
  std::string partition;
  int64_t start = 0;
  std::vector<core::NodeAlloc> alloc;  // what it takes then, in node order
};

// With preemption (config::Config::preempt_type): a running job to stop
// so that a job it may be preempted by can start (the controller stops it
// as PreemptTermsOf says).
struct Preemption {
  core::JobId victim = 0;
  core::JobId by = 0;
};

// How a running job is preempted: what happens to it, the seconds between
// SIGTERM and its end, and how long it must have run first. Under
// preempt/qos PreemptMode and GraceTime are its QOS's, else its
// partition's, each falling back to the cluster's mode; a QOS's
// PreemptExemptTime (when not -1) comes before the cluster's under either.
// The pass and the controller both use this one rule.
struct PreemptTerms {
  core::PreemptMode mode = core::PreemptMode::kOff;
  int64_t grace_s = 0;
  int64_t exempt_s = 0;
};
PreemptTerms PreemptTermsOf(const core::Job& job, const config::Config& cfg,
                            const core::AccountTable* accounts);

struct Plan {
  std::vector<StartDecision> starts;     // in decision order
  std::vector<Preemption> preemptions;   // in decision order
  std::vector<PendingDecision> pending;  // every pending job not started
  std::vector<PlannedStart> planned;     // in priority order
  // What the pass did, for sdiag: the pending jobs it went through; the
  // starts past a job left waiting for resources (backfilled); whether it
  // planned (some job could not start now, under sched/backfill) and the
  // moments of its availability profile then.
  struct Figures {
    int64_t depth = 0;
    int64_t backfilled = 0;
    bool planned = false;
    int64_t table_size = 0;
  };
  Figures figures;
  // Until when the same snapshot, with only its time moved on, makes the
  // same starts and preemptions: the first moment a --switches wait runs
  // out, a reservation begins or ends, a job leaves its PreemptExemptTime,
  // a planned start comes due, or bf_window reaches a change it did not
  // reach. INT64_MAX when none does. A caller that changed nothing but the
  // time since this pass may skip the passes before it (muster sim does).
  int64_t same_until = INT64_MAX;
};

// One scheduling pass. Every job of snapshot.pending ends up in exactly one
// of plan.starts / plan.pending, except an array's pending part: it appears
// in plan.starts once per task to start now (the controller splits a task
// off for each) and also in plan.pending when tasks are left, with the
// reason they wait (JobArrayTaskLimit when the %N throttle is what stops
// them). A job listing several partitions starts in the first one listed
// where it fits. Reasons, checked in this order:
//   JobHeldAdmin / JobHeldUser (job.held), BeginTime (req.begin_time > now),
//   PartitionInactive (state INACTIVE, or the partition is unknown),
//   PartitionDown (state DOWN; DRAIN still runs queued jobs, as in Slurm),
//   PartitionTimeLimit (partition MaxTime < job.time_limit_s, -1 = unlimited),
//   PartitionNodeLimit (-N above the partition's MaxNodes / below MinNodes),
//   Reservation (--reservation names one that has not begun, or that is
//   gone),
//   a limit of the job's QOS, then of its association and the accounts
//   above it (QOSMaxJobsPerUserLimit, QOSGrpGRES, AssocMaxJobsLimit,
//   AssocGrpGRES, ...; with snapshot.accounts; checked for the request and
//   again for the nodes chosen; PendingDecision::detail says which limit;
//   does not block the partition),
//   Priority (an earlier job of the same partition waits for Resources;
//   with backfill, see below, only when the job cannot start without
//   delaying a planned start),
//   BadConstraints (no set of the partition's nodes could ever hold it, or
//   its request is malformed), ReqNodeNotAvail (it could run on the
//   partition's nodes but not on those that are up: -w names a node that
//   is down, drained or not responding, or too few nodes with its -C
//   features, or too few at all, are up; does not block the partition),
//   ReqNodeNotAvail with PendingDecision::reserved (a -w node is held by
//   a reservation the job is not in, for some of its time limit),
//   Resources (otherwise; blocks the partition for the rest of the pass).
// Backfill (SchedulerType=sched/backfill, config::Config::backfill) plans
// as Slurm's backfill scheduler does, for every pending job (up to
// bf_max_job_test, bf_max_job_user per user, and only jobs of priority
// bf_min_prio_reserve and above): it keeps an availability profile of every
// node over time (free now, more as running jobs and this pass's starts end
// by their time limits), and a job that cannot start now gets the earliest
// moment, rounded up to bf_resolution and within bf_window, from which it
// fits for its whole time limit; that start is reserved in the profile
// (Plan::planned). A later job starts now only where it fits for its whole
// time limit around every reservation made before it, so it can delay no
// higher-priority job's planned start. A job that no known end lets start
// (the nodes it needs are held by jobs without a time limit) holds back the
// rest of its partition; one that could start only past bf_window gets no
// reservation, as in Slurm.
// Preemption (config::Config::preempt_type): a job that could run on its
// partition's nodes but waits for resources may have running jobs stopped
// for it: under preempt/partition_prio those of partitions with a lower
// PriorityTier, under preempt/qos those whose QOS is in its QOS's Preempt
// list (snapshot.accounts); in either case only jobs whose PreemptTermsOf
// mode is not OFF and that have run at least its exempt time. Only what
// must be is chosen: jobs already ending (completing, or preempted in
// their grace time) count as free first; then the lowest tier (or QOS
// priority) and the most recently started go first, until the job would
// fit; then each chosen job it would fit without is spared. The job itself
// starts in a later pass, when they have ended.
// Heterogeneous jobs (core::Job::het_job_id): the components come up
// together, when the first of them in the queue's order does. Each is
// placed as a job of its own would be, on nodes none of the others takes
// (as Slurm places them); they start only when every one of them can start
// now, and otherwise all wait with the reason of the first that cannot.
// While one of them is not in snapshot.pending (held, or waiting on a
// dependency) none starts, with reason None. No start is planned for a
// heterogeneous job that waits, so it reserves nothing ahead: later jobs
// may start in its place.
// Requires snapshot.config != nullptr and node names unique.
Plan Schedule(const Snapshot& snapshot);

// Checks at submission that some set of nodes of the partition could ever run
// the job (ignoring what is in use and node state). On failure returns
// kUnavailable with message = Slurm's line ("Requested node configuration is
// not available"), why->slurm_line the line Slurm prints before it when the
// CPUs or memory asked per node exceed every node ("CPU count per node can
// not be satisfied", "Memory specification can not be satisfied"), and
// why->detail a line naming the resource, what was asked and the most any
// node offers, e.g. "gres/gpu: requested 16 per node, the most any node in
// partition gpu has is 8".
// Where Slurm answers differently it returns kInvalidArgument with Slurm's
// message and our detail: "Invalid feature specification" (a feature no node
// of the cluster has), "Invalid generic resource (gres) specification" (a
// GRES name the cluster does not know), "Invalid node name specified" (-w/-x
// naming a node not in the configuration). Malformed requests (see
// MakeResourceRequest) come back as kInvalidArgument with their own text;
// inconsistent task/node counts as kUnavailable, as Slurm does (these have
// no slurm_line). `why` may be null.
//
// With `cache`, a request alike (RequestKey) to one checked before against
// the same partition gets that one's verdict: for a caller that checks
// many submissions against one configuration that never changes (the
// check walks the partition's nodes several times).
struct SatisfiableCache {
  static constexpr size_t kMaxVerdicts = 100000;
  std::unordered_map<std::string, std::pair<util::Status, SubmitRefusal>> verdicts;
};
util::Status CheckSatisfiable(const core::JobRequest& req, const core::Partition& part,
                              const config::Config& cfg, SubmitRefusal* why,
                              SatisfiableCache* cache = nullptr);

// Finds a live node by name (e.g. the controller's node map); null for unknown.
using NodeLookup = std::function<core::Node*(const std::string& name)>;

// Applies a start to the live nodes: adds each NodeAlloc's CPUs and memory,
// marks its GPU indices and CPU ids used, counts the job in running_jobs.
// `nodes` is searched by name. All or nothing: returns FailedPrecondition
// (changing nothing) when a node is unknown, would be over-allocated, or a
// GPU index or CPU id is out of range or already used, or the CPU ids do not
// number NodeAlloc.cpus — the plan no longer matches live state. A share
// without CPU ids counts its CPUs only.
util::Status ApplyStart(const StartDecision& start, const std::vector<core::Node*>& nodes);
util::Status ApplyStart(const std::vector<core::NodeAlloc>& alloc,
                        const std::vector<core::Node*>& nodes);

// Names the CPUs of each node share that has none yet: free CPU ids of the
// node (Node::cpu_used), as many as NodeAlloc.cpus, those gres.conf Cores=
// puts near the share's GPUs first, then the lowest others. Called on a
// plan's allocation before ApplyStart (the plan itself only counts CPUs).
// A share is left without ids when the node has fewer free ids than it
// needs (only after restoring allocations recorded without ids).
void AssignCpuIds(std::vector<core::NodeAlloc>* alloc, const NodeLookup& lookup);

// Gives a finished (or requeued) job's allocation back: the inverse of
// ApplyStart. Unknown nodes are skipped (a node removed from the
// configuration); counts never go below zero. Returns FailedPrecondition
// when the accounting was inconsistent (something freed twice), after
// releasing what it could.
util::Status ReleaseJob(const core::Job& job, const std::vector<core::Node*>& nodes);
util::Status ReleaseJob(const std::vector<core::NodeAlloc>& alloc,
                        const std::vector<core::Node*>& nodes);

// The same with the controller's own name lookup (e.g. its node map), so a
// start costs O(nodes of the job), not O(cluster).
util::Status ApplyStart(const std::vector<core::NodeAlloc>& alloc, const NodeLookup& lookup);
util::Status ReleaseJob(const std::vector<core::NodeAlloc>& alloc, const NodeLookup& lookup);

}  // namespace muster::sched

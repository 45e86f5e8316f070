// The cluster's state machine: the job table, the nodes and every piece of
// state a scheduling decision reads, with the decisions on them. It never
// reads a clock, a file or a socket: time comes in as `now`, and what must
// be carried out (jobs to launch, victims to signal, records to journal)
// comes back as data. musterd wraps it in I/O (ctld::Controller); `muster
// sim` drives it on a virtual clock (src/sim/replay.h); both run this code.
//
// Owned by its driver; single-threaded (musterd's event loop), no locks.
//
// The driver's appliers that have not moved here yet (requeue, cancel,
// node updates, reservations) still write the state through the mutable
// accessors below; each piece has this one owner and its invariants are
// written beside it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/job_table.h"
#include "config/config.h"
#include "core/accounts.h"
#include "core/job.h"
#include "core/node.h"
#include "core/reservation.h"
#include "sched/dependency.h"
#include "sched/fairshare.h"
#include "sched/partition_rules.h"
#include "sched/refusal.h"
#include "sched/scheduler.h"
#include "sched/usage.h"
#include "util/status.h"

namespace muster::cluster {

// How long a running job without a time limit is expected to run, for
// backfill's plans and start estimates.
inline constexpr int64_t kUnlimitedRunS = 7 * 24 * 3600;

// Who submits, as the driver established it (musterd: from the kernel's
// peer credentials; the request already carries uid, gid, user name and
// groups).
struct Submitter {
  bool admin = false;  // an operator: may set a negative nice
  // The gid a group name (or number) names, for partitions' AllowGroups.
  sched::GroupLookup group_id;
};

// What the driver asks of a pass.
struct PassOptions {
  // Refresh the people's explanations of waiting jobs (squeue's "why
  // pending") and plan every waiting job's start (squeue --start): worth
  // nothing to a replay that prints only figures, which runs without
  // (sched::Snapshot::plan_all), with the same starts.
  bool explain = true;
  // Nothing but the time changed since the last pass (no event, no
  // request, nothing the driver did with its outcome): the pass may keep
  // the last one's decisions until the moment that pass said the time
  // alone could change them (sched::Plan::same_until, a begin time, a
  // dependency's +time, the queue's order under multifactor), and then
  // reports skipped. muster sim passes it on its timer's passes.
  bool only_time_changed = false;
};

// What one pass decided, for the driver to carry out in this order: the
// starts are applied to the state (resources held, RUNNING) and must be
// launched, on disk first; the preemptions' victims are still running.
struct PassOutcome {
  bool ran = false;  // false: nothing was eligible, sched::Schedule not called
  // Not ran because it would decide what the last pass decided
  // (PassOptions::only_time_changed).
  bool skipped = false;
  int64_t now = 0;
  // Jobs started this pass, in decision order (array tasks split off
  // under their new ids), and whether each passed a job of higher
  // priority left waiting (backfilled).
  struct Start {
    core::JobId id = 0;
    bool backfilled = false;
  };
  std::vector<Start> started;
  // Pending jobs cancelled because their dependency can never be met
  // (--kill-on-invalid-dep, kill_invalid_depend).
  std::vector<core::JobId> cancelled;
  // The plan's preemptions and figures (sdiag), as sched::Schedule gave them.
  std::vector<sched::Preemption> preemptions;
  sched::Plan::Figures figures;
  int64_t queue_depth = 0;  // pending jobs when the pass began
  // Another pass should follow soon: a start may let a dependency or a
  // GpuReserve go, or an array task was split off with a failed pairing.
  bool again = false;
};

// A victim of a preemption (Cluster::Preempt), still running: with a
// GraceTime it is to be told SIGTERM now and stopped at its deadline
// (Cluster::StopPreempted), else it is COMPLETING and to be stopped now.
struct Preempted {
  core::JobId victim = 0;
  core::JobId by = 0;
  int64_t grace_s = 0;
};

// How a run's end was taken (Cluster::EndJob).
struct JobEnd {
  bool held_resources = false;  // it ran (RUNNING or COMPLETING) until now
  // It went back to the queue (a requeue asked for, a preemption under
  // PreemptMode=REQUEUE, a node failure with --requeue) instead of ending.
  bool requeued = false;
  bool node_failure_requeue = false;
  core::JobState state = core::JobState::kPending;  // the end state, unless requeued
};

class Cluster {
 public:
  // The nodes of `cfg` (which must outlive this), in their configured
  // state, not yet registered; usage starts at `now`.
  Cluster(const config::Config& cfg, int64_t now);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const config::Config& config() const { return cfg_; }

  // -- the state -----------------------------------------------------------
  JobTable& jobs() { return jobs_; }
  const JobTable& jobs() const { return jobs_; }
  // Ids of the PENDING jobs: exactly the jobs in state PENDING, so a pass
  // does not walk the jobs that ended and are kept only for MinJobAge.
  std::set<core::JobId>& pending_ids() { return pending_ids_; }
  const std::set<core::JobId>& pending_ids() const { return pending_ids_; }
  // Requeued jobs whose previous run an agent is still stopping: they are
  // not scheduled until it has.
  std::set<core::JobId>& orphans() { return orphans_; }
  // Jobs preempted in their GraceTime, and when it ends.
  std::map<core::JobId, int64_t>& preempt_deadline() { return preempt_deadline_; }
  // How many tasks of each job array hold resources (the %N throttle):
  // the count of its records RUNNING or COMPLETING, no entry for zero.
  std::map<core::JobId, int>& array_running() { return array_running_; }
  // Parsed --dependency of pending jobs (a cache of job.req.dependency).
  std::map<core::JobId, sched::Dependency>& dependencies() { return dependencies_; }
  // The nodes, in configuration order; never resized (the pass's node
  // index holds views of their names).
  std::vector<core::Node>& nodes() { return nodes_; }
  const std::vector<core::Node>& nodes() const { return nodes_; }
  core::Node* FindNode(const std::string& name);
  const core::Node* FindNode(const std::string& name) const;
  sched::NodeLookup Lookup();
  core::AccountTable& accounts() { return accounts_; }
  const core::AccountTable& accounts() const { return accounts_; }
  std::map<std::string, core::Reservation>& reservations() { return reservations_; }
  const std::map<std::string, core::Reservation>& reservations() const { return reservations_; }
  // Fairshare usage (priority/multifactor), and the tree of the last pass.
  sched::UsageLedger& usage() { return usage_; }
  const sched::UsageLedger& usage() const { return usage_; }
  const std::optional<sched::ShareTree>& shares() const { return shares_; }
  // The next job id to give; ids only grow.
  core::JobId NewJobId() { return next_job_id_++; }
  core::JobId next_job_id() const { return next_job_id_; }
  // At least `id` (recovery; a submission that failed gives its id back).
  void SetNextJobId(core::JobId id) { next_job_id_ = id; }
  // Jobs changed since the driver last took them: each gets a journal
  // record (a deletion when it is no longer in the table).
  void MarkJob(core::JobId id) { changed_jobs_.insert(id); }
  std::set<core::JobId>& changed_jobs() { return changed_jobs_; }

  // -- the decisions -------------------------------------------------------
  // Submission's checks at `now` (src/cluster/admission.cc): account,
  // QOS, reservation, nice, script, partitions (with Slurm's refusals for
  // unknown, closed or forbidden ones and EnforcePartLimits), --signal,
  // --dependency, whether any partition could ever run it, the array, and
  // the submission limits. Returns the pending job it makes, without an
  // id; *why (not null) gets the line Slurm prints before a refusal and
  // Muster's detail.
  util::Result<core::Job> PrepareJob(core::JobRequest req, const Submitter& who, int64_t now,
                                     sched::SubmitRefusal* why) const;
  // Puts a prepared job in the queue under its id (a new one unless it has
  // one) and returns the id. Its script and environment are dropped: the
  // driver keeps them.
  core::JobId Admit(core::Job job, int64_t now);
  // The account a job without --account is charged to: the user's
  // default account, else (associations not enforced) the user's name.
  std::string DefaultAccountOf(const std::string& user) const;
  // One scheduling pass at `now`: dependency gating (which may cancel a job
  // or split an array task off), eligibility, priorities (advancing usage
  // under priority/multifactor), sched::Schedule, the reasons and
  // explanations of the jobs left waiting, and the starts applied. The
  // preemptions are only decided (see PassOutcome).
  PassOutcome Pass(int64_t now, const PassOptions& options = {});
  // A snapshot of the state for sched::Schedule and its estimates; its
  // pending list is empty.
  sched::Snapshot Snapshot(int64_t now) const;
  // The jobs holding resources, and when each is expected to end (its
  // time limit; a week from `now` without one).
  std::vector<sched::RunningJob> RunningJobs(int64_t now) const;
  // A pending job's priority at `now` (sched/priority.h) with the
  // fairshare of the last pass; 0 for a held job.
  uint32_t PriorityOf(const core::Job& job, int64_t now) const;
  // Brings fairshare usage to `now`, charging the running jobs.
  void AdvanceUsage(int64_t now);
  // The fairshare tree over the usage and sacctmgr's associations, with a
  // default association for each of `also` that has none.
  sched::ShareTree Shares(std::vector<sched::AssocKey> also) const;
  // A job that held resources gives them back at `now`: its usage is
  // charged, its nodes freed, its array's running count lowered.
  void ReleaseResources(core::Job& job, int64_t now);
  // A run ends at `now` (its steps' end at `end_time`, 0: now) as `state`
  // says, unless the job was told how to end (a preemption, scontrol
  // requeue): its resources are given back and it either ends or goes back
  // to the queue.
  JobEnd EndJob(core::Job& job, core::JobState state, int exit_code, int exit_signal,
                int64_t end_time, const std::string& detail, int64_t now);
  // Back to PENDING under the same id, Restarts+1 (requeue, node failure),
  // submitted again at `now` and held back until now + AuthInfo=cred_expire
  // + 1 (Reason=BeginTime), as Slurm does. `node_failure`: its node failed
  // under it (accounting closes the run NODE_FAIL rather than REQUEUED).
  void PutBackInQueue(core::Job& job, bool hold, const std::string& detail, bool node_failure,
                      int64_t now);
  // Applies a pass's preemptions at `now`: each running victim is marked
  // preempted (once), given its partition's or QOS's GraceTime, or stopped
  // at once; its preemptor's explanation names the victims.
  std::vector<Preempted> Preempt(const std::vector<sched::Preemption>& preemptions, int64_t now);
  // A preempted job's GraceTime is over (or it had none): COMPLETING, to
  // end as its preemption says; the driver stops its processes.
  void StopPreempted(core::Job& job);
  // How a preempted job ends: requeued (PreemptMode=REQUEUE, a batch job
  // that may be requeued) or PREEMPTED.
  void MarkPreemptedEnd(core::Job& job);
  // A node's agent registered it (booted at `boot_time`): a reboot is over,
  // and a node DOWN only for not responding returns to service. Returns
  // whether its saved state changed.
  bool NodeRegistered(core::Node& node, int64_t boot_time);
  // Takes task `task` out of an array's pending part into a pending record
  // of its own (a new job id), or returns the part itself when `task` is
  // the last one left (it becomes that task, as in Slurm).
  core::Job& SplitTask(core::Job& part, int task);
  // The moment a +time dependency offset lets a job go (0: none), and when
  // the last pass ran, from which housekeeping times the next one.
  int64_t next_dependency_time() const { return next_dependency_time_; }
  int64_t last_pass_time() const { return last_pass_time_; }

 private:
  // Whether a pending job's dependency lets it be scheduled now (the rules
  // are sched::GateDependency's; this applies what they decide): kNone, or
  // Dependency / DependencyNeverSatisfied with job.explanation and
  // job.dependency_state set. A job whose dependency can never be met is
  // cancelled here when it or the cluster asks (--kill-on-invalid-dep,
  // kill_invalid_depend), and added to outcome->cancelled. An array's
  // pending part whose dependency is checked task by task (aftercorr,
  // singleton) may start only its first start_limit->count tasks this pass
  // (0 = no such limit); when the next one waits on its own partner, the
  // limit's reason is Dependency and *cut_why says why.
  core::PendingReason DependencyGate(core::Job& job, int64_t now, sched::StartLimit* start_limit,
                                     std::string* cut_why, PassOutcome* outcome);
  // The refusal sbatch prints for a malformed --dependency.
  util::Status CheckDependency(const core::JobRequest& req) const;
  // The limits that refuse a submission: the QOS's MaxSubmitJobsPerUser
  // and the association's MaxSubmitJobs, and with the QOS's
  // Flags=DenyOnLimit the QOS limits that would hold it for ever (MaxWall,
  // MaxTRESPerJob, a per-user or group TRES limit below the job alone).
  // Slurm's refusal, with the limit in why->slurm_line and why->detail.
  util::Status CheckLimitsAtSubmit(const core::Job& job, sched::SubmitRefusal* why) const;
  // AdvanceUsage with the running jobs already listed (a pass's snapshot).
  void AdvanceUsage(int64_t now, const std::vector<sched::RunningJob>& running);
  void CancelIfInvalidDepKills(core::Job& job, int64_t now, PassOutcome* outcome);
  // Orders the snapshot's queue by the core's queue sort and stores each
  // job's priority; under priority/multifactor it first advances usage and
  // rebuilds the fairshare tree over the queue's jobs.
  void Reprioritize(sched::Snapshot* snap);
  // Sets the reason and explanation of every job the pass left pending.
  void ExplainPending(const sched::Snapshot& snap, const sched::Plan& plan,
                      const PassOptions& options);
  // The explanations of the jobs waiting for resources (a simulation
  // each): at most once a simulated second, for the first few.
  void RefreshResourceExplanations(const sched::Snapshot& snap,
                                   const std::vector<core::Job*>& resources);
  // Applies the plan's starts to the state; returns the jobs started.
  std::vector<PassOutcome::Start> ApplyStarts(const sched::Plan& plan, int64_t now);
  // Whether the queue the last pass planned, still pending, keeps its
  // order at `now`: always under priority/basic; under multifactor the
  // priorities are computed again (usage advanced, as a pass would).
  bool QueueOrderHolds(int64_t now);
  // Until when a pass that only the time separates from this one decides
  // what this one did (see PassOptions::only_time_changed): the plan's
  // same_until, the earliest begin time of a job still to become
  // eligible, and no later than now when something else moves with the
  // time.
  int64_t SameUntil(const sched::Snapshot& snap, const sched::Plan& plan,
                    const PassOutcome& outcome, int64_t wake) const;

  const config::Config& cfg_;
  JobTable jobs_;
  std::set<core::JobId> pending_ids_;
  std::set<core::JobId> orphans_;
  std::map<core::JobId, int64_t> preempt_deadline_;
  std::map<core::JobId, int> array_running_;
  std::map<core::JobId, sched::Dependency> dependencies_;
  int64_t next_dependency_time_ = 0;
  int64_t last_pass_time_ = 0;
  // What the last pass said of the time alone: the passes before
  // same_until_ decide the same, if the queue keeps last_order_ (its
  // jobs in priority order, kept under multifactor only).
  int64_t same_until_ = 0;
  std::vector<core::JobId> last_order_;
  // Unfinished jobs by (uid, name) for singleton, built lazily in a pass.
  std::optional<std::map<std::pair<uint32_t, std::string>, std::vector<core::JobId>>>
      singleton_index_;
  // Explanations of jobs waiting for resources, refreshed at most once a
  // second (they cost a simulation each).
  int64_t next_explain_time_ = 0;
  std::map<core::JobId, std::string> explained_;
  std::vector<core::Node> nodes_;
  // Node name -> index in nodes_ (views of the nodes' own names: nodes_
  // is never resized after construction), handed to each pass's snapshot.
  std::unordered_map<std::string_view, int> node_index_;
  // Each partition's nodes as a pass tries them (sched::PartitionNodes),
  // handed to each pass's snapshot too.
  std::unordered_map<std::string, std::vector<int>> partition_nodes_;
  core::AccountTable accounts_;
  std::map<std::string, core::Reservation> reservations_;
  sched::UsageLedger usage_;
  std::optional<sched::ShareTree> shares_;
  // Whether a request could ever run in a partition, by request shape (the
  // configuration never changes under a Cluster): a cache, filled by the
  // const PrepareJob.
  mutable sched::SatisfiableCache satisfiable_;
  core::JobId next_job_id_ = 1;
  std::set<core::JobId> changed_jobs_;
};

// What a job holding resources is charged: its association and billing
// (its partition's TRESBillingWeights over its TRES, times its QOS's
// UsageFactor).
sched::UsageCharge ChargeOf(const core::Job& job, const config::Config& cfg,
                            const core::AccountTable& table);

}  // namespace muster::cluster

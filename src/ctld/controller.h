// musterd's controller: the cluster's state (owned by its cluster::Cluster)
// and the operations on it, and the agents hosting the nodes. All
// methods run on the one event-loop thread (no locks); the HTTP handlers
// and the agent connections call in from that loop. Owned by musterd's
// main. Every decision on jobs and nodes is the cluster's state machine
// (cluster::Cluster, src/cluster, around the pure scheduler of src/sched);
// this class is the I/O around it: the API and the agents, the journal
// written before anyone hears of a change, accounting, hooks and timers.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "api/http.h"
#include "api/line_conn.h"
#include "cli/render/render.h"
#include "config/config.h"
#include "core/accounts.h"
#include "core/job.h"
#include "core/node.h"
#include "core/node_samples.h"
#include "core/reservation.h"
#include "core/trigger.h"
#include "cluster/cluster.h"
#include "ctld/agent_registry.h"
#include "ctld/commit_pipeline.h"
#include "ctld/hook_runner.h"
#include "ctld/journal.h"
#include "ctld/node_prologs.h"
#include "sched/refusal.h"
#include "store/accounting.h"
#include "ctld/payload_store.h"
#include "ctld/server_stats.h"
#include "ctld/usage_keeper.h"
#include "sched/dependency.h"
#include "sched/estimate.h"
#include "sched/idle_gpus.h"
#include "sched/scheduler.h"
#include "util/clock.h"
#include "util/status.h"

namespace muster::ctld {

// Who is asking: from SO_PEERCRED.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool admin = false;
};

// The outcome of acting on one job (cancel, hold, ...), for the CLI to print.
// How srun says its step ended: the highest task exit code (signal 0 if
// none), the largest task's peak memory (KiB, -1 unknown) and the tasks'
// CPU time.
struct StepEnd {
  int exit_code = 0;
  int exit_signal = 0;
  int64_t max_rss_kb = -1;
  int64_t total_cpu_ms = 0;
  bool timed_out = false;  // its own time limit (srun -t) ended it
};

struct JobActionResult {
  std::string job_id;
  std::string error;  // empty = done
  // job_id names an array or an array task ("12_3", or "12" of an array),
  // which Slurm's scontrol reports as "12_3: <error>".
  bool array = false;
};

class Controller {
 public:
  // Time, and the timers of housekeeping and agent timeouts, come from
  // `time` (ctld::LoopTimeSystem in musterd, simulated in tests).
  Controller(boost::asio::io_context& io, config::Config cfg, util::TimeSystem& time);
  ~Controller();

  // Rebuilds the state from the snapshot and journal in StateSaveLocation.
  util::Status Recover();
  // Commits what is pending and writes a snapshot (at shutdown).
  util::Status Save();
  // Runs `fn` once everything changed so far is on disk: at once when
  // nothing is pending. Replies and agent messages go through here.
  void AfterCommit(std::function<void()> fn);

  // Submits a job; on success returns its id. Refusals carry Slurm's
  // message in the status, and in *why (not null) the line Slurm prints
  // before it, where it has one, and Muster's detail line.
  util::Result<core::JobId> Submit(core::JobRequest req, const Caller& caller,
                                   sched::SubmitRefusal* why);
  // A heterogeneous job (src/ctld/hetjobs.cc): one request per component,
  // the first with the script. Every component is checked as Submit checks
  // a job, and nothing is made unless all pass; a refusal names the
  // component. The others take the first's job-wide fields (name, script,
  // output, dependency, ...). Returns the first component's id, which
  // names the job.
  util::Result<core::JobId> SubmitHet(std::vector<core::JobRequest> reqs, const Caller& caller,
                                      sched::SubmitRefusal* why);

  // Whether `text` names an array or an array task ("12_3", "12_[1-3]", or
  // "12" when 12 is an array), for Slurm's "<id>: <error>" form.
  bool NamesArray(const std::string& text) const;

  // scancel: with filters; `signal` 0 = cancel.
  std::vector<JobActionResult> Cancel(const nlohmann::json& body, const Caller& caller);
  // scontrol hold/release (user_hold: uhold vs admin hold).
  std::vector<JobActionResult> Hold(const std::vector<std::string>& ids, bool hold, bool user_hold,
                                    const Caller& caller);
  // scontrol requeue / requeuehold (src/ctld/job_actions.cc).
  std::vector<JobActionResult> Requeue(const std::vector<std::string>& ids, bool hold,
                                       const Caller& caller);
  // scontrol update JobId=... with (lower-case key, value) pairs: all
  // checked before any is applied.
  util::Status UpdateJob(const std::string& id,
                         const std::vector<std::pair<std::string, std::string>>& fields,
                         const Caller& caller);
  // scontrol top: the jobs go ahead of their user's other pending jobs in
  // the same partition.
  std::vector<JobActionResult> Top(const std::vector<std::string>& ids, const Caller& caller);
  // squeue --start: fills estimated_start / estimated_nodes of the pending
  // jobs from a simulation of the running jobs' ends (src/ctld/explain.cc).
  void EstimateStartTimes();
  // scontrol reboot [ASAP] [nextstate=...] [reason=...] NODES|ALL
  // (src/ctld/reboots.cc): operators only, with RebootProgram set; each
  // node is rebooted by its agent once it runs nothing.
  util::Status RebootNodes(const std::string& nodes, const core::RebootRequest& req,
                           const Caller& caller);
  // scontrol cancel_reboot NODES: the requests not yet issued go.
  util::Status CancelReboots(const std::string& nodes, const Caller& caller);
  // scontrol update NodeName=... State=... Reason=...
  util::Status UpdateNodes(const std::string& nodes, const std::string& state,
                           const std::string& reason, const Caller& caller);

  // srun inside a batch job: creates step `step_id` and returns its layout.
  util::Result<nlohmann::json> CreateStep(core::JobId id, const nlohmann::json& body,
                                          const Caller& caller);

  // srun on a cluster of several hosts: starts step `step_id`'s tasks
  // through the agents of its nodes (body: the tasks of each node with
  // their environments, the command, and where srun waits for their
  // output: io_host, io_port, token). Returns the nodes asked.
  util::Result<nlohmann::json> LaunchStep(core::JobId id, int step_id, const nlohmann::json& body,
                                          const Caller& caller);

  // sattach (src/ctld/step_attach.cc): srun tells where sattach reaches
  // its step (body: "addresses" of its host, "port", "token" and the
  // "layout": each node with its tasks' ranks); the job's user and
  // operators ask for it by the step's id as given (Slurm's errors for
  // one that is not running).
  util::Status RegisterAttach(core::JobId id, int step_id, const nlohmann::json& body,
                              const Caller& caller);
  util::Result<nlohmann::json> AttachOf(core::JobId id, const std::string& step,
                                        const Caller& caller) const;

  // The running steps (the batch step of each running batch job, then its
  // srun steps), by job id, for squeue -s and scontrol show step.
  std::vector<render::StepInfo> RunningSteps() const;
  // Those of one running job, after `out`'s.
  void AppendRunningSteps(const core::Job& job, std::vector<render::StepInfo>* out) const;

  // sstat (src/ctld/step_stats.cc): asks the agents of running job `id`'s
  // hosts for its tasks' figures now and gives `done`, once every one
  // answered or after kStepStatsWaitS (an agent that has not answered by
  // then is left out, and named), {"steps": the running steps, "tasks":
  // core::TaskStats, "gpus": its GPUs' latest samples, "missing": hosts}.
  // An error when the job is not running (or unknown) or is another
  // user's and the caller no operator.
  using StepStatsDone = std::function<void(util::Result<nlohmann::json>)>;
  void StepStats(core::JobId id, const Caller& caller, StepStatsDone done);
  static constexpr int64_t kStepStatsWaitS = 5;

  // strigger (src/ctld/triggers.cc). Node and controller triggers are
  // operators'; a job's, its owner's too. The program runs as the one who
  // set it, which musterd can do only as root (else only its own user may
  // set triggers). Kept in StateSaveLocation/triggers.json, written before
  // the reply.
  util::Result<uint32_t> SetTrigger(core::Trigger trigger, const Caller& caller);
  const std::vector<core::Trigger>& triggers() const { return triggers_; }
  // Clears the triggers of id `id` (0: any), on job `job` (0: any) or set by
  // `uid` (nullopt: anyone's); an operator may clear any, others their own.
  // Returns how many were cleared; NotFound when none matched.
  util::Result<int> ClearTriggers(uint32_t id, core::JobId job, std::optional<uint32_t> uid,
                                  const Caller& caller);

  // scrontab (src/ctld/crontab.cc): `uid`'s crontab text, and installing
  // one (`entries`: {"line", "spec", "request": core::JobRequest}; an empty
  // text removes it). Returns the jobs of its entries.
  util::Result<std::string> CrontabOf(uint32_t uid, const Caller& caller) const;
  util::Result<std::vector<core::JobId>> InstallCrontab(uint32_t uid, const std::string& text,
                                                        const nlohmann::json& entries,
                                                        const Caller& caller);

  // salloc's (or srun's own) allocation ended with its command's exit code.
  util::Status CompleteAllocation(core::JobId id, int exit_code, const Caller& caller);
  // An allocation's state, and once it runs its SLURM_* environment.
  util::Result<nlohmann::json> AllocationOf(core::JobId id, const Caller& caller) const;

  // scancel N.S: `signal` (SIGKILL to cancel) to every task of the step,
  // through the agents that hold them; srun then reports how they ended.
  util::Status SignalStep(core::JobId id, int step_id, int signal, const Caller& caller);

  // srun's step ended (see StepEnd).
  util::Status EndStep(core::JobId id, int step_id, const StepEnd& end, const Caller& caller);

  // Agent connections.
  void AcceptAgent(std::shared_ptr<api::LineConn> conn);
  // The files served to configless agents (SlurmctldParameters=
  // enable_configless), by name ("muster.conf", "gres.conf"); empty: none.
  void ServeConfiguration(std::map<std::string, std::string> files) {
    configless_files_ = std::move(files);
  }

  // scontrol reconfigure (operators only): reads the configuration file
  // anew and, when it and the files configless agents are served are good,
  // serves the new files, tells every agent (each restarts in place on it)
  // and runs the restart hook, by which musterd restarts itself in place
  // on the new file, as Slurm 23.11's slurmctld does. A bad file changes
  // nothing; the error names its file and line.
  util::Status Reconfigure(const Caller& caller);
  void SetRestartHook(std::function<void()> hook) { restart_hook_ = std::move(hook); }

  // Read access for the API and renderers.
  const config::Config& config() const { return cfg_; }
  // Every job, in id order, with its indexes (squeue -u reads only the
  // jobs of JobTable::OfUser).
  const cluster::JobTable& jobs() const { return cluster_.jobs(); }
  // sprio's data (src/ctld/priority_report.cc): {"multifactor", "weights",
  // "jobs": [each pending job not held: id, partition, user, uid,
  // priority, nice, "factors" by name and "tres"]}.
  nlohmann::json PriorityReport();
  // sshare's data: {"rows": [sched::ShareRow as JSON, with "tres_run_mins"]}.
  nlohmann::json SharesReport();
  // sdiag's data: ServerStats::ToJson, with "now" and the jobs pending and
  // running now.
  nlohmann::json StatsReport() const;
  // /metrics (src/ctld/metrics.cc): the scheduler's state and counters in
  // Prometheus' text format.
  std::string MetricsText() const;
  // The agents' series (GPUs, jobs' usage), the idle-GPU policy's and the
  // health checks', appended to `out`.
  void AgentSeries(std::string* out) const;
  // sdiag -r: operators only ("Access/permission denied" otherwise).
  util::Status ResetStats(const Caller& caller);
  // An RPC served (the API's and the agents'), for sdiag.
  void CountRpc(const std::string& name, int id, uid_t uid, int64_t micros) {
    stats_.Rpc(name, id, uid, micros);
  }
  // sacctmgr (src/ctld/accounts_api.cc): `request` names an action (add,
  // modify, delete), an entity (account, user, qos), names, "where"
  // filters and "set" settings; with "commit" false nothing is stored.
  // Operators (and the user musterd runs as) only.
  util::Result<core::AccountsOutcome> ChangeAccounts(const nlohmann::json& request,
                                                     const Caller& caller);
  const core::AccountTable& accounts() const { return cluster_.accounts(); }
  // scontrol create|update|delete reservation (src/ctld/reservations.cc):
  // `request` has "op" and the fields as given (names, hostlists and flags
  // as text, times as epoch seconds). Returns scontrol's line ("Reservation
  // created: NAME") or Slurm's refusal. Operators only.
  util::Result<std::string> ChangeReservation(const nlohmann::json& request,
                                              const Caller& caller);
  // {"reservations": [...]} with each one's "state" and "core_cnt".
  nlohmann::json ReservationsReport() const;
  const std::vector<core::Node>& nodes() const { return cluster_.nodes(); }
  int64_t Now() const { return time_.Now(); }
  int64_t start_time() const { return start_time_; }
  bool IsAdmin(uint32_t uid) const;
  // The accounting database (sacct, seff, sreport); null before Recover().
  store::AccountingStore* accounting() { return acct_.get(); }

 private:
  void RequestSchedule();
  void RunSchedule();
  // Starts a job that was given its resources: PrologSlurmctld first where
  // configured (src/ctld/hook_runner.h), then PrepareNodes.
  void Launch(core::Job& job);
  // With PrologFlags=Alloc and a Prolog, runs it on every node of the job
  // (the job CONFIGURING meanwhile) and launches once all succeeded;
  // otherwise launches at once.
  void PrepareNodes(core::Job& job);
  // Asks the agents of `nodes` (of `job`'s allocation) to run the Prolog
  // for its current run.
  void SendNodePrologs(const core::Job& job, const std::vector<std::string>& nodes);
  // An agent's "prolog_done": starts the job once every node succeeded;
  // a failure drains the node and requeues the job held (an allocation,
  // which cannot be requeued, is cancelled).
  void OnAgentPrologDone(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  // The Prolog failed on `node` for `job` (a batch job that never
  // started): the node is drained and the job requeued, held.
  void RequeueAfterPrologFailure(core::Job& job, const std::string& node, const std::string& detail);
  // Reboots (src/ctld/reboots.cc): the requested ones whose node runs
  // nothing now are handed to their agents; ResumeTimeout is watched for
  // the ones issued; an agent's "node_booted" (an emulated node's reboot,
  // played) or its registration brings a node back, to its health check.
  void IssueDueReboots();
  void ArmRebootTimer();
  void OnRebootTimer();
  void NodeBackFromReboot(const std::shared_ptr<api::LineConn>& conn, core::Node& node);
  // The nodes `nodes` names ("ALL", or a hostlist), or an error.
  util::Result<std::vector<core::Node*>> NodesNamed(const std::string& nodes);
  void LaunchNow(core::Job& job);
  // The variables PrologSlurmctld and EpilogSlurmctld get, as Slurm's.
  std::vector<std::string> SlurmctldHookEnvironment(const core::Job& job,
                                                    std::string_view context) const;
  // At Recover(): the srun steps of running jobs, from the accounting
  // database, so that their ends still count.
  void RecoverRunningSteps();
  // An agent's message, handled (HandleAgentMessage: `type_out` gets its
  // type) and counted for sdiag.
  void OnAgentMessage(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  void HandleAgentMessage(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg,
                          std::string* type_out);
  void OnAgentClosed(const std::shared_ptr<api::LineConn>& conn);
  // Every SlurmdTimeout/3 each agent is pinged (it answers, or any message
  // of its counts); one silent for two intervals is closed, so a cut link
  // ends as a lost agent would (and the agent, hearing no ping, gives up
  // its side too: agent.h's WatchController).
  int64_t PingInterval() const;
  void PingAgents();
  // A Prolog or Epilog (`hook`: kProlog, kEpilog) failed on `node`:
  // drained, "Prolog error: <detail>".
  void DrainForHook(const std::string& node, core::ReasonSource hook, const std::string& detail);
  // SlurmdTimeout after `host`'s agent went away: its nodes go DOWN and
  // their jobs NODE_FAIL.
  void OnAgentTimeout(const std::string& host, const std::vector<std::string>& nodes);
  void OnAgentRegister(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  void OnConfigRequest(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  // An agent's samples (src/ctld/agent_samples.cc): kept for /metrics,
  // added to each job's GPU usage, and the idle-GPU policy applied.
  void OnAgentSamples(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  // The running job holding each GPU, by (node, index).
  std::map<std::pair<std::string, int>, core::JobId> GpuHolders() const;
  core::JobLabels LabelsOf(const core::Job& job) const;
  void ApplyIdleGpuAction(core::Job& job, sched::IdleGpuAction action, int util_pct);
  // Runs IdleGpuNotifyProgram for `job` (event flagged, reminder, report,
  // cancelled, busy), to `recipient` (user or operators).
  void NotifyIdleGpu(const core::Job& job, std::string_view event, std::string_view recipient);
  // An agent's answer to StepStats.
  void OnAgentStepStats(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  void FinishStepStats(uint64_t request);
  // Health checks (src/ctld/health.cc): every HealthCheckInterval, each
  // agent is asked to check its nodes in HealthCheckNodeState's states;
  // its answer drains, or resumes, each node.
  void RunHealthChecks();
  // Checks `names` (nodes of the agent on `conn`) now and keeps them from
  // jobs until they answer: a node that joins (its agent registers, an
  // operator resumes it, it comes back from a reboot) is checked first,
  // as slurmd runs HealthCheckProgram before it registers. Nothing when
  // no check is configured.
  void CheckHealthOnJoin(const std::shared_ptr<api::LineConn>& conn,
                         const std::vector<std::string>& names);
  void OnAgentHealth(const std::shared_ptr<api::LineConn>& conn, const nlohmann::json& msg);
  // Whether health may drain another node for `check`: false past
  // MusterHealthMaxDrainPercent of the nodes drained for it.
  bool HealthMayDrain(const std::string& check) const;
  // Ends a job that ran: frees its resources, records the end.
  void FinishJob(core::Job& job, core::JobState state, int exit_code, int exit_signal,
                 int64_t end_time, const std::string& detail);
  // At Recover(): sacctmgr's accounts from the accounting database.
  util::Status LoadAccounts();
  // Reservations live in <StateSaveLocation>/reservations.json, written
  // whole (atomically) at each change.
  util::Status LoadReservations();
  util::Status SaveReservations() const;
  // A cron job's run ended (`state`): back to the queue for its next
  // minute, unless it was cancelled (or its crontab replaced). Returns
  // whether it went back.
  bool RequeueCronJob(core::Job& job, core::JobState state);
  // A cancelled cron job's crontab line becomes "#DISABLED: <line>".
  void DisableCronLine(const core::Job& job);
  util::Status LoadTriggers();
  util::Status SaveTriggers() const;
  // The trigger events of the changes about to be committed (the dirty
  // jobs and nodes): node state changes, job ends. Cheap when no trigger
  // is set.
  void CheckTriggers();
  // Runs trigger `t`'s program about `argument` (nodes, a job id), after
  // its offset (the caller drops one that is not PERM).
  void FireTrigger(const core::Trigger& t, const std::string& argument);
  // Fires every trigger of `type` on `resource`, without an argument:
  // musterd took control again (at start-up after a restart), or read its
  // configuration again (reconfig).
  void FireEventTriggers(std::string_view type, core::TriggerResource resource);
  // Visits every trigger (firing what it must); drops those `visit`
  // returns true for, saving the list when it changed.
  void SweepTriggers(const std::function<bool(const core::Trigger&)>& visit);
  void RunTriggerProgram(const core::Trigger& t, const std::string& argument);
  // Fires what has come due: job time limits, offsets.
  void RunDueTriggers();
  void ArmTriggerTimer();
  // The states node triggers compare with (down, drained), by node.
  void SnapshotTriggerNodes();
  // Housekeeping: ended reservations repeat (DAILY, WEEKLY) or go;
  // PURGE_COMP ones go after 5 minutes without jobs.
  void AgeReservations(int64_t now);
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  // The next moment after `now` at which a reservation begins, ends or may
  // be purged (kNever: none).
  int64_t NextReservationChange(int64_t now) const;
  // Whether a reservation began in (after, now]: its jobs may start.
  bool ReservationBegan(int64_t after, int64_t now) const;
  // Whether a pending or running job names the reservation.
  bool ReservationInUse(const std::string& name) const;
  // Back to PENDING under the same id, Restarts+1 (requeue, node failure),
  // submitted again now and held back until now + AuthInfo=cred_expire + 1
  // (Reason=BeginTime), as Slurm does.
  // `node_failure`: its node failed under it (accounting closes the run
  // NODE_FAIL rather than REQUEUED).
  void PutBackInQueue(core::Job& job, bool hold, const std::string& detail,
                      bool node_failure = false);
  // Preemption (the plan's): each victim is told SIGTERM and stopped after
  // its partition's GraceTime, or at once; StopPreempted requeues it
  // (PreemptMode=REQUEUE, a batch job that may be requeued) or ends it
  // PREEMPTED.
  void ApplyPreemptions(const std::vector<sched::Preemption>& preemptions, int64_t now);
  void StopPreempted(core::Job& job);
  void SendToAgentOf(const core::Job& job, const nlohmann::json& msg);
  // Ends a running job's processes (it finishes once they are gone); an
  // allocation, which has none, finishes at once as job.ending_as says.
  void StopJob(core::Job& job);
  // Sends once everything changed so far is on disk (launches, acks, cancels).
  void SendAfterCommit(const std::shared_ptr<api::LineConn>& conn, nlohmann::json msg);
  // Housekeeping runs when something is due (see job_wakes_), never on a
  // fixed tick: ArmHousekeeping sets its timer to the earliest such moment.
  void ArmHousekeeping();
  void Housekeeping();
  // The moments a job needs housekeeping, from its state: its purge after
  // MinJobAge, an allocation's time limit, its begin time.
  void NoteWakes(const core::Job& job);
  void AddWake(int64_t when, core::JobId id);
  // The records a user's job id names (src/ctld/arrays.cc): "123" (a job,
  // or every record of array 123), "123_4", "123_[1-3]". With
  // split_pending, tasks named inside an array's pending part are first
  // split off into records of their own, so they can be acted on one by
  // one. Error "Invalid job id specified" when nothing matches.
  util::Result<std::vector<core::Job*>> ResolveJobs(const std::string& text, bool split_pending);
  // ResolveJobs with split_pending for acting on jobs: refused with
  // "Access/permission denied" before anything is split when a record named
  // is not the caller's (and the caller is no admin).
  // scancel of array tasks still in their array's pending part: as in
  // Slurm they are taken out of it and are gone (no record, no id used).
  // Returns whether `text` named such tasks and only those (true: done).
  bool DropPendingTasks(const std::string& text, const Caller& caller);
  util::Result<std::vector<core::Job*>> ResolveForCaller(const std::string& text,
                                                         const Caller& caller);
  // The id whose payload (script, environment) a job runs: the array's for
  // array tasks.
  static core::JobId PayloadId(const core::Job& job) {
    return job.array_job_id != 0 ? job.array_job_id : job.het_job_id != 0 ? job.het_job_id : job.id;
  }
  // Submit's two halves: the submitter's identity and the cluster's
  // checks (cluster::Cluster::PrepareJob); then its id (unless it has
  // one), payload and place in the queue.
  util::Result<core::Job> PrepareJob(core::JobRequest req, const Caller& caller,
                                     sched::SubmitRefusal* why) const;
  util::Result<core::JobId> AdmitJob(core::Job job);
  // A pending job cancelled by `by` (its uid); the caller marks it.
  void CancelPending(core::Job& job, uint32_t by);
  // Every component of the heterogeneous job `any` is one of, in order;
  // none for any other job.
  std::vector<const core::Job*> HetComponents(const core::Job& any) const;
  std::vector<core::Job*> HetComponents(const core::Job& any);
  // A component ended as `ended` did: the others still holding resources
  // end the same way (components start and end together).
  void EndHetComponents(const core::Job& ended);
  util::Status CheckJobAccess(const core::Job& job, const Caller& caller) const;
  // Hold for one id as typed; appends its results to *out.
  void HoldOne(const std::string& sid, bool hold, bool user_hold, const Caller& caller,
               std::vector<JobActionResult>* out);
  // A refusal of CheckJobAccess (or ResolveForCaller) in the words of
  // Slurm's job update (hold, uhold, release, scontrol update), which says
  // "Invalid user id" where cancel and requeue say "Access/permission
  // denied"; any other status unchanged.
  static util::Status AsUpdateRefusal(util::Status st);
  // Brings fairshare usage to `now` (charging the running jobs) and saves
  // it when a PriorityCalcPeriod has passed.
  void AdvanceUsage(int64_t now);
  // cluster::Cluster::SplitTask, committed.
  core::Job& SplitTask(core::Job& part, int task) {
    core::Job& split = cluster_.SplitTask(part, task);
    RequestCommit();
    return split;
  }
  // A pending job's priority now (0 held), with the last pass's fairshare.
  uint32_t PriorityOf(const core::Job& job) const { return cluster_.PriorityOf(job, Now()); }
  // A job that held resources gives them back now.
  void ReleaseResources(core::Job& job) { cluster_.ReleaseResources(job, Now()); }
  void MarkJob(core::JobId id);
  void MarkNode(const core::Node& node);
  void RequestCommit();
  util::Status CommitNow();
  // The commit's writer: a record for each job and node marked since the
  // last one; accounting hears of them once they are durable.
  CommitPipeline::Callbacks WriteChanges(Journal& journal);
  std::string StateJson() const;
  static nlohmann::json NodeState(const core::Node& n);
  void ApplyNodeState(const nlohmann::json& n);

  boost::asio::io_context& io_;
  config::Config cfg_;
  util::TimeSystem& time_;
  // The jobs, nodes and every decision on them; this class is the I/O
  // around it.
  cluster::Cluster cluster_;
  // Saves the fairshare usage the cluster keeps (priority/multifactor).
  std::unique_ptr<UsageKeeper> usage_file_;
  PayloadStore payload_;  // scripts and environments of pending jobs
  std::unique_ptr<store::AccountingStore> acct_;
  AgentRegistry agents_;
  std::map<std::string, std::string> configless_files_;
  int64_t next_reservation_id_ = 1;
  std::function<void()> restart_hook_;
  // An srun step still running.
  struct RunningStep {
    store::StepRecord record;  // its accounting row
    // Its srun's host and pid (scontrol show step); unknown after a
    // restart.
    std::string srun_host;
    int srun_pid = 0;
    // The CPUs it holds on each of its nodes, unless it was started with
    // --overlap: another step of the job does not get them (Slurm 22.05's
    // default), it waits for them. Cleared when the job ends.
    std::map<std::string, int> cpus;
    // Its memory on each of its nodes (srun --mem, --mem-per-cpu; else
    // the job's there), which bounds its tasks' cgroup.
    std::map<std::string, int64_t> mem_mb;
  };
  std::map<std::pair<core::JobId, int>, RunningStep> running_steps_;
  int64_t start_time_ = 0;
  ServerStats stats_{0};  // sdiag's
  bool schedule_posted_ = false;
  // Passes are immediate while they are cheap; a pass that took d holds the
  // next one off for 4*d (at most 1 s), so a deep queue cannot turn every
  // submission into a full pass (Slurm's sched_min_interval, self-tuned).
  std::chrono::steady_clock::time_point next_pass_allowed_{};
  boost::asio::steady_timer schedule_timer_;
  HookRunner hooks_;
  NodePrologs node_prologs_;  // PrologFlags=Alloc: the nodes each starting job waits for
  std::unique_ptr<util::Timer> reboot_timer_;
  std::unique_ptr<util::Timer> ping_timer_;  // the next ResumeTimeout of a reboot issued
  // Group commit: what changed since the last commit, and the pipeline
  // that writes and syncs it.
  Journal journal_;
  std::set<std::string> dirty_nodes_;
  // Payloads of submissions not yet journalled (they ride in the record).
  std::map<core::JobId, std::string> new_payloads_;
  std::unique_ptr<CommitPipeline> commit_;
  util::Status Snapshot();
  static constexpr uint64_t kSnapshotEvery = 200000;
  // Moments a job needs housekeeping, by (moment, job id): hints, each
  // checked against the job when it comes, so one the job has moved past
  // costs a lookup and nothing else.
  std::set<std::pair<int64_t, core::JobId>> job_wakes_;
  // When housekeeping last ran (a reservation that began since lets a pass run).
  int64_t last_housekeeping_ = 0;
  std::unique_ptr<util::Timer> housekeeping_;
  // strigger's triggers, the node states they last saw, the firings
  // waiting for their offset, and the timer of those and of job time limits.
  std::vector<core::Trigger> triggers_;
  uint32_t next_trigger_id_ = 1;
  struct TriggerNodeState {
    bool down = false;
    bool drained = false;
    bool fail = false;
  };
  std::map<std::string, TriggerNodeState> trigger_nodes_;
  struct DelayedFiring {
    int64_t due = 0;
    core::Trigger trigger;
    std::string argument;
  };
  std::vector<DelayedFiring> delayed_firings_;
  std::unique_ptr<util::Timer> trigger_timer_;
  // sstat's requests waiting for agents, by number.
  struct StepStatsRequest {
    uint32_t uid = 0;               // the job's owner
    std::set<std::string> waiting;  // hosts yet to answer
    nlohmann::json reply;
    StepStatsDone done;
    std::unique_ptr<util::Timer> timeout;
  };
  std::map<uint64_t, StepStatsRequest> step_stats_requests_;
  uint64_t next_step_stats_request_ = 1;
  // The latest samples of each agent, by host (gone with its connection).
  std::map<std::string, core::NodeSamples> samples_;
  std::unique_ptr<util::Timer> health_timer_;
  int64_t health_due_ = 0;  // when the armed run is due
  size_t health_cursor_ = 0;  // HealthCheckNodeState=CYCLE: the next node to check
  // Each node's GPU driver version at its last health check, for the
  // driver_version check (every node on the version most nodes have).
  std::map<std::string, std::string> driver_versions_;
  // Health drains held back as a shared cause, by check, since start.
  std::map<std::string, int64_t> health_withheld_;
};

}  // namespace muster::ctld

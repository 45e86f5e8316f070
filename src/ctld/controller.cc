#include "ctld/controller.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <utility>

#include <boost/asio/post.hpp>

#include "core/json.h"
#include "core/array.h"
#include "core/step_messages.h"
#include "ctld/accounting_record.h"
#include "ctld/job_env.h"
#include "ctld/remote_hosts.h"
#include "sched/partition_rules.h"
#include "sched/pipeline.h"
#include "sched/priority.h"
#include "sched/scheduler.h"
#include "sched/step_layout.h"
#include "stepd/remote_tasks.h"
#include "stepd/step.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/signals.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {

namespace fs = std::filesystem;
using core::Job;
using core::JobId;
using core::JobState;
using nlohmann::json;

Controller::~Controller() = default;

Controller::Controller(boost::asio::io_context& io, config::Config cfg, util::TimeSystem& time)
    : io_(io),
      cfg_(std::move(cfg)),
      time_(time),
      cluster_(cfg_, time.Now()),
      agents_(time, cfg_.slurmd_timeout_s,
              [this](const std::string& host, const std::vector<std::string>& nodes) {
                OnAgentTimeout(host, nodes);
              }),
      schedule_timer_(io),
      hooks_(io),
      housekeeping_(time.MakeTimer([this] { Housekeeping(); })) {
  start_time_ = time_.Now();
  stats_ = ServerStats(start_time_);
  last_housekeeping_ = start_time_;
  usage_file_ = std::make_unique<UsageKeeper>(cfg_, &cluster_.usage(), start_time_);
  commit_ = std::make_unique<CommitPipeline>(
      io_, journal_, [this](Journal& journal) { return WriteChanges(journal); },
      [this] {
        // A long journal is folded into a snapshot once nothing is in flight.
        if (journal_.records_since_snapshot() < kSnapshotEvery) return;
        if (util::Status st = Snapshot(); !st.ok()) util::LogError("snapshot: {}", st.message());
      });
  ArmHousekeeping();
  // SlurmdTimeout=0: agents are never given up on, so not pinged either.
  if (cfg_.slurmd_timeout_s > 0) {
    ping_timer_ = time_.MakeTimer([this] { PingAgents(); });
    ping_timer_->ArmAt(start_time_ + PingInterval());
  }
  if (cfg_.health.enabled()) {
    health_timer_ = time_.MakeTimer([this] { RunHealthChecks(); });
    health_due_ = start_time_ + cfg_.health.interval_s;
    health_timer_->ArmAt(health_due_);
  }
}

bool Controller::IsAdmin(uint32_t uid) const {
  if (uid == 0) return true;
  std::string name = util::UserName(uid);
  return std::find(cfg_.admin_users.begin(), cfg_.admin_users.end(), name) !=
         cfg_.admin_users.end();
}

// ---------------------------------------------------------------- state ----

std::string Controller::StateJson() const {
  // Streamed job by job: one JSON tree for the whole table would cost
  // several KiB per job at its peak.
  json nodes = json::object();
  for (const auto& n : cluster_.nodes()) {
    if (!n.drain && !n.down && !n.fail && n.reboot == core::RebootState::kNone) continue;
    nodes[n.config.name] = NodeState(n);
  }
  std::string out = "{\"version\":1,\"next_job_id\":" + std::to_string(cluster_.next_job_id()) +
                    ",\"nodes\":" + nodes.dump() + ",\"jobs\":[";
  bool first = true;
  for (const Job& job : cluster_.jobs()) {
    if (!first) out += ',';
    first = false;
    out += json(job).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  out += "]}";
  return out;
}

json Controller::NodeState(const core::Node& n) {
  return {{"name", n.config.name},
          {"drain", n.drain},
          {"fail", n.fail},
          {"down", n.down},
          {"reason", n.reason},
          {"reason_uid", n.reason_uid},
          {"reason_time", n.reason_time},
          {"reason_actor", n.reason_actor},
          {"reason_source", core::ReasonSourceName(n.reason_source)},
          {"health_drained_by", n.health_drained_by},
          {"reboot", n.reboot},
          {"reboot_asap", n.reboot_asap},
          {"reboot_next_state", n.reboot_next_state},
          {"reboot_issued_time", n.reboot_issued_time}};
}

void Controller::ApplyNodeState(const json& n) {
  core::Node* node = cluster_.FindNode(n.value("name", ""));
  if (!node) return;
  node->drain = n.value("drain", false);
  node->fail = n.value("fail", false);
  node->down = n.value("down", false);
  node->reason = n.value("reason", "");
  node->reason_uid = n.value("reason_uid", 0u);
  node->reason_time = n.value("reason_time", int64_t{0});
  node->reason_actor = n.value("reason_actor", "");
  node->health_drained_by = n.value("health_drained_by", "");
  node->reboot = n.value("reboot", core::RebootState::kNone);
  node->reboot_asap = n.value("reboot_asap", false);
  node->reboot_next_state = n.value("reboot_next_state", "");
  node->reboot_issued_time = n.value("reboot_issued_time", int64_t{0});
  if (std::optional<core::ReasonSource> source =
          core::ParseReasonSource(n.value("reason_source", std::string("?")))) {
    node->reason_source = *source;
  } else {
    // A record from before the source was kept: health marked its drains;
    // any other reason was most likely an operator's.
    node->reason_source = node->reason_actor == "health" ? core::ReasonSource::kHealth
                          : node->reason.empty()         ? core::ReasonSource::kNone
                                                         : core::ReasonSource::kOperator;
  }
}

util::Status Controller::Save() {
  MUSTER_RETURN_IF_ERROR(CommitNow());
  // Before musterd says it has stopped (its pid file goes at once after):
  // a restart right away reads it.
  MUSTER_RETURN_IF_ERROR(usage_file_->Save());
  return Snapshot();
}

util::Status Controller::Snapshot() {
  // The journal is about to forget what it holds: the accounting store must
  // have it first, or a change the writer lost in a crash (a job's end, and
  // the job purged since) could never be handed over again. The store
  // catches up in milliseconds unless both its database and its spool are
  // unwritable; then the snapshot waits for a later try.
  if (!acct_->FlushWithin(std::chrono::seconds(5))) {
    util::LogWarn("snapshot postponed: the accounting store is not keeping up");
    return util::Status::Ok();
  }
  // The journal is about to forget the payloads it carried.
  MUSTER_RETURN_IF_ERROR(payload_.Sync());
  return journal_.WriteSnapshot(StateJson());
}

void Controller::MarkJob(JobId id) {
  cluster_.changed_jobs().insert(id);
  RequestCommit();
}

void Controller::MarkNode(const core::Node& node) {
  dirty_nodes_.insert(node.config.name);
  RequestCommit();
}

void Controller::AfterCommit(std::function<void()> fn) { commit_->AfterCommit(std::move(fn)); }

void Controller::RequestCommit() { commit_->Request(); }

util::Status Controller::CommitNow() { return commit_->CommitNow(); }

CommitPipeline::Callbacks Controller::WriteChanges(Journal& journal) {
  CheckTriggers();
  // Accounting hears of a change only once the journal holds it durably, so
  // sacct never shows what a crash takes back; each record carries its
  // journal sequence number, so recovery can hand over what the writer
  // lost (see Recover).
  auto accounting = std::make_shared<std::vector<AccountingChange>>();
  const int64_t now = Now();
  // Newest first: a task split off an array (a new, higher id) is on disk
  // before the array's pending part that no longer lists it, so a torn
  // write can repeat a task in the part (undone at recovery) but never lose it.
  for (auto rit = cluster_.changed_jobs().rbegin(); rit != cluster_.changed_jobs().rend(); ++rit) {
    const JobId id = *rit;
    const Job* job = cluster_.jobs().Find(id);
    if (job == nullptr) {
      journal.Append({{"op", "del"}, {"id", id}});  // purged after MinJobAge; sacct keeps it
    } else {
      NoteWakes(*job);
      json rec = {{"op", "job"}, {"t", now}, {"job", *job}};
      auto fresh = new_payloads_.find(id);
      if (fresh != new_payloads_.end()) rec["payload"] = std::move(fresh->second);
      const uint64_t seq = journal.Append(rec);
      accounting->push_back(ToAccountingChange(*job, cfg_, {seq, now}));
    }
  }
  cluster_.changed_jobs().clear();
  new_payloads_.clear();
  for (const auto& name : dirty_nodes_) {
    if (core::Node* n = cluster_.FindNode(name))
      journal.Append({{"op", "node"}, {"node", NodeState(*n)}});
  }
  dirty_nodes_.clear();
  if (accounting->empty()) return {};
  // Written by the store's own thread: never blocks this loop.
  return {[this, accounting] {
    for (const auto& change : *accounting) RecordChange(*acct_, change);
  }};
}

util::Status Controller::Recover() {
  std::error_code ec;
  fs::create_directories(cfg_.state_save_location, ec);
  if (ec) {
    return util::Internal("cannot create " + cfg_.state_save_location + ": " + ec.message());
  }
  store::AccountingOptions acct;
  acct.db_path = cfg_.state_save_location + "/accounting.db";
  acct.spool_path = cfg_.state_save_location + "/accounting.spool";
  acct.clock = &time_;
  acct_ = std::make_unique<store::AccountingStore>(acct);
  MUSTER_RETURN_IF_ERROR(LoadAccounts());
  MUSTER_RETURN_IF_ERROR(LoadReservations());
  MUSTER_RETURN_IF_ERROR(LoadTriggers());
  // Whether musterd ran here before: its journal is there from its first start on.
  const bool restarted = fs::exists(cfg_.state_save_location + "/journal.log", ec);
  json state;
  std::vector<json> records;
  std::vector<uint64_t> seqs;
  std::map<JobId, std::string> journal_payloads;
  MUSTER_RETURN_IF_ERROR(journal_.Open(cfg_.state_save_location, &state, &records, &seqs));
  // The accounting writer may have died with changes it had not written:
  // every journalled change after the last one it wrote is handed over
  // again (Upserts are idempotent), so sacct agrees with the job table.
  const uint64_t applied = acct_->AppliedSeq();
  size_t handed_over = 0;
  try {
    if (state.is_object()) {
      cluster_.SetNextJobId(
          std::max<JobId>(cluster_.next_job_id(), state.value("next_job_id", 1u)));
      // Snapshots wait for accounting to catch up (see Snapshot), so this
      // re-sends the snapshot's jobs only after a lost or replaced database.
      const bool resend = journal_.snapshot_seq() > applied;
      for (const auto& j : state.at("jobs")) {
        Job job = j.get<Job>();
        if (resend) {
          RecordChange(*acct_, ToAccountingChange(job, cfg_, {journal_.snapshot_seq(), 0}));
          ++handed_over;
        }
        cluster_.jobs().Put(std::move(job));
      }
      const json nodes = state.value("nodes", json::object());  // a copy: outlives the loop
      for (const auto& [name, n] : nodes.items()) {
        json with_name = n;
        with_name["name"] = name;
        ApplyNodeState(with_name);
      }
    }
    for (size_t i = 0; i < records.size(); ++i) {
      const json& r = records[i];
      std::string op = r.at("op").get<std::string>();
      if (op == "job") {
        Job job = r.at("job").get<Job>();
        if (r.contains("payload")) journal_payloads[job.id] = r["payload"].get<std::string>();
        cluster_.SetNextJobId(std::max<JobId>(cluster_.next_job_id(), job.id + 1));
        if (seqs[i] > applied) {
          RecordChange(*acct_, ToAccountingChange(job, cfg_, {seqs[i], r.value("t", int64_t{0})}));
          ++handed_over;
        }
        cluster_.jobs().Put(std::move(job));
      } else if (op == "del") {
        cluster_.jobs().Erase(r.at("id").get<JobId>());
      } else if (op == "node") {
        ApplyNodeState(r.at("node"));
      }
    }
  } catch (const std::exception& e) {
    return util::Internal(std::string("reading saved state: ") + e.what());
  }
  if (handed_over > 0) {
    util::LogInfo("accounting: {} job changes after journal record {} handed over again",
                  handed_over, applied);
  }
  // Running jobs hold their resources again until their agent reports.
  for (Job& job : cluster_.jobs()) {
    NoteWakes(job);
    if (job.state == JobState::kPending) cluster_.pending_ids().insert(job.id);
    if (job.state != JobState::kRunning && job.state != JobState::kCompleting) continue;
    util::Status st = sched::ApplyStart(job.alloc, cluster_.Lookup());
    if (!st.ok()) util::LogError("job {}: restoring its allocation: {}", job.id, st.message());
    if (job.array_job_id != 0) ++cluster_.array_running()[job.array_job_id];
  }
  RecoverRunningSteps();
  ArmRebootTimer();
  // Jobs whose nodes were running their Prolog: they wait for all again.
  for (const Job& job : cluster_.jobs()) {
    if (job.state != JobState::kRunning || !job.configuring) continue;
    std::vector<std::string> nodes;
    for (const core::NodeAlloc& a : job.alloc) nodes.push_back(a.node);
    node_prologs_.Start(job.id, job.restart_count, nodes);
  }
  // A task with a record of its own is no longer in its array's pending
  // part (the two differ only after a write torn between them).
  for (const auto& [array_id, ids] : cluster_.jobs().arrays()) {
    Job* part = cluster_.jobs().Find(array_id);
    if (part == nullptr || !part->IsArrayPendingPart()) continue;
    auto& pending = part->array_pending;
    for (JobId rid : ids) {
      const Job& rec = cluster_.jobs().At(rid);
      if (rid == array_id || rec.array_task_id < 0) continue;
      auto at = std::lower_bound(pending.begin(), pending.end(), rec.array_task_id);
      if (at != pending.end() && *at == rec.array_task_id) {
        pending.erase(at);
        // Journalled again, so the repair outlives the task's own record
        // (purged later) and a second crash cannot put the task back.
        MarkJob(array_id);
      }
    }
  }
  // Running jobs keep their script too: a NODE_FAIL may requeue them.
  // Every job in the table keeps its script until it is purged: a finished
  // one may still be requeued.
  std::set<JobId> live;
  for (const Job& job : cluster_.jobs()) live.insert(PayloadId(job));
  MUSTER_RETURN_IF_ERROR(payload_.Open(cfg_.state_save_location + "/payload", live));
  // Payloads acknowledged through the journal but not yet synced in the
  // payload store before a crash come back from the journal.
  for (auto& [id, text] : journal_payloads) {
    if (!live.count(id) || payload_.Read(id).ok()) continue;
    MUSTER_RETURN_IF_ERROR(payload_.Append(id, text));
  }
  MUSTER_RETURN_IF_ERROR(payload_.Sync());
  util::LogInfo("recovered {} jobs ({} journal records replayed), next job id {}",
                cluster_.jobs().size(), records.size(), cluster_.next_job_id());
  ArmHousekeeping();
  // The node states recovered are those node triggers compare with.
  SnapshotTriggerNodes();
  // A restart (not the first start): musterd has control again.
  if (restarted) {
    FireEventTriggers("primary_slurmctld_resumed_operation", core::TriggerResource::kController);
    FireEventTriggers("primary_slurmctld_resumed_control", core::TriggerResource::kController);
  }
  ArmTriggerTimer();
  return util::Status::Ok();
}

// ----------------------------------------------------------- submission ----

util::Result<JobId> Controller::Submit(core::JobRequest req, const Caller& caller,
                                       sched::SubmitRefusal* why) {
  util::Result<Job> job = PrepareJob(std::move(req), caller, why);
  if (!job.ok()) return job.status();
  return AdmitJob(std::move(job).value());
}

util::Result<Job> Controller::PrepareJob(core::JobRequest req, const Caller& caller,
                                         sched::SubmitRefusal* why) const {
  // Identity comes from the kernel, never from the request.
  req.uid = caller.uid;
  req.gid = caller.gid;
  req.user_name = util::UserName(caller.uid);
  req.groups = util::UserGroups(caller.uid, caller.gid);
  const cluster::Submitter who{caller.admin,
                               [](const std::string& g) { return util::LookupGid(g); }};
  return cluster_.PrepareJob(std::move(req), who, Now(), why);
}

util::Result<JobId> Controller::AdmitJob(Job job) {
  if (job.id == 0) job.id = cluster_.NewJobId();
  // The script and environment live on disk, not in the job table, so a
  // pending job costs little memory; a heterogeneous job's components
  // other than the first run none of their own.
  // The journal record of the submission carries the payload too, so one
  // fdatasync (the journal's) makes the submission durable; the payload
  // store itself is synced before each snapshot truncates the journal.
  if (job.het_job_offset <= 0) {
    json payload = {{"script", job.req.script}, {"environment", job.req.environment}};
    std::string payload_text = payload.dump(-1, ' ', false, json::error_handler_t::replace);
    util::Status st = payload_.Append(job.id, payload_text);
    new_payloads_[job.id] = std::move(payload_text);
    if (!st.ok()) {
      if (job.id + 1 == cluster_.next_job_id()) cluster_.SetNextJobId(job.id);
      return util::Internal("Unable to write job files: " + st.message());
    }
  }
  const JobId id = cluster_.Admit(std::move(job), Now());
  RequestCommit();
  stats_.JobSubmitted();
  RequestSchedule();
  return id;
}

// ----------------------------------------------------------- scheduling ----

void Controller::RequestSchedule() {
  if (schedule_posted_) return;
  schedule_posted_ = true;
  auto run = [this] {
    schedule_posted_ = false;
    auto t0 = std::chrono::steady_clock::now();
    RunSchedule();
    ArmHousekeeping();  // the pass moves the backfill and dependency moments
    auto t1 = std::chrono::steady_clock::now();
    next_pass_allowed_ = t1 + std::min<std::chrono::steady_clock::duration>(
                                  (t1 - t0) * 4, std::chrono::seconds(1));
  };
  if (std::chrono::steady_clock::now() >= next_pass_allowed_) {
    boost::asio::post(io_, run);
    return;
  }
  schedule_timer_.expires_at(next_pass_allowed_);
  schedule_timer_.async_wait([run](boost::system::error_code ec) {
    if (!ec) run();
  });
}

json Controller::StatsReport() const {
  json out = stats_.ToJson();
  out["now"] = Now();
  out["started"] = start_time_;
  int64_t running = 0;
  for (const Job& job : cluster_.jobs()) {
    if (job.state == JobState::kRunning || job.state == JobState::kCompleting) ++running;
  }
  out["jobs"]["pending"] = cluster_.pending_ids().size();
  out["jobs"]["running"] = running;
  return out;
}

util::Status Controller::ResetStats(const Caller& caller) {
  if (!caller.admin) return util::PermissionDenied("Access/permission denied");
  stats_.Reset(Now());
  return util::Status::Ok();
}

void Controller::AdvanceUsage(int64_t now) {
  cluster_.AdvanceUsage(now);
  usage_file_->SaveIfDue(now);
}

void Controller::RunSchedule() {
  // A node freed since the last pass may be rebooted before it is given
  // a job again.
  IssueDueReboots();
  const util::Stopwatch pass_time;
  const cluster::PassOutcome pass = cluster_.Pass(Now());
  if (!cluster_.changed_jobs().empty()) RequestCommit();
  for (size_t k = 0; k < pass.cancelled.size(); ++k) stats_.JobCanceled();
  if (!pass.ran) return;
  usage_file_->SaveIfDue(pass.now);
  stats_.Pass(pass.now, pass_time.ElapsedMicros(), pass.queue_depth, pass.figures);
  for (const auto& start : pass.started) {
    stats_.JobStarted(pass.now - cluster_.jobs().At(start.id).submit_time);
  }
  // The start is on disk before the agent hears of it, so a job can never
  // run twice after a controller crash.
  for (const auto& start : pass.started) Launch(cluster_.jobs().At(start.id));
  ApplyPreemptions(pass.preemptions, pass.now);
  if (pass.again) RequestSchedule();
}

std::vector<std::string> Controller::SlurmctldHookEnvironment(const Job& job,
                                                              std::string_view context) const {
  std::vector<std::string> env = {
      "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
      fmt::format("SLURM_SCRIPT_CONTEXT={}", context),
      fmt::format("SLURM_JOB_ID={}", job.id),
      fmt::format("SLURM_JOBID={}", job.id),
      fmt::format("SLURM_JOB_NAME={}", job.req.name),
      fmt::format("SLURM_JOB_USER={}", job.req.user_name),
      fmt::format("SLURM_JOB_UID={}", job.req.uid),
      fmt::format("SLURM_JOB_GID={}", job.req.gid),
      fmt::format("SLURM_JOB_PARTITION={}", job.partition),
      fmt::format("SLURM_JOB_ACCOUNT={}", job.req.account),
      fmt::format("SLURM_JOB_NODELIST={}", job.nodelist),
      fmt::format("SLURM_CLUSTER_NAME={}", cfg_.cluster_name),
      fmt::format("SLURM_CONF={}", cfg_.path),
      fmt::format("SLURM_JOB_CONSTRAINTS={}", job.req.constraint),
  };
  if (job.array_job_id != 0) {
    env.push_back(fmt::format("SLURM_ARRAY_JOB_ID={}", job.array_job_id));
    env.push_back(fmt::format("SLURM_ARRAY_TASK_ID={}", job.array_task_id));
  }
  if (context == "epilog_slurmctld") {
    env.push_back(fmt::format("SLURM_JOB_EXIT_CODE={}",
                              (job.exit_code & 0xff) << 8 | (job.exit_signal & 0x7f)));
    env.push_back(fmt::format("SLURM_JOB_EXIT_CODE2={}:{}", job.exit_code, job.exit_signal));
    env.push_back(fmt::format("SLURM_JOB_DERIVED_EC={}", job.exit_code));
  }
  return env;
}

void Controller::Launch(Job& job) {
  if (cfg_.prolog_slurmctld.empty()) {
    PrepareNodes(job);
    return;
  }
  // PrologSlurmctld first; the job starts once it has succeeded, if it is
  // still this run of the job.
  const core::JobId id = job.id;
  const int run = job.restart_count;
  hooks_.Run(cfg_.prolog_slurmctld, SlurmctldHookEnvironment(job, "prolog_slurmctld"),
             cfg_.prolog_epilog_timeout_s, [this, id, run](util::Status st) {
               Job* j = cluster_.jobs().Find(id);
               if (j == nullptr || j->state != JobState::kRunning || j->restart_count != run) {
                 return;
               }
               if (st.ok()) {
                 PrepareNodes(*j);
                 return;
               }
               util::LogWarn("job {}: PrologSlurmctld: {}", id, st.message());
               const std::string why = "PrologSlurmctld: " + st.message();
               if (!j->req.interactive && j->req.requeue) {
                 ReleaseResources(*j);
                 PutBackInQueue(*j, false, why);
                 return;
               }
               // Only batch jobs can be requeued: an allocation is cancelled.
               j->state = JobState::kCompleting;
               j->ending_as = JobState::kCancelled;
               j->failure_detail = why;
               MarkJob(id);
               StopJob(*j);
             });
}

void Controller::LaunchNow(Job& job) {
  // An allocation (salloc, srun outside one) starts nothing: its client
  // runs on its own host and completes it; nor does a heterogeneous job's
  // component past the first (the first's script runs its steps).
  if (!job.HasBatchStep()) return;
  auto stored = payload_.Read(PayloadId(job));
  json payload = stored.ok() ? json::parse(*stored, nullptr, false) : json();
  if (!payload.is_object() || !payload.contains("script")) {
    FinishJob(job, JobState::kFailed, 1, 0, Now(),
              "job script lost: " + (stored.ok() ? std::string("corrupt record") : stored.status().message()));
    return;
  }
  std::vector<std::string> user_env = payload.value("environment", std::vector<std::string>{});
  std::string script = payload["script"].get<std::string>();

  stepd::StepSpec spec;
  spec.job_id = job.id;
  spec.uid = job.req.uid;
  spec.gid = job.req.gid;
  spec.groups = job.req.groups;
  spec.user_name = job.req.user_name;
  spec.work_dir = job.req.work_dir;
  spec.argv = job.req.argv;
  const core::Node* batch_node = cluster_.FindNode(job.batch_host);
  spec.env = BuildBatchEnvironment(job, cfg_, user_env, std::as_const(*this).HetComponents(job),
                                   batch_node != nullptr ? batch_node->mig_uuids : kNoMigUuids);
  spec.std_out = core::ExpandOutputPattern(
      job.req.std_out.empty() ? std::string(core::DefaultStdOutPattern(job)) : job.req.std_out, job);
  spec.std_err = job.req.std_err.empty() ? "" : core::ExpandOutputPattern(job.req.std_err, job);
  spec.std_in = job.req.std_in;
  spec.open_append = job.req.open_append;
  spec.time_limit_s = job.time_limit_s;
  // --mem is a hard limit on the batch host (enforced by muster-step's cgroup).
  if (!job.alloc.empty() && !job.req.mem_whole_node) spec.mem_limit_mb = job.alloc.front().mem_mb;
  // The CPUs of the batch host; the agent confines the job to them where
  // the node is the machine itself (not an emulated node).
  if (!job.alloc.empty()) spec.cpuset = util::FormatIndexRanges(job.alloc.front().cpu_ids);
  spec.kill_wait_s = cfg_.kill_wait_s;
  if (!job.req.signal_spec.empty()) {
    auto ws = core::ParseSignalSpec(job.req.signal_spec);
    if (ws.ok()) {
      spec.warn_signal = ws->sig;
      spec.warn_time_s = ws->time_s;
      spec.warn_batch_only = ws->batch_only;
    }
  }
  // The job's GPUs on each of its nodes: on a host of several emulated
  // nodes, the batch cgroup holds the srun tasks of them all, and every
  // other GPU device there is refused to it (ConstrainDevices).
  json job_gpus = json::object();
  for (const core::NodeAlloc& a : job.alloc) job_gpus[a.node] = a.gpu_indices;
  json msg = {{"type", "launch"},
              {"job_id", job.id},
              {"node", job.batch_host},
              {"spec", stepd::ToJson(spec)},
              {"script", script},
              {"job_gpus", job_gpus}};
  SendToAgentOf(job, msg);
}

void Controller::PrepareNodes(Job& job) {
  if (!cfg_.prolog_flags.alloc || cfg_.prolog.empty() || job.alloc.empty()) {
    LaunchNow(job);
    return;
  }
  std::vector<std::string> nodes;
  for (const core::NodeAlloc& a : job.alloc) nodes.push_back(a.node);
  job.configuring = true;
  MarkJob(job.id);
  node_prologs_.Start(job.id, job.restart_count, nodes);
  SendNodePrologs(job, nodes);
}

void Controller::SendNodePrologs(const Job& job, const std::vector<std::string>& nodes) {
  std::map<std::shared_ptr<api::LineConn>, json> by_agent;
  for (const std::string& node : nodes) {
    std::shared_ptr<api::LineConn> conn = agents_.ConnOf(node);
    // An agent away is sent the run again when it registers.
    if (conn == nullptr) continue;
    json& msg = by_agent[conn];
    if (msg.is_null()) {
      json job_gpus = json::object();
      for (const core::NodeAlloc& a : job.alloc) job_gpus[a.node] = a.gpu_indices;
      msg = {{"type", "prolog"},
             {"job_id", job.id},
             {"run", job.restart_count},
             {"env", SlurmctldHookEnvironment(job, "prolog_slurmd")},
             {"job_gpus", job_gpus},
             {"nodes", json::array()}};
    }
    msg["nodes"].push_back(node);
  }
  for (auto& [conn, msg] : by_agent) SendAfterCommit(conn, std::move(msg));
}

void Controller::OnAgentPrologDone(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  const JobId id = msg.at("job_id").get<JobId>();
  const int run = msg.at("run").get<int>();
  const std::string node = msg.at("node").get<std::string>();
  Job* job = cluster_.jobs().Find(id);
  if (job == nullptr || job->state != JobState::kRunning || !job->configuring ||
      !agents_.Holds(conn, node)) {
    return;
  }
  if (msg.value("ok", false)) {
    if (node_prologs_.Succeeded(id, run, node) != NodePrologs::Answer::kAllDone) return;
    job->configuring = false;
    MarkJob(id);
    LaunchNow(*job);
    return;
  }
  if (!node_prologs_.Waits(id, run, node)) return;
  const std::string detail = msg.value("detail", "Prolog failed");
  node_prologs_.Forget(id);
  job->configuring = false;
  if (!job->req.interactive) {
    RequeueAfterPrologFailure(*job, node, detail);
    return;
  }
  // An allocation cannot be requeued: the node is drained all the same,
  // and the allocation cancelled.
  DrainForHook(node, core::ReasonSource::kProlog, detail);
  job->state = JobState::kCompleting;
  job->ending_as = JobState::kCancelled;
  job->failure_detail = "Prolog error on " + node + ": " + detail;
  MarkJob(id);
  StopJob(*job);
}

void Controller::RequeueAfterPrologFailure(Job& job, const std::string& node,
                                           const std::string& detail) {
  // As Slurm: the node is drained and the job, which never started, goes
  // back to the queue, held unless SchedulerParameters=nohold_on_prolog_fail.
  DrainForHook(node, core::ReasonSource::kProlog, detail);
  ReleaseResources(job);
  const bool hold = std::find(cfg_.scheduler_parameters.begin(), cfg_.scheduler_parameters.end(),
                              "nohold_on_prolog_fail") == cfg_.scheduler_parameters.end();
  PutBackInQueue(job, hold, detail + " on " + node);
}

void Controller::SendAfterCommit(const std::shared_ptr<api::LineConn>& conn, json msg) {
  std::weak_ptr<api::LineConn> weak = conn;
  AfterCommit([weak, msg = std::move(msg)] {
    if (auto c = weak.lock()) c->Send(msg);
  });
}

void Controller::StopJob(Job& job) {
  if (job.HasBatchStep() && !job.configuring) {
    // The cause names the reason in the line the step writes in the job's
    // stderr, as slurmstepd does.
    const char* cause = job.ending_as == JobState::kNodeFail ? "node_failure"
                        : job.preempted_by != 0              ? "preemption"
                        : job.requeue_on_end != 0            ? "requeue"
                                                             : "cancel";
    SendToAgentOf(job, {{"type", "cancel"}, {"job_id", job.id}, {"cause", cause}});
    return;
  }
  // No processes of its own to wait for (an allocation, or a job whose
  // nodes still run their Prolog): it ends as what stopped it.
  node_prologs_.Forget(job.id);
  job.configuring = false;
  const JobState state = job.ending_as == JobState::kPending ? JobState::kCancelled : job.ending_as;
  FinishJob(job, state, 0, state == JobState::kCancelled ? SIGTERM : 0, Now(), "");
}

void Controller::RecoverRunningSteps() {
  // The srun steps that were running when musterd stopped (a crash, a
  // restart, a reconfigure) are running still: their sruns end them later.
  store::AccountingQuery q;
  for (const Job& job : cluster_.jobs()) {
    if (job.state == JobState::kRunning) q.job_ids.push_back(job.id);
  }
  if (q.job_ids.empty()) return;
  util::Result<store::QueryResult> found = acct_->Query(q);
  if (!found.ok()) {
    util::LogError("running steps not recovered: {}", found.status().message());
    return;
  }
  for (store::StepRecord& rec : found->steps) {
    util::Result<int64_t> step = util::ParseInt(rec.step_id);
    if (rec.state != "RUNNING" || !step.ok()) continue;
    running_steps_[{static_cast<JobId>(rec.job_id), static_cast<int>(*step)}].record =
        std::move(rec);
  }
}

std::vector<render::StepInfo> Controller::RunningSteps() const {
  std::vector<render::StepInfo> out;
  for (const Job& job : cluster_.jobs()) {
    if (job.state == JobState::kRunning) AppendRunningSteps(job, &out);
  }
  return out;
}

void Controller::AppendRunningSteps(const Job& job, std::vector<render::StepInfo>* out) const {
  // The job's own steps: batch (on its first node), extern (on all, under
  // PrologFlags=Contain), one task per node.
  auto own = [&](const char* name, const std::string& nodelist, int nodes) {
    render::StepInfo step;
    step.job_id = job.id;
    step.step_id = step.name = name;
    step.start_time = job.start_time;
    step.nodelist = nodelist;
    step.nodes = step.tasks = nodes;
    out->push_back(std::move(step));
  };
  if (job.HasBatchStep()) own("batch", job.batch_host, 1);
  if (cfg_.prolog_flags.contain) own("extern", job.nodelist, static_cast<int>(job.alloc.size()));
  for (auto it = running_steps_.lower_bound({job.id, 0});
       it != running_steps_.end() && it->first.first == job.id; ++it) {
    const store::StepRecord& rec = it->second.record;
    render::StepInfo info;
    info.job_id = job.id;
    info.step_id = rec.step_id;
    info.name = rec.name;
    info.start_time = rec.start_time;
    info.nodelist = rec.node_list;
    info.nodes = rec.nnodes;
    info.cpus = rec.ncpus;
    info.tasks = rec.ntasks;
    int64_t mem = 0;
    auto names = util::ExpandHostlist(rec.node_list);
    for (const core::NodeAlloc& a : job.alloc) {
      if (!names.ok() || std::find(names->begin(), names->end(), a.node) == names->end()) continue;
      auto own = it->second.mem_mb.find(a.node);
      mem += own != it->second.mem_mb.end() ? own->second : a.mem_mb;
    }
    info.tres = fmt::format("cpu={},mem={}M,node={}", rec.ncpus, mem, rec.nnodes);
    info.srun_host = it->second.srun_host;
    info.srun_pid = it->second.srun_pid;
    out->push_back(std::move(info));
  }
}

util::Status Controller::CompleteAllocation(JobId id, int exit_code, const Caller& caller) {
  Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  if (!job->req.interactive) return util::InvalidArgument("Job " + std::to_string(id) + " is a batch job");
  if (job->state != JobState::kRunning) return util::Status::Ok();  // cancelled meanwhile
  FinishJob(*job, exit_code == 0 ? JobState::kCompleted : JobState::kFailed, exit_code, 0, Now(), "");
  return util::Status::Ok();
}

util::Result<json> Controller::AllocationOf(JobId id, const Caller& caller) const {
  const Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  // CONFIGURING while its nodes' Prolog runs (PrologFlags=Alloc): salloc
  // waits for RUNNING.
  json out = {{"job_id", id}, {"state", std::string(core::ShownStateName(*job))},
              {"reason", std::string(core::PendingReasonName(job->reason))}};
  if (job->state == JobState::kRunning && !job->configuring) {
    // The SLURM_* variables salloc gives its command (Slurm 22.05): a batch
    // job's, less those of the batch shell as a task and of the node it
    // runs on, and the memory only when asked for.
    static const std::set<std::string, std::less<>> kNotInSalloc = {
        "SLURM_CPUS_ON_NODE", "SLURM_GTIDS", "SLURM_JOB_GID", "SLURM_JOB_UID", "SLURM_JOB_USER",
        "SLURM_LOCALID", "SLURM_NODEID", "SLURM_PRIO_PROCESS", "SLURM_PROCID", "SLURM_TASK_PID",
        "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "SLURM_SCRIPT_CONTEXT"};
    json env = json::array();
    for (const std::string& kv : BuildBatchEnvironment(*job, cfg_, {}, HetComponents(*job))) {
      const std::string_view name = std::string_view(kv).substr(0, kv.find('='));
      if (!name.starts_with("SLURM_") || kNotInSalloc.count(name) != 0) continue;
      if (name == "SLURM_MEM_PER_CPU" && job->req.mem_per_cpu_mb <= 0) continue;
      env.push_back(kv);
    }
    out["environment"] = env;
  }
  return out;
}

void Controller::SendToAgentOf(const Job& job, const json& msg) {
  if (std::shared_ptr<api::LineConn> conn = agents_.ConnOf(job.batch_host)) {
    SendAfterCommit(conn, msg);
    return;
  }
  util::LogWarn("no agent hosts node {} for job {}", job.batch_host, job.id);
}

void Controller::FinishJob(Job& job, JobState state, int exit_code, int exit_signal,
                           int64_t end_time, const std::string& detail) {
  node_prologs_.Forget(job.id);
  // Its steps' CPUs go with it (a requeued run starts with none held).
  for (auto it = running_steps_.lower_bound({job.id, 0});
       it != running_steps_.end() && it->first.first == job.id; ++it) {
    it->second.cpus.clear();
  }
  const cluster::JobEnd end =
      cluster_.EndJob(job, state, exit_code, exit_signal, end_time, detail, Now());
  RequestCommit();
  if (end.requeued) {
    if (end.node_failure_requeue) {
      util::LogInfo("job {}: node failure, requeued ({})", job.id, detail);
    }
    RequestSchedule();
    return;
  }
  state = end.state;
  const bool held_resources = end.held_resources;
  // sdiag's counts: an end by the job's own doing (COMPLETED, FAILED,
  // TIMEOUT, ...) is a completion; a cancellation; or a failure of the
  // cluster (NODE_FAIL, BOOT_FAIL, or a job that never ran).
  if (state == JobState::kCancelled) {
    stats_.JobCanceled();
  } else if (held_resources && state != JobState::kNodeFail && state != JobState::kBootFail) {
    stats_.JobCompleted();
  } else {
    stats_.JobFailed();
  }
  RequestSchedule();
  if (held_resources && !cfg_.epilog_slurmctld.empty()) {
    hooks_.Run(cfg_.epilog_slurmctld, SlurmctldHookEnvironment(job, "epilog_slurmctld"),
               cfg_.prolog_epilog_timeout_s, [id = job.id](util::Status st) {
                 if (!st.ok()) util::LogWarn("job {}: EpilogSlurmctld: {}", id, st.message());
               });
  }
  // A cron job's run is over (its EpilogSlurmctld sees how it ended); it
  // waits for its schedule's next minute (src/ctld/crontab.cc).
  RequeueCronJob(job, state);
  if (job.IsHetComponent()) EndHetComponents(job);
}

// --------------------------------------------------------------- agents ----

void Controller::AcceptAgent(std::shared_ptr<api::LineConn> conn) {
  std::weak_ptr<api::LineConn> weak = conn;
  conn->Start(
      [this, weak](const json& msg) {
        if (auto c = weak.lock()) OnAgentMessage(c, msg);
      },
      [this, weak] {
        if (auto c = weak.lock()) OnAgentClosed(c);
      });
}

void Controller::OnAgentMessage(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  const util::Stopwatch took;
  agents_.Heard(conn, Now());
  std::string type;
  HandleAgentMessage(conn, msg, &type);
  // For sdiag, as slurmd's messages count in Slurm (under the user the
  // agents work for, musterd's own).
  const int64_t micros = took.ElapsedMicros();
  if (type == "register") {
    stats_.Rpc("MESSAGE_NODE_REGISTRATION_STATUS", 1002, ::getuid(), micros);
  } else if (type == "ended") {
    stats_.Rpc("REQUEST_COMPLETE_BATCH_SCRIPT", 5018, ::getuid(), micros);
  } else if (type == "config_request") {
    stats_.Rpc("MUSTER_CONFIG_REQUEST", 0, ::getuid(), micros);
  } else if (type == "samples") {
    stats_.Rpc("REQUEST_ACCT_GATHER_UPDATE", 1011, ::getuid(), micros);
  } else if (type == "health") {
    stats_.Rpc("REQUEST_HEALTH_CHECK", 1012, ::getuid(), micros);
  } else if (type == "step_stats") {
    stats_.Rpc("RESPONSE_JOB_STEP_STAT", 0, ::getuid(), micros);
  }
}

void Controller::HandleAgentMessage(const std::shared_ptr<api::LineConn>& conn, const json& msg,
                                    std::string* type_out) {
  // What a connection sends is outside input: any shape is logged and
  // skipped, never a crash of the controller.
  try {
    if (!msg.is_object()) throw std::invalid_argument("not a JSON object");
    const std::string type = msg.value("type", "");
    *type_out = type;
    if (type == "register") {
      OnAgentRegister(conn, msg);
    } else if (type == "config_request") {
      OnConfigRequest(conn, msg);
    } else if (type == "samples") {
      OnAgentSamples(conn, msg);
    } else if (type == "health") {
      OnAgentHealth(conn, msg);
    } else if (type == "pong") {
      // Alive (OnAgentMessage noted it).
    } else if (type == "prolog_done") {
      OnAgentPrologDone(conn, msg);
    } else if (type == "node_booted") {
      core::Node* node = cluster_.FindNode(msg.at("node").get<std::string>());
      if (node != nullptr && node->Rebooting() && agents_.Holds(conn, node->config.name)) {
        node->boot_time = msg.value("boot_time", Now());
        NodeBackFromReboot(conn, *node);
      }
    } else if (type == "step_stats") {
      OnAgentStepStats(conn, msg);
    } else if (type == "ended") {
      auto result = stepd::StepResultFromJson(msg.at("result"));
      if (!result.ok()) return;
      Job* job = cluster_.jobs().Find(result->job_id);
      bool running = job != nullptr && (job->state == JobState::kRunning ||
                                        job->state == JobState::kCompleting);
      // Only the agent hosting the run's batch host ends it: an end from
      // elsewhere is an old run of a requeued job.
      if (running) {
        running = agents_.Holds(conn, job->batch_host);
      }
      if (running) {
        job->max_rss_kb = result->max_rss_kb;
        job->total_cpu_ms = result->total_cpu_ms;
        const std::string node = job->batch_host;
        if (!result->epilog_error.empty()) {
          DrainForHook(node, core::ReasonSource::kEpilog, result->epilog_error);
        }
        if (result->prolog_failed && job->ending_as == JobState::kPending) {
          RequeueAfterPrologFailure(*job, node, result->detail);
        } else {
          auto state = core::ParseJobState(result->state).value_or(JobState::kFailed);
          FinishJob(*job, state, result->exit_code, result->exit_signal, result->end_time,
                    result->detail);
        }
      } else if (cluster_.orphans().erase(result->job_id)) {
        // An old run of a requeued job is gone: the job may start again.
        RequestSchedule();
      }
      // The agent deletes the result once acked, so the end must be on disk.
      SendAfterCommit(conn, {{"type", "ack"}, {"job_id", result->job_id}});
    } else {
      util::LogWarn("unknown agent message type '{}'", type);
    }
  } catch (const std::exception& e) {
    util::LogWarn("bad agent message: {}", e.what());
  }
}

void Controller::OnAgentRegister(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  // Read whole before anything changes: a malformed message (it throws)
  // leaves every node and job as it was.
  const std::string host = msg.at("host").get<std::string>();
  const auto names = msg.at("nodes").get<std::vector<std::string>>();
  const int64_t boot_time = msg.value("boot_time", Now());
  std::set<JobId> running;
  for (const auto& r : msg.value("running", json::array())) running.insert(r.get<JobId>());
  std::map<JobId, stepd::StepResult> finished;
  for (const auto& r : msg.value("finished", json::array())) {
    auto res = stepd::StepResultFromJson(r);
    if (res.ok()) finished[res->job_id] = *res;
  }
  const json hardware = msg.value("hardware", json::object());
  const json mig_uuids = msg.value("mig_uuids", json::object());
  std::vector<std::string> held;
  for (const std::string& name : names) {
    core::Node* node = cluster_.FindNode(name);
    if (!node) {
      util::LogWarn("agent {} hosts unknown node {}", host, name);
      continue;
    }
    if (node->Rebooting()) util::LogInfo("node {}: back from its reboot", name);
    if (cluster_.NodeRegistered(*node, boot_time)) MarkNode(*node);
    node->mig_uuids = mig_uuids.value(name, std::vector<std::string>{});
    // The node that is the agent's machine: what hwloc and NVML found,
    // and where it differs from the configuration. Reported, and the node
    // used as configured.
    if (auto hw = hardware.find(name); hw != hardware.end() && hw->is_object()) {
      node->detected_hardware = hw->value("summary", "");
      node->hardware_mismatches = hw->value("mismatches", std::vector<std::string>{});
      for (const std::string& m : node->hardware_mismatches) {
        util::LogWarn("node {}: {} (used as configured)", name, m);
      }
    }
    held.push_back(name);
  }
  // Reconcile: what ran on this agent's nodes while we were apart. An
  // allocation (salloc) runs nothing on them, so it has nothing to lose.
  for (Job& job : cluster_.jobs()) {
    if (job.state != JobState::kRunning && job.state != JobState::kCompleting) continue;
    if (!job.HasBatchStep()) continue;
    if (std::find(held.begin(), held.end(), job.batch_host) == held.end()) continue;
    const JobId id = job.id;
    auto f = finished.find(id);
    if (f != finished.end()) {
      job.max_rss_kb = f->second.max_rss_kb;
      job.total_cpu_ms = f->second.total_cpu_ms;
      auto state = core::ParseJobState(f->second.state).value_or(JobState::kFailed);
      FinishJob(job, state, f->second.exit_code, f->second.exit_signal, f->second.end_time,
                f->second.detail);
    } else if (!running.count(id)) {
      FinishJob(job, JobState::kNodeFail, 0, 0, Now(), "step lost while the agent was away");
    }
  }
  // Steps the agent still runs for jobs that are not running there any more
  // (ended NODE_FAIL or requeued while it was away) are stopped, so a job
  // never runs twice at once.
  for (JobId id : running) {
    const Job* job = cluster_.jobs().Find(id);
    bool ours = job != nullptr &&
                (job->state == JobState::kRunning || job->state == JobState::kCompleting) &&
                std::find(held.begin(), held.end(), job->batch_host) != held.end();
    if (ours) continue;
    util::LogWarn("agent {}: stopping orphaned step of job {}", host, id);
    // A requeued job waits until its old run is gone, so the two never overlap.
    if (job != nullptr && job->state == JobState::kPending) cluster_.orphans().insert(id);
    SendAfterCommit(conn, {{"type", "cancel"}, {"job_id", id}});
  }
  for (const auto& [id, r] : finished) SendAfterCommit(conn, {{"type", "ack"}, {"job_id", id}});
  util::LogInfo("agent {} registered {} nodes", host, held.size());
  CheckHealthOnJoin(conn, held);
  agents_.Register(host, conn, held);
  // Jobs still waiting on these nodes' Prolog (their answer may have been
  // lost with the connection, or musterd restarted): asked again.
  for (const auto& [id, nodes] : node_prologs_.PendingOn(held)) {
    if (const Job* job = cluster_.jobs().Find(id)) SendNodePrologs(*job, nodes);
  }
  RequestSchedule();
}

void Controller::OnConfigRequest(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  const std::string host = msg.value("host", "?");
  if (configless_files_.empty()) {
    util::LogWarn("{}: refused the configuration to {}: SlurmctldParameters has no enable_configless",
                  conn->peer(), host);
    conn->Send({{"type", "config"},
                {"error", "configless is not enabled on the controller "
                          "(SlurmctldParameters=enable_configless)"}});
    return;
  }
  util::LogInfo("{}: sent the configuration to {}", conn->peer(), host);
  conn->Send({{"type", "config"}, {"files", configless_files_}});
}

int64_t Controller::PingInterval() const { return std::max(1, cfg_.slurmd_timeout_s / 3); }

void Controller::PingAgents() {
  const int64_t now = Now();
  // Silent through two pings: the link is cut (or the agent hangs). Closed
  // here, the nodes are not responding and SlurmdTimeout starts for them.
  for (const std::shared_ptr<api::LineConn>& conn : agents_.SilentSince(now - 2 * PingInterval())) {
    util::LogWarn("agent {}: silent for {} s: closing its connection", agents_.HostOf(conn),
                  2 * PingInterval());
    conn->Close();
  }
  for (const auto& [host, agent] : agents_.agents()) agent.conn->Send({{"type", "ping"}});
  ping_timer_->ArmAt(now + PingInterval());
}

void Controller::OnAgentClosed(const std::shared_ptr<api::LineConn>& conn) {
  const auto gone = agents_.Closed(conn);  // its SlurmdTimeout starts
  if (!gone) return;
  samples_.erase(gone->first);
  for (const auto& name : gone->second.nodes) {
    if (core::Node* node = cluster_.FindNode(name)) node->registered = false;
  }
  util::LogWarn("agent {} disconnected", gone->first);
  // Orphans are found again when the agent registers; waiting on an end
  // report that may never come would keep a requeued job back forever.
  cluster_.orphans().clear();
}

void Controller::DrainForHook(const std::string& name, core::ReasonSource hook,
                              const std::string& detail) {
  core::Node* node = cluster_.FindNode(name);
  if (node == nullptr) return;
  const std::string what = hook == core::ReasonSource::kProlog ? "Prolog error" : "Epilog error";
  util::LogWarn("node {}: {}: {}: draining", name, what, detail);
  node->drain = true;
  node->reason = what + ": " + detail;
  node->reason_uid = ::getuid();
  node->reason_actor.clear();
  node->reason_source = hook;
  node->reason_time = Now();
  node->health_drained_by.clear();
  MarkNode(*node);
}

void Controller::OnAgentTimeout(const std::string& host, const std::vector<std::string>& nodes) {
  const int64_t now = Now();
  for (const auto& name : nodes) {
    core::Node* node = cluster_.FindNode(name);
    if (!node || node->registered) continue;
    // As Slurm after SlurmdTimeout: the node goes DOWN, its jobs NODE_FAIL.
    node->down = true;
    node->reason = "Not responding";
    node->reason_uid = 0;
    node->reason_time = now;
    node->reason_source = core::ReasonSource::kNotResponding;
    MarkNode(*node);
    util::LogWarn("node {} of {} not responding for {} s: DOWN", name, host,
                  cfg_.slurmd_timeout_s);
  }
  auto lost = [&](const std::string& node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  for (Job& job : cluster_.jobs()) {
    if (job.state != JobState::kRunning && job.state != JobState::kCompleting) continue;
    if (!job.HasBatchStep() || lost(job.batch_host)) {
      const auto gone = std::find_if(job.alloc.begin(), job.alloc.end(),
                                     [&](const core::NodeAlloc& a) { return lost(a.node); });
      if (gone == job.alloc.end()) continue;
      FinishJob(job, JobState::kNodeFail, 0, 0, now, "node " + gone->node + " not responding");
      continue;
    }
    // Its batch step runs elsewhere, but a node of it is lost: as Slurm,
    // the whole job ends NODE_FAIL (its steps there are gone).
    const auto gone = std::find_if(job.alloc.begin(), job.alloc.end(),
                                   [&](const core::NodeAlloc& a) { return lost(a.node); });
    if (gone == job.alloc.end() || job.state == JobState::kCompleting) continue;
    util::LogWarn("job {}: node {} not responding: ending it NODE_FAIL", job.id, gone->node);
    job.state = JobState::kCompleting;
    job.ending_as = JobState::kNodeFail;
    job.failure_detail = "node " + gone->node + " not responding";
    MarkJob(job.id);
    StopJob(job);
  }
}

// -------------------------------------------------------------- actions ----

util::Status Controller::CheckJobAccess(const Job& job, const Caller& caller) const {
  if (caller.admin || job.req.uid == caller.uid) return util::Status::Ok();
  return util::PermissionDenied("Access/permission denied");
}

bool Controller::NamesArray(const std::string& text) const {
  auto spec = core::ParseJobIdSpec(text);
  return spec.ok() && (!spec->tasks.empty() || cluster_.jobs().OfArray(spec->id) != nullptr);
}

util::Status Controller::AsUpdateRefusal(util::Status st) {
  if (st.code() != util::Code::kPermissionDenied) return st;
  return util::PermissionDenied("Invalid user id");
}

std::vector<JobActionResult> Controller::Cancel(const json& body, const Caller& caller) {
  std::vector<JobActionResult> out;
  int signal = body.value("signal", 0);
  std::string target = body.value("target", "steps");
  if (target != "steps" && target != "batch" && target != "all") {
    out.push_back({"", "Invalid signal target: " + target + " (steps, batch or all)"});
    return out;
  }
  // Slurm: only SIGKILL reaches the batch shell without -b or -f.
  if (signal == SIGKILL && target == "steps") target = "all";
  std::vector<Job*> targets;
  std::vector<std::string> ids = body.value("job_ids", std::vector<std::string>{});
  // scancel N.S: that step only, the job goes on.
  for (const std::string& sid : body.value("steps", std::vector<std::string>{})) {
    const size_t dot = sid.find('.');
    util::Result<int64_t> job = util::ParseInt(sid.substr(0, dot));
    util::Result<int64_t> step = util::ParseInt(dot == std::string::npos ? "" : sid.substr(dot + 1));
    if (!job.ok() || !step.ok() || *job <= 0 || *job > UINT32_MAX || *step < 0 || *step > INT32_MAX) {
      out.push_back({sid, "Invalid job id specified"});
      continue;
    }
    util::Status st = SignalStep(static_cast<JobId>(*job), static_cast<int>(*step),
                                 signal != 0 ? signal : SIGKILL, caller);
    out.push_back({sid, st.ok() ? "" : st.message()});
  }
  std::optional<uint32_t> user;
  if (body.contains("user")) {
    user = util::LookupUid(body["user"].get<std::string>());
    if (!user) {
      out.push_back({"", "Invalid user name: " + body["user"].get<std::string>()});
      return out;
    }
  }
  std::string name = body.value("name", "");
  std::string partition = body.value("partition", "");
  std::vector<std::string> states = body.value("states", std::vector<std::string>{});
  std::vector<JobState> state_filter;
  for (const auto& s : states) {
    auto st = core::ParseJobState(s);
    if (!st) {
      out.push_back({"", "Invalid job state specified: " + s});
      return out;
    }
    state_filter.push_back(*st);
  }
  bool filtered = user || !name.empty() || !partition.empty() || !state_filter.empty();
  auto matches = [&](const Job& job) {
    if (user && job.req.uid != *user) return false;
    if (!name.empty() && job.req.name != name) return false;
    if (!partition.empty() && job.partition != partition) return false;
    if (!state_filter.empty() &&
        std::find(state_filter.begin(), state_filter.end(), job.state) == state_filter.end()) {
      return false;
    }
    return true;
  };
  if (!ids.empty()) {
    for (const auto& sid : ids) {
      // Pending array tasks are taken out of their array, not cancelled as
      // records of their own (Slurm 22.05: "Job 12_7 not found" after).
      if (signal == 0 && !filtered && DropPendingTasks(sid, caller)) {
        out.push_back({sid, ""});
        continue;
      }
      auto found = ResolveForCaller(sid, caller);
      if (!found.ok()) {
        out.push_back({sid, found.status().message()});
        continue;
      }
      // A heterogeneous job goes as a whole (named by its first component),
      // never in part, as in Slurm.
      if (found->size() == 1 && found->front()->IsHetComponent()) {
        if (found->front()->het_job_offset > 0) {
          out.push_back({sid, "Operation not permitted on individual component of heterogeneous job"});
          continue;
        }
        *found = HetComponents(*found->front());
      }
      // A whole array: its records still pending or running.
      const bool whole = found->size() > 1;
      for (Job* job : *found) {
        if (whole && (core::IsFinished(job->state) || job->state == JobState::kCompleting)) continue;
        if (!filtered || matches(*job)) targets.push_back(job);
      }
    }
  } else if (filtered) {
    for (Job& job : cluster_.jobs()) {
      if (core::IsFinished(job.state) || !matches(job)) continue;
      // Filters without ids only ever reach the caller's own jobs unless admin.
      if (!caller.admin && job.req.uid != caller.uid) continue;
      targets.push_back(&job);
    }
  }
  for (Job* job : targets) {
    std::string sid = core::DisplayJobId(*job);
    util::Status access = CheckJobAccess(*job, caller);
    if (!access.ok()) {
      out.push_back({sid, access.message()});
      continue;
    }
    // Slurm 22.05's answers to a signal (scancel -s): a job that has ended
    // is unknown to it; a pending one "can not be altered now", which
    // Slurm's scancel retries for about 90 s before printing it and Muster
    // answers at once.
    if (signal != 0 && core::IsFinished(job->state)) {
      out.push_back({sid, "Invalid job id specified"});
      continue;
    }
    if (core::IsFinished(job->state) || job->state == JobState::kCompleting) {
      out.push_back({sid, "Job/step already completing or completed"});
      continue;
    }
    if (job->state == JobState::kPending) {
      if (signal != 0 && signal != SIGKILL && signal != SIGTERM) {
        out.push_back({sid, "Job can not be altered now, try again later"});
        continue;
      }
      CancelPending(*job, caller.uid);
      DisableCronLine(*job);
      MarkJob(job->id);
      stats_.JobCanceled();
      out.push_back({sid, ""});
      continue;
    }
    if (signal != 0 && (signal < 1 || signal > util::kMaxSignal)) {
      // Slurm passes any number on and reports success while nothing
      // happens; Muster says so.
      out.push_back({sid, fmt::format("Invalid signal {}: Linux signals are 1-{}", signal,
                                      util::kMaxSignal)});
      continue;
    }
    if (signal != 0) {
      SendToAgentOf(*job, {{"type", "signal"},
                           {"job_id", job->id},
                           {"signal", signal},
                           {"target", target}});
    } else {
      job->cancelled_by = caller.uid;
      job->state = JobState::kCompleting;
      job->ending_as = JobState::kCancelled;
      DisableCronLine(*job);
      StopJob(*job);
    }
    MarkJob(job->id);
    out.push_back({sid, ""});
  }
  RequestSchedule();
  return out;
}

void Controller::CancelPending(Job& job, uint32_t by) {
  job.cancelled_by = by;
  job.state = JobState::kCancelled;
  cluster_.pending_ids().erase(job.id);
  job.end_time = Now();
  job.reason = core::PendingReason::kNone;
}

std::vector<JobActionResult> Controller::Hold(const std::vector<std::string>& ids, bool hold,
                                              bool user_hold, const Caller& caller) {
  std::vector<JobActionResult> out;
  for (const auto& sid : ids) {
    const size_t first = out.size();
    HoldOne(sid, hold, user_hold, caller, &out);
    const bool array = NamesArray(sid);
    for (size_t i = first; i < out.size(); ++i) out[i].array = array;
  }
  RequestSchedule();
  return out;
}

void Controller::HoldOne(const std::string& sid, bool hold, bool user_hold, const Caller& caller,
                         std::vector<JobActionResult>* out) {
  auto found = ResolveForCaller(sid, caller);
  if (!found.ok()) {
    out->push_back({sid, AsUpdateRefusal(found.status()).message()});
    return;
  }
  // A whole array: its records that have not ended; one record: it must
  // not have. A running job may be held too (as Slurm): it runs on, and
  // stays held if it is requeued.
  const bool whole = found->size() > 1;
  const size_t reported = out->size();
  for (Job* target : *found) {
    Job& job = *target;
    util::Status access = AsUpdateRefusal(CheckJobAccess(job, caller));
    if (!access.ok()) {
      out->push_back({sid, access.message()});
      continue;
    }
    if (core::IsFinished(job.state)) {
      if (!whole) out->push_back({sid, "Job has already finished"});
      continue;
    }
    if (hold) {
      job.held = true;
      // An admin's hold or uhold sets the kind (as Slurm); a user's hold
      // never lifts an administrator's.
      job.held_by_admin = caller.admin ? !user_hold : job.held_by_admin;
      job.priority = 0;
      job.reason = job.HoldReason();
    } else {
      if (job.held_by_admin && !caller.admin) {
        out->push_back({sid, "Access/permission denied"});
        continue;
      }
      job.held = false;
      job.held_by_admin = false;
      job.priority = PriorityOf(job);
      job.reason = core::PendingReason::kNone;
    }
    if (job.state == JobState::kPending) job.eligible_time = 0;  // again once released
    MarkJob(job.id);
  }
  if (out->size() == reported) out->push_back({sid, ""});
}

util::Status Controller::UpdateNodes(const std::string& nodes, const std::string& state,
                                     const std::string& reason, const Caller& caller) {
  if (!caller.admin) return util::PermissionDenied("Access/permission denied");
  auto names = util::ExpandHostlist(nodes);
  if (!names.ok()) return util::InvalidArgument("Invalid node name specified");
  std::vector<core::Node*> targets;
  for (const auto& n : *names) {
    core::Node* node = cluster_.FindNode(n);
    if (!node) return util::InvalidArgument("Invalid node name specified");
    targets.push_back(node);
  }
  std::string st = util::ToUpper(state);
  bool needs_reason = st == "DRAIN" || st == "DOWN" || st == "FAIL";
  if (needs_reason && reason.empty()) {
    return util::InvalidArgument(
        "You must specify a reason when DOWNING or DRAINING a node. Request denied");
  }
  if (st != "DRAIN" && st != "DOWN" && st != "FAIL" && st != "RESUME" && st != "IDLE" &&
      st != "UNDRAIN") {
    return util::InvalidArgument("Invalid node state specified");
  }
  int64_t now = Now();
  std::map<std::shared_ptr<api::LineConn>, std::vector<std::string>> resumed;  // by agent
  for (core::Node* node : targets) {
    const bool out_of_service = node->down || node->drain || node->fail;
    if (st == "DRAIN") {
      node->drain = true;
    } else if (st == "FAIL") {
      // Expected to fail: no new jobs; the running ones go on.
      node->fail = true;
    } else if (st == "DOWN") {
      node->down = true;
      // A node set DOWN loses its jobs, as in Slurm.
      for (Job& job : cluster_.jobs()) {
        if (job.state != JobState::kRunning) continue;
        bool on_node = std::any_of(job.alloc.begin(), job.alloc.end(),
                                   [&](const core::NodeAlloc& a) { return a.node == node->config.name; });
        if (!on_node) continue;
        job.state = JobState::kCompleting;
        job.ending_as = JobState::kNodeFail;
        MarkJob(job.id);
        StopJob(job);
      }
    } else {  // RESUME / IDLE / UNDRAIN
      node->drain = false;
      if (st != "UNDRAIN") node->down = node->fail = false;
      if (out_of_service && !node->down && !node->fail) {
        resumed[agents_.ConnOf(node->config.name)].push_back(node->config.name);
      }
    }
    // An operator's word replaces health's: a node health drained and an
    // operator resumed (or drained again) is the operator's.
    node->health_drained_by.clear();
    if (needs_reason) {
      node->reason = reason;
      node->reason_uid = caller.uid;
      node->reason_time = now;
      node->reason_actor.clear();
      node->reason_source = core::ReasonSource::kOperator;
    } else if (!node->drain && !node->down && !node->fail) {
      node->reason.clear();
      node->reason_uid = 0;
      node->reason_time = 0;
      node->reason_actor.clear();
      node->reason_source = core::ReasonSource::kNone;
    }
    MarkNode(*node);
  }
  // Back in service: checked before it is given a job.
  for (const auto& [conn, names] : resumed) CheckHealthOnJoin(conn, names);
  RequestSchedule();
  return util::Status::Ok();
}

util::Result<json> Controller::CreateStep(JobId id, const json& body, const Caller& caller) {
  Job* found = cluster_.jobs().Find(id);
  if (found == nullptr) return util::NotFound("Invalid job id specified");
  Job& job = *found;
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(job, caller));
  if (job.state != JobState::kRunning) {
    return util::FailedPrecondition("Job/step already completing or completed");
  }
  sched::StepRequest request;
  request.ntasks = body.value("ntasks", 0);
  request.nodes = body.value("nodes", 0);
  request.ntasks_per_node = body.value("ntasks_per_node", 0);
  request.cpus_per_task = body.value("cpus_per_task", 1);
  if (const std::string nodelist = body.value("nodelist", ""); !nodelist.empty()) {
    auto names = util::ExpandHostlist(nodelist);
    if (!names.ok()) return util::InvalidArgument("Invalid node name specified");
    request.nodelist = std::move(*names);
  }
  if (request.ntasks < 0 || request.nodes < 0 || request.ntasks_per_node < 0) {
    return util::InvalidArgument("Requested node configuration is not available");
  }
  // -C: the step goes on the job's nodes that have the features (Slurm
  // 22.05 waits for ever when they are too few; this says so at once).
  sched::ResourceRequest features;
  if (util::Status st = sched::ParseConstraint(body.value("constraint", ""), &features); !st.ok()) {
    return util::InvalidArgument(st.message());
  }
  std::vector<core::NodeAlloc> usable;  // the job's nodes the step may use, in its order
  std::vector<size_t> usable_index;     // their indexes in job.alloc
  for (size_t i = 0; i < job.alloc.size(); ++i) {
    const core::Node* node = cluster_.FindNode(job.alloc[i].node);
    if (node == nullptr || !sched::HasFeatures(node->config, features)) continue;
    usable.push_back(job.alloc[i]);
    usable_index.push_back(i);
  }
  // Without --overlap a step gets CPUs no other running step of the job
  // holds; when only those are missing it waits for them (srun retries).
  const bool overlap = body.value("overlap", false);
  std::vector<core::NodeAlloc> free = usable;
  if (!overlap) {
    for (auto held = running_steps_.lower_bound({id, 0});
         held != running_steps_.end() && held->first.first == id; ++held) {
      for (core::NodeAlloc& a : free) {
        if (auto cpus = held->second.cpus.find(a.node); cpus != held->second.cpus.end()) {
          a.cpus = std::max(a.cpus - cpus->second, 0);
        }
      }
    }
  }
  auto laid = sched::LayoutStep(free, job.NumTasks(), request);
  if (!laid.ok() && !overlap && sched::LayoutStep(usable, job.NumTasks(), request).ok()) {
    return util::FailedPrecondition(core::kStepNodesBusy);
  }
  if (!laid.ok()) return laid.status();
  for (sched::StepNode& n : laid->nodes) n.alloc_index = static_cast<int>(usable_index[n.alloc_index]);
  // --mem (per node) or --mem-per-cpu: the step's memory on each node,
  // within the job's there; else the job's.
  const int64_t mem_per_node = body.value("mem_mb", int64_t{0});
  const int64_t mem_per_cpu = body.value("mem_per_cpu_mb", int64_t{0});
  std::map<std::string, int64_t> step_mem;
  for (const sched::StepNode& n : laid->nodes) {
    const core::NodeAlloc& a = job.alloc[n.alloc_index];
    int64_t want = mem_per_node > 0 ? mem_per_node
                   : mem_per_cpu > 0 ? mem_per_cpu * a.cpus  // as Slurm counts it
                                     : a.mem_mb;
    if (a.mem_mb > 0 && want > a.mem_mb) {
      return util::InvalidArgument("Memory required by task is not available");
    }
    step_mem[a.node] = want;
  }
  const int ntasks = laid->ntasks;
  const int nodes = static_cast<int>(laid->nodes.size());
  json layout = json::array();
  for (const sched::StepNode& n : laid->nodes) {
    const core::NodeAlloc& a = job.alloc[n.alloc_index];
    const core::Node* node = cluster_.FindNode(a.node);
    layout.push_back({{"node", a.node},
                      {"tasks", n.tasks},
                      {"first_task", n.first_task},
                      {"cpus", a.cpus},
                      {"mem_mb", step_mem[a.node]},
                      {"gpu_indices", a.gpu_indices},
                      {"gpu_names", GpuVisibleNames(a.gpu_indices, cfg_.cgroup.constrain_devices,
                                                    node != nullptr ? node->mig_uuids : kNoMigUuids)}});
  }
  // A heterogeneous job's components number their steps together, from
  // the first's count, as Slurm's do (13.0, then 12.1); a step over several
  // components has one id in each (srun gives the first's to the others).
  Job* counter = job.IsHetComponent() ? cluster_.jobs().Find(job.het_job_id) : &job;
  if (counter == nullptr) counter = &job;
  int step_id = 0;
  if (body.contains("step_id")) {
    step_id = body.value("step_id", -1);
    if (!job.IsHetComponent() || step_id < 0 || step_id >= counter->next_step_id ||
        running_steps_.contains({id, step_id})) {
      return util::InvalidArgument("Invalid job step id specified");
    }
  } else {
    step_id = counter->next_step_id++;
    MarkJob(counter->id);
  }
  std::vector<std::string> names;
  int step_cpus = 0;
  for (const sched::StepNode& n : laid->nodes) {
    names.push_back(job.alloc[n.alloc_index].node);
    step_cpus += job.alloc[n.alloc_index].cpus;
  }
  store::StepRecord rec;
  rec.job_id = id;
  rec.step_id = std::to_string(step_id);
  rec.name = body.value("name", "");
  rec.state = "RUNNING";
  rec.start_time = Now();
  rec.node_list = util::CompressHostlist(names);
  rec.nnodes = nodes;
  rec.ntasks = ntasks;
  rec.ncpus = step_cpus;
  int64_t total_mem = 0;
  for (const auto& [node, mb] : step_mem) total_mem += mb;
  rec.alloc_tres = total_mem > 0 ? fmt::format("cpu={},mem={}M,node={}", step_cpus, total_mem, nodes)
                                 : fmt::format("cpu={},node={}", step_cpus, nodes);
  acct_->UpsertStep(rec);
  RunningStep& running = running_steps_[{id, step_id}];
  running.record = rec;
  running.srun_host = body.value("srun_host", "");
  running.srun_pid = body.value("srun_pid", 0);
  running.mem_mb = std::move(step_mem);
  for (const sched::StepNode& n : laid->nodes) {
    const std::string& node = job.alloc[n.alloc_index].node;
    if (!overlap) running.cpus[node] = n.tasks * std::max(request.cpus_per_task, 1);
  }
  return json{{"job_id", id},
              {"step_id", step_id},
              {"ntasks", ntasks},
              {"nodelist", util::CompressHostlist(names)},
              {"layout", layout}};
}

util::Result<json> Controller::LaunchStep(JobId id, int step_id, const json& body,
                                          const Caller& caller) {
  Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  auto running = running_steps_.find({id, step_id});
  if (running == running_steps_.end()) return util::NotFound("Invalid job step id specified");
  auto step_nodes = util::ExpandHostlist(running->second.record.node_list);
  if (!step_nodes.ok()) return step_nodes.status();
  // Read whole before anything is sent: a malformed request launches
  // nothing. Each node's launch is the request's fields, the node's tasks
  // and the job's identity, checked by the agent's own decoder.
  if (!body.is_object() || !body.contains("nodes") || !body["nodes"].is_array()) {
    return util::InvalidArgument("malformed step launch: no nodes");
  }
  json common = {{"job_id", id}, {"step_id", step_id}, {"uid", job->req.uid},
                 {"gid", job->req.gid}, {"groups", job->req.groups}};
  for (const char* key : {"work_dir", "argv", "io_host", "io_port", "token", "io", "cpu_bind", "pmix"}) {
    if (body.contains(key) && !body[key].is_null()) common[key] = body[key];
  }
  std::vector<std::pair<std::shared_ptr<api::LineConn>, json>> sends;
  for (const json& n : body["nodes"]) {
    json launch = common;
    if (n.is_object()) {
      launch["node"] = n.value("node", json());
      launch["tasks"] = n.value("tasks", json());
      // The step's memory there bounds the tasks' cgroup on that host.
      if (n.contains("node") && n["node"].is_string()) {
        if (auto mem = running->second.mem_mb.find(n["node"].get<std::string>());
            mem != running->second.mem_mb.end()) {
          launch["mem_mb"] = mem->second;
        }
      }
    }
    util::Result<stepd::RemoteStepSpec> spec = stepd::RemoteStepSpecFromJson(launch);
    if (!spec.ok()) return spec.status();
    if (std::find(step_nodes->begin(), step_nodes->end(), spec->node) == step_nodes->end()) {
      return util::InvalidArgument("node " + spec->node + " is not in step " + std::to_string(id) +
                                   "." + std::to_string(step_id));
    }
    std::shared_ptr<api::LineConn> conn = agents_.ConnOf(spec->node);
    if (conn == nullptr) return util::Unavailable(core::kStepAgentAway + spec->node);
    // The job's GPUs there: the only GPU devices its tasks may open.
    std::vector<int> job_gpus;
    for (const core::NodeAlloc& a : job->alloc) {
      if (a.node == spec->node) job_gpus = a.gpu_indices;
    }
    sends.emplace_back(conn, json{{"type", "step_launch"},
                                  {"step", stepd::ToJson(*spec)},
                                  {"job_gpus", job_gpus}});
  }
  json launched = json::array();
  for (auto& [conn, msg] : sends) {
    launched.push_back(msg["step"]["node"]);
    conn->Send(msg);
  }
  return json{{"launched", launched}};
}

util::Status Controller::SignalStep(JobId id, int step_id, int signal, const Caller& caller) {
  Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  auto running = running_steps_.find({id, step_id});
  if (running == running_steps_.end()) return util::NotFound("Invalid job step id specified");
  if (signal < 1 || signal > util::kMaxSignal) {
    return util::InvalidArgument(
        fmt::format("Invalid signal {}: Linux signals are 1-{}", signal, util::kMaxSignal));
  }
  auto nodes = util::ExpandHostlist(running->second.record.node_list);
  if (!nodes.ok()) return nodes.status();
  json msg = {{"type", "step_signal"}, {"job_id", id}, {"step_id", step_id}, {"signal", signal}};
  if (!running->second.srun_host.empty()) {
    msg["srun_host"] = running->second.srun_host;
    msg["srun_pid"] = running->second.srun_pid;
  }
  // The agents of the step's nodes (their launchers hold its tasks), and
  // that of srun's host (on one host srun holds them itself).
  int reached = 0;
  for (const auto& [host, agent] : agents_.agents()) {
    const bool holds = std::any_of(agent.nodes.begin(), agent.nodes.end(), [&](const auto& n) {
      return std::find(nodes->begin(), nodes->end(), n) != nodes->end();
    });
    if (holds || host == msg.value("srun_host", "")) {
      agent.conn->Send(msg);
      ++reached;
    }
  }
  if (reached == 0) return util::Unavailable("Unable to contact the agents of step " +
                                             std::to_string(id) + "." + std::to_string(step_id));
  util::LogInfo("step {}.{}: signal {} from uid {}", id, step_id, signal, caller.uid);
  return util::Status::Ok();
}

util::Status Controller::Reconfigure(const Caller& caller) {
  if (!caller.admin) return util::PermissionDenied("Invalid user id");
  util::Result<config::Config> fresh = config::LoadConfig(cfg_.path);
  if (!fresh.ok()) return util::InvalidArgument(fresh.status().message());
  if (fresh->enable_configless) {
    util::Result<std::map<std::string, std::string>> files = ConfiglessFiles(*fresh);
    if (!files.ok()) return util::InvalidArgument(files.status().message());
    // Agents that ask from now on get the new files.
    configless_files_ = std::move(*files);
  }
  util::LogInfo("reconfigure: {} is good; the agents and musterd restart on it", cfg_.path);
  FireEventTriggers("reconfig", core::TriggerResource::kNode);
  for (const auto& [host, agent] : agents_.agents()) agent.conn->Send({{"type", "reconfigure"}});
  if (restart_hook_) restart_hook_();
  return util::Status::Ok();
}

util::Status Controller::EndStep(JobId id, int step_id, const StepEnd& end,
                                 const Caller& caller) {
  Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) return util::NotFound("Invalid job id specified");
  MUSTER_RETURN_IF_ERROR(CheckJobAccess(*job, caller));
  auto it = running_steps_.find({id, step_id});
  if (it == running_steps_.end()) return util::NotFound("Invalid job step id specified");
  store::StepRecord rec = std::move(it->second.record);
  rec.attach.clear();  // nothing to join any more
  running_steps_.erase(it);
  // Slurm 22.05: a step whose task a signal ended is CANCELLED (sacct
  // "CANCELLED 0:9" for srun bash -c 'kill -9 $$'), a non-zero exit FAILED,
  // one its own time limit ended TIMEOUT (with its tasks' exit code).
  rec.state = end.timed_out          ? "TIMEOUT"
              : end.exit_signal != 0 ? "CANCELLED"
              : end.exit_code == 0   ? "COMPLETED"
                                     : "FAILED";
  rec.exit_code = end.exit_code;
  rec.exit_signal = end.exit_signal;
  rec.max_rss_kb = end.max_rss_kb;
  rec.total_cpu_ms = end.total_cpu_ms;
  rec.end_time = Now();
  acct_->UpsertStep(rec);
  return util::Status::Ok();
}

// ----------------------------------------------------------- preemption ----

void Controller::ApplyPreemptions(const std::vector<sched::Preemption>& preemptions, int64_t now) {
  for (const cluster::Preempted& p : cluster_.Preempt(preemptions, now)) {
    util::LogInfo("job {}: preempted by job {} (grace {} s)", p.victim, p.by, p.grace_s);
    Job& victim = cluster_.jobs().At(p.victim);
    if (p.grace_s > 0) {
      // SIGTERM now, the end after GraceTime (Slurm's order).
      SendToAgentOf(
          victim,
          {{"type", "signal"}, {"job_id", victim.id}, {"signal", SIGTERM}, {"target", "all"}});
      AddWake(now + p.grace_s, victim.id);
    } else {
      StopJob(victim);
    }
  }
  RequestCommit();
}

void Controller::StopPreempted(Job& job) {
  cluster_.StopPreempted(job);
  RequestCommit();
  StopJob(job);
}

// --------------------------------------------------------- housekeeping ----

void Controller::AddWake(int64_t when, JobId id) {
  job_wakes_.emplace(when, id);
  const std::optional<int64_t> armed = housekeeping_->armed();
  if (!armed || when < *armed) housekeeping_->ArmAt(std::max(when, Now()));
}

void Controller::NoteWakes(const Job& job) {
  if (core::IsFinished(job.state)) {
    AddWake(job.end_time + cfg_.min_job_age_s, job.id);
  } else if (!job.HasBatchStep() && job.state == JobState::kRunning && job.time_limit_s > 0) {
    // An allocation has no step to enforce its limit: housekeeping ends it.
    AddWake(job.start_time + job.time_limit_s, job.id);
  } else if (job.state == JobState::kPending && job.req.begin_time > Now()) {
    AddWake(job.req.begin_time, job.id);
  }
}

void Controller::ArmHousekeeping() {
  const int64_t now = Now();
  int64_t next = NextReservationChange(now);
  if (!job_wakes_.empty()) next = std::min(next, job_wakes_.begin()->first);
  // Usage is charged at each pass; while none runs, once per PriorityCalcPeriod.
  next =
      std::min(next, cluster_.usage().time() + std::max<int64_t>(cfg_.priority.calc_period_s, 1));
  if (!schedule_posted_) {  // a pass on its way moves these two
    if (cluster_.next_dependency_time() != 0)
      next = std::min(next, cluster_.next_dependency_time());
    // With backfill a pass runs at least every bf_interval while jobs wait
    // (their plans age, priorities grow with age).
    if (cfg_.backfill && !cluster_.pending_ids().empty()) {
      next = std::min(next, cluster_.last_pass_time() + std::max<int64_t>(cfg_.bf.interval_s, 1));
    }
  }
  housekeeping_->ArmAt(std::max(next, now));
}

void Controller::Housekeeping() {
  const int64_t now = Now();
  AgeReservations(now);
  bool pass_due = ReservationBegan(last_housekeeping_, now);
  last_housekeeping_ = now;
  std::set<JobId> expired, allocations_over, graced;
  while (!job_wakes_.empty() && job_wakes_.begin()->first <= now) {
    const JobId id = job_wakes_.begin()->second;
    job_wakes_.erase(job_wakes_.begin());
    const Job* job = cluster_.jobs().Find(id);
    if (job == nullptr) continue;
    if (auto d = cluster_.preempt_deadline().find(id);
        d != cluster_.preempt_deadline().end() && d->second <= now) {
      if (job->state == JobState::kRunning) {
        graced.insert(id);
      } else {
        cluster_.preempt_deadline().erase(d);
      }
    }
    if (core::IsFinished(job->state) && job->end_time + cfg_.min_job_age_s <= now) {
      expired.insert(id);
    } else if (!job->HasBatchStep() && job->state == JobState::kRunning &&
               job->time_limit_s > 0 && job->start_time + job->time_limit_s <= now) {
      allocations_over.insert(id);
    } else if (job->state == JobState::kPending && job->req.begin_time > 0 &&
               job->req.begin_time <= now) {
      pass_due = true;
    }
  }
  for (JobId id : graced) StopPreempted(cluster_.jobs().At(id));
  if (now - cluster_.usage().time() >= cfg_.priority.calc_period_s) {
    AdvanceUsage(now);
  }
  for (JobId id : expired) {
    const JobId array_id = cluster_.jobs().At(id).array_job_id;
    cluster_.dependencies().erase(id);
    cluster_.changed_jobs().insert(id);  // journalled as a deletion
    cluster_.jobs().Erase(id);
    // The script goes with the job's record (kept until then for
    // scontrol requeue), an array's with its last record.
    if (array_id == 0) {
      payload_.Release(id);
    } else if (cluster_.jobs().OfArray(array_id) == nullptr) {
      payload_.Release(array_id);
    }
  }
  for (JobId id : allocations_over) {
    util::LogInfo("job {}: allocation reached its time limit", id);
    FinishJob(cluster_.jobs().At(id), JobState::kTimeout, 0, 0, now, "time limit");
  }
  if (!expired.empty()) RequestCommit();
  // A +time dependency offset has passed.
  if (cluster_.next_dependency_time() != 0 && cluster_.next_dependency_time() <= now)
    pass_due = true;
  if (cfg_.backfill && !cluster_.pending_ids().empty() &&
      now - cluster_.last_pass_time() >= cfg_.bf.interval_s) {
    pass_due = true;
  }
  if (pass_due) RequestSchedule();
  ArmHousekeeping();
}

}  // namespace muster::ctld

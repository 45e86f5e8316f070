#include "sim/replay.h"

#include <signal.h>

#include <algorithm>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include "cluster/cluster.h"
#include "util/clock.h"

namespace muster::sim {

namespace {

using core::Job;
using core::JobId;
using core::JobState;

// What can happen at a moment of the replay.
enum class EventKind {
  kSubmit,     // trace job `index` is submitted
  kEnd,        // run `run` of job `id` ends by itself (its run time, or its time limit)
  kGraceOver,  // a preempted job's GraceTime is over: it is stopped
  kStopped,    // the agent has stopped a job it was told to stop
  kWake,       // a moment a pending job may become eligible (a requeue's begin time)
  kPass,       // a pass is due (bf_interval while jobs wait, or another pass asked for)
  kPurge,      // MinJobAge after its end: the job leaves the table
};

struct Event {
  int64_t time = 0;
  uint64_t seq = 0;  // ties in the order they were made
  EventKind kind = EventKind::kSubmit;
  size_t index = 0;  // kSubmit: the trace job
  JobId id = 0;
  int run = 0;  // the job's restart_count when the event was made
  bool timed_out = false;

  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// A trace job as the submission it stands for: a batch job of its user,
// asking for its CPUs (as tasks), GPUs (--gpus), nodes, memory and time.
core::JobRequest RequestOf(const TraceJob& tj, uint32_t uid) {
  core::JobRequest req;
  req.name = "job" + tj.id;
  req.partition = tj.partition;
  req.account = tj.account;
  req.uid = uid;
  req.gid = uid;
  req.user_name = tj.user;
  req.groups = {uid};
  req.work_dir = "/";
  req.submit_dir = "/";
  req.script = "#!/bin/sh\n";
  req.command = "(replay)";
  if (tj.nodes > 0) {
    req.min_nodes = tj.nodes;
    req.max_nodes = tj.nodes;
  }
  if (tj.cpus > 0) req.ntasks = tj.cpus;
  if (tj.gpus > 0) req.gres.push_back({"gpu", "", tj.gpus, /*per_job=*/true});
  if (tj.mem_mb > 0) {
    if (tj.cpus > 0) {
      req.mem_per_cpu_mb = (tj.mem_mb + tj.cpus - 1) / tj.cpus;
    } else {
      req.mem_per_node_mb = tj.mem_mb;
    }
  }
  if (tj.time_limit > 0) req.time_limit_s = tj.time_limit;
  return req;
}

class Replayer {
 public:
  Replayer(const config::Config& cfg, const Trace& trace, const ReplayOptions& options)
      : cfg_(cfg), trace_(trace), options_(options), cluster_(cfg, kReplayEpoch) {}

  ReplayResult Run() {
    for (core::Node& node : cluster_.nodes()) {
      cluster_.NodeRegistered(node, kReplayEpoch);
      result_.size.cpus += node.config.cpus;
      result_.size.gpus += node.TotalGpus();
      ++result_.size.nodes;
    }
    if (cfg_.enforce_associations) AddAssociations();
    result_.jobs.resize(trace_.jobs.size());
    preemptions_.assign(trace_.jobs.size(), 0);
    backfilled_.assign(trace_.jobs.size(), false);
    for (size_t i = 0; i < trace_.jobs.size(); ++i) {
      const TraceJob& tj = trace_.jobs[i];
      JobOutcome& out = result_.jobs[i];
      out.id = tj.id;
      out.workload = trace_.name;
      out.submit = tj.submit;
      out.requested_time = tj.time_limit;
      out.cpus = tj.cpus;
      out.gpus = tj.gpus;
      out.user = tj.user;
      out.account = tj.account;
      out.partition = tj.partition;
      out.state = "PENDING";
      if (!tj.ran) {
        // Cancelled while pending in the trace: when is not recorded, so
        // it is not replayed (and says so).
        out.state = "CANCELLED";
        ++result_.not_replayed;
        ++done_;
        continue;
      }
      Push({kReplayEpoch + tj.submit, 0, EventKind::kSubmit, i});
    }
    Loop();
    result_.events = static_cast<int64_t>(seq_);
    result_.host_seconds = static_cast<double>(watch_.ElapsedMicros()) / 1e6;
    for (auto& [message, refusal] : refusals_) result_.refused.push_back(std::move(refusal));
    return std::move(result_);
  }

 private:
  void Push(Event e) {
    e.seq = seq_++;
    if (e.kind != EventKind::kPass && e.kind != EventKind::kPurge) ++live_;
    events_.push(e);
  }

  void Loop() {
    while (!events_.empty()) {
      const int64_t now = events_.top().time;
      while (!events_.empty() && events_.top().time == now) {
        const Event e = events_.top();
        events_.pop();
        if (e.kind != EventKind::kPass && e.kind != EventKind::kPurge) --live_;
        if (e.kind != EventKind::kPass) changed_since_pass_ = true;
        // One pass after each change, as musterd runs one after each
        // submission and each end it hears of (jobs submitted in the same
        // second each get theirs, in the order they came).
        if (Handle(e, now)) {
          RunPass(now, !changed_since_pass_ && options_.skip_quiet_passes);
          changed_since_pass_ = false;
        }
      }
      cluster_.changed_jobs().clear();  // no journal here
      ReportProgress(now);
      // Only timers left and nothing running: what still waits never will.
      if (live_ == 0 && running_ == 0) break;
    }
  }

  // Returns whether a pass should follow.
  bool Handle(const Event& e, int64_t now) {
    switch (e.kind) {
      case EventKind::kSubmit:
        return Submit(e.index, now);
      case EventKind::kEnd: {
        Job* job = Current(e);
        if (job == nullptr) return false;
        End(*job, e.timed_out ? JobState::kTimeout : JobState::kCompleted, now);
        return true;
      }
      case EventKind::kGraceOver: {
        Job* job = Current(e);
        if (job == nullptr || job->preempted_by == 0) return false;
        cluster_.StopPreempted(*job);
        Push({now, 0, EventKind::kStopped, 0, job->id, job->restart_count});
        return false;
      }
      case EventKind::kStopped: {
        Job* job = Current(e);
        if (job == nullptr) return false;
        // Its preemption says how it ends (PREEMPTED, or back to the queue).
        End(*job, JobState::kCancelled, now);
        return true;
      }
      case EventKind::kWake:
        return true;
      case EventKind::kPass:
        pass_timers_.erase(e.time);
        return true;
      case EventKind::kPurge:
        cluster_.jobs().Erase(e.id);
        return false;
    }
    return false;
  }

  // With AccountingStorageEnforce=associations a job needs its user's
  // association with its account, which sacctmgr made on the live
  // cluster: the replay has no accounting database, so every user of the
  // trace gets one with the account it names (or one of its own name).
  void AddAssociations() {
    std::map<std::string, std::vector<std::string>> accounts_of;
    for (const TraceJob& tj : trace_.jobs) {
      std::vector<std::string>& accounts = accounts_of[tj.user];
      const std::string account = tj.account.empty() ? tj.user : tj.account;
      if (std::find(accounts.begin(), accounts.end(), account) == accounts.end()) {
        accounts.push_back(account);
      }
    }
    core::AccountTable& table = cluster_.accounts();
    for (const auto& [user, accounts] : accounts_of) {
      for (const std::string& account : accounts) {
        if (table.FindAccount(account) == nullptr) {
          table.AddAccounts({account}, {}, cfg_.cluster_name);
        }
      }
      core::UserSettings settings;
      settings.accounts = accounts;
      settings.default_account = accounts.front();
      table.AddUsers({user}, settings, cfg_.cluster_name);
      result_.associations_added += static_cast<int>(accounts.size());
    }
  }

  // The job an event is about, if it still runs the run the event was made for.
  Job* Current(const Event& e) {
    Job* job = cluster_.jobs().Find(e.id);
    if (job == nullptr || job->restart_count != e.run) return nullptr;
    if (job->state != JobState::kRunning && job->state != JobState::kCompleting) return nullptr;
    return job;
  }

  bool Submit(size_t index, int64_t now) {
    const TraceJob& tj = trace_.jobs[index];
    auto [user, added] = uids_.try_emplace(tj.user, static_cast<uint32_t>(10000 + uids_.size()));
    const cluster::Submitter who{false, [](const std::string&) { return std::nullopt; }};
    sched::SubmitRefusal why;
    util::Result<Job> job = cluster_.PrepareJob(RequestOf(tj, user->second), who, now, &why);
    JobOutcome& out = result_.jobs[index];
    if (!job.ok()) {
      out.state = "FAILED";
      Refusal& r = refusals_[job.status().message()];
      if (r.jobs++ == 0) {
        r.message = job.status().message();
        r.first_line = tj.line;
      }
      ++done_;
      return false;
    }
    out.account = job->req.account;
    out.requested_time = job->time_limit_s;
    const JobId id = cluster_.Admit(std::move(job).value(), now);
    index_of_[id] = index;
    return true;
  }

  void RunPass(int64_t now, bool only_time_changed) {
    const cluster::PassOutcome pass =
        cluster_.Pass(now, {.explain = false, .only_time_changed = only_time_changed});
    if (pass.skipped) {
      // What this pass would decide, the last one did: the timer goes on.
      ++result_.skipped_passes;
      ArmTimer(now);
      return;
    }
    if (!pass.ran) return;
    ++result_.passes;
    for (const auto& start : pass.started) {
      const Job& job = cluster_.jobs().At(start.id);
      const size_t index = index_of_.at(job.id);
      if (start.backfilled) backfilled_[index] = true;
      const TraceJob& tj = trace_.jobs[index];
      const bool timed_out = job.time_limit_s >= 0 && tj.run > job.time_limit_s;
      const int64_t run = timed_out ? job.time_limit_s : tj.run;
      Push({now + run, 0, EventKind::kEnd, 0, job.id, job.restart_count, timed_out});
      ++running_;
    }
    for (const cluster::Preempted& p : cluster_.Preempt(pass.preemptions, now)) {
      const Job& victim = cluster_.jobs().At(p.victim);
      ++preemptions_[index_of_.at(p.victim)];
      const EventKind kind = p.grace_s > 0 ? EventKind::kGraceOver : EventKind::kStopped;
      Push({now + p.grace_s, 0, kind, 0, victim.id, victim.restart_count});
    }
    if (pass.again) ArmPass(now, now);
    ArmTimer(now);
  }

  // With backfill a pass runs at least every bf_interval while jobs wait,
  // as musterd's housekeeping runs one: the time alone changes what a pass
  // decides (priorities grow, a --switches wait runs out, bf_window
  // reaches a job's end).
  void ArmTimer(int64_t now) {
    if (cfg_.backfill && !cluster_.pending_ids().empty()) {
      ArmPass(now, now + std::max(1, cfg_.bf.interval_s));
    }
  }

  // A pass at `when` unless one is due by then.
  void ArmPass(int64_t now, int64_t when) {
    auto due = pass_timers_.lower_bound(now);
    if (due != pass_timers_.end() && *due <= when) return;
    pass_timers_.insert(when);
    Push({when, 0, EventKind::kPass});
  }

  void End(Job& job, JobState state, int64_t now) {
    const cluster::JobEnd end = cluster_.EndJob(job, state, 0, 0, now, "", now);
    --running_;
    if (end.requeued) {
      Push({job.req.begin_time, 0, EventKind::kWake});
      return;
    }
    const size_t index = index_of_.at(job.id);
    JobOutcome& out = result_.jobs[index];
    out.start = job.start_time - kReplayEpoch;
    out.end = job.end_time - kReplayEpoch;
    out.requested_time = job.time_limit_s;
    out.partition = job.partition;
    out.state = std::string(core::JobStateName(job.state));
    out.nodes = job.nodelist;
    // What it held, which utilisation counts (a GPU job of a trace without
    // CPU counts still holds CPUs).
    out.cpus = 0;
    out.gpus = 0;
    for (const core::NodeAlloc& a : job.alloc) {
      out.cpus += a.cpus;
      out.gpus += static_cast<int>(a.gpu_indices.size());
    }
    out.backfilled = backfilled_[index];
    out.preemptions = preemptions_[index];
    ++done_;
    Push({now + std::max(0, cfg_.min_job_age_s), 0, EventKind::kPurge, 0, job.id});
  }

  void ReportProgress(int64_t now) {
    if (!options_.progress) return;
    const double elapsed = static_cast<double>(watch_.ElapsedMicros()) / 1e6;
    if (elapsed < next_progress_) return;
    next_progress_ = elapsed + options_.progress_every_s;
    options_.progress(
        {now - kReplayEpoch, done_, static_cast<int64_t>(trace_.jobs.size()), elapsed});
  }

  const config::Config& cfg_;
  const Trace& trace_;
  const ReplayOptions& options_;
  cluster::Cluster cluster_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  int64_t live_ = 0;               // events other than pass timers and purges
  int64_t running_ = 0;            // jobs holding resources
  bool changed_since_pass_ = false;  // an event other than a timer's since the last pass
  std::set<int64_t> pass_timers_;  // the moments of the pass timers armed
  std::unordered_map<JobId, size_t> index_of_;
  std::map<std::string, uint32_t> uids_;
  std::vector<int> preemptions_;
  std::vector<bool> backfilled_;
  std::map<std::string, Refusal> refusals_;
  int64_t done_ = 0;
  ReplayResult result_;
  util::Stopwatch watch_;
  double next_progress_ = 0;
};

}  // namespace

util::Result<ReplayResult> Replay(const config::Config& cfg, const Trace& trace,
                                  const ReplayOptions& options) {
  if (cfg.nodes.empty()) return util::InvalidArgument("the configuration has no nodes");
  return Replayer(cfg, trace, options).Run();
}

}  // namespace muster::sim

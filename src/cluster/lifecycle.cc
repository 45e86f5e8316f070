// A job's life after its start, as the cluster decides it: how a run ends
// (its own end, a preemption, a requeue asked for, a node's failure) and a
// job going back to the queue. The driver carries out what follows (hooks,
// accounting, the agents).
#include <fmt/format.h>

#include "cluster/cluster.h"
#include "sched/scheduler.h"
#include "util/strings.h"

namespace muster::cluster {

using core::Job;
using core::JobState;

void Cluster::PutBackInQueue(Job& job, bool hold, const std::string& detail, bool node_failure,
                             int64_t now) {
  job.state = JobState::kPending;
  job.restart_count += 1;
  job.last_run_node_failed = node_failure;
  // As in Slurm, the rerun counts as submitted now and may start only when
  // the old run's credentials have expired: AuthInfo=cred_expire (120 s by
  // default) and a second later; until then its reason is BeginTime.
  job.submit_time = now;
  job.eligible_time = 0;
  job.req.begin_time = now + cfg_.cred_expire_s + 1;
  job.alloc.clear();
  job.nodelist.clear();
  job.batch_host.clear();
  job.start_time = 0;
  job.end_time = 0;
  job.exit_code = 0;
  job.exit_signal = 0;
  job.cancelled_by = UINT32_MAX;
  job.failure_detail = detail;
  job.requeue_on_end = 0;
  job.reason = core::PendingReason::kBeginTime;
  if (hold) {
    job.held = true;
    job.priority = 0;
    job.reason = core::PendingReason::kJobRequeuedHeld;
  } else if (job.held) {
    // Held while it ran: it waits for a release now.
    job.reason = job.HoldReason();
  }
  pending_ids_.insert(job.id);
  MarkJob(job.id);
}

void Cluster::MarkPreemptedEnd(Job& job) {
  const core::PreemptMode mode = sched::PreemptTermsOf(job, cfg_, &accounts_).mode;
  if (mode == core::PreemptMode::kRequeue && job.req.requeue && job.HasBatchStep() &&
      !job.IsHetComponent()) {
    job.requeue_on_end = 1;
  } else {
    job.ending_as = JobState::kPreempted;
  }
}

JobEnd Cluster::EndJob(Job& job, JobState state, int exit_code, int exit_signal, int64_t end_time,
                       const std::string& detail, int64_t now) {
  JobEnd end;
  end.held_resources = job.state == JobState::kRunning || job.state == JobState::kCompleting;
  if (end.held_resources) ReleaseResources(job, now);
  job.configuring = false;
  // Preempted and ended by itself within its GraceTime: as the preemption says.
  if (job.preempted_by != 0 && preempt_deadline_.erase(job.id) > 0) MarkPreemptedEnd(job);
  if (job.ending_as != JobState::kPending) {
    state = job.ending_as;
    job.ending_as = JobState::kPending;
  }
  std::string why = detail;
  if (job.preempted_by != 0) why = "preempted by job " + std::to_string(job.preempted_by);
  if (job.requeue_on_end != 0) {
    // scontrol requeue, or a preemption: the old run is gone; the job goes
    // back to the queue.
    PutBackInQueue(job, job.requeue_on_end == 2, job.preempted_by != 0 ? why : "", false, now);
    job.preempted_by = 0;
    end.requeued = true;
    return end;
  }
  // An allocation is its client's: it is never run again by itself.
  if (state == JobState::kNodeFail && job.req.requeue && job.HasBatchStep() &&
      !job.IsHetComponent()) {
    // --requeue (Slurm's default, JobRequeue=1): the job goes back to the
    // queue under the same id and runs again from the start.
    PutBackInQueue(job, false, detail, /*node_failure=*/true, now);
    end.requeued = true;
    end.node_failure_requeue = true;
    return end;
  }
  job.state = state;
  job.exit_code = exit_code;
  job.exit_signal = exit_signal;
  job.end_time = end_time > 0 ? end_time : now;
  job.failure_detail = why;
  job.reason = core::PendingReason::kNone;
  MarkJob(job.id);
  end.state = state;
  return end;
}

std::vector<Preempted> Cluster::Preempt(const std::vector<sched::Preemption>& preemptions,
                                        int64_t now) {
  std::vector<Preempted> out;
  std::map<core::JobId, std::vector<core::JobId>> by;  // preemptor -> its victims
  for (const sched::Preemption& p : preemptions) {
    Job* victim = jobs_.Find(p.victim);
    if (victim == nullptr || victim->state != JobState::kRunning || victim->preempted_by != 0) {
      continue;
    }
    const int64_t grace = sched::PreemptTermsOf(*victim, cfg_, &accounts_).grace_s;
    victim->preempted_by = p.by;
    MarkJob(victim->id);
    by[p.by].push_back(victim->id);
    out.push_back({victim->id, p.by, grace});
    if (grace > 0) {
      preempt_deadline_[victim->id] = now + grace;
    } else {
      StopPreempted(*victim);
    }
  }
  for (const auto& [id, victims] : by) {
    Job* job = jobs_.Find(id);
    if (job == nullptr) continue;
    std::vector<std::string> ids;
    for (core::JobId v : victims) ids.push_back(std::to_string(v));
    job->explanation = fmt::format(
        "preempting job{} {} of lower-priority {}; starts when {} ended", ids.size() > 1 ? "s" : "",
        util::Join(ids, ","), cfg_.preempt_type == config::PreemptType::kQos ? "QOS" : "partitions",
        ids.size() > 1 ? "they have" : "it has");
  }
  return out;
}

void Cluster::StopPreempted(Job& job) {
  preempt_deadline_.erase(job.id);
  MarkPreemptedEnd(job);
  job.state = JobState::kCompleting;
  MarkJob(job.id);
}

bool Cluster::NodeRegistered(core::Node& node, int64_t boot_time) {
  bool changed = false;
  node.registered = true;
  node.boot_time = boot_time;
  if (node.Rebooting()) {
    // Its agent is back (the machine rebooted, or the agent restarted in
    // the middle of an emulated reboot): the reboot is over.
    core::FinishReboot(node);
    changed = true;
  }
  if (node.down && node.reason == "Not responding") {
    // Back after a timeout: as Slurm's ReturnToService=1 for nodes that
    // went DOWN only for not responding.
    node.down = false;
    node.reason.clear();
    node.reason_time = 0;
    node.reason_source = core::ReasonSource::kNone;
    changed = true;
  }
  return changed;
}

}  // namespace muster::cluster

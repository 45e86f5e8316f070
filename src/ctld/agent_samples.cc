// The agents' samples in musterd: each GPU's figures and each running
// job's usage, every JobAcctGatherFrequency seconds. Kept (the latest per
// agent) for /metrics, added to each job's GPU usage for accounting (sacct,
// seff), and fed to the idle-GPU policy (sched/idle_gpus.h).
#include <algorithm>

#include <fmt/format.h>

#include "ctld/controller.h"
#include "util/log.h"
#include "util/spawn.h"
#include "util/users.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using nlohmann::json;

std::map<std::pair<std::string, int>, core::JobId> Controller::GpuHolders() const {
  std::map<std::pair<std::string, int>, core::JobId> holders;
  for (const Job& job : cluster_.jobs()) {
    if (job.state != JobState::kRunning) continue;
    for (const core::NodeAlloc& a : job.alloc) {
      for (int g : a.gpu_indices) holders[{a.node, g}] = job.id;
    }
  }
  return holders;
}

core::JobLabels Controller::LabelsOf(const Job& job) const {
  return {job.id, job.req.user_name, job.req.account, job.partition};
}

void Controller::OnAgentSamples(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  const std::string host = agents_.HostOf(conn);
  if (host.empty()) return;
  util::Result<core::NodeSamples> got = core::NodeSamplesFromJson(msg.at("samples"));
  if (!got.ok()) {
    util::LogWarn("agent {}: {}", host, got.status().message());
    return;
  }
  // The time the samples stand for: since the agent's last ones, at most
  // three periods (an agent back after a gap does not charge the gap).
  const int64_t period = std::max(1, cfg_.acct_gather_frequency_s);
  auto last = samples_.find(host);
  const int64_t span = last == samples_.end()
                           ? period
                           : std::clamp<int64_t>(got->time - last->second.time, 0, 3 * period);
  const auto holders = GpuHolders();
  // Per job: whether all of its GPUs in these samples are idle, and their
  // mean utilisation.
  struct Seen {
    bool idle = true;
    int sum = 0;
    int count = 0;
  };
  std::map<core::JobId, Seen> seen;
  for (const core::GpuSample& g : got->gpus) {
    auto it = holders.find({g.node, g.index});
    Job* holder = it == holders.end() ? nullptr : cluster_.jobs().Find(it->second);
    if (holder == nullptr) continue;
    Job& job = *holder;
    job.gpu_util_pct_s += static_cast<int64_t>(g.utilization_pct) * span;
    job.gpu_sampled_s += span;
    job.gpu_mem_max_bytes = std::max(job.gpu_mem_max_bytes, g.memory_used_bytes);
    Seen& s = seen[job.id];
    s.idle = s.idle && g.utilization_pct < cfg_.idle_gpu.threshold_pct;
    s.sum += g.utilization_pct;
    ++s.count;
  }
  samples_[host] = std::move(*got);
  if (!cfg_.idle_gpu.enabled()) return;
  const int64_t now = Now();
  for (const auto& [id, s] : seen) {
    Job* job = cluster_.jobs().Find(id);
    if (job == nullptr) continue;
    const core::Partition* part = cfg_.FindPartition(job->partition);
    sched::IdleGpuState state{job->gpu_idle_since, job->gpu_idle_stage};
    const sched::IdleGpuAction action = sched::NextIdleGpuAction(
        cfg_.idle_gpu, s.idle, now, part != nullptr && part->idle_gpu_cancel, &state);
    const bool changed =
        state.idle_since != job->gpu_idle_since || state.stage != job->gpu_idle_stage;
    job->gpu_idle_since = state.idle_since;
    job->gpu_idle_stage = state.stage;
    if (changed) MarkJob(job->id);
    if (action != sched::IdleGpuAction::kNone) ApplyIdleGpuAction(*job, action, s.sum / s.count);
  }
}

void Controller::ApplyIdleGpuAction(Job& job, sched::IdleGpuAction action, int util_pct) {
  const int64_t idle_for = job.gpu_idle_since > 0 ? Now() - job.gpu_idle_since : 0;
  util::LogInfo("job {} of {}: GPUs {} ({}% busy, idle {} s)", job.id, job.req.user_name,
                sched::IdleGpuActionName(action), util_pct, idle_for);
  switch (action) {
    case sched::IdleGpuAction::kNone:
      return;
    case sched::IdleGpuAction::kFlag:
      NotifyIdleGpu(job, "flagged", "user");
      return;
    case sched::IdleGpuAction::kReport:
      NotifyIdleGpu(job, "reminder", "user");
      NotifyIdleGpu(job, "report", "operators");
      return;
    case sched::IdleGpuAction::kUnflag:
      NotifyIdleGpu(job, "busy", "user");
      return;
    case sched::IdleGpuAction::kCancel:
      if (job.state != JobState::kRunning) return;
      NotifyIdleGpu(job, "cancelled", "user");
      job.failure_detail =
          fmt::format("cancelled by the idle-GPU policy: GPUs idle for {} s", idle_for);
      job.cancelled_by = ::getuid();
      job.state = JobState::kCompleting;
      job.ending_as = JobState::kCancelled;
      MarkJob(job.id);
      StopJob(job);
      stats_.JobCanceled();
      return;
  }
}

void Controller::NotifyIdleGpu(const Job& job, std::string_view event, std::string_view recipient) {
  if (cfg_.idle_gpu.notify_program.empty()) return;
  const int64_t idle_for = job.gpu_idle_since > 0 ? Now() - job.gpu_idle_since : 0;
  const std::vector<std::string> env = {
      "PATH=/usr/bin:/bin",
      fmt::format("MUSTER_IDLE_GPU_EVENT={}", event),
      fmt::format("MUSTER_IDLE_GPU_RECIPIENT={}", recipient),
      fmt::format("MUSTER_IDLE_GPU_SECONDS={}", idle_for),
      fmt::format("MUSTER_IDLE_GPU_THRESHOLD={}", cfg_.idle_gpu.threshold_pct),
      fmt::format("SLURM_JOB_ID={}", job.id),
      fmt::format("SLURM_JOB_NAME={}", job.req.name),
      fmt::format("SLURM_JOB_USER={}", job.req.user_name),
      fmt::format("SLURM_JOB_ACCOUNT={}", job.req.account),
      fmt::format("SLURM_JOB_PARTITION={}", job.partition),
      fmt::format("SLURM_JOB_NODELIST={}", job.nodelist),
      fmt::format("SLURM_CLUSTER_NAME={}", cfg_.cluster_name),
  };
  util::Status st =
      util::SpawnDetached({cfg_.idle_gpu.notify_program, std::string(event), std::to_string(job.id),
                           std::string(recipient == "user" ? job.req.user_name : "operators")},
                          env);
  if (!st.ok()) util::LogWarn("IdleGpuNotifyProgram: {}", st.message());
}

}  // namespace muster::ctld

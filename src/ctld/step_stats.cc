// sstat in musterd: a running job's tasks' figures, gathered from the
// agents of the hosts its nodes are on (agent/task_scanner.h reads them
// from /proc at the moment it is asked), with the job's running steps and
// its GPUs' latest samples. The only request musterd answers after hearing
// from agents; it changes nothing, so it waits for no commit.
#include <algorithm>

#include "core/step_stats.h"
#include "ctld/controller.h"
#include "util/log.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using nlohmann::json;

void Controller::StepStats(core::JobId id, const Caller& caller, StepStatsDone done) {
  const Job* job = cluster_.jobs().Find(id);
  if (job == nullptr) {
    done(util::NotFound(fmt::format("couldn't get steps for job {}", id)));
    return;
  }
  if (job->state != JobState::kRunning) {
    done(util::FailedPrecondition(fmt::format("No steps running for job {}", id)));
    return;
  }
  if (!caller.admin && caller.uid != job->req.uid) {
    done(util::PermissionDenied(
        fmt::format("job {} is another user's: Access/permission denied", id)));
    return;
  }
  json steps = json::array();
  std::vector<render::StepInfo> running;
  AppendRunningSteps(*job, &running);
  for (const render::StepInfo& s : running) {
    steps.push_back({{"step", s.step_id}, {"ntasks", s.tasks}, {"nodelist", s.nodelist}});
  }
  // The latest sample of each GPU it holds.
  json gpus = json::array();
  for (const core::NodeAlloc& a : job->alloc) {
    const std::string host = agents_.HostOf(agents_.ConnOf(a.node));
    auto samples = samples_.find(host);
    if (samples == samples_.end()) continue;
    for (const core::GpuSample& g : samples->second.gpus) {
      if (g.node != a.node) continue;
      if (std::find(a.gpu_indices.begin(), a.gpu_indices.end(), g.index) == a.gpu_indices.end()) {
        continue;
      }
      gpus.push_back({{"node", g.node},
                      {"index", g.index},
                      {"utilization_pct", g.utilization_pct},
                      {"memory_used_bytes", g.memory_used_bytes}});
    }
  }
  const uint64_t number = next_step_stats_request_++;
  StepStatsRequest& req = step_stats_requests_[number];
  req.reply = {{"job_id", id}, {"steps", steps}, {"tasks", json::array()}, {"gpus", gpus},
               {"missing", json::array()}};
  req.done = std::move(done);
  req.uid = job->req.uid;
  std::set<std::shared_ptr<api::LineConn>> asked;
  for (const core::NodeAlloc& a : job->alloc) {
    std::shared_ptr<api::LineConn> conn = agents_.ConnOf(a.node);
    if (conn == nullptr) {
      req.reply["missing"].push_back(a.node);
      continue;
    }
    if (!asked.insert(conn).second) continue;
    req.waiting.insert(agents_.HostOf(conn));
    conn->Send({{"type", "step_stats"}, {"request", number}, {"job_id", id}});
  }
  if (req.waiting.empty()) {
    FinishStepStats(number);
    return;
  }
  req.timeout = time_.MakeTimer([this, number] { FinishStepStats(number); });
  req.timeout->ArmAt(time_.Now() + kStepStatsWaitS);
}

void Controller::OnAgentStepStats(const std::shared_ptr<api::LineConn>& conn, const json& msg) {
  auto it = step_stats_requests_.find(msg.at("request").get<uint64_t>());
  if (it == step_stats_requests_.end()) return;  // answered late, after the wait
  StepStatsRequest& req = it->second;
  if (req.waiting.erase(agents_.HostOf(conn)) == 0) return;
  for (const json& t : msg.at("tasks")) {
    util::Result<core::TaskStats> task = core::TaskStatsFromJson(t);
    if (!task.ok()) {
      util::LogWarn("agent {}: {}", agents_.HostOf(conn), task.status().message());
      continue;
    }
    if (task->uid != req.uid) continue;  // another user's process naming this job
    req.reply["tasks"].push_back(core::ToJson(*task));
  }
  if (req.waiting.empty()) FinishStepStats(it->first);
}

void Controller::FinishStepStats(uint64_t number) {
  auto it = step_stats_requests_.find(number);
  if (it == step_stats_requests_.end()) return;
  StepStatsRequest req = std::move(it->second);
  step_stats_requests_.erase(it);
  for (const std::string& host : req.waiting) req.reply["missing"].push_back(host);
  req.done(std::move(req.reply));
}

}  // namespace muster::ctld

#include "cluster/cluster.h"

#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace muster::cluster {
namespace {

using core::Job;
using core::JobId;
using core::JobState;

constexpr int64_t kT0 = 1'800'000'000;

config::Config Config(const std::string& extra = "") {
  auto cfg = config::ParseConfig(
      "ClusterName=c\nSlurmctldHost=localhost\n" + extra +
          "NodeName=n[1-2] CPUs=4 RealMemory=8000\n"
          "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
      "/nonexistent/muster.conf", "", /*read_gres_file=*/false);
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  return std::move(cfg).value();
}

// The state machine driven as a test drives it: events in, decisions out,
// time as data.
class ClusterTest : public ::testing::Test {
 protected:
  void Start(const std::string& extra = "") {
    cfg_ = Config(extra);
    cluster_ = std::make_unique<Cluster>(cfg_, kT0);
    for (core::Node& n : cluster_->nodes()) cluster_->NodeRegistered(n, kT0);
  }
  util::Result<JobId> Submit(int cpus, int64_t limit_s, const std::string& dependency = "",
                             int kill_invalid_dep = -1) {
    core::JobRequest req;
    req.uid = 1000;
    req.gid = 1000;
    req.user_name = "alice";
    req.work_dir = "/";
    req.script = "#!/bin/sh\n";
    req.ntasks = cpus;
    req.time_limit_s = limit_s;
    req.dependency = dependency;
    req.kill_invalid_dep = kill_invalid_dep;
    sched::SubmitRefusal why;
    const Submitter who{false, [](const std::string&) { return std::nullopt; }};
    auto job = cluster_->PrepareJob(std::move(req), who, now_, &why);
    if (!job.ok()) return job.status();
    return cluster_->Admit(std::move(job).value(), now_);
  }
  std::vector<JobId> StartedBy(const PassOutcome& pass) {
    std::vector<JobId> ids;
    for (const auto& s : pass.started) ids.push_back(s.id);
    return ids;
  }
  const Job& At(JobId id) { return cluster_->jobs().At(id); }

  config::Config cfg_;
  std::unique_ptr<Cluster> cluster_;
  int64_t now_ = kT0;
};

TEST_F(ClusterTest, APassStartsWhatFitsAndAnEndLetsTheNextOneStart) {
  Start();
  const JobId a = *Submit(8, 600);
  const JobId b = *Submit(4, 600);
  PassOutcome pass = cluster_->Pass(now_);
  EXPECT_TRUE(pass.ran);
  EXPECT_EQ(StartedBy(pass), std::vector<JobId>{a});
  EXPECT_EQ(At(a).state, JobState::kRunning);
  EXPECT_EQ(At(b).reason, core::PendingReason::kResources);
  EXPECT_TRUE(cluster_->changed_jobs().count(a));  // journalled
  now_ += 100;
  const JobEnd end =
      cluster_->EndJob(cluster_->jobs().At(a), JobState::kCompleted, 0, 0, 0, "", now_);
  EXPECT_TRUE(end.held_resources);
  EXPECT_FALSE(end.requeued);
  EXPECT_EQ(At(a).end_time, now_);
  pass = cluster_->Pass(now_);
  EXPECT_EQ(StartedBy(pass), std::vector<JobId>{b});
  EXPECT_EQ(At(b).start_time, now_);
}

TEST_F(ClusterTest, ADependencyHoldsAJobUntilItIsMet) {
  Start();
  const JobId a = *Submit(1, 600);
  const JobId b = *Submit(1, 600, "afterok:" + std::to_string(a));
  PassOutcome pass = cluster_->Pass(now_);
  EXPECT_EQ(StartedBy(pass), std::vector<JobId>{a});
  EXPECT_EQ(At(b).reason, core::PendingReason::kDependency);
  now_ += 10;
  cluster_->EndJob(cluster_->jobs().At(a), JobState::kCompleted, 0, 0, 0, "", now_);
  pass = cluster_->Pass(now_);
  EXPECT_EQ(StartedBy(pass), std::vector<JobId>{b});
}

TEST_F(ClusterTest, ADependencyThatCanNeverBeMetCancelsTheJobWhenItAsks) {
  Start();
  const JobId a = *Submit(1, 600);
  const JobId b = *Submit(1, 600, "afterok:" + std::to_string(a), /*kill_invalid_dep=*/1);
  cluster_->Pass(now_);
  now_ += 10;
  cluster_->EndJob(cluster_->jobs().At(a), JobState::kFailed, 1, 0, 0, "", now_);
  const PassOutcome pass = cluster_->Pass(now_);
  EXPECT_EQ(pass.cancelled, std::vector<JobId>{b});
  EXPECT_EQ(At(b).state, JobState::kCancelled);
  EXPECT_EQ(At(b).reason, core::PendingReason::kDependencyNeverSatisfied);
  EXPECT_FALSE(cluster_->pending_ids().count(b));
}

TEST_F(ClusterTest, AdmissionRefusesWhatNoPartitionCouldRunAndChangesNothing) {
  Start();
  auto refused = Submit(64, 600);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(cluster_->jobs().empty());
  EXPECT_TRUE(cluster_->pending_ids().empty());
  EXPECT_EQ(cluster_->next_job_id(), 1u);
}

TEST_F(ClusterTest, ARequeuedRunComesBackPendingAfterItsCredentialsExpire) {
  Start();
  const JobId a = *Submit(1, 600);
  cluster_->Pass(now_);
  cluster_->jobs().At(a).requeue_on_end = 1;
  now_ += 30;
  const JobEnd end =
      cluster_->EndJob(cluster_->jobs().At(a), JobState::kCancelled, 0, 15, 0, "", now_);
  EXPECT_TRUE(end.requeued);
  EXPECT_EQ(At(a).state, JobState::kPending);
  EXPECT_EQ(At(a).restart_count, 1);
  EXPECT_EQ(At(a).req.begin_time, now_ + cfg_.cred_expire_s + 1);
  EXPECT_TRUE(StartedBy(cluster_->Pass(now_)).empty());
  EXPECT_EQ(StartedBy(cluster_->Pass(At(a).req.begin_time)), std::vector<JobId>{a});
}

// A pass without explanations (the simulator's) starts exactly what a
// full pass starts.
TEST_F(ClusterTest, APassWithoutPlansStartsWhatAFullPassStarts) {
  auto run = [&](bool explain) {
    Start();
    std::vector<std::pair<int64_t, JobId>> starts;
    std::vector<std::pair<int64_t, JobId>> ends;  // (when, job)
    for (int i = 0; i < 30; ++i) {
      now_ = kT0 + i * 5;
      auto id = Submit(1 + i * 3 % 8, 20 + i * 17 % 90);
      EXPECT_TRUE(id.ok());
    }
    for (now_ = kT0; now_ < kT0 + 4000; now_ += 5) {
      for (auto it = ends.begin(); it != ends.end();) {
        if (it->first > now_) {
          ++it;
          continue;
        }
        cluster_->EndJob(cluster_->jobs().At(it->second), JobState::kCompleted, 0, 0, 0, "", now_);
        it = ends.erase(it);
      }
      for (const auto& s : cluster_->Pass(now_, {.explain = explain}).started) {
        starts.emplace_back(now_, s.id);
        ends.emplace_back(now_ + At(s.id).time_limit_s, s.id);
      }
    }
    now_ = kT0;
    return starts;
  };
  const auto full = run(true);
  EXPECT_EQ(full.size(), 30u);
  EXPECT_EQ(run(false), full);
}

}  // namespace
}  // namespace muster::cluster

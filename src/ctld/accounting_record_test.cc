#include "ctld/accounting_record.h"

#include <gtest/gtest.h>

#include <string>

namespace muster::ctld {
namespace {

core::Job Ended(core::JobState state, int exit_code, int exit_signal) {
  core::Job job;
  job.id = 103;
  job.req.name = "wrap";
  job.state = state;
  job.start_time = 1000;
  job.end_time = 1061;
  job.exit_code = exit_code;
  job.exit_signal = exit_signal;
  job.alloc = {{"cpu01", 1, 1000, 1, {}}};
  job.batch_host = "cpu01";
  return job;
}

// "STATE code:signal" of the job's row and of its .batch row.
std::string Rows(const core::Job& job) {
  config::Config cfg;
  store::JobRecord j = ToJobRecord(job, cfg);
  store::StepRecord b = ToBatchStepRecord(job, cfg);
  return j.state + " " + std::to_string(j.exit_code) + ":" + std::to_string(j.exit_signal) +
         " / " + b.state + " " + std::to_string(b.exit_code) + ":" +
         std::to_string(b.exit_signal);
}

TEST(AccountingRecord, BatchStepFollowsHowTheShellEnded) {
  // sacct on the oracle (slurm 22.05) for each way a batch job ends.
  using core::JobState;
  // sleep past -t 1: the shell dies of the SIGTERM.
  EXPECT_EQ(Rows(Ended(JobState::kTimeout, 0, 15)), "TIMEOUT 0:0 / CANCELLED 0:15");
  // srun sleep past -t 1: the shell exits 15 after srun.
  EXPECT_EQ(Rows(Ended(JobState::kTimeout, 15, 0)), "TIMEOUT 0:0 / FAILED 15:0");
  // kill -9 $$ and kill -TERM $$.
  EXPECT_EQ(Rows(Ended(JobState::kFailed, 0, 9)), "FAILED 0:9 / CANCELLED 0:9");
  EXPECT_EQ(Rows(Ended(JobState::kFailed, 0, 15)), "FAILED 0:15 / CANCELLED 0:15");
  // exit 3, exit 0.
  EXPECT_EQ(Rows(Ended(JobState::kFailed, 3, 0)), "FAILED 3:0 / FAILED 3:0");
  EXPECT_EQ(Rows(Ended(JobState::kCompleted, 0, 0)), "COMPLETED 0:0 / COMPLETED 0:0");
  // scancel: the job's row carries the canceller, the step's does not.
  core::Job cancelled = Ended(JobState::kCancelled, 0, 15);
  cancelled.cancelled_by = 0;
  EXPECT_EQ(Rows(cancelled), "CANCELLED by 0 0:0 / CANCELLED 0:15");
  core::Job running = Ended(JobState::kRunning, 0, 0);
  EXPECT_EQ(ToBatchStepRecord(running, config::Config{}).state, "RUNNING");
}

}  // namespace
}  // namespace muster::ctld

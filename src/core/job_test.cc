#include "core/job.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::core {
namespace {

struct StateCase {
  JobState state;
  std::string name;
  std::string short_name;
  bool finished;
};

const std::vector<StateCase>& StateCases() {
  static const std::vector<StateCase> cases = {
      {JobState::kPending, "PENDING", "PD", false},
      {JobState::kRunning, "RUNNING", "R", false},
      {JobState::kSuspended, "SUSPENDED", "S", false},
      {JobState::kCompleting, "COMPLETING", "CG", false},
      {JobState::kCompleted, "COMPLETED", "CD", true},
      {JobState::kCancelled, "CANCELLED", "CA", true},
      {JobState::kFailed, "FAILED", "F", true},
      {JobState::kTimeout, "TIMEOUT", "TO", true},
      {JobState::kNodeFail, "NODE_FAIL", "NF", true},
      {JobState::kPreempted, "PREEMPTED", "PR", true},
      {JobState::kBootFail, "BOOT_FAIL", "BF", true},
      {JobState::kDeadline, "DEADLINE", "DL", true},
      {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM", true},
  };
  return cases;
}

TEST(JobStateTest, NamesAndParsing) {
  for (const StateCase& c : StateCases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(JobStateName(c.state), c.name);
    EXPECT_EQ(JobStateShort(c.state), c.short_name);
    EXPECT_EQ(IsFinished(c.state), c.finished);
    EXPECT_EQ(ParseJobState(c.name), c.state);
    EXPECT_EQ(ParseJobState(c.short_name), c.state);
    std::string lower;
    for (char ch : c.name) lower += static_cast<char>(std::tolower(ch));
    EXPECT_EQ(ParseJobState(lower), c.state);
  }
  EXPECT_EQ(ParseJobState("pd"), JobState::kPending);
  EXPECT_EQ(ParseJobState("Running"), JobState::kRunning);
  EXPECT_EQ(ParseJobState("cd"), JobState::kCompleted);
  EXPECT_EQ(ParseJobState("oom"), JobState::kOutOfMemory);
  for (const std::string bad : {"", "P", "RUN", "DONE", "CANCELLED+", " PD"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseJobState(bad).has_value());
  }
}

TEST(PendingReasonTest, Names) {
  const std::vector<std::pair<PendingReason, std::string>> cases = {
      {PendingReason::kNone, "None"},
      {PendingReason::kPriority, "Priority"},
      {PendingReason::kResources, "Resources"},
      {PendingReason::kJobHeldUser, "JobHeldUser"},
      {PendingReason::kJobHeldAdmin, "JobHeldAdmin"},
      {PendingReason::kBeginTime, "BeginTime"},
      {PendingReason::kReqNodeNotAvail, "ReqNodeNotAvail"},
      {PendingReason::kPartitionDown, "PartitionDown"},
      {PendingReason::kPartitionInactive, "PartitionInactive"},
      {PendingReason::kPartitionTimeLimit, "PartitionTimeLimit"},
      {PendingReason::kPartitionNodeLimit, "PartitionNodeLimit"},
      {PendingReason::kBadConstraints, "BadConstraints"},
      {PendingReason::kNodeDown, "NodeDown"},
  };
  for (const auto& [reason, name] : cases) {
    SCOPED_TRACE(name);
    EXPECT_EQ(PendingReasonName(reason), name);
    EXPECT_EQ(ParsePendingReason(name), reason);
  }
  EXPECT_FALSE(ParsePendingReason("resources").has_value());
  EXPECT_FALSE(ParsePendingReason("").has_value());
}

TEST(JobTest, StateWithSuffix) {
  Job job;
  job.state = JobState::kCancelled;
  EXPECT_EQ(job.StateWithSuffix(), "CANCELLED");
  job.cancelled_by = 1000;
  EXPECT_EQ(job.StateWithSuffix(), "CANCELLED by 1000");
  job.cancelled_by = 0;
  EXPECT_EQ(job.StateWithSuffix(), "CANCELLED by 0");
  job.state = JobState::kCompleted;  // the suffix is for CANCELLED only
  EXPECT_EQ(job.StateWithSuffix(), "COMPLETED");
  job.state = JobState::kPending;
  EXPECT_EQ(job.StateWithSuffix(), "PENDING");
}

TEST(JobTest, CountsBeforeAllocation) {
  struct Case {
    int min_nodes, ntasks, ntasks_per_node, cpus_per_task;
    int nodes, tasks, cpus;
  };
  const std::vector<Case> cases = {
      {0, 0, 0, 1, 1, 1, 1},   // defaults: one node, one task, one CPU
      {2, 0, 0, 1, 2, 2, 2},   // -N2: one task per node
      {0, 4, 0, 1, 1, 4, 4},   // -n4
      {0, 4, 0, 2, 1, 4, 8},   // -n4 -c2
      {2, 0, 3, 1, 2, 6, 6},   // -N2 --ntasks-per-node=3
      {0, 0, 0, 4, 1, 1, 4},   // -c4
  };
  for (const Case& c : cases) {
    Job job;
    job.req.min_nodes = c.min_nodes;
    job.req.ntasks = c.ntasks;
    job.req.ntasks_per_node = c.ntasks_per_node;
    job.req.cpus_per_task = c.cpus_per_task;
    EXPECT_EQ(job.NumNodes(), c.nodes);
    EXPECT_EQ(job.NumTasks(), c.tasks);
    EXPECT_EQ(job.NumCpus(), c.cpus);
  }
}

TEST(JobTest, CountsFromAllocation) {
  Job job;
  job.req.ntasks = 3;
  job.req.min_nodes = 1;
  job.alloc = {{"gpu01", 4, 1000, 2, {0, 1}}, {"gpu02", 2, 1000, 1, {}}};
  EXPECT_EQ(job.NumNodes(), 2);
  EXPECT_EQ(job.NumCpus(), 6);
  EXPECT_EQ(job.NumTasks(), 3);
  job.alloc[0].tasks = 0;
  job.alloc[1].tasks = 0;
  EXPECT_EQ(job.NumTasks(), 3);  // falls back to the request
}

Job MakeJob() {
  Job job;
  job.id = 124;
  job.req.name = "myname";
  job.req.user_name = "alice";
  job.req.uid = 1000;
  job.batch_host = "gpu01";
  job.alloc = {{"gpu01", 1, 0, 1, {}}, {"gpu02", 1, 0, 1, {}}};
  return job;
}

TEST(ExpandOutputPatternTest, Expands) {
  struct Case {
    std::string pattern;
    std::string want;
  };
  // Checked against the files sbatch's batch steps create (Slurm 22.05).
  const std::vector<Case> cases = {
      {"", ""},
      {"slurm-%j.out", "slurm-124.out"},
      {"/tmp/%x-%j.log", "/tmp/myname-124.log"},
      {"%u/%x", "alice/myname"},
      {"out-%N.txt", "out-gpu01.txt"},
      {"100%%", "100%"},
      {"%%j", "%j"},
      {"%J", "124"},
      {"%s-%t-%n", "batch-0-0"},
      // Zero padding of numeric codes; capped at 10 digits.
      {"job%4j.out", "job0124.out"},
      {"%5j", "00124"},
      {"%2j", "124"},
      {"%0j", "124"},
      {"%9j", "000000124"},
      {"%10j", "0000000124"},
      {"%12j", "0000000124"},
      {"%99j", "0000000124"},
      {"%4t", "0000"},
      {"%2n", "00"},
      // Widths are ignored for text codes.
      {"%10x", "myname"},
      {"%3N", "gpu01"},
      {"%2u", "alice"},
      {"%3s", "batch"},
      // Outside arrays (sbatch -o n_%A_%a_%4a_%4A_%j.txt gave
      // n_14440_4294967294_4294967294_14440_14440.txt).
      {"%A_%a", "124_4294967294"},
      {"%4a_%4A_%6A", "4294967294_0124_000124"},
      // Unknown codes and dangling '%' stay as written.
      {"%q", "%q"},
      {"%z.out", "%z.out"},
      {"%-3j", "%-3j"},
      {"%3q", "%3q"},
      {"end%", "end%"},
      {"end%5", "end%5"},
      {"%.out", "%.out"},
      // A backslash disables expansion; backslashes are dropped.
      {"b\\%j_%x.out", "b%j_%x.out"},
      {"e\\\\x\\y_%j", "e\\xy_%j"},
      {"trailing\\", "trailing"},
  };
  const Job job = MakeJob();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pattern);
    EXPECT_EQ(ExpandOutputPattern(c.pattern, job), c.want);
  }
}

TEST(ExpandOutputPatternTest, ArrayTasks) {
  // sbatch --array=1,3,5-7%2 -o o_%A_%a_%j_%4a_%4A.txt: task 1 (raw id 14404)
  // wrote o_14403_1_14404_0001_14403.txt.
  Job task = MakeJob();
  task.id = 14404;
  task.array_job_id = 14403;
  task.array_task_id = 1;
  EXPECT_EQ(ExpandOutputPattern("o_%A_%a_%j_%4a_%4A.txt", task), "o_14403_1_14404_0001_14403.txt");
  // sbatch --array=3 -o s_%A_%a_%4a_%4A_%j_%x_%10a_%12a.txt.
  task.id = 14441;
  task.array_job_id = 14441;
  task.array_task_id = 3;
  EXPECT_EQ(ExpandOutputPattern("s_%A_%a_%4a_%4A_%j_%x_%10a_%12a.txt", task),
            "s_14441_3_0003_14441_14441_myname_0000000003_0000000003.txt");
}

TEST(ExpandOutputPatternTest, NodeAndUserFallbacks) {
  Job job = MakeJob();
  job.batch_host.clear();
  EXPECT_EQ(ExpandOutputPattern("%N", job), "gpu01");  // first allocated node
  job.alloc.clear();
  EXPECT_EQ(ExpandOutputPattern("%N-%j", job), "%N-124");  // not allocated yet
  job.req.user_name.clear();
  EXPECT_EQ(ExpandOutputPattern("%u", job), "1000");
}

// Observed on the Slurm 22.05 oracle with the default 4 MiB: a script of
// 4194304 bytes is accepted, one of 4194305 refused with this text.
TEST(CheckScriptSize, SlurmsBoundAndMessage) {
  std::string detail;
  EXPECT_TRUE(CheckScriptSize(4194304, kDefaultMaxScriptSize, &detail).ok());
  EXPECT_EQ(detail, "");
  util::Status st = CheckScriptSize(4194305, kDefaultMaxScriptSize, &detail);
  EXPECT_EQ(st.code(), util::Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "Pathname of a file, directory or other parameter too long");
  EXPECT_EQ(detail,
            "the batch script is 4194305 bytes, over the limit of 4194304 bytes "
            "(SchedulerParameters=max_script_size)");
}

}  // namespace
}  // namespace muster::core

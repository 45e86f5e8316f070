#include "core/array.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

constexpr int kMaxArraySize = 100001;  // the oracle's MaxArraySize

std::vector<int> Range(int first, int last, int step = 1) {
  std::vector<int> out;
  for (int i = first; i <= last; i += step) out.push_back(i);
  return out;
}

TEST(ParseArraySpecTest, Accepts) {
  struct Case {
    std::string text;
    std::vector<int> tasks;
    int max_running;
    int step;
  };
  // Each from `sbatch -H --array=TEXT --wrap=true` then `scontrol show job`
  // (ArrayTaskId=, ArrayTaskThrottle=) on Slurm 22.05.
  const std::vector<Case> cases = {
      {"0-4", Range(0, 4), 0, 1},
      {"1-99:2", Range(1, 99, 2), 0, 2},
      {"1,3,5-7", {1, 3, 5, 6, 7}, 0, 1},
      {"0-19%4", Range(0, 19), 4, 1},
      {"7", {7}, 0, 1},
      {"3-3", {3}, 0, 1},
      {"%0", {0}, 0, 1},        // ArrayTaskId=0, no throttle
      {"%", {0}, 0, 1},         // ArrayTaskId=0
      {"-", {0}, 0, 1},         // ArrayTaskId=0
      {"0-4%0", Range(0, 4), 0, 1},
      {"1-5%", Range(1, 5), 0, 1},
      {"1-3%x", Range(1, 3), 0, 1},
      {"1-3%-1", Range(1, 3), 0, 1},
      {"1-3%2x", Range(1, 3), 2, 1},
      {"1-5%2%3", Range(1, 5), 2, 1},
      {"5%2,7", {5, 7}, 2, 1},  // ArrayTaskId=5,7%2
      {"1-3,%2", Range(0, 3), 2, 1},
      {"1,1,2", {1, 2}, 0, 1},
      {"1, 2", {1, 2}, 0, 1},
      {" 1", {1}, 0, 1},
      {"+1", {1}, 0, 1},
      {"01-03", Range(1, 3), 0, 1},
      {"1,,2", {1, 2}, 0, 1},
      {"1,", {1}, 0, 1},
      {"[1-3]", Range(1, 3), 0, 1},
      {"[1-3", Range(1, 3), 0, 1},
      {"1-3]", Range(1, 3), 0, 1},
      {"[1-3],5", {1, 2, 3, 5}, 0, 1},
      {"1-3:+2", {1, 3}, 0, 2},
      {"1-5:2%3", {1, 3, 5}, 3, 2},
      {"1-10:3", {1, 4, 7, 10}, 0, 3},
      {"0-10:5,20", {0, 5, 10, 20}, 0, 5},
      {"1-9:2,20-30:5", {1, 3, 5, 7, 9, 20, 25, 30}, 0, 2},
      {"0-100000", Range(0, 100000), 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<ArraySpec> spec = ParseArraySpec(c.text, kMaxArraySize);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_EQ(spec->tasks, c.tasks);
    EXPECT_EQ(spec->max_running, c.max_running);
    EXPECT_EQ(spec->step, c.step);
  }
}

TEST(ParseArraySpecTest, Rejects) {
  // sbatch -H --array=TEXT: "sbatch: error: Batch job submission failed:
  // Invalid job array specification" for each of these.
  for (std::string_view text : {"-1", "1-5:0", "1-5:-1", "0-100001", "1-", "0x10", "1-2-3",
                                "1:2", "1-5 ", "1-5:", ":2", "1-3:2:1", "a", "x", "5-3",
                                "99999999999", "1-3:2junk",
                                // Not observed: sbatch treats "" as no array.
                                "", "[]", ","}) {
    SCOPED_TRACE(text);
    util::Result<ArraySpec> spec = ParseArraySpec(text, kMaxArraySize);
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().code(), util::Code::kInvalidArgument);
    EXPECT_EQ(spec.status().message(), "Invalid job array specification");
  }
  EXPECT_FALSE(ParseArraySpec("0-1001", 1001).ok());
  EXPECT_TRUE(ParseArraySpec("0-1000", 1001).ok());
}

// Found by tests/fuzz/array_fuzz under UBSan: a number past INT64_MAX
// overflowed while being read, and a huge step overflowed the task loop.
TEST(ParseArraySpecTest, NumbersPastInt64SaturateWithoutOverflow) {
  EXPECT_FALSE(ParseArraySpec("99999999999999999999999", kMaxArraySize).ok());
  EXPECT_FALSE(ParseArraySpec("0-99999999999999999999999", kMaxArraySize).ok());
  util::Result<ArraySpec> spec = ParseArraySpec("3-7:99999999999999999999999", kMaxArraySize);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->tasks, std::vector<int>{3});
  spec = ParseArraySpec("0-4%99999999999999999999999", kMaxArraySize);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->tasks.size(), 5u);
}

TEST(FormatArrayTasksTest, FoldsAsSlurm) {
  struct Case {
    std::vector<int> tasks;
    int max_running;
    std::string want;
  };
  // squeue -o %K and scontrol ArrayTaskId= of `sbatch -H --array=...` jobs.
  const std::vector<Case> cases = {
      {Range(0, 19), 4, "0-19%4"},
      {Range(1, 99, 2), 0, "1-99:2"},
      {{1, 3, 5, 6, 7}, 0, "1,3,5-7"},
      {{7}, 0, "7"},
      {{5, 7}, 2, "5,7%2"},
      {{1, 3, 5}, 3, "1,3,5%3"},        // --array=1-5:2%3
      {{1, 4, 7, 10}, 0, "1,4,7,10"},   // --array=1-10:3
      {{0, 5, 10, 20}, 0, "0,5,10,20"},
      {Range(1, 11, 2), 0, "1,3,5,7,9,11"},  // six ids: not folded
      {Range(1, 13, 2), 0, "1-13:2"},        // seven: folded
      {Range(100, 110, 2), 0, "100,102,104,106,108,110"},
      {Range(0, 12, 2), 3, "0-12:2%3"},
      {Range(100, 301, 3), 0, "100-301:3"},  // --array=100-300:3,301
      {{1, 3, 5, 7, 9, 11, 13, 14}, 0, "1,3,5,7,9,11,13-14"},
      {Range(5, 7), 2, "5-7%2"},  // 14403 after tasks 1 and 3 started
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatArrayTasks(c.tasks, c.max_running), c.want);
  }
}

TEST(FormatArrayTasksTest, CutsLongSets) {
  // --array=1-41:2,100: 61 characters, printed whole.
  std::vector<int> fits = Range(1, 41, 2);
  fits.push_back(100);
  EXPECT_EQ(FormatArrayTasks(fits, 0),
            "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,100");
  // --array=1-99:2,100 and --array=100-300:3,500: cut to 60 and "...".
  std::vector<int> odd = Range(1, 99, 2);
  odd.push_back(100);
  EXPECT_EQ(FormatArrayTasks(odd, 0),
            "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43...");
  std::vector<int> threes = Range(100, 300, 3);
  threes.push_back(500);
  EXPECT_EQ(FormatArrayTasks(threes, 0),
            "100,103,106,109,112,115,118,121,124,127,130,133,136,139,142,...");
}

TEST(StatsOfTest, MatchesSlurmArrayEnv) {
  struct Case {
    std::string text;
    ArrayStats want;
  };
  // SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP printed by `env` in the tasks.
  const std::vector<Case> cases = {
      {"1,3,5-7%2", {5, 1, 7, 1}},
      {"1-9:2", {5, 1, 9, 2}},
      {"0-10:5,20", {4, 0, 20, 5}},
      {"4,8,12%1", {3, 4, 12, 1}},
      {"1-9:2,20-30:5", {8, 1, 30, 2}},
      {"3", {1, 3, 3, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<ArraySpec> spec = ParseArraySpec(c.text, kMaxArraySize);
    ASSERT_TRUE(spec.ok());
    ArrayStats got = StatsOf(*spec);
    EXPECT_EQ(got.count, c.want.count);
    EXPECT_EQ(got.min, c.want.min);
    EXPECT_EQ(got.max, c.want.max);
    EXPECT_EQ(got.step, c.want.step);
  }
}

TEST(ParseJobIdSpecTest, Accepts) {
  struct Case {
    std::string text;
    JobId id;
    std::vector<int> tasks;
  };
  // scancel accepts all of these (rc 0); "_*" cancelled the whole array.
  const std::vector<Case> cases = {
      {"123", 123, {}},
      {"123_4", 123, {4}},
      {"123_[1-3,5]", 123, {1, 2, 3, 5}},
      {"123_[5,7]", 123, {5, 7}},
      {"123_[5]", 123, {5}},
      {"123_*", 123, {}},
      {"123_", 123, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<JobIdSpec> spec = ParseJobIdSpec(c.text);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_EQ(spec->id, c.id);
    EXPECT_EQ(spec->tasks, c.tasks);
  }
}

TEST(ParseJobIdSpecTest, Rejects) {
  // scancel TEXT: "scancel: error: Invalid job id TEXT".
  for (std::string_view text : {"x", "123_x", "123x", "123_[1-", "123_[2-1]", "0", "123_-1",
                                "123_1.batch", "", "-5", "99999999999", "123_[]",
                                // Bounded: never expanded into billions of tasks.
                                "1_[0-2147483647]", "1_[0-3999999,0-3999999]"}) {
    SCOPED_TRACE(text);
    util::Result<JobIdSpec> spec = ParseJobIdSpec(text);
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().message(), "Invalid job id " + std::string(text));
  }
}

Job ArrayRecord(JobId id, JobId array_id, int task, std::vector<int> pending = {}) {
  Job job;
  job.id = id;
  job.array_job_id = array_id;
  job.array_task_id = task;
  job.array_pending = std::move(pending);
  return job;
}

TEST(JobIdSpecMatchesTest, SelectsArrayRecords) {
  // squeue -j on array 14403 (--array=1,3,5-7%2, tasks 1 and 3 running).
  const Job pending = ArrayRecord(14403, 14403, -1, {5, 6, 7});
  const Job task1 = ArrayRecord(14404, 14403, 1);
  const Job task3 = ArrayRecord(14405, 14403, 3);
  Job plain;
  plain.id = 14406;
  auto matches = [](std::string_view text, const Job& job) {
    return JobIdSpecMatches(*ParseJobIdSpec(text), job);
  };
  EXPECT_TRUE(matches("14403", pending));
  EXPECT_TRUE(matches("14403", task1));
  EXPECT_TRUE(matches("14403", task3));
  EXPECT_FALSE(matches("14403", plain));
  EXPECT_TRUE(matches("14404", task1));  // a task's own id
  EXPECT_FALSE(matches("14404", pending));
  EXPECT_TRUE(matches("14403_1", task1));
  EXPECT_FALSE(matches("14403_1", task3));
  EXPECT_FALSE(matches("14403_1", pending));
  EXPECT_TRUE(matches("14403_5", pending));  // still in the pending part
  EXPECT_FALSE(matches("14403_4", pending));
  EXPECT_TRUE(matches("14406", plain));
  EXPECT_FALSE(matches("14406_0", plain));
}

TEST(DisplayJobIdTest, AsSqueuePrintsIt) {
  // squeue -o %i of 14403 (--array=1,3,5-7%2) after tasks 1 and 3 started.
  Job pending = ArrayRecord(14403, 14403, -1, {5, 6, 7});
  pending.array_max_running = 2;
  EXPECT_EQ(DisplayJobId(pending), "14403_[5-7%2]");
  EXPECT_EQ(DisplayJobId(ArrayRecord(14404, 14403, 1)), "14403_1");
  Job plain;
  plain.id = 14406;
  EXPECT_EQ(DisplayJobId(plain), "14406");
  // The last task started keeps the array's id (14192_7 is raw id 14192).
  EXPECT_EQ(DisplayJobId(ArrayRecord(14192, 14192, 7)), "14192_7");
}

}  // namespace
TEST(SplitJobIdList, CommasInsideBracketsBelongToTheTaskList) {
  EXPECT_EQ(SplitJobIdList("12,13_[1,3],14"), (std::vector<std::string>{"12", "13_[1,3]", "14"}));
  EXPECT_EQ(SplitJobIdList("12_[1-3,5]"), std::vector<std::string>{"12_[1-3,5]"});
  EXPECT_EQ(SplitJobIdList(",12,,13,"), (std::vector<std::string>{"12", "13"}));
  EXPECT_TRUE(SplitJobIdList("").empty());
}

}  // namespace muster::core

#include "core/step_stats.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

TaskStats Task(int task, const std::string& node, int64_t rss, int64_t peak, int64_t cpu_ms) {
  TaskStats t;
  t.job_id = 7;
  t.step = "0";
  t.node = node;
  t.task = task;
  t.pids = {100 + task};
  t.rss_kb = rss;
  t.rss_peak_kb = peak;
  t.vmem_kb = rss * 2;
  t.cpu_ms = cpu_ms;
  t.read_bytes = 1000 * (task + 1);
  t.write_bytes = 10;
  return t;
}

TEST(StepStatsTest, SummarizesTasksAsSlurmDoes) {
  // Task 1 peaked higher than task 0 but holds less now.
  const StepStats s =
      SummarizeStep(7, "0", {Task(1, "n2", 1000, 5000, 300), Task(0, "n1", 2000, 2000, 900)});
  EXPECT_EQ(s.ntasks, 2);
  EXPECT_EQ(s.nodes, (std::vector<std::string>{"n1", "n2"}));  // in task order
  EXPECT_EQ(s.pids, (std::vector<int>{100, 101}));
  const FigureSummary& mem = s[StepFigure::kMem];
  EXPECT_EQ(mem.max.value, 5000);  // the highest peak
  EXPECT_EQ(mem.max.node, "n2");
  EXPECT_EQ(mem.max.task, 1);
  EXPECT_EQ(mem.min.value, 2000);
  EXPECT_EQ(mem.min.task, 0);
  EXPECT_EQ(mem.total, 3000);  // what they hold now
  EXPECT_EQ(mem.average, 1500);
  const FigureSummary& cpu = s[StepFigure::kCpu];
  EXPECT_EQ(cpu.min.task, 1);
  EXPECT_EQ(cpu.max.task, 0);
  EXPECT_EQ(cpu.total, 1200);
  EXPECT_EQ(s[StepFigure::kDiskRead].max.value, 2000);
  EXPECT_EQ(s[StepFigure::kVmem].max.value, 4000);  // no peak seen above now
  // Ties go to the lowest task.
  EXPECT_EQ(s[StepFigure::kDiskWrite].max.task, 0);
  EXPECT_EQ(s[StepFigure::kDiskWrite].min.task, 0);
}

TEST(StepStatsTest, NoTasksIsAllZero) {
  const StepStats s = SummarizeStep(7, "batch", {});
  EXPECT_EQ(s.ntasks, 0);
  EXPECT_EQ(s[StepFigure::kMem].max.value, 0);
  EXPECT_EQ(s[StepFigure::kMem].average, 0);
}

TEST(StepStatsTest, JsonRoundTripsAndRefusesBadShapes) {
  const TaskStats t = Task(3, "gpu01", 10, 20, 30);
  const util::Result<TaskStats> back = TaskStatsFromJson(ToJson(t));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->node, "gpu01");
  EXPECT_EQ(back->task, 3);
  EXPECT_EQ(back->rss_peak_kb, 20);
  EXPECT_EQ(back->pids, (std::vector<int>{103}));
  EXPECT_FALSE(TaskStatsFromJson(nlohmann::json{{"task", "three"}}).ok());
}

}  // namespace
}  // namespace muster::core

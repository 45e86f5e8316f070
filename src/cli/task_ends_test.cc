// srun's failed-task lines, against what Slurm 22.05's srun printed on the
// oracle for the same steps.
#include "cli/task_ends.h"

#include <gtest/gtest.h>

#include <sstream>

namespace muster::cli {
namespace {

using Clock = TaskEndLines::Clock;
using std::chrono::milliseconds;

TEST(TaskEndLines, NamesTheNodeAndGathersItsTasks) {
  // srun -N2 -n4 bash -c 'exit 6': tasks 0-2 on cpu01, 3 on cpu02.
  std::ostringstream out;
  TaskEndLines lines({{0, "cpu01"}, {1, "cpu01"}, {2, "cpu01"}, {3, "cpu02"}}, out);
  const Clock::time_point t0{};
  lines.Ended(3, "Exited with exit code 6", t0);
  lines.Ended(0, "Exited with exit code 6", t0);
  lines.Flush(false, t0);
  // cpu02 has no task left; cpu01's line waits for its other tasks.
  EXPECT_EQ(out.str(), "srun: error: cpu02: task 3: Exited with exit code 6\n");
  EXPECT_EQ(lines.PollTimeoutMs(t0), 500);
  lines.Ended(2, "Exited with exit code 6", t0 + milliseconds(3));
  lines.Ended(1, "Exited with exit code 6", t0 + milliseconds(4));
  lines.Flush(false, t0 + milliseconds(4));
  EXPECT_EQ(out.str(),
            "srun: error: cpu02: task 3: Exited with exit code 6\n"
            "srun: error: cpu01: tasks 0-2: Exited with exit code 6\n");
  EXPECT_EQ(lines.PollTimeoutMs(t0), -1);
}

TEST(TaskEndLines, OneLinePerWayOfEnding) {
  // srun -w cpu01 -n4 bash -c 'exit $((SLURM_PROCID % 2))'.
  std::ostringstream out;
  TaskEndLines lines({{0, "cpu01"}, {1, "cpu01"}, {2, "cpu01"}, {3, "cpu01"}}, out);
  const Clock::time_point t0{};
  lines.Ended(0, "", t0);
  lines.Ended(1, "Exited with exit code 1", t0);
  lines.Ended(3, "Exited with exit code 1", t0);
  lines.Ended(2, "Killed", t0);
  lines.Flush(false, t0);
  EXPECT_EQ(out.str(),
            "srun: error: cpu01: tasks 1,3: Exited with exit code 1\n"
            "srun: error: cpu01: task 2: Killed\n");
}

TEST(TaskEndLines, ALineWaitsAtMostKGather) {
  std::ostringstream out;
  TaskEndLines lines({{0, "cpu01"}, {1, "cpu01"}}, out);
  const Clock::time_point t0{};
  lines.Ended(0, "Terminated", t0);
  lines.Flush(false, t0 + milliseconds(499));
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(lines.PollTimeoutMs(t0 + milliseconds(499)), 1);
  lines.Flush(false, t0 + TaskEndLines::kGather);
  EXPECT_EQ(out.str(), "srun: error: cpu01: task 0: Terminated\n");
  // A task's end is counted once; `all` prints what still waits.
  lines.Ended(0, "Terminated", t0);
  lines.Ended(1, "Exited with exit code 2", t0 + milliseconds(600));
  lines.Flush(true, t0 + milliseconds(600));
  EXPECT_EQ(out.str(),
            "srun: error: cpu01: task 0: Terminated\n"
            "srun: error: cpu01: task 1: Exited with exit code 2\n");
}

TEST(TaskEndLines, Ranges) {
  EXPECT_EQ(TaskEndLines::Ranges({0, 1, 3}), "0-1,3");
  EXPECT_EQ(TaskEndLines::Ranges({0, 1, 2, 3, 4}), "0-4");
  EXPECT_EQ(TaskEndLines::Ranges({1, 3}), "1,3");
  EXPECT_EQ(TaskEndLines::Ranges({7}), "7");
}

}  // namespace
}  // namespace muster::cli

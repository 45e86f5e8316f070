#include "agent/task_scanner.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace muster::agent {
namespace {

using namespace std::string_literals;

TEST(TaskScannerTest, IdentityComesFromTheEnvironment) {
  auto task = TaskIdentityFromEnviron("A=1\0SLURM_JOB_ID=42\0SLURM_STEP_ID=3\0SLURM_PROCID=5\0"
                                      "SLURMD_NODENAME=gpu01\0"s);
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->job_id, 42u);
  EXPECT_EQ(task->step, "3");
  EXPECT_EQ(task->task, 5);
  EXPECT_EQ(task->node, "gpu01");
  // No step: the batch step, task 0 (srun's own SLURM_PROCID aside).
  task = TaskIdentityFromEnviron("SLURM_JOB_ID=42\0SLURM_PROCID=0\0SLURMD_NODENAME=gpu01"s);
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->step, "batch");
  EXPECT_EQ(task->task, 0);
  // No job, no node, or a job id that is not one: not a task.
  EXPECT_FALSE(TaskIdentityFromEnviron("PATH=/bin\0SLURMD_NODENAME=x\0"s));
  EXPECT_FALSE(TaskIdentityFromEnviron("SLURM_JOB_ID=42\0"s));
  EXPECT_FALSE(TaskIdentityFromEnviron("SLURM_JOB_ID=x\0SLURMD_NODENAME=n\0"s));
  EXPECT_FALSE(TaskIdentityFromEnviron(""));
}

// A /proc/<pid>/stat line: the command holds ") (" to check the fields are
// read after the last ')'.
std::string Stat(int pid, int64_t majflt, int64_t utime, int64_t cutime, int64_t vsize,
                 int64_t rss) {
  return std::to_string(pid) + " (a) (b) S 1 1 1 0 -1 0 0 0 " + std::to_string(majflt) + " 0 " +
         std::to_string(utime) + " 1 " + std::to_string(cutime) + " 1 20 0 1 0 100 " +
         std::to_string(vsize) + " " + std::to_string(rss) + " 0 0 0\n";
}

TEST(TaskScannerTest, ParsesStatAndIo) {
  ProcFigures p;
  ASSERT_TRUE(ParseProcFigures(Stat(9, 4, 100, 50, 8 << 20, 300),
                               "rchar: 1234\nwchar: 99\nsyscr: 1\n", &p));
  EXPECT_EQ(p.major_faults, 4);
  EXPECT_EQ(p.cpu_ticks, 100 + 1 + 50 + 1);
  EXPECT_EQ(p.vsize_bytes, 8 << 20);
  EXPECT_EQ(p.rss_pages, 300);
  EXPECT_EQ(p.read_bytes, 1234);
  EXPECT_EQ(p.write_bytes, 99);
  ASSERT_TRUE(ParseProcFigures(Stat(9, 0, 0, 0, 0, 0), "", &p));  // io unreadable
  EXPECT_EQ(p.read_bytes, 0);
  EXPECT_FALSE(ParseProcFigures("9 (a) S 1 2", "", &p));
  EXPECT_FALSE(ParseProcFigures("garbage", "", &p));
}

class FakeProc {
 public:
  FakeProc() : root_(std::filesystem::temp_directory_path() / ("proc_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(root_);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }
  void Add(int pid, const std::string& environ, int64_t rss_pages) {
    const auto dir = root_ / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "environ", std::ios::binary) << environ;
    std::ofstream(dir / "stat") << Stat(pid, 1, 100, 0, 1 << 20, rss_pages);
    std::ofstream(dir / "io") << "rchar: 10\nwchar: 20\n";
  }
  void Remove(int pid) { std::filesystem::remove_all(root_ / std::to_string(pid)); }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(TaskScannerTest, GroupsProcessesIntoTasksAndKeepsPeaks) {
  FakeProc proc;
  const std::string job = "SLURM_JOB_ID=7\0SLURMD_NODENAME=n1\0"s;
  proc.Add(10, job, 100);                                    // the batch shell
  proc.Add(11, job, 50);                                     // something it runs
  proc.Add(12, job + "SLURM_STEP_ID=0\0SLURM_PROCID=0\0"s, 10);  // srun step 0, task 0
  proc.Add(13, job + "SLURM_STEP_ID=0\0SLURM_PROCID=1\0"s, 20);  // task 1
  proc.Add(14, "SLURM_JOB_ID=8\0SLURMD_NODENAME=other\0"s, 5);  // another agent's node
  proc.Add(15, "HOME=/\0"s, 5);                              // not a job's
  std::filesystem::create_directories(proc.root() + "/self");
  TaskScanner scanner(proc.root(), {"n1"});
  const int64_t page_kb = ::sysconf(_SC_PAGESIZE) / 1024;

  std::vector<core::TaskStats> tasks = scanner.Scan();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].step, "0");  // ordered by job, step, node, task
  EXPECT_EQ(tasks[2].step, "batch");
  EXPECT_EQ(tasks[2].pids, (std::vector<int>{10, 11}));
  EXPECT_EQ(tasks[2].rss_kb, 150 * page_kb);
  EXPECT_EQ(tasks[2].vmem_kb, 2 * 1024);
  EXPECT_EQ(tasks[2].read_bytes, 20);
  EXPECT_EQ(tasks[2].write_bytes, 40);
  EXPECT_EQ(tasks[2].pages, 2);
  EXPECT_EQ(tasks[1].task, 1);

  // The batch step's second process ends: its memory now drops, its peak
  // stays; a task that is gone is forgotten.
  proc.Remove(11);
  proc.Remove(13);
  tasks = scanner.Scan();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[1].rss_kb, 100 * page_kb);
  EXPECT_EQ(tasks[1].rss_peak_kb, 150 * page_kb);
  proc.Add(13, job + "SLURM_STEP_ID=0\0SLURM_PROCID=1\0"s, 5);
  tasks = scanner.Scan();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[1].rss_peak_kb, 5 * page_kb);  // a new task of that name starts afresh
  EXPECT_EQ(tasks[2].uid, ::geteuid());
  if (::geteuid() == 0) {
    // Another user's process naming the job: a task of its own, with its owner.
    proc.Add(17, job, 7);
    ASSERT_EQ(::chown((proc.root() + "/17").c_str(), 12345, 12345), 0);
    tasks = scanner.Scan();
    ASSERT_EQ(tasks.size(), 4u);
    EXPECT_EQ(tasks[3].step, "batch");
    EXPECT_EQ(tasks[3].uid, 12345u);
    EXPECT_EQ(tasks[3].pids, (std::vector<int>{17}));
  }
}

}  // namespace
}  // namespace muster::agent

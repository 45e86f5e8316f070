// sstat's figures: what each task of a running step uses now, as the agent
// of its host reads it from /proc (agent/task_scanner.h), and the step's
// figures over its tasks (average, maximum and minimum with the node and
// task where they were seen, total), as Slurm's jobacct_gather gives them.
// A task is a process the step started and everything it started in turn;
// the batch step is one task (task 0), the batch shell and all it runs
// outside srun. Value types and pure functions only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::core {

// The step of the batch shell, as -j N.batch names it.
constexpr const char* kBatchStep = "batch";

struct TaskStats {
  uint32_t job_id = 0;
  std::string step;  // "batch", or an srun step's id ("0", "1", ...)
  std::string node;
  int task = 0;  // SLURM_PROCID; 0 for the batch step
  uint32_t uid = 0;  // who owns its processes (one whose owner is not the job's is not its)
  std::vector<int> pids;
  int64_t cpu_ms = 0;        // user + system of its processes and their reaped children
  int64_t rss_kb = 0;        // resident now
  int64_t rss_peak_kb = 0;   // highest resident seen since the step started
  int64_t vmem_kb = 0;       // virtual memory now
  int64_t vmem_peak_kb = 0;  // highest seen
  int64_t pages = 0;         // major page faults
  int64_t read_bytes = 0;    // bytes read by read(2) and the like (rchar)
  int64_t write_bytes = 0;   // bytes written (wchar)
};

nlohmann::json ToJson(const TaskStats& t);
util::Result<TaskStats> TaskStatsFromJson(const nlohmann::json& j);

// The figures of a step, in the order of Slurm's TRES usage strings:
// cpu, fs/disk (read), mem, pages, vmem; and out: fs/disk (written).
enum class StepFigure { kCpu, kDiskRead, kMem, kPages, kVmem, kDiskWrite };
constexpr size_t kStepFigureCount = 6;

// Where an extreme was seen.
struct Extreme {
  int64_t value = 0;
  std::string node;
  int task = 0;
};

struct FigureSummary {
  Extreme max;  // of each task's peak for mem and vmem, else of its figure now
  Extreme min;  // likewise
  int64_t total = 0;  // of the tasks' figures now
  int64_t average = 0;  // total / tasks
};

struct StepStats {
  uint32_t job_id = 0;
  std::string step;
  int ntasks = 0;  // the tasks found
  std::vector<std::string> nodes;  // where they run, in order
  std::vector<int> pids;
  std::array<FigureSummary, kStepFigureCount> figures{};
  const FigureSummary& operator[](StepFigure f) const { return figures[static_cast<size_t>(f)]; }
};

// The tasks of one step summed up. `tasks` all belong to that step; none
// gives a step of no tasks, every figure 0.
StepStats SummarizeStep(uint32_t job_id, const std::string& step,
                        const std::vector<TaskStats>& tasks);

}  // namespace muster::core

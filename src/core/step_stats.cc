#include "core/step_stats.h"

#include <algorithm>
#include <tuple>

namespace muster::core {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TaskStats, job_id, step, node, task, uid, pids, cpu_ms,
                                                rss_kb, rss_peak_kb, vmem_kb, vmem_peak_kb, pages,
                                                read_bytes, write_bytes)

nlohmann::json ToJson(const TaskStats& t) { return t; }

util::Result<TaskStats> TaskStatsFromJson(const nlohmann::json& j) {
  try {
    return j.get<TaskStats>();
  } catch (const nlohmann::json::exception& e) {
    return util::InvalidArgument(std::string("bad task figures: ") + e.what());
  }
}

namespace {

// A task's figure now, and the one its extremes are taken from.
struct TaskFigure {
  int64_t now;
  int64_t extreme;
};

TaskFigure FigureOf(const TaskStats& t, StepFigure f) {
  switch (f) {
    case StepFigure::kCpu: return {t.cpu_ms, t.cpu_ms};
    case StepFigure::kDiskRead: return {t.read_bytes, t.read_bytes};
    case StepFigure::kMem: return {t.rss_kb, std::max(t.rss_kb, t.rss_peak_kb)};
    case StepFigure::kPages: return {t.pages, t.pages};
    case StepFigure::kVmem: return {t.vmem_kb, std::max(t.vmem_kb, t.vmem_peak_kb)};
    case StepFigure::kDiskWrite: return {t.write_bytes, t.write_bytes};
  }
  return {0, 0};
}

}  // namespace

StepStats SummarizeStep(uint32_t job_id, const std::string& step,
                        const std::vector<TaskStats>& tasks) {
  StepStats s;
  s.job_id = job_id;
  s.step = step;
  s.ntasks = static_cast<int>(tasks.size());
  std::vector<const TaskStats*> ordered;
  for (const TaskStats& t : tasks) ordered.push_back(&t);
  // Task order, so ties go to the lowest task as in Slurm.
  std::sort(ordered.begin(), ordered.end(), [](const TaskStats* a, const TaskStats* b) {
    return std::tie(a->task, a->node) < std::tie(b->task, b->node);
  });
  for (const TaskStats* t : ordered) {
    if (std::find(s.nodes.begin(), s.nodes.end(), t->node) == s.nodes.end())
      s.nodes.push_back(t->node);
    s.pids.insert(s.pids.end(), t->pids.begin(), t->pids.end());
  }
  for (size_t i = 0; i < kStepFigureCount; ++i) {
    FigureSummary& sum = s.figures[i];
    bool first = true;
    for (const TaskStats* t : ordered) {
      const TaskFigure v = FigureOf(*t, static_cast<StepFigure>(i));
      sum.total += v.now;
      if (first || v.extreme > sum.max.value) sum.max = {v.extreme, t->node, t->task};
      if (first || v.extreme < sum.min.value) sum.min = {v.extreme, t->node, t->task};
      first = false;
    }
    if (s.ntasks > 0) sum.average = sum.total / s.ntasks;
  }
  return s;
}

}  // namespace muster::core

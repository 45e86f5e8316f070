// The tasks of the jobs running on this host's nodes, found in /proc, for
// sstat: every process started with SLURM_JOB_ID in its environment is
// that job's; SLURM_STEP_ID names its srun step (none: the batch step),
// SLURM_PROCID its task and SLURMD_NODENAME its node, all of which srun
// gives its tasks and the batch shell has (but SLURM_STEP_ID), and the
// processes they start inherit. So srun steps run by srun itself inside
// the batch job, by a launcher of another host and processes that left
// the tree are all found, with or without cgroups. A task's figures are
// the sums over its processes: CPU time (their own and their reaped
// children's), resident and virtual memory, major page faults, bytes read
// and written. Peaks are kept between scans, each scan forgetting the
// tasks it no longer finds. Processes are grouped by their owner too, so
// one that names another user's job in its environment makes a task of its
// own, which musterd leaves out (its owner is not the job's).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/step_stats.h"

namespace muster::agent {

// Which task a process belongs to, from the text of /proc/<pid>/environ
// (NUL-separated NAME=value); nullopt when it names no job, or no node.
struct TaskIdentity {
  uint32_t job_id = 0;
  std::string step;
  std::string node;
  int task = 0;
};
std::optional<TaskIdentity> TaskIdentityFromEnviron(std::string_view environ);

// The figures of one process from /proc/<pid>/stat and /proc/<pid>/io;
// false when the stat text is malformed. The io text may be empty (not
// readable): no bytes read or written.
struct ProcFigures {
  int64_t cpu_ticks = 0;  // utime + stime + cutime + cstime
  int64_t major_faults = 0;
  int64_t vsize_bytes = 0;
  int64_t rss_pages = 0;
  int64_t read_bytes = 0;   // rchar
  int64_t write_bytes = 0;  // wchar
};
bool ParseProcFigures(std::string_view stat, std::string_view io, ProcFigures* out);

class TaskScanner {
 public:
  // `proc_root`: normally /proc. `nodes`: this agent's; processes of other
  // nodes (another agent's, on a shared machine) are left out.
  TaskScanner(std::string proc_root, std::set<std::string> nodes);

  // Every task on this host's nodes now, peaks updated.
  std::vector<core::TaskStats> Scan();

 private:
  // job, step, node, task, owner
  using Key = std::tuple<uint32_t, std::string, std::string, int, uint32_t>;
  struct Peaks {
    int64_t rss_kb = 0;
    int64_t vmem_kb = 0;
  };
  std::string proc_root_;
  std::set<std::string> nodes_;
  int64_t tick_hz_;
  int64_t page_kb_;
  std::map<Key, Peaks> peaks_;
};

}  // namespace muster::agent

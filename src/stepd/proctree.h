// The process tree below a pid, read from /proc. muster-step is a child
// subreaper, so every process the batch script starts (including ones that
// called setsid() or were orphaned by a double fork) stays its descendant
// until reaped; walking ppid links from muster-step's own pid therefore
// finds all of the job's processes. Free functions, no state; safe to call
// from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace muster::stepd {

// One line of /proc/<pid>/stat, reduced to what the tree needs.
struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';  // R, S, D, Z, ...
  // Clock ticks after boot at which the process started: with the pid, an
  // identity that a recycled pid cannot fake.
  uint64_t start_time = 0;
};

// Parses the text of /proc/<pid>/stat. The command name sits in parentheses
// and may itself contain ')' or spaces, so the fields are read after the
// last ')'. Returns false when the text is malformed.
bool ParseProcStat(std::string_view text, ProcStat* out);

// Pure part of the walk: the pids in `procs` whose chain of parents reaches
// `root` (root itself excluded), parents before children. Zombies are left
// out (they have no children and cannot be signalled).
std::vector<ProcStat> DescendantsIn(pid_t root, const std::vector<ProcStat>& procs);

// Live descendants of `root` as /proc shows them now.
std::vector<pid_t> Descendants(pid_t root);

// Sends each of `signals` (in order) to every descendant of `root`. Processes
// forked while the signals go out are caught by rescanning until a scan finds
// no descendant that was not already signalled (bounded, against fork bombs).
// Each pid is pinned with a pidfd and its start time re-checked before the
// signal, so a pid recycled by an unrelated process is never hit. Returns the number
// of processes signalled. `done`, when given, holds pids the caller already
// handled (skipped) and receives the ones handled here. `select`, when
// given, picks the processes to signal; the others count as handled.
using ProcessFilter = std::function<bool(pid_t)>;
int SignalDescendants(pid_t root, std::span<const int> signals,
                      std::unordered_set<pid_t>* done = nullptr,
                      const ProcessFilter& select = {});
inline int SignalDescendants(pid_t root, int sig) {
  return SignalDescendants(root, std::span<const int>(&sig, 1));
}

// Whether the environment `pid` was started with (/proc/<pid>/environ)
// names `variable`. False when it cannot be read (gone, or not ours).
bool StartedWithVariable(pid_t pid, std::string_view variable);

// Whether `pid` belongs to a job step started by srun: srun gives its tasks
// SLURM_STEP_ID and the batch shell never has it, so the tasks and whatever
// they start carry it. Slurm signals "the job's steps" (scancel --signal
// without -b/-f, --signal without B:) as these processes.
bool InJobStep(pid_t pid);

}  // namespace muster::stepd

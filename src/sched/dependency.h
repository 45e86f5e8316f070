// Job dependencies (sbatch -d/--dependency): parsing the option, deciding
// whether a pending job's dependency is met, and printing what remains as
// `scontrol show job` prints Dependency=. Pure logic: other jobs are seen
// through DepLookup, `now` is a parameter; no I/O, no clock. Value types and
// free functions, thread-compatible.
//
// Who refuses what (observed on Slurm 22.05): sbatch checks nothing itself;
// every bad spec reaches the controller, which refuses the submission and
// sbatch prints "sbatch: error: Batch job submission failed: <text>" with
//   "Job dependency problem" for any syntax error: an unknown type
//   ("bogus"), a missing or non-numeric id ("afterok:", "afterok:abc",
//   "afterok:0"), empty elements ("afterok:12::13", "afterok:12,",
//   "a,,b", "a??b"), an argument to singleton ("singleton:5"), a time
//   that is not a positive number of minutes ("after:12+0", "after:12+"),
//   a bad array task ("afterok:12_x");
//   "Requested operation not supported on this system" for "expand:N".
// Dependencies on unknown jobs are accepted at submission (and, when
// evaluated, count as satisfied: Slurm takes a job it does not know for one
// long finished and purged), so ParseDependency is the whole submit check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "util/status.h"

namespace muster::sched {

enum class DepType {
  kAfter,             // the job started (or was cancelled before starting) [+time]
  kAfterAny,          // the job ended, in any state
  kAfterOk,           // the job ended COMPLETED with exit 0 (an array: every task)
  kAfterNotOk,        // the job ended in any other way (an array: all ended, one not OK)
  kAfterCorr,         // the task of the other array with this task's index ended OK
  kAfterBurstBuffer,  // Muster has no burst buffers: same as afterany
  kSingleton,         // no earlier job of this user and name is still unfinished
};

// "after", "afterany", ... as Slurm prints them.
std::string_view DepTypeName(DepType t);

struct DepTerm {
  DepType type = DepType::kAfterAny;
  core::JobId job_id = 0;  // 0 for singleton
  // "afterok:123_4": task 4 of array 123. -1 = the job as named (for an
  // array's id, every task).
  int task_id = -1;
  bool all_tasks = false;  // written "N_*": printed so even before N is known
  // "after:123+5": 5 minutes, kept in seconds. Slurm accepts and prints a
  // time on every type but waits for it only with `after`.
  int64_t delay_s = 0;

  bool operator==(const DepTerm&) const = default;
};

struct Dependency {
  std::vector<DepTerm> terms;  // empty = no dependency
  // Joined by '?': any one term suffices. By ',' (false): all are needed.
  bool any = false;
};

// Parses Slurm's syntax: terms joined by ',' (all) or '?' (any), each
// "type:id[:id...]" (type case-insensitive; a bare "id" is afterany), an id
// "N", "N_T", "N_*" or "N_[1-3,5]" (one term per task), "+minutes" after an
// id, or "singleton". As Slurm does, a spec mixing ',' and '?' means any,
// and a repeated (type, job, task) is kept once (the first, with its time).
// "" gives an empty Dependency. Errors name the bad part: InvalidArgument
// for syntax, FailedPrecondition for "expand" (growing a running job) which
// Muster does not do. Slurm quirks not copied: leading blanks in ids,
// units after the minutes, "N_" and a step in a task list are refused, and
// "N_[1-3]+5" gives the time to every task (Slurm: only to the last).
util::Result<Dependency> ParseDependency(std::string_view text);

// The text sbatch prints after "Batch job submission failed: " for an error
// of ParseDependency (see the table at the top).
std::string_view SlurmSubmitErrorText(const util::Status& parse_error);

// How one term stands at a pass.
enum class DepTermStatus { kUnfulfilled, kFulfilled, kFailed };
struct DepTermState {
  DepTermStatus status = DepTermStatus::kUnfulfilled;
  bool target_is_array = false;  // prints "N_*" for task -1
  int64_t ready_at = 0;          // after+time waiting only for the clock: when
};

// What EvaluateDependency needs to know about other jobs; implemented by
// the controller over its job table.
struct DepJob {
  core::JobId id = 0;
  core::JobState state = core::JobState::kPending;
  int64_t start_time = 0;  // 0 = never started
  int64_t end_time = 0;
  int exit_code = 0;
  int exit_signal = 0;
  int array_task_id = -1;  // -1 when not an array task
};

class DepLookup {
 public:
  virtual ~DepLookup() = default;
  // The records of job `id`: a plain job -> itself; an array's id -> every
  // task (started or ended tasks as their records, tasks not started yet as
  // PENDING records with their array_task_id). task >= 0 narrows to that
  // task (a plain job has none). Empty when unknown (never existed or purged).
  virtual std::vector<DepJob> Find(core::JobId id, int task) const = 0;
  // singleton: whether another job of self's user and name, submitted
  // before self, is not finished.
  virtual bool SingletonBlocked(const core::Job& self) const = 0;
};

enum class DepStatus { kSatisfied, kWaiting, kNeverSatisfied };

struct DepVerdict {
  DepStatus status = DepStatus::kSatisfied;
  // kWaiting only for after+time: the earliest time it may start; 0 when
  // it waits for another job to change state.
  int64_t ready_at = 0;
  // One line for people (squeue -O Explanation), e.g. "needs job 1042 to
  // end COMPLETED with exit 0", "job 1042 ended FAILED (exit 1), so
  // afterok:1042 can never be satisfied". Times are relative to now.
  std::string explanation;
  std::vector<DepTermState> states;  // one per term of the Dependency
};

// Decides `self`'s dependency `d` at time `now`. For aftercorr, self is the
// array task being considered (self.array_task_id); the controller
// evaluates an array's pending part once per index it may start. A
// dependency with no terms is satisfied. Observed Slurm 22.05 rules: an
// unknown job (or task) satisfies its term, except that aftercorr from
// task T of an array on an array without task T never does; with ',' one
// failed term makes the whole never satisfied, with '?' one fulfilled term
// satisfies it and only all failed make it never satisfied.
DepVerdict EvaluateDependency(const Dependency& d, const core::Job& self, const DepLookup& jobs,
                              int64_t now);

// The squeue reason for a verdict: Dependency or DependencyNeverSatisfied
// (kNone when satisfied).
core::PendingReason DependencyReason(const DepVerdict& v);

// Dependency= as `scontrol show job` prints it: the terms not fulfilled,
// each "type:id[_task|_*][+minutes](unfulfilled|failed)", joined by ',' or
// '?'; "(null)" when nothing is left (a '?' dependency with a fulfilled
// term prints "(null)"). `states` as EvaluateDependency gave them; with
// fewer states than terms the rest print as unfulfilled.
std::string FormatDependency(const Dependency& d, const std::vector<DepTermState>& states);

// What a pass does about one pending job's dependency: decided here from
// the job, its parsed dependency and the other jobs, applied by the
// controller (which owns the job table) and nothing more.
struct DepGate {
  // kNone: it may be scheduled; else its pending reason.
  core::PendingReason reason = core::PendingReason::kNone;
  std::string dependency_state;  // Dependency= as shown; "" once satisfied
  std::string explanation;       // why it waits (set when reason is not kNone)
  int64_t ready_at = 0;          // after+time waiting for the clock: when
  enum class Action {
    kKeep,    // nothing to change
    kDrop,    // met: the dependency is dropped, as Slurm does
    kFail,    // can never be met: the job is marked so (and may be cancelled)
    kSplitFailedTask,  // an array part's next task failed its pairing: it is
                       // split off failed, the rest of the array goes on
  };
  Action action = Action::kKeep;
  // An array's pending part checked task by task (aftercorr, singleton):
  // how many of its next tasks may start this pass (0: no such limit), and
  // when the one after them waits on its own partner, that task's reason
  // (Dependency) and why.
  int start_count = 0;
  core::PendingReason cut_reason = core::PendingReason::kNone;
  std::string cut_why;
};

// The gate for pending `job` whose dependency is `d`. An array's pending
// part is judged by the task that would start next; with aftercorr alone
// the tasks after it whose own partners have ended OK may start too, at
// most `max_paired_starts` in one pass.
DepGate GateDependency(const Dependency& d, const core::Job& job, const DepLookup& jobs,
                       int64_t now, int max_paired_starts);

}  // namespace muster::sched

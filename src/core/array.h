// Job arrays (sbatch --array): parsing the task specification, folding a set
// of task ids the way squeue and scontrol print them, the SLURM_ARRAY_TASK_*
// statistics, and job ids as users type them ("123_4", "123_[1-3]") and as
// the commands print them. Pure functions over values; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "util/status.h"

namespace muster::core {

struct ArraySpec {
  std::vector<int> tasks;  // ascending, unique
  int max_running = 0;     // the %N throttle; 0 = none
  // The first ":step" written, 1 when none: Slurm's SLURM_ARRAY_TASK_STEP
  // comes from the text, not from the set ("0-10:5,20" gives 5, "4,8,12" 1).
  int step = 1;
};

// Parses --array as sbatch and slurmctld accept it: comma-separated "N",
// "N-M" or "N-M:S" terms, optionally "%T" for the throttle. Matches Slurm's
// leniencies (observed on 22.05): brackets anywhere are ignored, empty terms
// skipped, duplicates merged, leading blanks and '+' allowed in a number, a
// term may end in '%' (text after the first '%' is the throttle; "%0", a
// negative or unparsable throttle means none). Every index must be >= 0 and
// < max_array_size (MaxArraySize). Errors: InvalidArgument("Invalid job array
// specification") - also for empty text.
util::Result<ArraySpec> ParseArraySpec(std::string_view text, int max_array_size);

// The folded form of a set of task ids (ascending, unique) as squeue %K and
// scontrol ArrayTaskId print it: ranges ("1,3,5-7"), or "first-last:step"
// when the set is a uniform stride of 7 or more ids ("1-13:2", but
// "1,3,5,7,9,11"); longer than 63 characters it is cut to 60 and "..."
// added; then "%N" when max_running > 0 ("0-19%4").
std::string FormatArrayTasks(const std::vector<int>& sorted, int max_running);

// SLURM_ARRAY_TASK_COUNT, _MIN, _MAX and _STEP of an array.
struct ArrayStats {
  int count = 0, min = 0, max = 0, step = 1;
};
ArrayStats StatsOf(const ArraySpec& spec);

// A job id as users type it to scancel, scontrol, squeue -j and sacct -j:
// "123", "123_4", "123_[1-3,5]" (also "123_[5]" and "123_*" or "123_" for
// the whole array), "123+1" (a component of heterogeneous job 123).
struct JobIdSpec {
  JobId id = 0;
  std::vector<int> tasks;  // ascending, unique; empty = the whole job or array
  int het_offset = -1;     // "+N"; -1: none named
};
// Errors: InvalidArgument("Invalid job id <text>"), scancel's words.
util::Result<JobIdSpec> ParseJobIdSpec(std::string_view text);

// A comma list of such ids split into ids: "12,13_[1,3],14" -> "12",
// "13_[1,3]", "14" (commas inside brackets belong to the task list).
std::vector<std::string> SplitJobIdList(std::string_view text);

// Whether a job record is selected by spec: the job itself, any record of
// the array, or (with tasks) the tasks named, including pending ones still
// inside the array's pending part.
bool JobIdSpecMatches(const JobIdSpec& spec, const Job& job);

// The job id as sacct and squeue print it: "123" for a plain job, "123_4" for
// an array task, "123_[5-19%4]" for an array's pending part (squeue cuts the
// latter to 31 characters; see squeue_render), "123+1" for a component of
// a heterogeneous job.
std::string DisplayJobId(const Job& job);

// A heterogeneous job's component ids as Slurm prints them ("26-27");
// "" for any other job.
std::string HetJobIdSet(const Job& job);

// The --output pattern when none was given: "slurm-%A_%a.out" for array
// jobs, "slurm-%j.out" otherwise (a held array's pending part shows
// StdOut=/dir/slurm-14482_4294967294.out in scontrol show job).
std::string_view DefaultStdOutPattern(const Job& job);

}  // namespace muster::core

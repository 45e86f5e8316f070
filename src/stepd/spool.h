// The files of a job's step in an agent's spool directory, and reading them.
// The layout is flat, one set of files per job beside the others:
//   job<id>.script  the batch script (written by the agent, owned by the user)
//   job<id>.state   written by the step: "<pid>\n" once it runs, then its
//                   result as one line of JSON when it ends
//   job<id>.spec    the StepSpec as JSON, only for `muster-step` run on its
//                   own (tests, by hand): the agent hands the spec to the
//                   step it forks in memory
// No directory per job: on ext4 without a journal, creating files in a
// directory made moments ago costs several times a file in a long-lived one
// once many have been deleted (the inode allocator steps over recently
// freed inodes), about 0.35 ms per job at 450 jobs/s. muster-step writes as
// root, so nothing here follows a symlink. Free functions; safe from any
// thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "stepd/step.h"
#include "util/status.h"

namespace muster::stepd {

std::string ScriptFileName(uint32_t job_id);  // "job<id>.script"
std::string StateFileName(uint32_t job_id);   // "job<id>.state"
std::string SpecFileName(uint32_t job_id);    // "job<id>.spec"

// The job id of a state file's name ("job12.state" -> 12), else nullopt.
std::optional<uint32_t> JobOfStateFile(std::string_view name);

// What a state file says. The result counts only once its line is complete
// (ends in a newline and parses): a step killed while writing it has none.
struct StepState {
  pid_t pid = 0;  // 0: no pid line yet
  std::optional<StepResult> result;
};
StepState ParseStepState(std::string_view text);
// The same for the state file of job `job_id`, where a result of another
// job counts as none: a recycled file (agent/file_recycler.h) holds a
// finished job's lines until the step writes over them, so a step that
// died before that left no result of its own.
StepState ParseStepStateOf(uint32_t job_id, std::string_view text);

// The state file's last line for `r`: compact JSON and a newline.
std::string ResultLine(const StepResult& r);

// Appends `line` to <dir_fd>/<name>, creating it (mode 0600) when missing;
// never through a symlink.
util::Status AppendFileAt(int dir_fd, const std::string& name, std::string_view line);

// Reads all of <dir_fd>/<name> (at most 64 MiB).
util::Result<std::string> ReadFileAt(int dir_fd, const std::string& name);

// All of `path`, or "" when it cannot be read (a /proc file whose process
// has gone, a cgroup file the kernel lacks).
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace muster::stepd

// A program started with its stdout and stderr on a pipe, for the hooks
// Muster runs (Prolog, Epilog, PrologSlurmctld, EpilogSlurmctld): started
// with an empty signal mask and default dispositions whatever the caller's,
// and stdin from /dev/null.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "util/status.h"

namespace muster::util {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // its stdout and stderr; the caller reads and closes it
};

// Starts `path` (argv[0] = path) with `env` as its whole environment.
Result<Child> SpawnCapturing(const std::string& path, const std::vector<std::string>& env);

// How a hook ended, as an error naming the program, how it ended (its
// wait status, or killed after `timeout_s` when `timed_out`) and the last
// line of `output`; Ok when it exited 0.
Status HookOutcome(const std::string& path, int wait_status, bool timed_out, int timeout_s,
                   const std::string& output);

}  // namespace muster::util

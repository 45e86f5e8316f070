// Starting the batch shell: everything the forked child needs is computed
// first (LaunchPlan), so that between fork and execve the child only makes
// system calls. A setup failure in the child (uid drop, chdir to /tmp,
// output file, execve) is sent back as one line of text on a close-on-exec
// pipe and the child exits 1; an empty pipe at EOF means execve succeeded.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stepd/step.h"
#include "util/status.h"

namespace muster::stepd {

struct LaunchPlan {
  // True when muster-step runs as root: the child switches to uid, gid and
  // groups. Otherwise it already is the job's user and changes nothing.
  bool set_identity = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::optional<mode_t> umask;  // from SLURM_UMASK in the job's environment
  std::string work_dir;
  std::string script_path;
  std::vector<std::string> argv;  // argv[0] is the script path
  std::vector<std::string> env;
  std::string std_out;  // "" = /dev/null; relative = relative to the working dir
  std::string std_err;  // "" = the stdout file
  std::string std_in;   // "" = /dev/null
  bool open_append = false;
};

// Builds the plan for `spec`. `euid` is muster-step's effective uid: as root
// the job's identity is taken on; as anyone else the spec must name that same
// uid (tests, personal installs), else InvalidArgument. `groups` is used when
// the spec lists no supplementary groups (the agent may leave them to us).
util::Result<LaunchPlan> MakeLaunchPlan(const StepSpec& spec, uid_t euid,
                                        const std::vector<uint32_t>& default_groups);

struct LaunchedShell {
  pid_t pid = -1;
  int error_fd = -1;  // read end of the setup-error pipe; the caller closes it
};

// Forks the batch shell in its own process group. The child first waits
// until `before_release(pid)` has run in the parent (e.g. to put the child in
// the job's cgroup while it is still root and has started nothing, so no
// process of the job can escape it), then sets itself up and execs. The
// caller must have blocked the signals it handles; the child unblocks all of
// them and resets every disposition to default just before execve. Fails
// only when the pipes or the fork cannot be made.
util::Result<LaunchedShell> LaunchBatchShell(const LaunchPlan& plan,
                                             const std::function<void(pid_t)>& before_release = {});

// Reads the child's setup error from `fd` until EOF: "" when execve
// succeeded. Requires that the child has exited (else it may block).
std::string ReadLaunchError(int fd);

}  // namespace muster::stepd

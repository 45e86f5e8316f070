// Starting the batch shell: everything the child needs is computed first
// (LaunchPlan), so that between clone and execve the child only makes
// system calls. The child shares muster-step's memory until it execs
// (clone with CLONE_VM | CLONE_VFORK, as posix_spawn does): no page tables
// are copied and no page is copied on write, which a fork of muster-step
// cost per job; muster-step waits meanwhile. Where the job has a v2 cgroup
// the child is instead created inside it by clone3(CLONE_INTO_CGROUP)
// (with CLONE_VFORK, a copy of the memory). A setup failure in the child
// (cgroup join, uid drop, chdir to /tmp, output file, execve) is written
// on a close-on-exec pipe, read as soon as the clone returns. An open that
// blocks (an output FIFO without a reader) holds muster-step with it, as
// slurmstepd is held; signals to the step wait in its signalfd meanwhile.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "stepd/cgroup.h"
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
  // The job's devices are confined (StepSpec::denied_devices): the shell
  // starts inside its cgroup or not at all, never outside it.
  bool must_join = false;
};

// Builds the plan for `spec`. `euid` is muster-step's effective uid: as root
// the job's identity is taken on; as anyone else the spec must name that same
// uid (tests, personal installs), else InvalidArgument. `groups` is used when
// the spec lists no supplementary groups (the agent may leave them to us).
util::Result<LaunchPlan> MakeLaunchPlan(const StepSpec& spec, uid_t euid,
                                        const std::vector<uint32_t>& default_groups);

struct LaunchedShell {
  pid_t pid = -1;
  // Why the child could not run the script ("" when execve succeeded): it
  // has exited 1 and is the caller's to reap.
  std::string error;
  // Why the child could not join its cgroup ("" when it did, or had none
  // to join): it runs anyway, outside it (or in part of a v1 set), unless
  // the plan says must_join (then `error` says so and it has exited).
  std::string cgroup_error;
};

// Starts the batch shell in its own process group, inside the job's cgroup
// when `join` is given (see CgroupJoin), and returns once it has exec'd or
// failed. The caller must be single-threaded with no signal handlers
// installed (muster-step: it takes its signals from a signalfd); every
// signal is blocked across the clone, and the child resets every
// disposition to default and unblocks all of them just before execve.
// Fails when the pipe or the process cannot be made, and when the plan
// must join a cgroup that `join` does not give.
util::Result<LaunchedShell> LaunchBatchShell(const LaunchPlan& plan, const CgroupJoin* join = nullptr);

}  // namespace muster::stepd

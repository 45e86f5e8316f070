// Prolog and Epilog (slurm.conf's keys), as muster-step runs them on the
// batch step's node: as root, before the job's processes start and after
// they are all gone, with Slurm's variables (SLURM_JOB_ID, SLURM_JOB_USER,
// SLURM_JOB_UID, SLURM_JOB_PARTITION, SLURM_JOB_ACCOUNT, SLURM_JOB_NODELIST,
// SLURMD_NODENAME, CUDA_VISIBLE_DEVICES, SLURM_SCRIPT_CONTEXT, ...).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepd/step.h"
#include "util/status.h"

namespace muster::stepd {

// The environment of a Prolog or Epilog for `spec`'s job: the variables
// Slurm gives them, taken from the job's own environment, and
// SLURM_SCRIPT_CONTEXT=`context` (prolog_slurmd, epilog_slurmd).
std::vector<std::string> HookEnvironment(const StepSpec& spec, std::string_view context);

// Runs `path` with `env`, stdin from /dev/null, and waits for it (at most
// `timeout_s` seconds, then SIGKILL). Ok when it exits 0; otherwise an
// error naming the program, how it ended and its last line of output.
util::Status RunHook(const std::string& path, const std::vector<std::string>& env, int timeout_s);

}  // namespace muster::stepd

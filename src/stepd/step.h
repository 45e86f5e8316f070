// muster-step: the supervisor of one job's batch script. The agent forks
// it (no exec: a fork of the small agent is a fraction of the cost of
// starting a binary) and hands it the StepSpec in memory; `muster-step
// <spool dir> <job id>` runs the same supervisor on <spool>/job<id>.spec
// (tests, by hand). The step runs detached from the agent (own session) so
// it survives an agent restart, and records its pid and, before it exits,
// its StepResult in <spool>/job<id>.state (stepd/spool.h).
//
// Signals the step understands (sent by the agent):
//   SIGTERM            cancel: SIGTERM to every job process, SIGKILL after
//                      kill_wait_s; result state CANCELLED. Its sigqueue
//                      value, when sent with one, is the StopCause.
// A stop (a cancel, or the time limit) is announced in the job's stderr
// with Slurm's line, "slurmstepd-<node>: error: *** JOB <id> ON <node>
// CANCELLED AT <time>[ DUE TO ...] ***".
//   SIGUSR1 + sigqueue value v: deliver signal (v & 0xff) to the job's
//                      steps (srun's tasks), to the batch shell only when
//                      (v & 0x100), to every job process when (v & 0x800);
//                      see EncodeSignal. With (v & 0x200) instead a new
//                      time limit from the start of (v >> 11) & 0xfffff
//                      seconds, minutes when (v & 0x400), all ones =
//                      unlimited (scontrol update TimeLimit=); see
//                      EncodeTimeLimit.
// The step tracks the whole process tree (it is a child subreaper, so
// detached descendants reparent to it) and kills all of it at the end.
// Where cgroups are usable (root, a writable v1 memory hierarchy or v2) the
// job also runs in its own cgroup (stepd/cgroup.h), joined before the batch
// shell execs: the memory limit, the cpuset, the process list used when
// killing, and the peak memory and CPU time are the cgroup's. Where they are
// not, the job runs anyway (one warning in the log) and result.cgroup says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::stepd {

struct StepSpec {
  uint32_t job_id = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups
  std::string user_name;
  std::string work_dir;
  std::string script_path;  // the batch script, already written, mode 0700 owned by uid
  std::vector<std::string> argv;  // arguments after the script
  std::vector<std::string> env;   // complete environment "K=V"
  std::string std_out;  // expanded path (absolute or relative to work_dir)
  std::string std_err;  // expanded path; empty = same file as stdout
  std::string std_in;   // empty = /dev/null
  bool open_append = false;
  int64_t time_limit_s = -1;  // -1 = unlimited
  int kill_wait_s = 30;
  // --signal: deliver `warn_signal` `warn_time_s` seconds before the limit,
  // to the batch shell only when warn_batch_only (B:), else to the job's
  // steps as Slurm does (never the batch shell). 0 = none.
  int warn_signal = 0;
  int warn_time_s = 0;
  bool warn_batch_only = false;
  // Memory hard limit of the job's cgroup in MiB (Slurm's --mem per node, or
  // --mem-per-cpu times the CPUs); 0 = no limit.
  uint64_t mem_limit_mb = 0;
  // CPUs to confine the job to, cpuset list form ("0-3,8"); "" = not
  // confined (emulated nodes sharing one host must not be).
  std::string cpuset;
  // Devices the job may not open (cgroup.conf ConstrainDevices=yes): the
  // GPUs of this host it was not given, as "c MAJOR:MINOR"
  // (stepd/device_filter.h). Where they cannot be refused (no cgroup) the
  // job does not start: it would see every GPU of the node.
  std::vector<std::string> denied_devices;
  // Prolog and Epilog of the batch step's node (slurm.conf; empty: none),
  // run as root before the job and after it (stepd/hooks.h), each given at
  // most `hook_timeout_s` seconds (PrologEpilogTimeout).
  std::string prolog;
  std::string epilog;
  int hook_timeout_s = 300;
};

// How the step ended. state is one of COMPLETED, FAILED, CANCELLED, TIMEOUT,
// OUT_OF_MEMORY, NODE_FAIL.
struct StepResult {
  uint32_t job_id = 0;
  std::string state;
  int exit_code = 0;    // exit status of the script (0 when killed by a signal)
  int exit_signal = 0;  // signal that killed the script, 0 if none
  int64_t start_time = 0;
  int64_t end_time = 0;
  std::string detail;   // e.g. "could not open output file /x: Permission denied"
  // The Prolog failed (detail says how): the job never started here; the
  // node is drained and the job requeued. The Epilog failed (epilog_error
  // says how): the job's end stands; the node is drained.
  bool prolog_failed = false;
  std::string epilog_error;
  // Peak memory in KiB: the larger of the job cgroup's peak and the largest
  // reaped process's RSS (getrusage RUSAGE_CHILDREN ru_maxrss; the only
  // source without a cgroup).
  uint64_t max_rss_kb = 0;
  // User + system CPU time of all the job's processes, in ms (cgroup
  // accounting, or without a cgroup the reaped children's rusage).
  uint64_t total_cpu_ms = 0;
  bool oom_killed = false;  // the cgroup's memory limit made the kernel kill a process
  bool cgroup = false;      // the job ran in its own cgroup (limits enforced)
};

nlohmann::json ToJson(const StepSpec& s);
util::Result<StepSpec> StepSpecFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const StepResult& r);
util::Result<StepResult> StepResultFromJson(const nlohmann::json& j);

// Supervises the batch job `spec` to its end in the calling process, which
// must be new and single-threaded (a child of the agent right after fork,
// or muster-step's main) with every signal it has handlers for blocked.
// Writes <spool_dir>/job<id>.state: its pid at once, the result line at the
// end. Returns the exit code for the process: 0 once the result is written,
// whatever the job's fate; 1 when the state file cannot be written. Returns
// only once no process of the job remains, or after giving up on
// unkillable ones for 60 s (detail says so).
int RunStep(const std::string& spool_dir, const StepSpec& spec);

// muster-step's main: RunStep on <spool_dir>/job<id>.spec. A spec that
// cannot be read or parsed ends FAILED with a detail (exit code 0).
int RunStepFromSpecFile(const std::string& spool_dir, uint32_t job_id);

// The SIGUSR1 sigqueue value asking a step to take a new time limit.
int EncodeTimeLimit(int64_t seconds);

// The SIGUSR1 sigqueue value telling a step that its node is cut off from
// the controller (the agent has not heard from it for SlurmdTimeout): it
// SIGKILLs every process of the job at once and ends NODE_FAIL, so that
// the run the controller requeues elsewhere never overlaps this one.
int EncodeNodeFailure();
// Why the controller stops a running job (the SIGTERM's sigqueue value; a
// SIGTERM without one is a cancel): what the line in its stderr says.
enum class StopCause : int {
  kCancel = 0,       // scancel
  kRequeue = 1,      // scontrol requeue[hold]: "DUE TO JOB REQUEUE"
  kNodeFailure = 2,  // its node set DOWN: "DUE TO NODE FAILURE, ..."
  kPreemption = 3,   // preempted: "DUE TO PREEMPTION"
};
// "requeue", "node_failure", "preemption", else a cancel: the agent
// protocol's names.
StopCause StopCauseFromName(const std::string& name);

// Which of a job's processes a signal is for, as scancel chooses them.
enum class SignalTarget {
  kSteps,  // the tasks of its srun steps (scancel --signal; --signal without B:)
  kBatch,  // the batch shell alone (scancel -b; --signal=B:)
  kAll,    // the batch shell, everything it started and the steps (scancel -f)
};

// The SIGUSR1 sigqueue value asking a step to deliver `sig` to `target`.
int EncodeSignal(int sig, SignalTarget target);

}  // namespace muster::stepd

// The tasks of an srun step on one node of a cluster of several hosts. The
// agent of the node forks a process per step that runs RunRemoteTasks: it
// connects back to srun (which listens on its own host), proves it is the
// launch srun asked for (the step's random token, which reached the agent
// through musterd over signed lines), starts the node's tasks as the job's
// user, relays their output and reports how each ended. When srun goes away
// (its connection closes) the tasks are killed: a step lives as long as
// the srun that runs it, as in Slurm.
//
// The stream to srun, in order per task:
//   "HELLO <token> <node>\n"                 first, once
//   "O <rank> <length>\n" <bytes>            a piece of a task's stdout
//   "E <rank> <length>\n" <bytes>            ... of its stderr
//   "F <rank> <length>\n" <message>          the task could not be started
//   "X <rank> <exit code> <signal> <max RSS KiB> <CPU ms>\n"
//                                            the task ended (signal 0: exited)
// From srun:
//   "S <signal>\n"                           a signal to every task of the node
//   "I <length>[ <rank>]\n" <bytes>         srun's stdin for the tasks that
//                                            take it (sattach's: for task
//                                            <rank> alone; -1 or none: all,
//                                            as cli/step_attach.h writes it);
//                                            length 0: its end
//   "W <rows> <cols>\n"                      the terminal's new size (--pty)
//   "C <length>\n" <bytes>                   a PMIx fence's data from every node
// and to srun, with --mpi=pmix, "C <length>\n" <bytes>: this node's part of
// a fence, once all its tasks entered it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/cpu_bind.h"
#include "util/status.h"

namespace muster::stepd {

struct RemoteTask {
  int rank = 0;
  std::vector<std::string> env;  // its complete environment, "K=V"
};

// Which tasks read srun's stdin (srun -i) and whether task 0 runs on a
// pseudo-terminal (srun --pty).
struct TaskIo {
  static constexpr int kAllTasks = -1;
  static constexpr int kNoTask = -2;
  int stdin_rank = kAllTasks;  // a rank, kAllTasks or kNoTask
  // Task 0 on a terminal of its own (stdin, stdout and stderr); the other
  // tasks' output is discarded, as Slurm's --pty does.
  bool pty = false;
  int rows = 0;  // the terminal's size; 0: unknown
  int cols = 0;

  bool TakesStdin(int rank) const {
    return stdin_rank == kAllTasks || stdin_rank == rank;
  }
};

struct RemoteStepSpec {
  uint32_t job_id = 0;
  int step_id = 0;
  std::string node;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
  std::string work_dir;
  std::vector<std::string> argv;
  std::vector<RemoteTask> tasks;
  std::string io_host;  // srun's host and port
  int io_port = 0;
  std::string token;
  TaskIo io;
  util::CpuBind cpu_bind;
  // The job's memory on this node (MB): the limit of the cgroup the
  // launcher makes for the tasks where the job has none on this host yet.
  int64_t mem_mb = 0;
  // Devices the tasks may not open (ConstrainDevices; StepSpec's), for the
  // cgroup the launcher makes; where it cannot make one, no task starts.
  std::vector<std::string> denied_devices;
  // Whether the job's batch step runs on this host (the agent knows): the
  // tasks join its cgroup rather than making their own. (Test hosts that
  // share one kernel also share its cgroups, so a job_<id> there may be
  // another host's.)
  bool batch_here = false;
  // srun --mpi=pmix: the launcher runs a PMIx server for the tasks; every
  // node's launcher knows the whole step's layout.
  bool pmix = false;
  std::vector<std::string> step_nodes;        // the step's nodes, in order
  std::vector<std::vector<int>> step_ranks;   // their ranks
};

nlohmann::json ToJson(const RemoteStepSpec& spec);
util::Result<RemoteStepSpec> RemoteStepSpecFromJson(const nlohmann::json& j);

// Runs the node's tasks to their end (see above); returns the process exit
// status for the forked launcher (0, or 1 when srun could not be reached).
int RunRemoteTasks(const RemoteStepSpec& spec);

}  // namespace muster::stepd

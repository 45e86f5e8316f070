// srun's side of a step on a cluster of several hosts (the stream is
// described in stepd/remote_tasks.h): srun listens on a port of its own
// host, asks musterd to have the agents of the step's nodes start the
// tasks, and relays what their launchers send back until every task has
// ended. srun's stdin goes to the tasks that take it; with --pty srun's
// terminal is put in raw mode and becomes task 0's. srun's signals are
// answered as cli/step_signals.h says, through the launchers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/client.h"
#include "util/cpu_bind.h"
#include "util/status.h"

namespace muster::cli {

class AttachHub;

struct RemoteNodeTasks {
  std::string node;
  // The job (a heterogeneous job's component) whose step runs here, and
  // its command.
  std::string job_id;
  std::vector<std::string> argv;
  std::vector<std::pair<int, std::vector<std::string>>> tasks;  // rank, environment
};

// Which tasks read srun's stdin (srun -i).
struct StdinTarget {
  enum Kind { kAll, kNone, kRank } kind = kAll;
  int rank = 0;  // kRank's

  bool Takes(int r) const { return kind == kAll || (kind == kRank && rank == r); }
};

struct RemoteLaunch {
  std::string job_id;  // as the step's messages name it
  int step_id = 0;
  std::vector<std::string> argv;
  std::string work_dir;
  std::vector<RemoteNodeTasks> nodes;
  bool label = false;                    // -l: each line prefixed with its rank
  bool unbuffered = false;               // -u: output as it comes, not by whole lines
  bool kill_on_bad_exit = false;         // -K: the first failed task ends the step
  std::map<int, std::string> out_paths;  // -o, expanded per rank; empty: srun's stdout
  std::map<int, std::string> err_paths;  // -e; empty: the output's
  StdinTarget input;                     // -i
  bool pty = false;                      // --pty: task 0 on a terminal of its own
  int kill_wait_s = 30;                  // KillWait: from SIGTERM to SIGKILL on abort
  util::CpuBind cpu_bind;                // --cpu-bind
  bool pmix = false;                     // --mpi=pmix: a PMIx server per node, fences through srun
  int64_t time_limit_s = 0;              // srun -t inside an allocation; 0: the job's
};

struct StepExit {
  int code = 0;    // the highest task exit (128 + signal)
  int signal = 0;  // a signal that ended a task, 0 if none
  int64_t max_rss_kb = -1;  // the largest task's peak memory; -1: unknown
  int64_t total_cpu_ms = 0;
  bool timed_out = false;  // the step's own time limit ended it (TIMEOUT)
};

// Runs the step's tasks through the agents and relays their output (to
// `hub`'s sattach's too, and their input to the tasks); kUnavailable when
// the launch could not be asked for or never arrived.
util::Result<StepExit> RunRemoteStep(const Client& client, const RemoteLaunch& launch,
                                     AttachHub& hub);

}  // namespace muster::cli

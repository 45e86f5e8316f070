// srun --cpu-bind for one task, applied in the task's process before it
// execs (srun on one host, the launcher of a step's node on several).
#pragma once

#include <string_view>

namespace muster::util {

// none: the task runs on every CPU its starter may use; cores: on its own
// cpus_per_task of them, by local id (wrapping around when the node has
// fewer); verbose: the task first says its mask on its stderr, as Slurm's
// "cpu-bind=MASK - node01, task  0  0 [4242]: mask 0x3 set".
struct CpuBind {
  bool cores = false;
  bool verbose = false;
  int cpus_per_task = 1;
};

// Binds the calling process (a task between fork and exec) and writes the
// verbose line to fd 2; best effort: a binding that cannot be set leaves
// the task where it was.
void BindTaskCpus(const CpuBind& bind, std::string_view node, int rank, int local_id);

}  // namespace muster::util

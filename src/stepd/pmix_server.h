// srun --mpi=pmix on one node of a step: a PMIx server (Debian's libpmix,
// the library Open MPI's own client speaks to) inside the node's launcher,
// which the tasks reach through the variables TaskEnvironment gives them.
// Fences across nodes go through srun, which every launcher is connected
// to: each local contribution (the blob libpmix hands the fence upcall) is
// taken with TakeContribution and sent to srun; srun concatenates one from
// every node and sends the result back, which CompleteFence hands to
// libpmix. One per process (libpmix keeps one server per process).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::stepd {

struct PmixLayout {
  std::string nspace;                     // the same on every node: "muster.<job>.<step>"
  std::vector<std::string> nodes;         // the step's nodes, in order
  std::vector<std::vector<int>> ranks;    // each node's ranks, by local id
  size_t node_index = 0;                  // this node in `nodes`
  uid_t uid = 0;                          // the tasks' user
  gid_t gid = 0;
};

class PmixServer {
 public:
  // Starts the server and registers the job and this node's tasks.
  static util::Result<std::unique_ptr<PmixServer>> Start(const PmixLayout& layout);
  ~PmixServer();
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // PMIX_* variables task `rank` connects to the server with ("K=V").
  util::Result<std::vector<std::string>> TaskEnvironment(int rank) const;

  // Readable when a fence contribution or an abort waits (poll it).
  int wakeup_fd() const { return wakeup_fd_; }
  // This node's part of the next fence, once all its tasks entered it.
  std::optional<std::string> TakeContribution();
  // Every node's parts of the fence, concatenated: the fence completes.
  void CompleteFence(const std::string& all);
  // A task called PMIx_Abort: the step's tasks should be killed.
  bool TakeAbort();

 private:
  PmixServer() = default;

  PmixLayout layout_;
  int wakeup_fd_ = -1;
  std::string tmpdir_;
};

}  // namespace muster::stepd

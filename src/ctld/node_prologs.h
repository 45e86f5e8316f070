// The Prolog runs on every node of a job before it starts (PrologFlags=
// Alloc): which nodes of which run of which job have yet to answer.
//
// Owned by the Controller and used on its event loop only; not
// thread-safe. Pure bookkeeping: the controller sends the runs, and what a
// node's answer means (start the job, drain the node, requeue the job) is
// the controller's. Invariant: a job is here exactly while it is
// Job::configuring, with the nodes of its allocation that have not
// answered for its current run (restart_count), never empty.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/job.h"

namespace muster::ctld {

class NodePrologs {
 public:
  enum class Answer {
    kStale,    // not a run waited for (an old run, a node that answered)
    kWaiting,  // counted; other nodes have yet to answer
    kAllDone,  // the last node: the job may start
  };

  // Run `run` of job `id` waits for `nodes` (replacing what it waited for).
  void Start(core::JobId id, int run, const std::vector<std::string>& nodes);
  // Node `node` succeeded for run `run` of job `id`.
  Answer Succeeded(core::JobId id, int run, const std::string& node);
  // Whether run `run` of job `id` waits for `node` (a failure to act on).
  bool Waits(core::JobId id, int run, const std::string& node) const;
  void Forget(core::JobId id);
  // The jobs with nodes among `nodes` yet to answer, and those nodes.
  std::map<core::JobId, std::vector<std::string>> PendingOn(
      const std::vector<std::string>& nodes) const;
  bool empty() const { return pending_.empty(); }

 private:
  struct Pending {
    int run = 0;
    std::set<std::string> nodes;
  };
  std::map<core::JobId, Pending> pending_;
};

}  // namespace muster::ctld

// What sdiag shows of musterd: jobs submitted, started and ended since the
// last reset, the scheduling passes' durations and depths, and the RPCs
// served by type and by user, with their times. Counted by the controller
// on its loop (no locking); `sdiag -r` resets all but the last cycle's
// figures and the total of backfilled jobs, as Slurm does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace muster::ctld {

// One scheduling pass, as the controller saw it.
struct PassFigures {
  int64_t micros = 0;        // the pass's own time (sched::Schedule)
  int64_t depth = 0;         // pending jobs the pass went through
  int64_t queue_length = 0;  // pending jobs in the queue
  // With backfill planning: the jobs started past a job left waiting for
  // resources, and the moments of the availability profile.
  bool planned = false;
  int64_t backfilled = 0;
  int64_t table_size = 0;
};

class ServerStats {
 public:
  explicit ServerStats(int64_t now) : since_(now) {}

  void JobSubmitted() { ++jobs_submitted_; }
  void JobStarted() { ++jobs_started_; }
  void JobCompleted() { ++jobs_completed_; }
  void JobCanceled() { ++jobs_canceled_; }
  void JobFailed() { ++jobs_failed_; }

  // A pass that ran at `now`.
  void Pass(int64_t now, const PassFigures& f);

  // An RPC of Slurm message type `name` (`id`, 0 for one Slurm has not)
  // from `uid` that took `micros` to serve.
  void Rpc(const std::string& name, int id, uid_t uid, int64_t micros);

  // Zeroes the counts since `now`.
  void Reset(int64_t now);

  // Everything, for GET /v1/stats (user names from the caller's side: uids
  // here).
  nlohmann::json ToJson() const;

 private:
  struct RpcCount {
    std::string name;
    int id = 0;
    uid_t uid = 0;
    int64_t count = 0;
    int64_t micros = 0;
  };
  static RpcCount& Find(std::vector<RpcCount>* rows, const std::string& name, int id, uid_t uid);

  int64_t since_;
  int64_t jobs_submitted_ = 0, jobs_started_ = 0, jobs_completed_ = 0, jobs_canceled_ = 0,
          jobs_failed_ = 0;
  // Main schedule: every pass.
  int64_t last_cycle_ = 0, max_cycle_ = 0, cycles_ = 0, cycle_sum_ = 0, depth_sum_ = 0,
          last_queue_length_ = 0;
  // Backfill: the passes that planned.
  int64_t backfilled_total_ = 0, backfilled_ = 0, bf_cycles_ = 0, bf_last_when_ = 0,
          bf_last_cycle_ = 0, bf_max_cycle_ = 0, bf_cycle_sum_ = 0, bf_last_depth_ = 0,
          bf_depth_sum_ = 0, bf_last_queue_length_ = 0, bf_queue_length_sum_ = 0,
          bf_last_table_size_ = 0, bf_table_size_sum_ = 0;
  // In the order first seen (sdiag sorts).
  std::vector<RpcCount> by_type_;
  std::vector<RpcCount> by_user_;
};

}  // namespace muster::ctld

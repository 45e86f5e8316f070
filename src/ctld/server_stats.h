// What sdiag and /metrics show of musterd: jobs submitted, started and
// ended, the scheduling passes' durations and depths, queue waits, and the
// RPCs served by type and by user, with their times. Counted by the
// controller on its loop (no locking). Two sets: since the last `sdiag -r`
// (which keeps the last cycle's figures and the total of backfilled jobs,
// as Slurm does), and since musterd started, never reset (Prometheus'
// counters).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sched/scheduler.h"

namespace muster::ctld {

class ServerStats {
 public:
  explicit ServerStats(int64_t now) : since_(now) {}

  void JobSubmitted() { Both([](Counts& c) { ++c.jobs_submitted; }); }
  // A start after `waited` seconds in the queue (from submission).
  void JobStarted(int64_t waited);
  void JobCompleted() { Both([](Counts& c) { ++c.jobs_completed; }); }
  void JobCanceled() { Both([](Counts& c) { ++c.jobs_canceled; }); }
  void JobFailed() { Both([](Counts& c) { ++c.jobs_failed; }); }

  // A pass that ran at `now`, took `micros` (sched::Schedule's own time)
  // with `queue_length` jobs pending, and did what `f` says.
  void Pass(int64_t now, int64_t micros, int64_t queue_length, const sched::Plan::Figures& f);

  // An RPC of Slurm message type `name` (`id`, 0 for one Slurm has not)
  // from `uid` that took `micros` to serve.
  void Rpc(const std::string& name, int id, uid_t uid, int64_t micros);

  // Zeroes sdiag's counts since `now`.
  void Reset(int64_t now);

  // sdiag's figures, for GET /v1/stats (users by uid).
  nlohmann::json ToJson() const;

  // Since musterd started.
  struct RpcCount {
    std::string name;
    int id = 0;
    uid_t uid = 0;
    int64_t count = 0;
    int64_t micros = 0;
  };
  // Queue waits: upper bounds of the histogram's buckets, in seconds.
  static constexpr std::array<int64_t, 9> kWaitBuckets = {1,    10,    60,    300,  900,
                                                          3600, 14400, 43200, 86400};
  struct Counts {
    int64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_canceled = 0,
            jobs_failed = 0;
    // Main schedule: every pass.
    int64_t last_cycle = 0, max_cycle = 0, cycles = 0, cycle_sum = 0, depth_sum = 0,
            last_queue_length = 0;
    // Backfill: the passes that planned.
    int64_t backfilled_total = 0, backfilled = 0, bf_cycles = 0, bf_last_when = 0,
            bf_last_cycle = 0, bf_max_cycle = 0, bf_cycle_sum = 0, bf_last_depth = 0,
            bf_depth_sum = 0, bf_last_queue_length = 0, bf_queue_length_sum = 0,
            bf_last_table_size = 0, bf_table_size_sum = 0;
    // Waits of the jobs started, by kWaitBuckets (the last: above them all).
    std::array<int64_t, kWaitBuckets.size() + 1> waits{};
    int64_t wait_sum = 0;
    // In the order first seen (sdiag sorts).
    std::vector<RpcCount> by_type;
    std::vector<RpcCount> by_user;
  };
  const Counts& lifetime() const { return lifetime_; }

 private:
  template <typename F>
  void Both(F f) {
    f(since_reset_);
    f(lifetime_);
  }
  static RpcCount& Find(std::vector<RpcCount>* rows, const std::string& name, int id, uid_t uid);

  int64_t since_;
  Counts since_reset_;
  Counts lifetime_;
};

}  // namespace muster::ctld

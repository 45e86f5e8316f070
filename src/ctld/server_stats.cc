#include "ctld/server_stats.h"

#include <algorithm>

namespace muster::ctld {

void ServerStats::JobStarted(int64_t waited) {
  waited = std::max<int64_t>(0, waited);
  size_t bucket = 0;
  while (bucket < kWaitBuckets.size() && waited > kWaitBuckets[bucket]) ++bucket;
  Both([&](Counts& c) {
    ++c.jobs_started;
    ++c.waits[bucket];
    c.wait_sum += waited;
  });
}

void ServerStats::Pass(int64_t now, int64_t micros, int64_t queue_length,
                       const sched::Plan::Figures& f) {
  Both([&](Counts& c) {
    c.last_cycle = micros;
    c.max_cycle = std::max(c.max_cycle, micros);
    ++c.cycles;
    c.cycle_sum += micros;
    c.depth_sum += f.depth;
    c.last_queue_length = queue_length;
    if (!f.planned) return;
    c.backfilled_total += f.backfilled;
    c.backfilled += f.backfilled;
    ++c.bf_cycles;
    c.bf_last_when = now;
    c.bf_last_cycle = micros;
    c.bf_max_cycle = std::max(c.bf_max_cycle, micros);
    c.bf_cycle_sum += micros;
    c.bf_last_depth = f.depth;
    c.bf_depth_sum += f.depth;
    c.bf_last_queue_length = queue_length;
    c.bf_queue_length_sum += queue_length;
    c.bf_last_table_size = f.table_size;
    c.bf_table_size_sum += f.table_size;
  });
}

ServerStats::RpcCount& ServerStats::Find(std::vector<RpcCount>* rows, const std::string& name,
                                         int id, uid_t uid) {
  auto it = std::find_if(rows->begin(), rows->end(), [&](const RpcCount& r) {
    return r.name == name && r.id == id && r.uid == uid;
  });
  if (it != rows->end()) return *it;
  rows->push_back(RpcCount{name, id, uid, 0, 0});
  return rows->back();
}

void ServerStats::Rpc(const std::string& name, int id, uid_t uid, int64_t micros) {
  Both([&](Counts& c) {
    RpcCount& type = Find(&c.by_type, name, id, 0);
    ++type.count;
    type.micros += micros;
    RpcCount& user = Find(&c.by_user, "", 0, uid);
    ++user.count;
    user.micros += micros;
  });
}

void ServerStats::Reset(int64_t now) {
  // The last cycles' figures and the total of backfilled jobs stay.
  const Counts& old = since_reset_;
  Counts fresh;
  fresh.last_cycle = old.last_cycle;
  fresh.last_queue_length = old.last_queue_length;
  fresh.backfilled_total = old.backfilled_total;
  fresh.bf_last_when = old.bf_last_when;
  fresh.bf_last_cycle = old.bf_last_cycle;
  fresh.bf_last_depth = old.bf_last_depth;
  fresh.bf_last_queue_length = old.bf_last_queue_length;
  fresh.bf_last_table_size = old.bf_last_table_size;
  since_reset_ = std::move(fresh);
  since_ = now;
}

nlohmann::json ServerStats::ToJson() const {
  using nlohmann::json;
  const Counts& c = since_reset_;
  json types = json::array();
  for (const RpcCount& r : c.by_type) {
    types.push_back({{"name", r.name}, {"id", r.id}, {"count", r.count}, {"micros", r.micros}});
  }
  json users = json::array();
  for (const RpcCount& r : c.by_user) {
    users.push_back({{"uid", r.uid}, {"count", r.count}, {"micros", r.micros}});
  }
  return {
      {"since", since_},
      {"jobs",
       {{"submitted", c.jobs_submitted},
        {"started", c.jobs_started},
        {"completed", c.jobs_completed},
        {"canceled", c.jobs_canceled},
        {"failed", c.jobs_failed}}},
      {"main",
       {{"last_cycle", c.last_cycle},
        {"max_cycle", c.max_cycle},
        {"cycles", c.cycles},
        {"cycle_sum", c.cycle_sum},
        {"depth_sum", c.depth_sum},
        {"last_queue_length", c.last_queue_length}}},
      {"backfill",
       {{"backfilled_total", c.backfilled_total},
        {"backfilled", c.backfilled},
        {"cycles", c.bf_cycles},
        {"last_when", c.bf_last_when},
        {"last_cycle", c.bf_last_cycle},
        {"max_cycle", c.bf_max_cycle},
        {"cycle_sum", c.bf_cycle_sum},
        {"last_depth", c.bf_last_depth},
        {"depth_sum", c.bf_depth_sum},
        {"last_queue_length", c.bf_last_queue_length},
        {"queue_length_sum", c.bf_queue_length_sum},
        {"last_table_size", c.bf_last_table_size},
        {"table_size_sum", c.bf_table_size_sum}}},
      {"rpc_by_type", types},
      {"rpc_by_user", users},
  };
}

}  // namespace muster::ctld

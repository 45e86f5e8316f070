#include "ctld/server_stats.h"

#include <algorithm>

namespace muster::ctld {

void ServerStats::Pass(int64_t now, const PassFigures& f) {
  last_cycle_ = f.micros;
  max_cycle_ = std::max(max_cycle_, f.micros);
  ++cycles_;
  cycle_sum_ += f.micros;
  depth_sum_ += f.depth;
  last_queue_length_ = f.queue_length;
  if (!f.planned) return;
  backfilled_total_ += f.backfilled;
  backfilled_ += f.backfilled;
  ++bf_cycles_;
  bf_last_when_ = now;
  bf_last_cycle_ = f.micros;
  bf_max_cycle_ = std::max(bf_max_cycle_, f.micros);
  bf_cycle_sum_ += f.micros;
  bf_last_depth_ = f.depth;
  bf_depth_sum_ += f.depth;
  bf_last_queue_length_ = f.queue_length;
  bf_queue_length_sum_ += f.queue_length;
  bf_last_table_size_ = f.table_size;
  bf_table_size_sum_ += f.table_size;
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
  RpcCount& type = Find(&by_type_, name, id, 0);
  ++type.count;
  type.micros += micros;
  RpcCount& user = Find(&by_user_, "", 0, uid);
  ++user.count;
  user.micros += micros;
}

void ServerStats::Reset(int64_t now) {
  // The last cycle's figures and the total of backfilled jobs stay.
  ServerStats fresh(now);
  fresh.last_cycle_ = last_cycle_;
  fresh.last_queue_length_ = last_queue_length_;
  fresh.backfilled_total_ = backfilled_total_;
  fresh.bf_last_when_ = bf_last_when_;
  fresh.bf_last_cycle_ = bf_last_cycle_;
  fresh.bf_last_depth_ = bf_last_depth_;
  fresh.bf_last_queue_length_ = bf_last_queue_length_;
  fresh.bf_last_table_size_ = bf_last_table_size_;
  *this = std::move(fresh);
}

nlohmann::json ServerStats::ToJson() const {
  using nlohmann::json;
  json types = json::array();
  for (const RpcCount& r : by_type_) {
    types.push_back({{"name", r.name}, {"id", r.id}, {"count", r.count}, {"micros", r.micros}});
  }
  json users = json::array();
  for (const RpcCount& r : by_user_) {
    users.push_back({{"uid", r.uid}, {"count", r.count}, {"micros", r.micros}});
  }
  return {
      {"since", since_},
      {"jobs",
       {{"submitted", jobs_submitted_},
        {"started", jobs_started_},
        {"completed", jobs_completed_},
        {"canceled", jobs_canceled_},
        {"failed", jobs_failed_}}},
      {"main",
       {{"last_cycle", last_cycle_},
        {"max_cycle", max_cycle_},
        {"cycles", cycles_},
        {"cycle_sum", cycle_sum_},
        {"depth_sum", depth_sum_},
        {"last_queue_length", last_queue_length_}}},
      {"backfill",
       {{"backfilled_total", backfilled_total_},
        {"backfilled", backfilled_},
        {"cycles", bf_cycles_},
        {"last_when", bf_last_when_},
        {"last_cycle", bf_last_cycle_},
        {"max_cycle", bf_max_cycle_},
        {"cycle_sum", bf_cycle_sum_},
        {"last_depth", bf_last_depth_},
        {"depth_sum", bf_depth_sum_},
        {"last_queue_length", bf_last_queue_length_},
        {"queue_length_sum", bf_queue_length_sum_},
        {"last_table_size", bf_last_table_size_},
        {"table_size_sum", bf_table_size_sum_}}},
      {"rpc_by_type", types},
      {"rpc_by_user", users},
  };
}

}  // namespace muster::ctld

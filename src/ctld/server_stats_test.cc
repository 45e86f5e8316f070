#include "ctld/server_stats.h"

#include <gtest/gtest.h>

namespace muster::ctld {
namespace {

TEST(ServerStats, CountsPassesAndRpcsAndResetsAsSlurmDoes) {
  ServerStats stats(1000);
  stats.JobSubmitted();
  stats.JobStarted(5);
  stats.JobStarted(7200);
  stats.Pass(1001, 300, 5, sched::Plan::Figures{4, 0, false, 0});
  stats.Pass(1002, 100, 3, sched::Plan::Figures{2, 1, true, 7});
  stats.Rpc("REQUEST_SUBMIT_BATCH_JOB", 4003, 1000, 50);
  stats.Rpc("REQUEST_PING", 1008, 0, 10);
  stats.Rpc("REQUEST_SUBMIT_BATCH_JOB", 4003, 0, 30);
  nlohmann::json j = stats.ToJson();
  EXPECT_EQ(j["since"], 1000);
  EXPECT_EQ(j["jobs"]["submitted"], 1);
  EXPECT_EQ(j["main"]["cycles"], 2);
  EXPECT_EQ(j["main"]["max_cycle"], 300);
  EXPECT_EQ(j["main"]["last_cycle"], 100);
  EXPECT_EQ(j["main"]["depth_sum"], 6);
  // Only the pass that planned is a backfill cycle.
  EXPECT_EQ(j["backfill"]["cycles"], 1);
  EXPECT_EQ(j["backfill"]["last_when"], 1002);
  EXPECT_EQ(j["backfill"]["backfilled"], 1);
  EXPECT_EQ(j["backfill"]["last_table_size"], 7);
  // By type in the order first seen, by user the same.
  ASSERT_EQ(j["rpc_by_type"].size(), 2u);
  EXPECT_EQ(j["rpc_by_type"][0]["name"], "REQUEST_SUBMIT_BATCH_JOB");
  EXPECT_EQ(j["rpc_by_type"][0]["count"], 2);
  EXPECT_EQ(j["rpc_by_type"][0]["micros"], 80);
  ASSERT_EQ(j["rpc_by_user"].size(), 2u);
  EXPECT_EQ(j["rpc_by_user"][0]["uid"], 1000);
  EXPECT_EQ(j["rpc_by_user"][1]["count"], 2);

  // A reset keeps the last cycles' figures and the backfilled total only.
  stats.Reset(2000);
  j = stats.ToJson();
  EXPECT_EQ(j["since"], 2000);
  EXPECT_EQ(j["jobs"]["submitted"], 0);
  EXPECT_EQ(j["main"]["cycles"], 0);
  EXPECT_EQ(j["main"]["max_cycle"], 0);
  EXPECT_EQ(j["main"]["last_cycle"], 100);
  EXPECT_EQ(j["backfill"]["backfilled_total"], 1);
  EXPECT_EQ(j["backfill"]["backfilled"], 0);
  EXPECT_EQ(j["backfill"]["last_when"], 1002);
  EXPECT_TRUE(j["rpc_by_type"].empty());
  EXPECT_TRUE(j["rpc_by_user"].empty());
  // Prometheus' counters never go back.
  const ServerStats::Counts& life = stats.lifetime();
  EXPECT_EQ(life.jobs_submitted, 1);
  EXPECT_EQ(life.cycles, 2);
  EXPECT_EQ(life.by_type.size(), 2u);
  // Waits of 5 s and 2 h: in the buckets up to 10 s and up to 4 h.
  EXPECT_EQ(life.waits[1], 1);
  EXPECT_EQ(life.waits[6], 1);
  EXPECT_EQ(life.wait_sum, 7205);
}

}  // namespace
}  // namespace muster::ctld

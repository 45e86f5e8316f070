#include "cluster/job_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace muster::cluster {
namespace {

using core::Job;
using core::JobId;

Job MakeJob(JobId id, uint32_t uid, JobId array_id = 0) {
  Job job;
  job.id = id;
  job.req.uid = uid;
  job.array_job_id = array_id;
  return job;
}

std::vector<JobId> Ids(const JobTable& table) {
  std::vector<JobId> out;
  for (const Job& job : table) out.push_back(job.id);
  return out;
}

TEST(JobTableTest, ListsInIdOrderWhateverTheInsertOrder) {
  JobTable table;
  for (JobId id : {5u, 2u, 9u, 7u, 1u}) table.Put(MakeJob(id, 100));
  EXPECT_EQ(Ids(table), (std::vector<JobId>{1, 2, 5, 7, 9}));
  EXPECT_EQ(table.size(), 5u);
  ASSERT_NE(table.Find(7), nullptr);
  EXPECT_EQ(table.Find(7)->id, 7u);
  EXPECT_EQ(table.Find(6), nullptr);
  EXPECT_EQ(table.Find(10), nullptr);
}

TEST(JobTableTest, PutReplacesAndReindexes) {
  JobTable table;
  table.Put(MakeJob(3, 100, 3));
  table.Put(MakeJob(3, 200));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.OfUser(100), nullptr);
  ASSERT_NE(table.OfUser(200), nullptr);
  EXPECT_EQ(*table.OfUser(200), (std::set<JobId>{3}));
  EXPECT_EQ(table.OfArray(3), nullptr);
}

TEST(JobTableTest, IndexesFollowPutAndErase) {
  JobTable table;
  table.Put(MakeJob(1, 100, 1));  // an array's pending part
  table.Put(MakeJob(2, 100, 1));  // a task split off it
  table.Put(MakeJob(3, 200));
  EXPECT_EQ(*table.OfUser(100), (std::set<JobId>{1, 2}));
  EXPECT_EQ(*table.OfArray(1), (std::set<JobId>{1, 2}));
  table.Erase(1);
  EXPECT_EQ(*table.OfArray(1), (std::set<JobId>{2}));
  table.Erase(2);
  EXPECT_EQ(table.OfArray(1), nullptr);
  EXPECT_EQ(table.OfUser(100), nullptr);
  EXPECT_TRUE(table.arrays().empty());
  table.Erase(2);  // gone already: nothing happens
  EXPECT_EQ(Ids(table), (std::vector<JobId>{3}));
}

TEST(JobTableTest, ReferencesSurviveInsertsAndOtherErases) {
  JobTable table;
  Job& first = table.Put(MakeJob(1, 100));
  for (JobId id = 2; id < 5000; ++id) table.Put(MakeJob(id, 100));
  for (JobId id = 2; id < 5000; ++id) table.Erase(id);  // compacts on the way
  EXPECT_EQ(&first, table.Find(1));
  EXPECT_EQ(Ids(table), (std::vector<JobId>{1}));
}

TEST(JobTableTest, AppendingWhileIteratingIsSafe) {
  JobTable table;
  for (JobId id = 1; id <= 3; ++id) table.Put(MakeJob(id, 100));
  std::vector<JobId> seen;
  for (const Job& job : table) {
    seen.push_back(job.id);
    // Enough to move the vectors: the loop goes on over the old jobs.
    for (JobId more = 0; more < 1000; ++more) table.Put(MakeJob(1000 * job.id + more, 100));
  }
  EXPECT_EQ(seen, (std::vector<JobId>{1, 2, 3}));
  EXPECT_EQ(table.size(), 3003u);
}

// Against std::map as the model: random puts and erases, in and out of
// order, agree on contents, order, size and both indexes.
TEST(JobTableTest, AgreesWithAMapUnderRandomChanges) {
  std::mt19937 rng(42);
  JobTable table;
  std::map<JobId, Job> model;
  for (int step = 0; step < 20000; ++step) {
    JobId id = 1 + rng() % 3000;
    if (rng() % 3 == 0) {
      table.Erase(id);
      model.erase(id);
    } else {
      Job job = MakeJob(id, 100 + rng() % 4, rng() % 2 ? 1 + rng() % 20 : 0);
      table.Put(job);
      model[id] = job;
    }
  }
  ASSERT_EQ(table.size(), model.size());
  std::map<uint32_t, std::set<JobId>> by_uid;
  std::map<JobId, std::set<JobId>> by_array;
  std::vector<JobId> ids;
  for (const auto& [id, job] : model) {
    ids.push_back(id);
    by_uid[job.req.uid].insert(id);
    if (job.array_job_id != 0) by_array[job.array_job_id].insert(id);
    ASSERT_NE(table.Find(id), nullptr);
    EXPECT_EQ(table.At(id).req.uid, job.req.uid);
  }
  EXPECT_EQ(Ids(table), ids);
  for (const auto& [uid, set] : by_uid) EXPECT_EQ(*table.OfUser(uid), set);
  EXPECT_EQ(table.arrays(), by_array);
}

}  // namespace
}  // namespace muster::cluster

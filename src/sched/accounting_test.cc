// ApplyStart / ReleaseJob: the controller's accounting of a plan.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sched/schedule_harness.h"

namespace muster::sched {
namespace {

using testing::MakeNode;

core::NodeAlloc Share(std::string node, int cpus, int64_t mem, std::vector<int> gpus) {
  core::NodeAlloc a;
  a.node = std::move(node);
  a.cpus = cpus;
  a.mem_mb = mem;
  a.tasks = 1;
  a.gpu_indices = std::move(gpus);
  return a;
}

struct Fixture {
  std::vector<core::Node> nodes{MakeNode("a").Cpus(8).Mem(8000).Gpus("h100", 4),
                                MakeNode("b").Cpus(8).Mem(8000)};
  std::vector<core::Node*> ptrs{&nodes[0], &nodes[1]};
};

TEST(ApplyStart, AddsAndReleaseRemoves) {
  Fixture f;
  StartDecision start{7, "p", {Share("a", 4, 2000, {1, 3}), Share("b", 8, 8000, {})}};
  ASSERT_TRUE(ApplyStart(start, f.ptrs).ok());
  EXPECT_EQ(f.nodes[0].alloc_cpus, 4);
  EXPECT_EQ(f.nodes[0].alloc_mem_mb, 2000);
  EXPECT_EQ(f.nodes[0].running_jobs, 1);
  EXPECT_EQ(f.nodes[0].gpu_used, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(f.nodes[1].alloc_cpus, 8);
  EXPECT_EQ(f.nodes[1].running_jobs, 1);

  core::Job job;
  job.alloc = start.alloc;
  ASSERT_TRUE(ReleaseJob(job, f.ptrs).ok());
  EXPECT_EQ(f.nodes[0].alloc_cpus, 0);
  EXPECT_EQ(f.nodes[0].alloc_mem_mb, 0);
  EXPECT_EQ(f.nodes[0].running_jobs, 0);
  EXPECT_EQ(f.nodes[0].gpu_used, std::vector<bool>(4, false));
  EXPECT_EQ(f.nodes[1].alloc_cpus, 0);

  // Releasing twice is reported, and counts stay at zero.
  util::Status again = ReleaseJob(job, f.ptrs);
  EXPECT_EQ(again.code(), util::Code::kFailedPrecondition);
  EXPECT_EQ(f.nodes[0].alloc_cpus, 0);
  EXPECT_EQ(f.nodes[0].running_jobs, 0);
}

TEST(ApplyStart, RefusesStalePlansAndChangesNothing) {
  struct Case {
    const char* name;
    std::vector<core::NodeAlloc> alloc;
    const char* message;
  };
  const Case cases[] = {
      {"unknown node", {Share("a", 1, 1, {}), Share("zz", 1, 1, {})}, "node zz is not known"},
      {"too many CPUs", {Share("a", 1, 1, {}), Share("b", 9, 1, {})}, "9 CPUs do not fit"},
      {"too much memory", {Share("a", 1, 9000, {})}, "9000M memory does not fit"},
      {"GPU out of range", {Share("a", 1, 1, {4})}, "GPU index 4 out of range"},
      {"GPU in use", {Share("a", 1, 1, {0})}, "GPU 0 is already allocated"},
      {"GPU twice", {Share("a", 1, 1, {2, 2})}, "GPU 2 is already allocated"},
      {"node twice", {Share("a", 1, 1, {}), Share("a", 1, 1, {})}, "appears twice"},
  };
  for (const auto& c : cases) {
    Fixture f;
    f.nodes[0].gpu_used[0] = true;
    const std::vector<core::Node> before = f.nodes;
    util::Status st = ApplyStart(c.alloc, f.ptrs);
    EXPECT_EQ(st.code(), util::Code::kFailedPrecondition) << c.name;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << c.name << ": " << st.message();
    for (size_t k = 0; k < f.nodes.size(); ++k) {
      EXPECT_EQ(f.nodes[k].alloc_cpus, before[k].alloc_cpus) << c.name;
      EXPECT_EQ(f.nodes[k].alloc_mem_mb, before[k].alloc_mem_mb) << c.name;
      EXPECT_EQ(f.nodes[k].running_jobs, before[k].running_jobs) << c.name;
      EXPECT_EQ(f.nodes[k].gpu_used, before[k].gpu_used) << c.name;
    }
  }
}

TEST(ApplyStart, LookupOverloadAndShortGpuVector) {
  Fixture f;
  f.nodes[0].gpu_used.clear();  // the controller may not have sized it
  NodeLookup lookup = [&](const std::string& name) -> core::Node* {
    for (auto& n : f.nodes) {
      if (n.config.name == name) return &n;
    }
    return nullptr;
  };
  ASSERT_TRUE(ApplyStart(std::vector<core::NodeAlloc>{Share("a", 2, 10, {3})}, lookup).ok());
  EXPECT_EQ(f.nodes[0].gpu_used, (std::vector<bool>{false, false, false, true}));
  ASSERT_TRUE(ReleaseJob(std::vector<core::NodeAlloc>{Share("a", 2, 10, {3})}, lookup).ok());
  EXPECT_EQ(f.nodes[0].alloc_cpus, 0);
}

TEST(ApplyStart, ScheduleThenApplyAgree) {
  // What the scheduler hands out, ApplyStart accepts, and the next pass
  // sees exactly the same free resources as the overlay did.
  Harness h = OracleCluster();
  for (core::JobId id = 1; id <= 12; ++id) {
    h.AddJob(testing::MakeJob(id).Partition("train").Cpus(5).Gpus(3));
  }
  Plan first = h.RunAndApply();
  EXPECT_EQ(first.starts.size(), 8u);  // 2 per node (3 GPUs each, 8 per node)
  Plan second = h.Run();
  EXPECT_TRUE(second.starts.empty());
  ASSERT_EQ(second.pending.size(), 4u);
  EXPECT_EQ(second.pending[0].reason, core::PendingReason::kResources);
  for (size_t k = 1; k < second.pending.size(); ++k) {
    EXPECT_EQ(second.pending[k].reason, core::PendingReason::kPriority);
  }
}

NodeLookup LookupIn(std::vector<core::Node>& nodes) {
  return [&nodes](const std::string& name) -> core::Node* {
    for (core::Node& n : nodes) {
      if (n.config.name == name) return &n;
    }
    return nullptr;
  };
}

TEST(AssignCpuIds, LowestFreeIdsAndBackOnRelease) {
  Fixture f;
  std::vector<core::NodeAlloc> first{Share("a", 3, 1000, {})};
  AssignCpuIds(&first, LookupIn(f.nodes));
  EXPECT_EQ(first[0].cpu_ids, (std::vector<int>{0, 1, 2}));
  ASSERT_TRUE(ApplyStart(first, f.ptrs).ok());
  std::vector<core::NodeAlloc> second{Share("a", 2, 1000, {}), Share("b", 1, 1000, {})};
  AssignCpuIds(&second, LookupIn(f.nodes));
  EXPECT_EQ(second[0].cpu_ids, (std::vector<int>{3, 4}));
  EXPECT_EQ(second[1].cpu_ids, (std::vector<int>{0}));
  ASSERT_TRUE(ApplyStart(second, f.ptrs).ok());
  // The first job's CPUs come back and go to the next job first.
  ASSERT_TRUE(ReleaseJob(first, f.ptrs).ok());
  std::vector<core::NodeAlloc> third{Share("a", 4, 1000, {})};
  AssignCpuIds(&third, LookupIn(f.nodes));
  EXPECT_EQ(third[0].cpu_ids, (std::vector<int>{0, 1, 2, 5}));
  // Ids already named are kept.
  std::vector<core::NodeAlloc> named{Share("a", 1, 1000, {})};
  named[0].cpu_ids = {7};
  AssignCpuIds(&named, LookupIn(f.nodes));
  EXPECT_EQ(named[0].cpu_ids, std::vector<int>{7});
}

// gres.conf Cores=: a share's CPUs are taken near its GPUs first, then
// the lowest others.
TEST(AssignCpuIds, NearTheSharesGpusFirst) {
  Fixture f;
  f.nodes[0].config.gres[0].device_cores = {{0, 1, 2, 3}, {0, 1, 2, 3}, {4, 5, 6, 7}, {4, 5, 6, 7}};
  std::vector<core::NodeAlloc> upper{Share("a", 3, 1000, {2, 3})};
  AssignCpuIds(&upper, LookupIn(f.nodes));
  EXPECT_EQ(upper[0].cpu_ids, (std::vector<int>{4, 5, 6}));
  ASSERT_TRUE(ApplyStart(upper, f.ptrs).ok());
  std::vector<core::NodeAlloc> lower{Share("a", 5, 1000, {0})};
  AssignCpuIds(&lower, LookupIn(f.nodes));
  EXPECT_EQ(lower[0].cpu_ids, (std::vector<int>{0, 1, 2, 3, 7}));
  // Without GPUs: the lowest free ids, as before.
  std::vector<core::NodeAlloc> plain{Share("a", 2, 1000, {})};
  AssignCpuIds(&plain, LookupIn(f.nodes));
  EXPECT_EQ(plain[0].cpu_ids, (std::vector<int>{0, 1}));
}

TEST(AssignCpuIds, ApplyStartRefusesTakenOrMiscountedIds) {
  Fixture f;
  std::vector<core::NodeAlloc> first{Share("a", 2, 1000, {})};
  first[0].cpu_ids = {0, 1};
  ASSERT_TRUE(ApplyStart(first, f.ptrs).ok());
  EXPECT_EQ(f.nodes[0].cpu_used[1], true);
  std::vector<core::NodeAlloc> taken{Share("a", 1, 1000, {})};
  taken[0].cpu_ids = {1};
  EXPECT_EQ(ApplyStart(taken, f.ptrs).message(), "node a: CPU 1 is already allocated");
  std::vector<core::NodeAlloc> miscount{Share("a", 2, 1000, {})};
  miscount[0].cpu_ids = {4};
  EXPECT_EQ(ApplyStart(miscount, f.ptrs).message(), "node a: 1 CPU ids for 2 CPUs");
  std::vector<core::NodeAlloc> range{Share("a", 1, 1000, {})};
  range[0].cpu_ids = {8};
  EXPECT_EQ(ApplyStart(range, f.ptrs).message(), "node a: CPU id 8 out of range (node has 8)");
  EXPECT_EQ(f.nodes[0].alloc_cpus, 2);
  // A share recorded without ids (before they were kept) counts CPUs only,
  // and a later share that cannot get enough free ids runs without.
  std::vector<core::NodeAlloc> legacy{Share("a", 5, 1000, {})};
  ASSERT_TRUE(ApplyStart(legacy, f.ptrs).ok());
  std::vector<core::NodeAlloc> late{Share("a", 1, 1000, {})};
  AssignCpuIds(&late, LookupIn(f.nodes));
  EXPECT_EQ(late[0].cpu_ids, std::vector<int>{2});
  ASSERT_TRUE(ApplyStart(late, f.ptrs).ok());
  std::vector<core::NodeAlloc> none_left{Share("b", 8, 1000, {}), Share("a", 0, 0, {})};
  AssignCpuIds(&none_left, LookupIn(f.nodes));
  EXPECT_EQ(none_left[0].cpu_ids.size(), 8u);
  EXPECT_TRUE(none_left[1].cpu_ids.empty());
}

}  // namespace
}  // namespace muster::sched

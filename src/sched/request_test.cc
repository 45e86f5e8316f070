// MakeResourceRequest: sbatch's options reduced to numbers. Expected values
// follow Slurm 22.05 (man sbatch, and sbatch --test-only on the oracle
// cluster of 32-CPU nodes: -n 40 -> 2 nodes, -N 2 -n 1 -> "setting nnodes
// to 1", -n 5 --ntasks-per-node=2 -> 3 nodes, --gpus=12 -> 2 nodes).
#include <gtest/gtest.h>

#include "sched/pipeline.h"
#include "sched/scheduler.h"
#include "testing/builders.h"

namespace muster::sched {
namespace {

using testing::MakeJob;

struct CountCase {
  const char* name;
  testing::JobBuilder job;
  int min_nodes, max_nodes, ntasks;
  bool ntasks_set;
};

TEST(MakeResourceRequest, NodeAndTaskCounts) {
  const CountCase cases[] = {
      {"defaults", MakeJob(), 1, 1, 1, false},
      {"-N 2", MakeJob().Nodes(2), 2, 2, 2, false},
      {"-N 2-4", MakeJob().Nodes(2, 4), 2, 4, 2, false},
      {"-n 64 spreads", MakeJob().Tasks(64), 1, 64, 64, true},
      {"-N 2 -n 3", MakeJob().Nodes(2).Tasks(3), 2, 2, 3, true},
      {"-N 2 -n 1 lowers -N", MakeJob().Nodes(2).Tasks(1), 1, 1, 1, true},
      {"-N 3 --ntasks-per-node=2", MakeJob().Nodes(3).TasksPerNode(2), 3, 3, 6, false},
      {"-n 5 --ntasks-per-node=2", MakeJob().Tasks(5).TasksPerNode(2), 3, 3, 5, true},
      {"-n 4 --ntasks-per-node=2", MakeJob().Tasks(4).TasksPerNode(2), 2, 2, 4, true},
      {"-N 1-4 -n 6 --ntasks-per-node=2", MakeJob().Nodes(1, 4).Tasks(6).TasksPerNode(2), 3, 4, 6,
       true},
      {"--gpus=12 spreads", MakeJob().GpusPerJob(12), 1, 12, 1, false},
      {"-N 2 --gpus=12", MakeJob().Nodes(2).GpusPerJob(12), 2, 2, 2, false},
      {"-w two nodes", MakeJob().Nodelist("n[1-2]"), 2, 2, 2, false},
      {"-w two nodes -n 8", MakeJob().Nodelist("n[1-2]").Tasks(8), 2, 8, 8, true},
      {"-w duplicate names", MakeJob().Nodelist("n1,n1"), 1, 1, 1, false},
  };
  for (const auto& c : cases) {
    auto r = MakeResourceRequest(c.job.req(), 1000);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().message();
    EXPECT_EQ(r->min_nodes, c.min_nodes) << c.name;
    EXPECT_EQ(r->max_nodes, c.max_nodes) << c.name;
    EXPECT_EQ(r->ntasks, c.ntasks) << c.name;
    EXPECT_EQ(r->ntasks_set, c.ntasks_set) << c.name;
  }
}

struct MemCase {
  const char* name;
  testing::JobBuilder job;
  int64_t def_mem_per_cpu;
  int64_t per_node, per_cpu;
  bool whole;
};

TEST(MakeResourceRequest, Memory) {
  const MemCase cases[] = {
      {"--mem", MakeJob().Mem(4000), 1000, 4000, 0, false},
      {"--mem-per-cpu", MakeJob().MemPerCpu(2000), 1000, 0, 2000, false},
      {"DefMemPerCPU", MakeJob(), 1000, 0, 1000, false},
      {"no DefMemPerCPU: whole node", MakeJob(), 0, 0, 0, true},
      {"--mem=0: whole node", MakeJob().MemWholeNode(), 1000, 0, 0, true},
  };
  for (const auto& c : cases) {
    auto r = MakeResourceRequest(c.job.req(), c.def_mem_per_cpu);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().message();
    EXPECT_EQ(r->mem_per_node_mb, c.per_node) << c.name;
    EXPECT_EQ(r->mem_per_cpu_mb, c.per_cpu) << c.name;
    EXPECT_EQ(r->whole_node_mem, c.whole) << c.name;
  }
}

TEST(MakeResourceRequest, GpusFeaturesAndLists) {
  auto r = MakeResourceRequest(MakeJob()
                                   .Gpus(2, "h100")
                                   .Gpus(1, "h100")
                                   .Gres("nic", "", 1)
                                   .Constraint(" h100 & ib,fast ")
                                   .Nodelist("gpu[01-02]")
                                   .Exclude("gpu03")
                                   .Cpus(4)
                                   .Exclusive()
                                   .req(),
                               0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->gpus_per_node, 3);
  EXPECT_EQ(r->gpu_type, "h100");
  EXPECT_EQ(r->gpus_per_job, 0);
  ASSERT_EQ(r->other_gres.size(), 1u);
  EXPECT_EQ(r->other_gres[0].name, "nic");
  EXPECT_EQ(r->features, (std::vector<std::string>{"h100", "ib", "fast"}));
  EXPECT_TRUE(r->feature_any.empty());
  EXPECT_EQ(r->required_nodes, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(r->excluded_nodes, (std::vector<std::string>{"gpu03"}));
  EXPECT_EQ(r->cpus_per_task, 4);
  EXPECT_TRUE(r->exclusive);

  auto any = MakeResourceRequest(MakeJob().Constraint("a|b").GpusPerJob(4).req(), 0);
  ASSERT_TRUE(any.ok());
  EXPECT_TRUE(any->features.empty());
  EXPECT_EQ(any->feature_any, (std::vector<std::vector<std::string>>{{"a", "b"}}));
  EXPECT_EQ(any->gpus_per_job, 4);

  // Slurm's other forms (man sbatch, --constraint).
  auto grouped = MakeResourceRequest(MakeJob().Constraint("(a|b)&c").req(), 0);
  ASSERT_TRUE(grouped.ok()) << grouped.status().message();
  EXPECT_EQ(grouped->features, (std::vector<std::string>{"c"}));
  EXPECT_EQ(grouped->feature_any, (std::vector<std::vector<std::string>>{{"a", "b"}}));
  auto matching = MakeResourceRequest(MakeJob().Nodes(2).Constraint("gpu&[rack1|rack2]").req(), 0);
  ASSERT_TRUE(matching.ok()) << matching.status().message();
  EXPECT_EQ(matching->features, (std::vector<std::string>{"gpu"}));
  EXPECT_EQ(matching->feature_match, (std::vector<std::string>{"rack1", "rack2"}));
  EXPECT_EQ(matching->feature_any, (std::vector<std::vector<std::string>>{{"rack1", "rack2"}}));
  auto counted = MakeResourceRequest(MakeJob().Nodes(4).Constraint("gpu&big*1").req(), 0);
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  EXPECT_EQ(counted->features, (std::vector<std::string>{"gpu"}));
  ASSERT_EQ(counted->feature_counts.size(), 1u);
  EXPECT_EQ(counted->feature_counts[0].names, (std::vector<std::string>{"big"}));
  EXPECT_EQ(counted->feature_counts[0].count, 1);
  EXPECT_EQ(counted->min_nodes, 4);
  // Multiple counts give the job their sum of nodes.
  auto multi = MakeResourceRequest(MakeJob().Constraint("[(a&b)*2 & c*1]").req(), 0);
  ASSERT_TRUE(multi.ok()) << multi.status().message();
  ASSERT_EQ(multi->feature_counts.size(), 2u);
  EXPECT_EQ(multi->feature_counts[0].names, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(multi->feature_counts[0].any);
  EXPECT_EQ(multi->feature_counts[1].count, 1);
  EXPECT_EQ(multi->min_nodes, 3);
  EXPECT_EQ(multi->max_nodes, 3);

  auto zero = MakeResourceRequest(MakeJob().Gpus(0, "h100").req(), 0);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->gpus_per_node, 0);
}

struct ErrorCase {
  const char* name;
  testing::JobBuilder job;
  const char* message;  // a part of the message
  RequestError kind;
};

TEST(MakeResourceRequest, Errors) {
  const ErrorCase cases[] = {
      // Slurm: "Requested node configuration is not available".
      {"-N 1 -n 3 --ntasks-per-node=2", MakeJob().Nodes(1).Tasks(3).TasksPerNode(2),
       "--ntasks=3 with --ntasks-per-node=2 needs 2 nodes, but -N allows at most 1",
       RequestError::kCounts},
      // sbatch: "invalid number of nodes (-N 2-1)".
      {"-w 2 nodes -N 1", MakeJob().Nodes(1).Nodelist("n[1-2]"), "invalid number of nodes (-N 2-1)",
       RequestError::kMalformed},
      {"-N 4-2", MakeJob().Nodes(4, 2), "invalid number of nodes (-N 4-2)",
       RequestError::kMalformed},
      {"-w 3 nodes -n 2", MakeJob().Tasks(2).Nodelist("n[1-3]"),
       "--ntasks=2 is less than the 3 nodes named by -w", RequestError::kCounts},
      {"--mem and --mem-per-cpu", MakeJob().Mem(10).MemPerCpu(10), "mutually exclusive",
       RequestError::kMalformed},
      {"-c 0", MakeJob().Cpus(0), "--cpus-per-task", RequestError::kMalformed},
      {"two GPU types", MakeJob().Gpus(1, "a100").Gpus(1, "h100"), "two types",
       RequestError::kMalformed},
      {"bad -w", MakeJob().Nodelist("n[3-"), "-w/--nodelist", RequestError::kMalformed},
      {"-w and -x", MakeJob().Nodelist("n1").Exclude("n1"), "both required (-w) and excluded",
       RequestError::kMalformed},
      {"mixed & and |", MakeJob().Constraint("a&b|c"), "mixing", RequestError::kMalformed},
      {"two brackets", MakeJob().Constraint("[a|b]&[c|d]"), "only one set of brackets",
       RequestError::kMalformed},
      {"count with OR", MakeJob().Constraint("a*2|b"), "goes with '&' only",
       RequestError::kMalformed},
      {"count in matching OR", MakeJob().Constraint("[a*2|b]"), "takes no counts",
       RequestError::kMalformed},
      {"bracket of ANDs without counts", MakeJob().Constraint("[a*2&b]"), "needs a count",
       RequestError::kMalformed},
      {"unclosed bracket", MakeJob().Constraint("[a|b"), "missing ']'", RequestError::kMalformed},
      {"unclosed parenthesis", MakeJob().Constraint("(a|b&c"), "mixing '&' and '|' in paren",
       RequestError::kMalformed},
      {"zero count", MakeJob().Constraint("a*0"), "a count needs a number",
       RequestError::kMalformed},
      {"counts beyond -N", MakeJob().Nodes(2).Constraint("[a*2&b*1]"),
       "counts 3 nodes, more than -N allows (2)", RequestError::kMalformed},
      {"empty feature", MakeJob().Constraint("a&&b"), "empty feature", RequestError::kMalformed},
  };
  for (const auto& c : cases) {
    RequestError kind = RequestError::kNone;
    auto r = BuildResourceRequest(c.job.req(), 1000, &kind);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), util::Code::kInvalidArgument) << c.name;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.name << ": " << r.status().message();
    EXPECT_EQ(kind, c.kind) << c.name;
  }
}

}  // namespace
}  // namespace muster::sched

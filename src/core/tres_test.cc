#include "core/tres.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

Job Pending(int nodes, int ntasks, int cpus_per_task) {
  Job job;
  job.req.min_nodes = nodes;
  job.req.ntasks = ntasks;
  job.req.cpus_per_task = cpus_per_task;
  return job;
}

TEST(TresTest, MemoryPerCpuOnlyWhenStatedThatWay) {
  JobRequest req;
  EXPECT_EQ(MemoryPerCpuMb(req, 0), 0);
  EXPECT_EQ(MemoryPerCpuMb(req, 1000), 1000);  // DefMemPerCPU for a job that names none
  req.mem_per_cpu_mb = 300;
  EXPECT_EQ(MemoryPerCpuMb(req, 1000), 300);
  req = {};
  req.mem_per_node_mb = 4000;
  EXPECT_EQ(MemoryPerCpuMb(req, 1000), 0);  // --mem is per node
  req = {};
  req.mem_whole_node = true;
  EXPECT_EQ(MemoryPerCpuMb(req, 1000), 0);  // --mem=0
}

TEST(TresTest, RequestedMemoryFollowsTheRequestsForm) {
  const MemoryDefaults defaults{1000, 64000};
  Job job = Pending(2, 4, 2);  // 8 CPUs on 2 nodes
  EXPECT_EQ(JobMemoryTotalMb(job, defaults), 8000);  // DefMemPerCPU x CPUs
  EXPECT_EQ(JobMemoryTotalMb(job, {0, 64000}), 128000);  // no default: whole nodes
  job.req.mem_per_cpu_mb = 500;
  EXPECT_EQ(JobMemoryTotalMb(job, defaults), 4000);
  job.req.mem_per_cpu_mb = 0;
  job.req.mem_per_node_mb = 3000;
  EXPECT_EQ(JobMemoryTotalMb(job, defaults), 6000);
  job.req.mem_whole_node = true;
  EXPECT_EQ(JobMemoryTotalMb(job, defaults), 128000);
}

TEST(TresTest, AllocatedFiguresAreTheAllocations) {
  Job job = Pending(1, 1, 1);
  job.req.mem_per_cpu_mb = 1;
  job.alloc = {{"a", 3, 1500, 3, {0, 1}, {}}, {"b", 1, 500, 1, {}, {}}};
  const Tres t = JobTres(job, {1000, 64000});
  EXPECT_EQ(t.cpus, 4);
  EXPECT_EQ(t.mem_mb, 2000);
  EXPECT_EQ(t.nodes, 2);
  EXPECT_EQ(t.billing, 4);
  EXPECT_EQ(t.gpus, 2);
  EXPECT_EQ(FormatTres(t), "cpu=4,mem=2000M,node=2,billing=4,gres/gpu=2");
}

TEST(TresTest, RequestedGpusPerNodeAndPerJob) {
  Job job = Pending(2, 2, 1);
  job.req.gres = {{"gpu", "h100", 2, false}};
  EXPECT_EQ(JobGpuTotal(job), 4);
  job.req.gres = {{"gpu", "", 3, true}, {"nic", "", 1, false}};
  EXPECT_EQ(JobGpuTotal(job), 3);
  EXPECT_EQ(FormatTres(JobTres(job, {1024, 0})), "cpu=2,mem=2G,node=2,billing=2,gres/gpu=3");
  job.req.gres.clear();
  EXPECT_EQ(FormatTres(JobTres(job, {0, 0})), "cpu=2,mem=0,node=2,billing=2");
}

}  // namespace
}  // namespace muster::core

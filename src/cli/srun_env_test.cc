#include "cli/srun_env.h"

#include <gtest/gtest.h>

namespace muster::cli {
namespace {

TEST(ApplyJobDefaults, TakesTheJobsCounts) {
  // Inside -N2 -n4 on the oracle: srun runs 4 tasks on 2 nodes; srun -n1
  // warns and uses one node.
  EnvMap env = {{"SLURM_NTASKS", "4"}, {"SLURM_NNODES", "2"}};
  SrunCounts c;
  EXPECT_TRUE(ApplyJobDefaults(env, &c).empty());
  EXPECT_EQ(c.ntasks, 4);
  EXPECT_EQ(c.nodes, 2);
  c = SrunCounts{1, 0, 0};
  auto w = ApplyJobDefaults(env, &c);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "can't run 1 processes on 2 nodes, setting nnodes to 1");
  EXPECT_EQ(c.nodes, 1);
  // -N2 alone: no SLURM_NTASKS, so musterd gives one task per node.
  c = SrunCounts{};
  EXPECT_TRUE(ApplyJobDefaults({{"SLURM_NNODES", "2"}}, &c).empty());
  EXPECT_EQ(c.ntasks, 0);
  EXPECT_EQ(c.nodes, 2);
}

TEST(ApplyJobDefaults, DropsANtasksPerNodeThatDoesNotMatch) {
  // -N2 -n4 --ntasks-per-node=3: srun inside lays 4 tasks out as 2(x2).
  EnvMap env = {{"SLURM_NTASKS", "4"}, {"SLURM_NNODES", "2"}, {"SLURM_NTASKS_PER_NODE", "3"}};
  SrunCounts c;
  EXPECT_TRUE(ApplyJobDefaults(env, &c).empty());
  EXPECT_EQ(c.ntasks_per_node, 0);
  // --ntasks-per-node=2 -N1 in a 2-task job matches and stays.
  c = SrunCounts{0, 0, 0};
  ApplyJobDefaults({{"SLURM_NTASKS", "2"}, {"SLURM_NNODES", "1"}, {"SLURM_NTASKS_PER_NODE", "2"}},
                   &c);
  EXPECT_EQ(c.ntasks_per_node, 2);
  // Given on the command line, a mismatch is said.
  c = SrunCounts{0, 0, 3};
  auto w = ApplyJobDefaults(env, &c);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "can't honor --ntasks-per-node set to 3 which doesn't match the requested tasks 4 "
            "with the number of requested nodes 2. Ignoring --ntasks-per-node.");
  EXPECT_EQ(c.ntasks_per_node, 0);
}

StepView TwoNodeStep() {
  // srun inside -N2 -n4 --gres=gpu:1 on the oracle's layout: 3 tasks on
  // cpu01 (3 CPUs), 1 on cpu02 (1 CPU).
  StepView s;
  s.step_id = 0;
  s.ntasks = 4;
  s.nodelist = "cpu[01-02]";
  s.nodes = {{"cpu01", 3, 0, 3, {0}}, {"cpu02", 1, 3, 1, {2}}};
  return s;
}

TEST(StepEnvironment, DescribesTheStep) {
  EnvMap job = {{"SLURM_JOB_CPUS_PER_NODE", "3,1"}, {"SLURM_NNODES", "2"},
                {"SLURM_TASKS_PER_NODE", "3,1"}, {"SLURM_GTIDS", "0"}};
  EnvMap env = StepEnvironment(job, TwoNodeStep(), 022);
  EXPECT_EQ(env["SLURM_STEP_TASKS_PER_NODE"], "3,1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "3,1");
  EXPECT_EQ(env["SLURM_STEP_NUM_TASKS"], "4");
  EXPECT_EQ(env["SLURM_NTASKS"], "4");
  EXPECT_EQ(env["SLURM_STEP_NUM_NODES"], "2");
  EXPECT_EQ(env["SLURM_DISTRIBUTION"], "block");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"], "3,1");
  EXPECT_EQ(env["SLURM_UMASK"], "0022");
  EXPECT_EQ(env["SRUN_DEBUG"], "3");
  // srun -n1 in that job: one node, cyclic, the step's counts.
  StepView one;
  one.ntasks = 1;
  one.nodelist = "cpu01";
  one.nodes = {{"cpu01", 1, 0, 3, {}}};
  env = StepEnvironment(job, one, 022);
  EXPECT_EQ(env["SLURM_NNODES"], "1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1");
  EXPECT_EQ(env["SLURM_DISTRIBUTION"], "cyclic");
  // Two tasks on two nodes: 1(x2), cyclic.
  StepView two = TwoNodeStep();
  two.ntasks = 2;
  two.nodes[0].tasks = 1;
  two.nodes[1].first_task = 1;
  env = StepEnvironment(job, two, 077);
  EXPECT_EQ(env["SLURM_STEP_TASKS_PER_NODE"], "1(x2)");
  EXPECT_EQ(env["SLURM_DISTRIBUTION"], "cyclic");
  EXPECT_EQ(env["SLURM_UMASK"], "0077");
}

TEST(TaskEnvironment, GivesEachTaskItsRanksAndNode) {
  StepView step = TwoNodeStep();
  EnvMap base = StepEnvironment({}, step, 022);
  EnvMap t2 = TaskEnvironment(base, step, 0, 2);
  EXPECT_EQ(t2["SLURM_PROCID"], "2");
  EXPECT_EQ(t2["SLURM_LOCALID"], "2");
  EXPECT_EQ(t2["SLURM_NODEID"], "0");
  EXPECT_EQ(t2["SLURM_GTIDS"], "0,1,2");
  EXPECT_EQ(t2["SLURMD_NODENAME"], "cpu01");
  EXPECT_EQ(t2["SLURM_CPUS_ON_NODE"], "3");
  EXPECT_EQ(t2["CUDA_VISIBLE_DEVICES"], "0");
  EnvMap t3 = TaskEnvironment(base, step, 1, 0);
  EXPECT_EQ(t3["SLURM_PROCID"], "3");
  EXPECT_EQ(t3["SLURM_LOCALID"], "0");
  EXPECT_EQ(t3["SLURM_NODEID"], "1");
  EXPECT_EQ(t3["SLURM_GTIDS"], "3");
  EXPECT_EQ(t3["SLURMD_NODENAME"], "cpu02");
  EXPECT_EQ(t3["SLURM_TOPOLOGY_ADDR"], "cpu02");
  EXPECT_EQ(t3["SLURM_CPUS_ON_NODE"], "1");
  EXPECT_EQ(t3["SLURM_STEP_GPUS"], "2");
  EXPECT_EQ(t3["ROCR_VISIBLE_DEVICES"], "2");
  EXPECT_EQ(t3["ZE_AFFINITY_MASK"], "2");
  EXPECT_EQ(t3["GPU_DEVICE_ORDINAL"], "2");
  EXPECT_EQ(t3["SLURM_GPUS_ON_NODE"], "1");
}

TEST(TaskEnvironment, NamesGpusAsMusterdSays) {
  // Under ConstrainDevices the job's GPUs 2 and 5 are CUDA's 0 and 1; a
  // MIG instance is named by its UUID. SLURM_STEP_GPUS keeps the indices.
  StepView step = TwoNodeStep();
  step.nodes[1].gpus = {2, 5};
  step.nodes[1].gpu_names = {"0", "1"};
  step.gpus_per_task = 1;
  step.nodes[1].tasks = 2;
  EnvMap base = StepEnvironment({}, step, 022);
  EnvMap second = TaskEnvironment(base, step, 1, 1);
  EXPECT_EQ(second["CUDA_VISIBLE_DEVICES"], "1");
  EXPECT_EQ(second["SLURM_STEP_GPUS"], "2,5");
  step.nodes[1].gpu_names = {"MIG-a", "MIG-b"};
  step.gpus_per_task = 0;
  EXPECT_EQ(TaskEnvironment(base, step, 1, 0)["CUDA_VISIBLE_DEVICES"], "MIG-a,MIG-b");
}

}  // namespace
}  // namespace muster::cli

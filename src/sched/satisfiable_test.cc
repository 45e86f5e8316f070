// CheckSatisfiable against what the real Slurm 22.05 on the oracle cluster
// (../shared/slurm-oracle, as root) answers for the same sbatch options.
// Slurm's lines are quoted per case; the detail lines are Muster's own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sched/schedule_harness.h"

namespace muster::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakePartition;

constexpr const char* kNotAvailable = "Requested node configuration is not available";

struct Case {
  const char* slurm;  // the sbatch command line and what Slurm printed
  testing::JobBuilder job;
  const char* partition;
  util::Code code;
  const char* message;
  const char* detail;
};

void RunCases(const Harness& h, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    const core::Partition* part = h.cfg.FindPartition(c.partition);
    ASSERT_NE(part, nullptr) << c.partition;
    SubmitRefusal why{"stale", "stale"};
    util::Status st = CheckSatisfiable(c.job.req(), *part, h.cfg, &why);
    EXPECT_EQ(st.code(), c.code) << c.slurm << ": " << st.message() << " / " << why.detail;
    EXPECT_EQ(st.message(), c.message) << c.slurm;
    EXPECT_EQ(why.detail, c.detail) << c.slurm;
  }
}

const util::Code kOk = util::Code::kOk;
const util::Code kUnavailable = util::Code::kUnavailable;
const util::Code kInvalid = util::Code::kInvalidArgument;

TEST(CheckSatisfiable, MatchesSlurmOnTheOracleCluster) {
  Harness h = OracleCluster();
  RunCases(
      h,
      {
          // sbatch -p train --gres=gpu:16 --wrap true
          //   sbatch: error: Batch job submission failed: Requested node
          //   configuration is not available
          {"-p train --gres=gpu:16", MakeJob().Gpus(16), "train", kUnavailable, kNotAvailable,
           "gres/gpu: requested 16 per node, the most any node in partition train has is 8"},
          // sbatch -p short -c 64: "sbatch: error: CPU count per node can not be
          //   satisfied" then "Batch job submission failed: Requested node
          //   configuration is not available"
          {"-p short -c 64", MakeJob().Cpus(64), "short", kUnavailable, kNotAvailable,
           "cpus: requested 64 per node, the most any node in partition short has is 32"},
          // sbatch -p short --mem=128G: not available
          {"-p short --mem=128G", MakeJob().Mem(131072), "short", kUnavailable, kNotAvailable,
           "memory: requested 131072M per node, the most any node in partition short has is "
           "64000M"},
          // sbatch -p short --mem-per-cpu=3000 -c 32: not available
          {"-p short --mem-per-cpu=3000 -c 32", MakeJob().MemPerCpu(3000).Cpus(32), "short",
           kUnavailable, kNotAvailable,
           "memory: requested 96000M per node, the most any node in partition short has is 64000M"},
          // sbatch --test-only -p short -N 8: "allocation failure: Requested node
          //   configuration is not available". (A real submission is accepted
          //   and pends with PartitionConfig forever; Muster refuses it.)
          {"-p short -N 8", MakeJob().Nodes(8), "short", kUnavailable, kNotAvailable,
           "nodes: requested 8, partition short has 6"},
          {"-p train -N 5", MakeJob().Nodes(5), "train", kUnavailable, kNotAvailable,
           "nodes: requested 5, partition train has 4"},
          // sbatch -p short -C nosuch: "Batch job submission failed: Invalid
          //   feature specification"
          {"-p short -C nosuch", MakeJob().Constraint("nosuch"), "short", kInvalid,
           "Invalid feature specification",
           "features: no node in the cluster has feature 'nosuch'"},
          {"-p short -C 'nosuch|other'", MakeJob().Constraint("nosuch|other"), "short", kInvalid,
           "Invalid feature specification",
           "features: no node in the cluster has any of 'nosuch|other'"},
          // sbatch -p train -C cpu (cpu exists, not in train): not available
          {"-p train -C cpu", MakeJob().Constraint("cpu"), "train", kUnavailable, kNotAvailable,
           "features: no node in partition train has feature 'cpu'"},
          // sbatch -p short -C 'h100&cpu': not available
          {"-p short -C 'h100&cpu'", MakeJob().Constraint("h100&cpu"), "short", kUnavailable,
           kNotAvailable, "features: no node in partition short has all of 'h100&cpu'"},
          // sbatch -p train --gres=gpu:a100:1: not available
          {"-p train --gres=gpu:a100:1", MakeJob().Gpus(1, "a100"), "train", kUnavailable,
           kNotAvailable,
           "gres/gpu:a100: no node in partition train has GPUs of type a100; types there: h100"},
          // sbatch -p train --gres=nic:1: "sbatch: error: Invalid generic
          //   resource (gres) specification"
          {"-p train --gres=nic:1", MakeJob().Gres("nic", "", 1), "train", kInvalid,
           "Invalid generic resource (gres) specification", "gres/nic: not a GRES of this cluster"},
          // sbatch --test-only -p short --gpus=40 / -p train --gpus=33: not available
          {"-p short --gpus=40", MakeJob().GpusPerJob(40), "short", kUnavailable, kNotAvailable,
           "gres/gpu: requested 40 in total, partition short has 32"},
          {"-p train --gpus=33", MakeJob().GpusPerJob(33), "train", kUnavailable, kNotAvailable,
           "gres/gpu: requested 33 in total, partition train has 32"},
          // sbatch --test-only -p short -n 200 / -p train -n 129: not available
          {"-p short -n 200", MakeJob().Tasks(200), "short", kUnavailable, kNotAvailable,
           "cpus: requested 200 in total, partition short has 192"},
          {"-p train -n 129", MakeJob().Tasks(129), "train", kUnavailable, kNotAvailable,
           "cpus: requested 129 in total, partition train has 128"},
          // sbatch --test-only -p short --ntasks-per-node=40: not available
          {"-p short --ntasks-per-node=40", MakeJob().TasksPerNode(40), "short", kUnavailable,
           kNotAvailable,
           "cpus: requested 40 per node, the most any node in partition short has is 32"},
          // sbatch --test-only -p short -N 2 --ntasks-per-node=20 -c 2: not available
          {"-p short -N 2 --ntasks-per-node=20 -c 2", MakeJob().Nodes(2).TasksPerNode(20).Cpus(2),
           "short", kUnavailable, kNotAvailable,
           "cpus: requested 40 per node, the most any node in partition short has is 32"},
          // sbatch --test-only -p short -N 1 -n 40: not available
          {"-p short -N 1 -n 40", MakeJob().Nodes(1).Tasks(40), "short", kUnavailable,
           kNotAvailable,
           "cpus: requested 40 per node, the most any node in partition short has is 32"},
          // sbatch -p short -N 1 -n 3 --ntasks-per-node=2: not available
          {"-p short -N 1 -n 3 --ntasks-per-node=2", MakeJob().Nodes(1).Tasks(3).TasksPerNode(2),
           "short", kUnavailable, kNotAvailable,
           "--ntasks=3 with --ntasks-per-node=2 needs 2 nodes, but -N allows at most 1"},
          // sbatch -p short -w gpu09: "Batch job submission failed: Invalid node
          //   name specified"
          {"-p short -w gpu09", MakeJob().Nodelist("gpu09"), "short", kInvalid,
           "Invalid node name specified", "nodes: gpu09 is not a node of this cluster"},
          // sbatch --test-only -p train -w cpu01: not available
          {"-p train -w cpu01", MakeJob().Nodelist("cpu01"), "train", kUnavailable, kNotAvailable,
           "nodes: cpu01 (-w) is not in partition train"},
          // sbatch --test-only -p short -x gpu[01-04],cpu01 -N 2: not available
          {"-p short -x gpu[01-04],cpu01 -N 2", MakeJob().Exclude("gpu[01-04],cpu01").Nodes(2),
           "short", kUnavailable, kNotAvailable,
           "nodes: requested 2, partition short has 1 matching -C/-x/--gres"},
          {"-p short -C cpu --gres=gpu:1", MakeJob().Constraint("cpu").Gpus(1), "short",
           kUnavailable, kNotAvailable,
           "gres/gpu: requested 1 per node, the most any node in partition short matching "
           "-C/-x/--gres has is 0"},
          // Accepted by Slurm (sbatch --test-only: "Job N to start at ...").
          {"-p short --mem-per-cpu=3000 -c 20", MakeJob().MemPerCpu(3000).Cpus(20), "short", kOk,
           "", ""},
          {"-p short -N 2 -n 1 (nnodes set to 1)", MakeJob().Nodes(2).Tasks(1), "short", kOk, "",
           ""},
          {"-p short -n 40", MakeJob().Tasks(40), "short", kOk, "", ""},
          {"-p train -n 100", MakeJob().Tasks(100), "train", kOk, "", ""},
          {"-p train --gpus=12", MakeJob().GpusPerJob(12), "train", kOk, "", ""},
          {"-p train -N 2 --gpus=3", MakeJob().Nodes(2).GpusPerJob(3), "train", kOk, "", ""},
          {"-p train --exclusive", MakeJob().Exclusive(), "train", kOk, "", ""},
          {"-p short -n 5 --ntasks-per-node=2", MakeJob().Tasks(5).TasksPerNode(2), "short", kOk,
           "", ""},
          {"-p short -w gpu[01-02]", MakeJob().Nodelist("gpu[01-02]"), "short", kOk, "", ""},
          {"-p short -C gpu,h100", MakeJob().Constraint("gpu,h100"), "short", kOk, "", ""},
          {"-p short -C 'gpu|cpu'", MakeJob().Constraint("gpu|cpu"), "short", kOk, "", ""},
          {"-p short --mem=0", MakeJob().MemWholeNode(), "short", kOk, "", ""},
      });
}

TEST(CheckSatisfiable, OtherClusters) {
  Harness h;
  h.cfg.def_mem_per_cpu_mb = 0;
  h.cfg.gres_types = {"gpu", "nic"};
  h.AddNode(MakeNode("big").Cpus(64).Mem(256000));
  h.AddNode(MakeNode("gpu").Cpus(8).Mem(64000).Gpus("", 8));
  h.AddNode(MakeNode("old").Cpus(8).Mem(64000).Gpus("v100", 2));
  h.AddPartition(MakePartition("mixed").Nodes({"big", "gpu"}));
  h.AddPartition(MakePartition("cpuonly").Nodes({"big"}));
  h.AddPartition(MakePartition("empty"));
  h.cfg.partitions.back().nodes.clear();
  h.AddPartition(MakePartition("old").Nodes({"old"}));
  RunCases(
      h,
      {
          // Each maximum exists, but not on one node.
          {"-c 32 --gres=gpu:1", MakeJob().Cpus(32).Gpus(1), "mixed", kUnavailable, kNotAvailable,
           "resources: no set of nodes in partition mixed can hold the job's CPUs, memory and GPUs "
           "together"},
          {"--gres=gpu:1 on a CPU partition", MakeJob().Gpus(1), "cpuonly", kUnavailable,
           kNotAvailable,
           "gres/gpu: requested 1 per node, the most any node in partition cpuonly has is 0"},
          {"untyped GPUs only", MakeJob().Gpus(1, "h100"), "mixed", kUnavailable, kNotAvailable,
           "gres/gpu:h100: no node in partition mixed has GPUs of type h100; types there: untyped "
           "only"},
          {"typed request per node", MakeJob().Gpus(4, "v100"), "old", kUnavailable, kNotAvailable,
           "gres/gpu:v100: requested 4 per node, the most any node in partition old has is 2"},
          {"GresTypes nic but no node has one", MakeJob().Gres("nic", "", 1), "mixed", kUnavailable,
           kNotAvailable, "gres/nic: no node in partition mixed has gres/nic"},
          {"no DefMemPerCPU: whole node, any size", MakeJob().Cpus(64), "mixed", kOk, "", ""},
          {"partition without nodes", MakeJob(), "empty", kUnavailable, kNotAvailable,
           "nodes: requested 1, partition empty has 0"},
          {"malformed request keeps its own error", MakeJob().Mem(1).MemPerCpu(1), "mixed",
           kInvalid, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
           "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."},
      });
}

// The line Slurm's sbatch prints before "Batch job submission failed:
// Requested node configuration is not available", as the oracle printed it
// for `sbatch <options> --wrap true` (as root, partition short by default).
TEST(CheckSatisfiable, SlurmsOwnLineMatchesTheOracle) {
  Harness h = OracleCluster();
  const std::string kCpu = "CPU count per node can not be satisfied";
  const std::string kMem = "Memory specification can not be satisfied";
  struct LineCase {
    const char* options;
    testing::JobBuilder job;
    std::string line;
  };
  const std::vector<LineCase> cases = {
      {"-c 64", MakeJob().Cpus(64), kCpu},
      {"-c 33", MakeJob().Cpus(33), kCpu},
      {"--ntasks-per-node=40", MakeJob().TasksPerNode(40), kCpu},
      {"--ntasks-per-node=2 -c 17", MakeJob().TasksPerNode(2).Cpus(17), kCpu},
      {"-N 2 --ntasks-per-node=20 -c 2", MakeJob().Nodes(2).TasksPerNode(20).Cpus(2), kCpu},
      {"-c 64 --mem=999999 (CPUs first)", MakeJob().Cpus(64).Mem(999999), kCpu},
      {"--gres=gpu:9 -c 64", MakeJob().Gpus(9).Cpus(64), kCpu},
      {"-p train -w cpu01 -c 64", MakeJob().Nodelist("cpu01").Cpus(64), kCpu},
      {"--mem=999999", MakeJob().Mem(999999), kMem},
      {"--mem=64001", MakeJob().Mem(64001), kMem},
      {"-N 2 --mem=64001", MakeJob().Nodes(2).Mem(64001), kMem},
      {"--mem-per-cpu=64001", MakeJob().MemPerCpu(64001), kMem},
      {"-c 2 --mem-per-cpu=64001", MakeJob().Cpus(2).MemPerCpu(64001), kMem},
      {"--gres=gpu:9 --mem=999999", MakeJob().Gpus(9).Mem(999999), kMem},
      // Refused with "not available" alone.
      {"-N 1 -n 33", MakeJob().Nodes(1).Tasks(33), ""},
      {"-n 2 -c 17 -N 1", MakeJob().Tasks(2).Cpus(17).Nodes(1), ""},
      {"-c 2 --mem-per-cpu=32001", MakeJob().Cpus(2).MemPerCpu(32001), ""},
      {"-c 32 --mem-per-cpu=2001", MakeJob().Cpus(32).MemPerCpu(2001), ""},
      {"--gres=gpu:9", MakeJob().Gpus(9), ""},
      {"--gres=gpu:a100:1", MakeJob().Gpus(1, "a100"), ""},
      {"--gpus=40", MakeJob().GpusPerJob(40), ""},
  };
  for (const auto& c : cases) {
    SubmitRefusal why{"stale", "stale"};
    util::Status st = CheckSatisfiable(c.job.req(), *h.cfg.FindPartition("short"), h.cfg, &why);
    EXPECT_EQ(st.code(), util::Code::kUnavailable) << c.options;
    EXPECT_EQ(st.message(), kNotAvailable) << c.options;
    EXPECT_EQ(why.slurm_line, c.line) << c.options;
    EXPECT_FALSE(why.detail.empty()) << c.options;
  }
  // Slurm's earlier refusals carry no such line, even for -c 64.
  SubmitRefusal why{"stale", "stale"};
  util::Status st = CheckSatisfiable(MakeJob().Nodelist("gpu09").Cpus(64).req(),
                                     *h.cfg.FindPartition("short"), h.cfg, &why);
  EXPECT_EQ(st.message(), "Invalid node name specified");
  EXPECT_EQ(why.slurm_line, "");
  // Accepted: both fields cleared.
  why = {"stale", "stale"};
  EXPECT_TRUE(
      CheckSatisfiable(MakeJob().Cpus(32).req(), *h.cfg.FindPartition("short"), h.cfg, &why).ok());
  EXPECT_EQ(why.slurm_line, "");
  EXPECT_EQ(why.detail, "");
}

TEST(CheckSatisfiable, NullDetailIsAllowed) {
  Harness h = OracleCluster();
  util::Status st =
      CheckSatisfiable(MakeJob().Gpus(16).req(), *h.cfg.FindPartition("train"), h.cfg, nullptr);
  EXPECT_EQ(st.code(), util::Code::kUnavailable);
}

}  // namespace
}  // namespace muster::sched

// Schedule(): one pass of Slurm's main scheduler (no backfill), mostly on
// OracleCluster() (see schedule_harness.h).
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sched/pipeline.h"
#include "sched/schedule_harness.h"

namespace muster::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakePartition;

// The nodes a job started on ("gpu01,gpu02"), else its reason.
std::string Result(const Plan& p, core::JobId id) {
  return StartOf(p, id) ? NodesOf(p, id) : Outcome(p, id);
}

struct Case {
  const char* name;
  std::function<void(Harness&)> setup;  // nodes' state, config changes
  std::vector<testing::JobBuilder> jobs;
  std::vector<std::string> expect;  // per job: nodes or reason
};

void RunCases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    Harness h = OracleCluster();
    if (c.setup) c.setup(h);
    for (const auto& j : c.jobs) h.AddJob(j);
    Plan plan = h.Run();
    ASSERT_EQ(c.jobs.size(), c.expect.size()) << c.name;
    EXPECT_EQ(plan.starts.size() + plan.pending.size(), c.jobs.size()) << c.name;
    for (size_t k = 0; k < c.jobs.size(); ++k) {
      core::JobId id = c.jobs[k].Build().id;
      EXPECT_EQ(Result(plan, id), c.expect[k]) << c.name << ", job " << id;
    }
  }
}

TEST(Schedule, PlacementAndSharing) {
  RunCases({
      // A job without GPUs keeps off GPU nodes while others can take it.
      {"first fitting node", nullptr, {MakeJob(1).Partition("short")}, {"cpu01"}},
      {"CPUs shared until full",
       nullptr,
       {MakeJob(1).Partition("short").Cpus(16), MakeJob(2).Partition("short").Cpus(16),
        MakeJob(3).Partition("short").Cpus(16)},
       {"cpu01", "cpu01", "cpu02"}},
      {"memory accounted",
       nullptr,
       {MakeJob(1).Partition("short").Mem(40000), MakeJob(2).Partition("short").Mem(40000),
        MakeJob(3).Partition("short").Mem(20000)},
       {"cpu01", "cpu02", "cpu01"}},
      {"mem-per-cpu times CPUs",
       nullptr,
       {MakeJob(1).Partition("short").Cpus(10).MemPerCpu(4000),
        MakeJob(2).Partition("short").Cpus(10).MemPerCpu(4000)},
       {"cpu01", "cpu02"}},
      {"GPUs shared until used up",
       nullptr,
       {MakeJob(1).Partition("train").Gpus(4), MakeJob(2).Partition("train").Gpus(4),
        MakeJob(3).Partition("train").Gpus(4)},
       {"gpu01", "gpu01", "gpu02"}},
      {"live use respected",
       [](Harness& h) {
         h.Node("gpu01")->alloc_cpus = 32;
         h.Node("gpu02")->alloc_mem_mb = 64000;
         h.Node("gpu03")->gpu_used.assign(8, true);
       },
       {MakeJob(1).Partition("train"), MakeJob(2).Partition("train").Gpus(1)},
       {"gpu03", "gpu04"}},
      {"lower Weight first",
       [](Harness& h) {
         h.Node("cpu02")->config.weight = 0;
         h.cfg.nodes[5].weight = 0;
       },
       {MakeJob(1).Partition("short"), MakeJob(2).Partition("short").Cpus(32)},
       {"cpu02", "cpu01"}},
      {"partition order does not matter, config order does",
       [](Harness& h) {
         h.cfg.partitions[1].nodes = {"gpu04", "gpu03", "gpu02", "gpu01"};
       },
       {MakeJob(1).Partition("train")},
       {"gpu01"}},
  });
}

// Of the nodes that fit, the busiest go first (a best fit, as the oracle's
// select/cons_tres does: it put a 2-GPU job on the node with 2 GPUs free
// rather than an idle one, a 4-CPU job on the CPU node with 12 CPUs free
// rather than 32); CR_LLN and a partition's LLN=YES take the least loaded.
TEST(Schedule, BestFitAndLeastLoadedPlacement) {
  auto six_gpus_busy_on_gpu02 = [](Harness& h) {
    h.Node("gpu02")->alloc_cpus = 6;
    h.Node("gpu02")->alloc_mem_mb = 6000;
    for (int g = 0; g < 6; ++g) h.Node("gpu02")->gpu_used[g] = true;
  };
  RunCases({
      // The handbook's fragmentation: taking the first node would break
      // into an idle one and leave the third 8-GPU job waiting.
      {"whole nodes stay whole",
       six_gpus_busy_on_gpu02,
       {MakeJob(1).Partition("train").Gpus(2), MakeJob(2).Partition("train").Gpus(8),
        MakeJob(3).Partition("train").Gpus(8), MakeJob(4).Partition("train").Gpus(8)},
       {"gpu02", "gpu01", "gpu03", "gpu04"}},
      {"the busiest CPU node",
       [](Harness& h) { h.Node("cpu02")->alloc_cpus = 20; },
       {MakeJob(1).Partition("short").Cpus(4), MakeJob(2).Partition("short").Cpus(16)},
       {"cpu02", "cpu01"}},
      {"after Weight",
       [](Harness& h) {
         h.Node("cpu01")->alloc_cpus = 20;
         h.Node("cpu02")->config.weight = 0;
         h.cfg.nodes[5].weight = 0;
       },
       {MakeJob(1).Partition("short")},
       {"cpu02"}},
      {"CR_LLN takes the least loaded",
       [](Harness& h) {
         h.cfg.least_loaded = true;
         h.Node("cpu01")->alloc_cpus = 8;
       },
       {MakeJob(1).Partition("short"), MakeJob(2).Partition("train").Gpus(1)},
       {"cpu02", "gpu01"}},
      {"partition LLN=YES",
       [](Harness& h) {
         h.cfg.partitions[1].least_loaded = true;
         h.Node("gpu01")->alloc_cpus = 8;
         h.Node("gpu02")->alloc_cpus = 4;
         h.Node("gpu03")->alloc_cpus = 2;
       },
       {MakeJob(1).Partition("train"), MakeJob(2).Partition("short").Cpus(32)},
       {"gpu04", "cpu01"}},
  });
  // CR_Pack_Nodes packs tasks on whole nodes too: -N2 -n4 --exclusive 3 + 1
  // (Slurm's default spreads them 2 + 2).
  Harness h = OracleCluster();
  h.cfg.pack_nodes = true;
  h.AddJob(MakeJob(1).Partition("train").Nodes(2).Tasks(4).Exclusive());
  Plan p = h.Run();
  const StartDecision* s = StartOf(p, 1);
  ASSERT_NE(s, nullptr) << Outcome(p, 1);
  ASSERT_EQ(s->alloc.size(), 2u);
  EXPECT_EQ(s->alloc[0].tasks, 3);
  EXPECT_EQ(s->alloc[1].tasks, 1);
}

// GpuReserve=CPUs=2,Mem=4000: each free GPU keeps 2 CPUs and 4000 MB of
// its node from work that takes no GPU there.
TEST(Schedule, GpuReserveKeepsCpusAndMemoryForFreeGpus) {
  auto reserve = [](Harness& h) {
    h.cfg.gpu_reserve_cpus = 2;
    h.cfg.gpu_reserve_mem_mb = 4000;
  };
  RunCases({
      {"CPU-only work leaves 16 CPUs for 8 free GPUs",
       reserve,
       {MakeJob(1).Partition("train").Cpus(16), MakeJob(2).Partition("train").Cpus(1),
        MakeJob(3).Partition("train").Gpus(8).Cpus(16)},
       {"gpu01", "gpu02", "gpu01"}},
      {"memory too",
       reserve,
       {MakeJob(1).Partition("train").Mem(32000), MakeJob(2).Partition("train").Mem(32001),
        MakeJob(3).Partition("train").Mem(1000)},
       {"gpu01", "Resources", "gpu02"}},
      {"as the node's GPUs are taken, their reserve is freed",
       [&](Harness& h) {
         reserve(h);
         for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04"}) {
           h.Node(n)->alloc_cpus = 1;
           h.Node(n)->alloc_mem_mb = 1000;
           for (int g = 0; g < 6; ++g) h.Node(n)->gpu_used[g] = true;
         }
       },
       {MakeJob(1).Partition("train").Cpus(27)},
       {"gpu01"}},
      // Only the reserve keeps it out, and only until GPUs are taken: the
      // job waits, and holds back no job behind it.
      {"kept out without holding back the partition",
       reserve,
       {MakeJob(1).Partition("train").Cpus(20), MakeJob(2).Partition("train").Gpus(1)},
       {"Resources", "gpu01"}},
      {"--exclusive takes the whole node", reserve,
       {MakeJob(1).Partition("train").Exclusive()}, {"gpu01"}},
      {"CPU nodes have nothing to keep", reserve, {MakeJob(1).Partition("short").Cpus(32)},
       {"cpu01"}},
  });
}

// -C's set constraints (man sbatch): a matching OR puts every node of the
// job under the same one of its features; a count needs that many of the
// job's nodes to have it; multiple counts in brackets add up to the job.
TEST(Schedule, ConstraintCountsAndMatchingOr) {
  auto racks = [](Harness& h) {
    for (const char* n : {"gpu01", "gpu02"}) h.Node(n)->config.features.push_back("rack1");
    for (const char* n : {"gpu03", "gpu04"}) h.Node(n)->config.features.push_back("rack2");
  };
  auto racks_gpu01_busy = [&](Harness& h) {
    racks(h);
    h.Node("gpu01")->alloc_cpus = 32;
  };
  RunCases({
      {"matching OR: the first rack that holds it", racks,
       {MakeJob(1).Partition("train").Nodes(2).Constraint("[rack1|rack2]")}, {"gpu01,gpu02"}},
      {"matching OR takes the other rack", racks_gpu01_busy,
       {MakeJob(1).Partition("train").Nodes(2).Constraint("[rack1|rack2]")}, {"gpu03,gpu04"}},
      {"plain OR mixes racks", racks_gpu01_busy,
       {MakeJob(1).Partition("train").Nodes(2).Constraint("rack1|rack2")}, {"gpu02,gpu03"}},
      {"a count among other nodes", nullptr,
       {MakeJob(1).Partition("short").Nodes(2).Constraint("h100*1")}, {"gpu01,cpu01"}},
      {"multiple counts add up", racks,
       {MakeJob(1).Partition("train").Constraint("[rack1*1&rack2*2]")}, {"gpu01,gpu03,gpu04"}},
      {"a count no free node meets", racks,
       {MakeJob(1).Partition("train").Nodes(2).Exclusive().Constraint("rack2*2"),
        MakeJob(2).Partition("train").Nodes(2).Constraint("rack2*1")},
       {"gpu03,gpu04", "Resources"}},
  });
}

// topology/tree: leaf s1 over gpu[01-02], s2 over gpu[03-04], s3 over
// cpu[01-02], all under s0 (or, `split`, no top switch: three trees).
void Topology(Harness& h, bool split = false) {
  h.cfg.topology_tree = true;
  const std::vector<std::vector<std::string>> leaves = {
      {"gpu01", "gpu02"}, {"gpu03", "gpu04"}, {"cpu01", "cpu02"}};
  for (size_t k = 0; k < leaves.size(); ++k) {
    config::Switch sw;
    sw.name = "s" + std::to_string(k + 1);
    sw.nodes = leaves[k];
    sw.parent = split ? -1 : 3;
    for (const auto& n : leaves[k]) h.cfg.leaf_of_node[n] = static_cast<int>(k);
    h.cfg.switches.push_back(sw);
  }
  config::Switch top;
  top.name = "s0";
  top.children = {0, 1, 2};
  top.level = 1;
  if (split) top.children.clear();
  h.cfg.switches.push_back(top);
}

// Heterogeneous jobs: components start together, each on nodes of its
// own (the oracle put `sbatch -n1 : -n1` on cpu01 and cpu02, though cpu01
// had room for both), or none starts.
TEST(Schedule, HeterogeneousJobStartsWholeOnDistinctNodes) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("short").Het(1, 0, 3).Build());
  h.AddJob(MakeJob(2).Partition("short").Het(1, 1, 3).Build());
  h.AddJob(MakeJob(3).Partition("train").Het(1, 2, 3).Gpus(2).Build());
  Plan p = h.RunAndApply();
  EXPECT_EQ(NodesOf(p, 1), "cpu01");
  EXPECT_EQ(NodesOf(p, 2), "cpu02");
  EXPECT_EQ(NodesOf(p, 3), "gpu01");
}

TEST(Schedule, HeterogeneousJobWaitsWholeWhenOneComponentCannotStart) {
  Harness h = OracleCluster();
  h.Node("gpu01")->alloc_cpus = 32;
  h.Node("gpu02")->alloc_cpus = 32;
  h.Node("gpu03")->alloc_cpus = 32;
  h.Node("gpu04")->alloc_cpus = 32;
  h.AddJob(MakeJob(1).Partition("short").Het(1, 0, 2).Build());
  h.AddJob(MakeJob(2).Partition("train").Het(1, 1, 2).Build());
  h.AddJob(MakeJob(3).Partition("short").Build());
  Plan p = h.Run();
  EXPECT_EQ(Outcome(p, 1), "Resources");
  EXPECT_EQ(Outcome(p, 2), "Resources");
  // Nothing was taken for component 0: a later job gets cpu01.
  EXPECT_EQ(NodesOf(p, 3), "cpu01");
  // Two components of one node each on a partition of one free node.
  Harness one = OracleCluster();
  for (const char* n : {"gpu01", "gpu02", "gpu03", "cpu01", "cpu02"}) one.Node(n)->alloc_cpus = 32;
  one.AddJob(MakeJob(1).Partition("short").Het(1, 0, 2).Build());
  one.AddJob(MakeJob(2).Partition("short").Het(1, 1, 2).Build());
  p = one.Run();
  EXPECT_EQ(Outcome(p, 1), "Resources");
  EXPECT_EQ(Outcome(p, 2), "Resources");
}

TEST(Schedule, HeterogeneousJobWithAComponentMissingWaits) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("short").Het(1, 0, 2).Build());  // 2 is held, not pending
  Plan p = h.Run();
  EXPECT_EQ(Outcome(p, 1), "None");
}

TEST(Schedule, TopologyKeepsJobsUnderFewLeafSwitches) {
  auto gpu01_full = [](Harness& h) {
    Topology(h);
    h.Node("gpu01")->alloc_cpus = 32;
  };
  RunCases({
      // First fit would take gpu02 and gpu03, under two leaves.
      {"first fit", [](Harness& h) { h.Node("gpu01")->alloc_cpus = 32; },
       {MakeJob(1).Partition("train").Nodes(2)}, {"gpu02,gpu03"}},
      {"one leaf that holds it", gpu01_full, {MakeJob(1).Partition("train").Nodes(2)},
       {"gpu03,gpu04"}},
      {"as few leaves as it can", gpu01_full, {MakeJob(1).Partition("train").Nodes(3)},
       {"gpu02,gpu03,gpu04"}},
      // --switches=1 waits (max_switch_wait, 300 s, from its submission)...
      {"--switches=1 waits", gpu01_full,
       {MakeJob(1).Partition("train").Nodes(3).Switches(1, -1, 900)}, {"Resources"}},
      // ... then takes what there is.
      {"--switches=1@60 after its wait", gpu01_full,
       {MakeJob(1).Partition("train").Nodes(3).Switches(1, 60, 900)}, {"gpu02,gpu03,gpu04"}},
      {"spread over one leaf first", gpu01_full, {MakeJob(1).Partition("short").Tasks(40)},
       {"cpu01,cpu02"}},
      {"one fabric only", [](Harness& h) { Topology(h, true); },
       {MakeJob(1).Partition("train").Nodes(3)}, {"BadConstraints"}},
  });
}

// --cpus-per-gpu and --mem-per-gpu: a node's share takes CPUs and memory
// for each GPU it gets there (the oracle: --gres=gpu:2 --cpus-per-gpu=4
// --mem-per-gpu=10G runs with NumCPUs=8 and mem=20G; -N 2
// --gpus-per-node=2 --cpus-per-gpu=3 with 12 CPUs over both nodes).
TEST(Schedule, CpusAndMemoryPerGpu) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("train").Gpus(2).CpusPerGpu(4).MemPerGpu(10240));
  h.AddJob(MakeJob(2).Partition("train").Nodes(2).Gpus(2).CpusPerGpu(3));
  h.AddJob(MakeJob(3).Partition("train").GpusPerJob(3).CpusPerGpu(2).Tasks(1));
  // 3 GPUs x 16 CPUs is more than any node has.
  h.AddJob(MakeJob(4).Partition("train").Gpus(3).CpusPerGpu(16));
  Plan p = h.Run();
  const StartDecision* one = StartOf(p, 1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->alloc[0].cpus, 8);
  EXPECT_EQ(one->alloc[0].mem_mb, 20480);
  const StartDecision* two = StartOf(p, 2);
  ASSERT_NE(two, nullptr);
  ASSERT_EQ(two->alloc.size(), 2u);
  EXPECT_EQ(two->alloc[0].cpus + two->alloc[1].cpus, 12);
  EXPECT_EQ(two->alloc[0].mem_mb, 6 * 1000);  // DefMemPerCPU for each CPU taken
  const StartDecision* three = StartOf(p, 3);
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(three->alloc[0].cpus, 6);
  EXPECT_EQ(Outcome(p, 4), "BadConstraints");
  // Its verdict carries what its submission would be refused with now,
  // from the same check.
  SubmitRefusal why;
  ASSERT_FALSE(CheckSatisfiable(h.jobs.back().req, *h.cfg.FindPartition("train"), h.cfg, &why).ok());
  for (const PendingDecision& d : p.pending) {
    if (d.job_id != 4) continue;
    EXPECT_EQ(d.stage, "placement");
    EXPECT_FALSE(d.detail.empty());
    EXPECT_EQ(d.detail, why.detail);
  }
  // Where a node's CPUs run short, the GPUs there are no use.
  Harness busy = OracleCluster();
  for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04"}) busy.Node(n)->alloc_cpus = 28;
  busy.AddJob(MakeJob(5).Partition("train").Gpus(1).CpusPerGpu(8));
  busy.AddJob(MakeJob(6).Partition("train").Gpus(1).CpusPerGpu(4));
  Plan q = busy.Run();
  EXPECT_EQ(Outcome(q, 5), "Resources");
  EXPECT_EQ(Outcome(q, 6), "Priority");  // behind 5, which could use the node when it frees
  // The request says what it cannot be.
  core::JobRequest both;
  both.cpus_per_gpu = 2;
  both.cpus_per_task_set = true;
  both.gres.push_back({"gpu", "", 1, false});
  EXPECT_EQ(MakeResourceRequest(both, 1000).status().message(),
            "--cpus-per-gpu is mutually exclusive with --cpus-per-task");
  core::JobRequest no_gpu;
  no_gpu.mem_per_gpu_mb = 4096;
  EXPECT_EQ(MakeResourceRequest(no_gpu, 1000).status().message(),
            "Requested mem_per_tres=gres:gpu:4096 but did not request any GPU.");
}

TEST(Schedule, NodeStateFilter) {
  RunCases({
      {"drained, down, unregistered skipped",
       [](Harness& h) {
         h.Node("gpu01")->drain = true;
         h.Node("gpu02")->down = true;
         h.Node("gpu03")->registered = false;
       },
       {MakeJob(1).Partition("train")},
       {"gpu04"}},
      {"FUTURE skipped",
       [](Harness& h) { h.Node("gpu01")->config.initial_state = core::NodeInitialState::kFuture; },
       {MakeJob(1).Partition("train")},
       {"gpu02"}},
      {"no usable node: ReqNodeNotAvail (Slurm: nodes required are DOWN, ...)",
       [](Harness& h) {
         for (auto& n : h.nodes) n.registered = false;
       },
       {MakeJob(1).Partition("train")},
       {"ReqNodeNotAvail"}},
  });
}

// The stages a pass runs come from its configuration, and the job stage that
// holds a job back is recorded with it; a job that waits for resources was
// held by no job stage.
TEST(Schedule, JobStagesRecordWhichHeldAJobBack) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("short").Held());
  h.AddJob(MakeJob(2).Partition("train").Nodes(4).Exclusive());
  h.AddJob(MakeJob(3).Partition("train").Nodes(4).Exclusive());
  Snapshot snap = h.Snap();
  auto names = [](const Snapshot& s) {
    std::vector<std::string> out;
    for (const auto& stage : JobStagesFor(s)) out.emplace_back(stage->name());
    return out;
  };
  EXPECT_EQ(names(snap), (std::vector<std::string>{"eligibility"}));
  core::AccountTable accounts;
  snap.accounts = &accounts;
  EXPECT_EQ(names(snap), (std::vector<std::string>{"eligibility", "limits"}));
  // The post-filter from PreemptType.
  EXPECT_EQ(PreemptionFor(snap), nullptr);
  h.cfg.preempt_type = config::PreemptType::kPartitionPrio;
  EXPECT_EQ(PreemptionFor(snap)->name(), "preempt/partition_prio");
  h.cfg.preempt_type = config::PreemptType::kQos;
  EXPECT_EQ(PreemptionFor(snap)->name(), "preempt/qos");
  h.cfg.preempt_type = config::PreemptType::kNone;
  Plan plan = Schedule(snap);
  ASSERT_EQ(plan.pending.size(), 2u);
  EXPECT_EQ(plan.pending[0].job_id, 1u);
  EXPECT_EQ(plan.pending[0].stage, "eligibility");
  EXPECT_EQ(Outcome(plan, 3), "Resources");
  EXPECT_EQ(plan.pending[1].stage, "");
}

TEST(Schedule, Eligibility) {
  RunCases({
      {"held by user / admin",
       nullptr,
       {MakeJob(1).Partition("short").Held(), MakeJob(2).Partition("short").HeldByAdmin(),
        MakeJob(3).Partition("short")},
       {"JobHeldUser", "JobHeldAdmin", "cpu01"}},
      {"begin time",
       nullptr,
       {MakeJob(1).Partition("short").Begin(1001), MakeJob(2).Partition("short").Begin(1000)},
       {"BeginTime", "cpu01"}},
      {"partition DOWN and INACTIVE; DRAIN still runs queued jobs",
       [](Harness& h) {
         h.cfg.partitions[0].state = core::PartitionState::kDown;
         h.cfg.partitions[1].state = core::PartitionState::kInactive;
       },
       {MakeJob(1).Partition("short"), MakeJob(2).Partition("train")},
       {"PartitionDown", "PartitionInactive"}},
      {"DRAIN partition schedules",
       [](Harness& h) { h.cfg.partitions[1].state = core::PartitionState::kDrain; },
       {MakeJob(1).Partition("train")},
       {"gpu01"}},
      {"unknown partition", nullptr, {MakeJob(1).Partition("nosuch")}, {"PartitionInactive"}},
      {"partition limits",
       [](Harness& h) {
         h.cfg.partitions[0].max_time_s = 3600;
         h.cfg.partitions[1].max_nodes = 2;
       },
       {MakeJob(1).Partition("short").TimeLimit(7200), MakeJob(2).Partition("short").TimeLimit(60),
        MakeJob(3).Partition("train").Nodes(3), MakeJob(4).Partition("train").Nodes(2)},
       {"PartitionTimeLimit", "cpu01", "PartitionNodeLimit", "gpu01,gpu02"}},
      {"held jobs do not block",
       nullptr,
       {MakeJob(1).Partition("train").Nodes(4).Exclusive().Held(), MakeJob(2).Partition("train")},
       {"JobHeldUser", "gpu01"}},
  });
}

TEST(Schedule, Exclusive) {
  RunCases({
      {"exclusive takes an idle node, others avoid it",
       nullptr,
       {MakeJob(1).Partition("train"), MakeJob(2).Partition("train").Exclusive(),
        MakeJob(3).Partition("train").Cpus(4)},
       {"gpu01", "gpu02", "gpu01"}},
      {"exclusive waits when no node is idle",
       [](Harness& h) {
         for (int i = 0; i < 4; ++i) h.nodes[i].alloc_cpus = 1, h.nodes[i].running_jobs = 1;
       },
       {MakeJob(1).Partition("train").Exclusive(), MakeJob(2).Partition("train")},
       {"Resources", "Priority"}},
      {"a node with only GPUs in use is not idle",
       [](Harness& h) { h.Node("gpu01")->gpu_used[3] = true; },
       {MakeJob(1).Partition("train").Exclusive()},
       {"gpu02"}},
  });
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("train").Exclusive().Gpus(2));
  Plan p = h.Run();
  ASSERT_NE(StartOf(p, 1), nullptr);
  const auto& a = StartOf(p, 1)->alloc.at(0);
  EXPECT_EQ(a.cpus, 32);           // all CPUs of the node
  EXPECT_EQ(a.mem_mb, 32 * 1000);  // DefMemPerCPU times the CPUs taken
  EXPECT_EQ(a.tasks, 1);
  EXPECT_EQ(a.gpu_indices, (std::vector<int>{0, 1}));
}

TEST(Schedule, MultiNode) {
  RunCases({
      {"-N 2 on two free nodes",
       nullptr,
       {MakeJob(1).Partition("train").Nodes(2).Cpus(32)},
       {"gpu01,gpu02"}},
      {"-N 2 all or nothing: waits, blocks train, not short",
       [](Harness& h) {
         for (int i = 0; i < 3; ++i) h.nodes[i].alloc_cpus = 32, h.nodes[i].running_jobs = 1;
       },
       {MakeJob(1).Partition("train").Nodes(2).Cpus(32), MakeJob(2).Partition("train"),
        MakeJob(3).Partition("short")},
       {"Resources", "Priority", "cpu01"}},
      {"-n 40 spreads over 2 nodes",
       nullptr,
       {MakeJob(1).Partition("short").Tasks(40)},
       {"cpu01,cpu02"}},
      {"-n 64 -c 1 fills 2 nodes",
       nullptr,
       {MakeJob(1).Partition("train").Tasks(64), MakeJob(2).Partition("train").Tasks(64)},
       {"gpu01,gpu02", "gpu03,gpu04"}},
      {"-n spreading all or nothing",
       nullptr,
       {MakeJob(1).Partition("train").Tasks(100), MakeJob(2).Partition("train").Tasks(100)},
       {"gpu01,gpu02,gpu03,gpu04", "Resources"}},
      {"-N 3 --ntasks-per-node=2",
       nullptr,
       {MakeJob(1).Partition("short").Nodes(3).TasksPerNode(2)},
       {"gpu01,cpu01,cpu02"}},
      {"--gpus=12 spreads",
       nullptr,
       {MakeJob(1).Partition("train").GpusPerJob(12)},
       {"gpu01,gpu02"}},
      {"-w a full node at the front: Resources",
       [](Harness& h) { h.Node("gpu01")->alloc_cpus = 32; },
       {MakeJob(1).Partition("train").Nodelist("gpu01")},
       {"Resources"}},
      {"-N 2-4 --gpus=1 may add GPU-less nodes to reach -N",
       [](Harness& h) {
         for (int i = 0; i < 3; ++i)
           h.nodes[i].gpu_used.assign(8, true), h.nodes[i].running_jobs = 1;
       },
       {MakeJob(1).Partition("short").Nodes(2, 4).GpusPerJob(1)},
       {"gpu01,gpu04"}},
      // (The CPU-only job then fills gpu04, the busiest.)
      {"GPU jobs skip nodes whose GPUs are all used",
       [](Harness& h) {
         for (int i = 0; i < 3; ++i)
           h.nodes[i].gpu_used.assign(8, true), h.nodes[i].running_jobs = 1;
       },
       {MakeJob(1).Partition("train").Gpus(1), MakeJob(2).Partition("train").GpusPerJob(2),
        MakeJob(3).Partition("train")},
       {"gpu04", "gpu04", "gpu04"}},
      {"-N 2-3 takes as many as are free",
       [](Harness& h) { h.Node("gpu02")->drain = true; },
       {MakeJob(1).Partition("train").Nodes(2, 3)},
       {"gpu01,gpu03,gpu04"}},
  });
}

TEST(Schedule, TaskAndGpuLayout) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("short").Tasks(40));
  h.AddJob(MakeJob(2).Partition("short").Nodes(2).Tasks(3).Cpus(2));
  h.AddJob(MakeJob(3).Partition("short").Tasks(5).TasksPerNode(2));
  h.AddJob(MakeJob(4).Partition("train").Nodes(2).GpusPerJob(3));
  h.AddJob(MakeJob(5).Partition("train").GpusPerJob(12));
  Plan p = h.Run();
  auto layout = [&](core::JobId id) {
    std::string out;
    const StartDecision* s = StartOf(p, id);
    if (!s) return Outcome(p, id);
    for (const auto& a : s->alloc) {
      out += (out.empty() ? "" : " ") + a.node + ":" + std::to_string(a.tasks) + "t/" +
             std::to_string(a.cpus) + "c/" + std::to_string(a.mem_mb) + "M/" +
             std::to_string(a.gpu_indices.size()) + "g";
    }
    return out;
  };
  // Greedy fill, GPU-less nodes first: 32 tasks on cpu01, the rest on
  // cpu02 (the oracle: 32 and 8).
  EXPECT_EQ(layout(1), "cpu01:32t/32c/32000M/0g cpu02:8t/8c/8000M/0g");
  // The first node visited (cpu02, 24 CPUs free) takes all but one task per
  // further node: 2 + 1 tasks of 2 CPUs; nodes are listed in config order.
  EXPECT_EQ(layout(2), "gpu01:1t/2c/2000M/0g cpu02:2t/4c/4000M/0g");
  // --ntasks-per-node=2 reserves 2 CPUs per node even where 1 task runs
  // (Slurm: "using 6 processors"), and counts 2 tasks on each
  // (SLURM_TASKS_PER_NODE=2(x3)).
  EXPECT_EQ(layout(3), "gpu01:2t/2c/2000M/0g gpu02:2t/2c/2000M/0g cpu02:2t/2c/2000M/0g");
  // --gpus=3 on 2 nodes: 2 + 1.
  EXPECT_EQ(layout(4), "gpu01:1t/1c/1000M/2g gpu02:1t/1c/1000M/1g");
  // --gpus=12: greedy over what is free (6 left on gpu01, 7 on gpu02), one
  // task per node.
  EXPECT_EQ(layout(5), "gpu01:1t/1c/1000M/6g gpu02:1t/1c/1000M/6g");
}

TEST(Schedule, FixedNodeCountFillsTheFirstNodes) {
  // The oracle (slurm 22.05, nodes free): -N2 -n4 gets SLURM_TASKS_PER_NODE
  // and SLURM_JOB_CPUS_PER_NODE 3,1; -N3 -n5 3,1(x2); -N2 -n4 -c2 tasks 3,1
  // on CPUs 6,2; -N2 -n40 with 28 CPUs free on the first node 28,12;
  // -N2 -n4 --exclusive 2(x2) on whole nodes.
  struct Case {
    std::string name;
    testing::JobBuilder job;
    std::function<void(Harness&)> setup;
    std::string expect;  // node:tasks/cpus ...
  };
  std::vector<Case> cases = {
      {"-N2 -n4", MakeJob(1).Partition("train").Nodes(2).Tasks(4), nullptr,
       "gpu01:3/3 gpu02:1/1"},
      {"-N3 -n5", MakeJob(1).Partition("train").Nodes(3).Tasks(5), nullptr,
       "gpu01:3/3 gpu02:1/1 gpu03:1/1"},
      {"-N2 -n4 -c2", MakeJob(1).Partition("train").Nodes(2).Tasks(4).Cpus(2), nullptr,
       "gpu01:3/6 gpu02:1/2"},
      {"-N2 -n40, 28 CPUs free on gpu01", MakeJob(1).Partition("train").Nodes(2).Tasks(40),
       [](Harness& h) { h.Node("gpu01")->alloc_cpus = 4; }, "gpu01:28/28 gpu02:12/12"},
      {"-N2 -n4 --exclusive", MakeJob(1).Partition("train").Nodes(2).Tasks(4).Exclusive(),
       nullptr, "gpu01:2/32 gpu02:2/32"},
      {"-N2 -n4 --ntasks-per-node=3", MakeJob(1).Partition("train").Nodes(2).Tasks(4).TasksPerNode(3),
       nullptr, "gpu01:3/3 gpu02:3/3"},
      // The greedy pass would take gpu01's one free CPU and then find only
      // one CPU on gpu02; the blocks (2 + 2) fit gpu03 and gpu04, which
      // are then filled first again.
      {"small nodes first", MakeJob(1).Partition("train").Nodes(2).Tasks(5),
       [](Harness& h) {
         h.Node("gpu01")->alloc_cpus = 31;
         h.Node("gpu02")->alloc_cpus = 31;
         h.Node("gpu03")->alloc_cpus = 29;
       },
       "gpu03:3/3 gpu04:2/2"},
  };
  for (const Case& c : cases) {
    Harness h = OracleCluster();
    if (c.setup) c.setup(h);
    h.AddJob(c.job);
    Plan p = h.Run();
    const StartDecision* s = StartOf(p, 1);
    ASSERT_NE(s, nullptr) << c.name << ": " << Outcome(p, 1);
    std::string got;
    for (const auto& a : s->alloc) {
      got += (got.empty() ? "" : " ") + a.node + ":" + std::to_string(a.tasks) + "/" +
             std::to_string(a.cpus);
    }
    EXPECT_EQ(got, c.expect) << c.name;
  }
}

TEST(Schedule, ReqNodeNotAvailNamesTheNodesItAskedFor) {
  // The oracle (slurm 22.05), squeue %r: -w gpu[03-04] with gpu03 drained
  // "ReqNodeNotAvail, UnavailableNodes:gpu03"; -C cpu with cpu[01-02]
  // drained "...:cpu[01-02]", with only cpu01 drained and -N2 "...:cpu01";
  // -p train -N4 with gpu03 drained names no node.
  struct Case {
    std::string name;
    testing::JobBuilder job;
    std::vector<std::string> drained;
    std::string reason;
    std::string nodes;
  };
  std::vector<Case> cases = {
      {"-w", MakeJob(1).Partition("short").Nodelist("gpu[03-04]"), {"gpu03"}, "ReqNodeNotAvail",
       "gpu03"},
      {"-C, all drained", MakeJob(1).Partition("short").Constraint("cpu"), {"cpu01", "cpu02"},
       "ReqNodeNotAvail", "cpu[01-02]"},
      {"-C -N2, one drained", MakeJob(1).Partition("short").Constraint("cpu").Nodes(2), {"cpu01"},
       "ReqNodeNotAvail", "cpu01"},
      {"-C, one of two drained: runs on the other",
       MakeJob(1).Partition("short").Constraint("cpu"), {"cpu01"}, "", ""},
      {"more nodes than are up", MakeJob(1).Partition("train").Nodes(4), {"gpu03"},
       "ReqNodeNotAvail", ""},
      {"busy, not down: Resources", MakeJob(1).Partition("train").Nodes(4).Exclusive(), {},
       "Resources", ""},
  };
  for (const Case& c : cases) {
    Harness h = OracleCluster();
    for (const auto& n : c.drained) h.Node(n)->drain = true;
    if (c.reason == "Resources") h.Node("gpu01")->alloc_cpus = 1;
    h.AddJob(c.job);
    Plan p = h.Run();
    if (c.reason.empty()) {
      EXPECT_NE(StartOf(p, 1), nullptr) << c.name;
      continue;
    }
    ASSERT_EQ(p.pending.size(), 1u) << c.name;
    EXPECT_EQ(core::PendingReasonName(p.pending[0].reason), c.reason) << c.name;
    EXPECT_EQ(p.pending[0].unavailable_nodes, c.nodes) << c.name;
  }
}

TEST(Schedule, SpreadingWithGpusVisitsGpuNodesFirst) {
  // -n 18 --gpus=2: the preferred node has no GPUs; it must not take every
  // task before the GPU node is reached.
  Harness h;
  h.cfg.def_mem_per_cpu_mb = 100;
  h.AddNode(MakeNode("n0").Cpus(32).Mem(8000).Weight(1));
  h.AddNode(MakeNode("n1").Cpus(8).Mem(8000).Weight(2).Gpus("h100", 2));
  h.AddPartition(MakePartition("p"));
  h.AddJob(MakeJob(1).Tasks(18).GpusPerJob(2));
  Plan p = h.Run();
  EXPECT_EQ(GpusOf(p, 1), "n0:;n1:0,1");
  ASSERT_NE(StartOf(p, 1), nullptr);
  EXPECT_EQ(StartOf(p, 1)->alloc[0].tasks, 10);
  EXPECT_EQ(StartOf(p, 1)->alloc[1].tasks, 8);
}

TEST(Schedule, Memory) {
  RunCases({
      {"no DefMemPerCPU: a job takes the whole node's memory",
       [](Harness& h) { h.cfg.def_mem_per_cpu_mb = 0; },
       {MakeJob(1).Partition("train"), MakeJob(2).Partition("train"), MakeJob(3).Partition("train"),
        MakeJob(4).Partition("train"), MakeJob(5).Partition("train")},
       {"gpu01", "gpu02", "gpu03", "gpu04", "Resources"}},
      {"--mem=0 needs a node with no memory in use",
       [](Harness& h) { h.Node("gpu01")->alloc_mem_mb = 1; },
       {MakeJob(1).Partition("train").MemWholeNode()},
       {"gpu02"}},
      {"--mem too big for what is free",
       [](Harness& h) {
         for (int i = 0; i < 4; ++i) h.nodes[i].alloc_mem_mb = 40000;
       },
       {MakeJob(1).Partition("train").Mem(30000), MakeJob(2).Partition("train").Mem(20000)},
       {"Resources", "Priority"}},
  });
  Harness h = OracleCluster();
  h.cfg.def_mem_per_cpu_mb = 0;
  h.AddJob(MakeJob(1).Partition("train"));
  Plan p = h.Run();
  ASSERT_NE(StartOf(p, 1), nullptr);
  EXPECT_EQ(StartOf(p, 1)->alloc[0].mem_mb, 64000);
}

TEST(Schedule, PriorityBlockingByPartition) {
  RunCases({
      {"a waiting job blocks its partition only",
       nullptr,
       {MakeJob(1).Partition("train").Nodes(5), MakeJob(2).Partition("train").Nodes(4).Cpus(32),
        MakeJob(3).Partition("train"), MakeJob(4).Partition("short")},
       // Job 1 can never run (BadConstraints, no block); job 2 takes all
       // four gpu nodes; job 3 finds train full; short still has cpu01.
       {"BadConstraints", "gpu01,gpu02,gpu03,gpu04", "Resources", "cpu01"}},
      {"overlapping partitions: blocked by name, not by nodes",
       [](Harness& h) {
         for (int i = 0; i < 4; ++i) h.nodes[i].alloc_cpus = 31, h.nodes[i].running_jobs = 1;
       },
       {MakeJob(1).Partition("train").Cpus(2), MakeJob(2).Partition("short"),
        MakeJob(3).Partition("train"), MakeJob(4).Partition("short").Cpus(2)},
       {"Resources", "cpu01", "Priority", "cpu01"}},
      {"a job behind a blocked one never starts even if it fits",
       nullptr,
       {MakeJob(1).Partition("train").Nodes(4).Cpus(32), MakeJob(2).Partition("train").Exclusive(),
        MakeJob(3).Partition("train").Cpus(1)},
       {"gpu01,gpu02,gpu03,gpu04", "Resources", "Priority"}},
  });
}

TEST(Schedule, GpuTypes) {
  Harness h = OracleCluster();
  h.AddNode(MakeNode("mix01").Cpus(16).Mem(64000).Gpus("a100", 2).Gpus("h100", 2));
  h.AddPartition(MakePartition("mix").Nodes({"mix01"}));
  h.AddJob(MakeJob(1).Partition("mix").Gpus(1, "h100"));
  h.AddJob(MakeJob(2).Partition("mix").Gpus(1));
  h.AddJob(MakeJob(3).Partition("mix").Gpus(2, "a100"));  // only a100 index 1 is left
  h.AddJob(MakeJob(4).Partition("mix").Gpus(1, "h100"));
  h.AddJob(MakeJob(5).Partition("mix").Gpus(1, "v100"));
  Plan p = h.Run();
  EXPECT_EQ(GpusOf(p, 1), "mix01:2");
  EXPECT_EQ(GpusOf(p, 2), "mix01:0");  // any type: lowest free index
  EXPECT_EQ(Outcome(p, 3), "Resources");
  EXPECT_EQ(Outcome(p, 4), "Priority");
  EXPECT_EQ(Outcome(p, 5), "Priority");

  // Alone, the v100 job can never run there.
  Harness h2 = OracleCluster();
  h2.AddNode(MakeNode("mix01").Cpus(16).Mem(64000).Gpus("a100", 2).Gpus("h100", 2));
  h2.AddPartition(MakePartition("mix").Nodes({"mix01"}));
  h2.AddJob(MakeJob(5).Partition("mix").Gpus(1, "v100"));
  h2.AddJob(MakeJob(6).Partition("mix").Gpus(2, "h100"));
  Plan p2 = h2.Run();
  EXPECT_EQ(Outcome(p2, 5), "BadConstraints");
  EXPECT_EQ(GpusOf(p2, 6), "mix01:2,3");
}

TEST(Schedule, GpuIndicesNeverShared) {
  Harness h = OracleCluster();
  h.Node("gpu01")->gpu_used[0] = true;
  h.Node("gpu01")->gpu_used[2] = true;
  h.Node("gpu01")->running_jobs = 1;
  h.Node("gpu01")->alloc_cpus = 1;
  h.AddJob(MakeJob(1).Partition("train").Gpus(2));
  h.AddJob(MakeJob(2).Partition("train").Gpus(3));
  h.AddJob(MakeJob(3).Partition("train").Gpus(2));
  Plan p = h.Run();
  EXPECT_EQ(GpusOf(p, 1), "gpu01:1,3");
  EXPECT_EQ(GpusOf(p, 2), "gpu01:4,5,6");
  EXPECT_EQ(GpusOf(p, 3), "gpu02:0,1");  // gpu01 has only index 7 left
}

// gres.conf Cores=: a job's GPUs on a node come from one group of GPUs
// near the same cores (a socket) where one has enough, the fullest such
// group first, so a whole socket stays free for a larger job.
TEST(Schedule, GpusComeFromOneSocketWhereOneHasEnough) {
  Harness h = OracleCluster();
  std::vector<int> low(16), high(16);
  for (int c = 0; c < 16; ++c) {
    low[static_cast<size_t>(c)] = c;
    high[static_cast<size_t>(c)] = 16 + c;
  }
  h.Node("gpu01")->config.gres[0].device_cores = {low, low, low, low, high, high, high, high};
  h.Node("gpu01")->gpu_used[0] = true;
  h.Node("gpu01")->running_jobs = 1;
  h.Node("gpu01")->alloc_cpus = 1;
  h.AddJob(MakeJob(1).Partition("train").Gpus(1).Nodelist("gpu01"));
  h.AddJob(MakeJob(2).Partition("train").Gpus(4).Nodelist("gpu01"));
  h.AddJob(MakeJob(3).Partition("train").Gpus(2).Nodelist("gpu01"));
  Plan p = h.Run();
  EXPECT_EQ(GpusOf(p, 1), "gpu01:1");        // socket 0, the fuller one
  EXPECT_EQ(GpusOf(p, 2), "gpu01:4,5,6,7");  // socket 1 whole, not 2-5
  EXPECT_EQ(GpusOf(p, 3), "gpu01:2,3");
}

TEST(Schedule, AJobNeverMixesGpuTypesOnANode) {
  // gpu:a100:2,gpu:h100:2 (indices 0-1 a100, 2-3 h100): an untyped
  // request takes GPUs of one type, the first with enough free.
  Harness h;
  h.cfg.def_mem_per_cpu_mb = 100;
  h.cfg.gres_types = {"gpu"};
  h.AddNode(MakeNode("mix").Cpus(16).Mem(16000).Gpus("a100", 2).Gpus("h100", 2));
  h.AddPartition(MakePartition("p"));
  h.ResolvePartitions();
  h.AddJob(MakeJob(1).Partition("p").Gpus(1));
  h.AddJob(MakeJob(2).Partition("p").Gpus(2));  // a100 has 1 left: both h100
  h.AddJob(MakeJob(3).Partition("p").Gpus(1));
  h.AddJob(MakeJob(4).Partition("p").Gpus(1));  // none left
  Plan p = h.Run();
  EXPECT_EQ(GpusOf(p, 1), "mix:0");
  EXPECT_EQ(GpusOf(p, 2), "mix:2,3");
  EXPECT_EQ(GpusOf(p, 3), "mix:1");
  EXPECT_EQ(Outcome(p, 4), "Resources");
  // Three of one type are never there: refused at submission.
  EXPECT_FALSE(CheckSatisfiable(MakeJob(5).Partition("p").Gpus(3).Build().req, h.cfg.partitions[0],
                                h.cfg, nullptr)
                   .ok());
}

TEST(Schedule, FeaturesAndNodeLists) {
  RunCases({
      {"-C cpu", nullptr, {MakeJob(1).Partition("short").Constraint("cpu")}, {"cpu01"}},
      {"-C h100&gpu", nullptr, {MakeJob(1).Partition("short").Constraint("h100&gpu")}, {"gpu01"}},
      {"-C gpu,h100 (comma = and)",
       nullptr,
       {MakeJob(1).Partition("short").Constraint("gpu,h100")},
       {"gpu01"}},
      {"-C nosuch|cpu",
       nullptr,
       {MakeJob(1).Partition("short").Constraint("nosuch|cpu")},
       {"cpu01"}},
      {"-C h100&cpu never",
       nullptr,
       {MakeJob(1).Partition("short").Constraint("h100&cpu"), MakeJob(2).Partition("short")},
       {"BadConstraints", "cpu01"}},
      {"-w gpu03", nullptr, {MakeJob(1).Partition("short").Nodelist("gpu03")}, {"gpu03"}},
      {"-w gpu03 -N 2 adds a node",
       nullptr,
       {MakeJob(1).Partition("short").Nodelist("gpu03").Nodes(2)},
       {"gpu03,cpu01"}},
      {"-w drained node: ReqNodeNotAvail, no block",
       [](Harness& h) { h.Node("gpu03")->drain = true; },
       {MakeJob(1).Partition("short").Nodelist("gpu03"), MakeJob(2).Partition("short")},
       {"ReqNodeNotAvail", "cpu01"}},
      {"-w busy node: Resources",
       [](Harness& h) { h.Node("gpu03")->alloc_cpus = 32; },
       {MakeJob(1).Partition("short").Nodelist("gpu03"), MakeJob(2).Partition("short")},
       {"Resources", "Priority"}},
      {"-w node outside the partition",
       nullptr,
       {MakeJob(1).Partition("train").Nodelist("cpu01")},
       {"BadConstraints"}},
      {"-w unknown node",
       nullptr,
       {MakeJob(1).Partition("train").Nodelist("gpu09")},
       {"BadConstraints"}},
      {"-x gpu[01-03]", nullptr, {MakeJob(1).Partition("train").Exclude("gpu[01-03]")}, {"gpu04"}},
      {"-x every node",
       nullptr,
       {MakeJob(1).Partition("train").Exclude("gpu[01-04]")},
       {"BadConstraints"}},
      {"--gres=nic:1 needs a node with a nic",
       [](Harness& h) {
         h.nodes[4].config.gres.push_back({"nic", "", 1, {}, {}});
       },
       {MakeJob(1).Partition("short").Gres("nic", "", 1)},
       {"cpu01"}},
  });
}

TEST(Schedule, MalformedRequestIsBadConstraints) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("short").Mem(10).MemPerCpu(10));
  h.AddJob(MakeJob(2).Partition("short"));
  Plan p = h.Run();
  EXPECT_EQ(Outcome(p, 1), "BadConstraints");
  EXPECT_EQ(NodesOf(p, 2), "cpu01");
}

TEST(Schedule, DecisionsInOrderAndInputUntouched) {
  Harness h = OracleCluster();
  for (core::JobId id = 10; id > 0; --id) h.AddJob(MakeJob(id).Partition("short").Cpus(8));
  const std::vector<core::Node> before = h.nodes;
  Plan p = h.Run();
  ASSERT_EQ(p.starts.size(), 10u);
  for (size_t k = 0; k < p.starts.size(); ++k) EXPECT_EQ(p.starts[k].job_id, 10 - k);
  EXPECT_EQ(p.starts[0].partition, "short");
  for (size_t k = 0; k < before.size(); ++k) {
    EXPECT_EQ(h.nodes[k].alloc_cpus, before[k].alloc_cpus);
    EXPECT_EQ(h.nodes[k].gpu_used, before[k].gpu_used);
  }
}

bool SamePlan(const Plan& a, const Plan& b) {
  if (a.starts.size() != b.starts.size() || a.pending.size() != b.pending.size()) return false;
  for (size_t k = 0; k < a.starts.size(); ++k) {
    const auto &x = a.starts[k], &y = b.starts[k];
    if (x.job_id != y.job_id || x.partition != y.partition || x.alloc.size() != y.alloc.size()) {
      return false;
    }
    for (size_t n = 0; n < x.alloc.size(); ++n) {
      const auto &p = x.alloc[n], &q = y.alloc[n];
      if (p.node != q.node || p.cpus != q.cpus || p.mem_mb != q.mem_mb || p.tasks != q.tasks ||
          p.gpu_indices != q.gpu_indices) {
        return false;
      }
    }
  }
  for (size_t k = 0; k < a.pending.size(); ++k) {
    if (a.pending[k].job_id != b.pending[k].job_id || a.pending[k].reason != b.pending[k].reason) {
      return false;
    }
  }
  return true;
}

TEST(Schedule, Deterministic) {
  Harness h = OracleCluster();
  for (core::JobId id = 1; id <= 30; ++id) {
    h.AddJob(MakeJob(id).Partition(id % 3 ? "short" : "train").Cpus(1 + id % 7).Gpus(id % 4));
  }
  Plan a = h.Run();
  Plan b = h.Run();
  EXPECT_TRUE(SamePlan(a, b));
}

TEST(Schedule, PassesOverTime) {
  Harness h = OracleCluster();
  h.AddJob(MakeJob(1).Partition("train").Nodes(4).Cpus(32));
  h.AddJob(MakeJob(2).Partition("train").Gpus(8));
  Plan p1 = h.RunAndApply();
  EXPECT_EQ(NodesOf(p1, 1), "gpu01,gpu02,gpu03,gpu04");
  EXPECT_EQ(Outcome(p1, 2), "Resources");
  EXPECT_EQ(h.Node("gpu01")->alloc_cpus, 32);
  EXPECT_EQ(h.Node("gpu01")->running_jobs, 1);

  h.Finish(1);
  EXPECT_EQ(h.Node("gpu01")->alloc_cpus, 0);
  EXPECT_EQ(h.Node("gpu01")->alloc_mem_mb, 0);
  Plan p2 = h.RunAndApply();
  EXPECT_EQ(GpusOf(p2, 2), "gpu01:0,1,2,3,4,5,6,7");
  EXPECT_EQ(h.Node("gpu01")->gpu_used, std::vector<bool>(8, true));
}

TEST(Schedule, ArrayPendingPartStartsTasksUpToItsThrottle) {
  Harness h = OracleCluster();
  testing::JobBuilder array = MakeJob(10).Partition("train").Gpus(8);
  h.AddJob(array);
  core::Job& part = h.jobs.back();
  part.array_job_id = 10;
  part.array_pending = {0, 1, 2, 3, 4, 5};
  // Four nodes of 8 GPUs: four tasks start, two wait for Resources.
  Plan p = h.Run();
  ASSERT_EQ(p.starts.size(), 4u);
  for (const auto& st : p.starts) EXPECT_EQ(st.job_id, 10u);
  EXPECT_EQ(p.starts[3].alloc[0].node, "gpu04");
  EXPECT_EQ(Outcome(p, 10), "started");
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_EQ(p.pending[0].reason, core::PendingReason::kResources);

  // %3 with one task already running: two more may start.
  part.array_max_running = 3;
  Snapshot snap = h.Snap();
  snap.array_running[10] = 1;
  Plan throttled = Schedule(snap);
  EXPECT_EQ(throttled.starts.size(), 2u);
  ASSERT_EQ(throttled.pending.size(), 1u);
  EXPECT_EQ(throttled.pending[0].reason, core::PendingReason::kJobArrayTaskLimit);
  // At the limit nothing starts, and the reason says why.
  snap.array_running[10] = 3;
  Plan full = Schedule(snap);
  EXPECT_TRUE(full.starts.empty());
  EXPECT_EQ(full.pending[0].reason, core::PendingReason::kJobArrayTaskLimit);

  // A start limit (aftercorr: only the tasks whose partners ended OK) stops
  // the rest with its own reason; when the throttle binds first, the
  // throttle's reason stands.
  snap.array_running[10] = 0;
  snap.start_limit[10] = StartLimit{2, core::PendingReason::kDependency};
  Plan limited = Schedule(snap);
  EXPECT_EQ(limited.starts.size(), 2u);
  ASSERT_EQ(limited.pending.size(), 1u);
  EXPECT_EQ(limited.pending[0].reason, core::PendingReason::kDependency);
  snap.start_limit[10] = StartLimit{3, core::PendingReason::kDependency};
  Plan both = Schedule(snap);
  EXPECT_EQ(both.starts.size(), 3u);
  ASSERT_EQ(both.pending.size(), 1u);
  EXPECT_EQ(both.pending[0].reason, core::PendingReason::kJobArrayTaskLimit);
}

TEST(Schedule, SeveralPartitionsTakeTheFirstWhereTheJobFits) {
  Harness h = OracleCluster();
  // gpu01-04 busy: a job asking for train,short starts on cpu01 (short);
  // one asking for train alone waits.
  for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04"}) h.Node(n)->alloc_cpus = 32;
  h.AddJob(MakeJob(1).Partition("train,short"));
  h.AddJob(MakeJob(2).Partition("train"));
  Plan p = h.Run();
  ASSERT_NE(StartOf(p, 1), nullptr);
  EXPECT_EQ(StartOf(p, 1)->partition, "short");
  EXPECT_EQ(NodesOf(p, 1), "cpu01");
  EXPECT_EQ(Outcome(p, 2), "Resources");
  // With room in the first partition listed, that one is used.
  Harness idle = OracleCluster();
  idle.AddJob(MakeJob(3).Partition("train,short"));
  Plan q = idle.Run();
  EXPECT_EQ(StartOf(q, 3)->partition, "train");
}

// Backfill (sched/backfill): train's every GPU held by jobs ending at
// t+100 (gpu01) to t+400 (gpu04), each holding one CPU.
Harness TrainGpusBusy() {
  Harness h = OracleCluster();
  for (int i = 1; i <= 4; ++i) {
    h.Running(MakeJob(i).Partition("train").Gpus(8).Nodelist("gpu0" + std::to_string(i)),
              100 * i);
  }
  return h;
}

TEST(Backfill, JobsThatCannotDelayTheBlockedOneStart) {
  Harness h = TrainGpusBusy();
  h.AddJob(MakeJob(10).Partition("train").Gpus(8).TimeLimit(1000));  // reserved: gpu01 at t+100
  h.AddJob(MakeJob(11).Partition("train").Cpus(4).TimeLimit(3600));  // CPUs job 10 leaves free
  h.AddJob(MakeJob(12).Partition("train").Gpus(1));                  // no GPU free anywhere
  h.AddJob(MakeJob(13).Partition("train").Cpus(28).TimeLimit(50));
  h.AddJob(MakeJob(14).Partition("train").Nodelist("gpu01").TimeLimit(3600));
  Plan p = h.Run();
  EXPECT_EQ(Outcome(p, 10), "Resources");
  // A CPU-only job takes the free CPUs of a GPU node at once: the job that
  // waits there needs its GPUs and one CPU, not these.
  EXPECT_EQ(NodesOf(p, 11), "gpu01");
  EXPECT_EQ(Outcome(p, 12), "Priority");
  EXPECT_EQ(NodesOf(p, 13), "gpu02");  // 27 CPUs are left on gpu01
  EXPECT_EQ(NodesOf(p, 14), "gpu01");  // beside job 10's reservation, not in it
  // Every job that waits is planned: 10 where gpu01's GPUs free up, 12 (no
  // time limit, so for good) where gpu02's do, rounded up to a multiple of
  // bf_resolution (60 s: t+100 = 1100 is planned at 1140, 1200 stays).
  ASSERT_EQ(p.planned.size(), 2u);
  EXPECT_EQ(p.planned[0].job_id, 10u);
  EXPECT_EQ(p.planned[0].partition, "train");
  EXPECT_EQ(p.planned[0].start, 1140);
  ASSERT_EQ(p.planned[0].alloc.size(), 1u);
  EXPECT_EQ(p.planned[0].alloc[0].node, "gpu01");
  EXPECT_EQ(p.planned[0].alloc[0].gpu_indices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.planned[1].job_id, 12u);
  EXPECT_EQ(p.planned[1].start, 1200);
  ASSERT_EQ(p.planned[1].alloc.size(), 1u);
  EXPECT_EQ(p.planned[1].alloc[0].node, "gpu02");
}

// A running job at its time limit (its expected end is now) still holds
// its node until it is stopped: the planner's profile frees it after now,
// never at now, so a start checked against the plan's reservations takes
// only what is free now.
TEST(Backfill, AJobAtItsLimitHoldsItsNodeNow) {
  Harness h = OracleCluster();
  for (int i = 1; i <= 4; ++i) {
    h.Running(MakeJob(i).Partition("train").Cpus(32).Nodelist("gpu0" + std::to_string(i)), 3600);
  }
  // cpu01's memory is all taken (CPUs are left) by a job that ends now.
  h.Running(MakeJob(5).Partition("short").Mem(64000).Nodelist("cpu01"), 0);
  h.AddJob(MakeJob(10).Partition("short").Tasks(64).TimeLimit(1000));  // waits: planned
  h.AddJob(MakeJob(11).Partition("short").Cpus(1).TimeLimit(10));
  Plan p = h.RunAndApply();
  EXPECT_EQ(Outcome(p, 10), "Resources");
  ASSERT_EQ(p.planned.size(), 1u);
  EXPECT_EQ(NodesOf(p, 11), "cpu02");
}

// bf_window, bf_max_job_test, bf_max_job_user and bf_min_prio_reserve
// bound what is planned; a job not planned gets no start, and does not
// hold back others (as in Slurm).
TEST(Backfill, ParametersBoundThePlanning) {
  auto make = [](config::BackfillConfig bf) {
    Harness h = TrainGpusBusy();  // train's GPUs free up at t+100 .. t+400
    h.cfg.bf = bf;
    h.cfg.bf.resolution_s = 1;
    h.AddJob(MakeJob(10).Partition("train").Gpus(8).TimeLimit(1000).Uid(1).Priority(300));
    h.AddJob(MakeJob(11).Partition("train").Gpus(8).TimeLimit(1000).Uid(1).Priority(200));
    h.AddJob(MakeJob(12).Partition("train").Gpus(8).TimeLimit(1000).Uid(2).Priority(100));
    return h;
  };
  auto planned = [](const Plan& p) {
    std::vector<std::string> out;
    for (const PlannedStart& s : p.planned) {
      out.push_back(std::to_string(s.job_id) + "@" + std::to_string(s.start - 1000));
    }
    return out;
  };
  config::BackfillConfig bf;
  Harness all = make(bf);
  EXPECT_EQ(planned(all.Run()), (std::vector<std::string>{"10@100", "11@200", "12@300"}));
  bf.window_s = 250;  // the third frees up past it
  Harness window = make(bf);
  EXPECT_EQ(planned(window.Run()), (std::vector<std::string>{"10@100", "11@200"}));
  bf = {};
  bf.max_job_test = 2;
  Harness test = make(bf);
  EXPECT_EQ(planned(test.Run()), (std::vector<std::string>{"10@100", "11@200"}));
  bf = {};
  bf.max_job_user = 1;
  Harness user = make(bf);
  Plan p = user.Run();
  EXPECT_EQ(planned(p), (std::vector<std::string>{"10@100", "12@200"}));
  EXPECT_EQ(Outcome(p, 11), "Priority");
  bf = {};
  bf.min_prio_reserve = 150;
  Harness prio = make(bf);
  EXPECT_EQ(planned(prio.Run()), (std::vector<std::string>{"10@100", "11@200"}));
}

// Advance reservations: in its window a reservation's nodes take only its
// jobs, its jobs only its nodes; a job that would still run when one
// begins keeps off its nodes, and is planned past it.
TEST(Schedule, Reservations) {
  Harness h = OracleCluster();
  h.cfg.bf.resolution_s = 1;
  core::Reservation now_r;  // team-ml: gpu01 for the next hour
  now_r.name = "team-ml";
  now_r.start = h.now - 60;
  now_r.end = h.now + 3600;
  now_r.nodes = {"gpu01"};
  now_r.users = {"u1"};
  core::Reservation later;  // gpu02 from t+600 for an hour
  later.name = "maint";
  later.start = h.now + 600;
  later.end = h.now + 4200;
  later.nodes = {"gpu02"};
  later.flags = core::kResvMaint;
  // gpu03 and gpu04 are busy for two hours.
  for (const char* n : {"gpu03", "gpu04"}) {
    h.Running(MakeJob(n == std::string("gpu03") ? 1 : 2).Partition("train").Gpus(8).Nodelist(n),
              7200);
  }
  h.AddJob(MakeJob(10).Partition("train").Gpus(8).TimeLimit(300));   // gpu02 ends before maint
  h.AddJob(MakeJob(11).Partition("train").Gpus(1).TimeLimit(1200));  // would run into maint
  h.AddJob(MakeJob(12).Partition("train").Gpus(1).Reservation("team-ml"));
  h.AddJob(MakeJob(13).Partition("train").Nodelist("gpu01").TimeLimit(60));  // not its own
  h.AddJob(MakeJob(14).Partition("train").Reservation("maint"));  // not begun
  h.AddJob(MakeJob(15).Partition("train").Reservation("gone"));
  Snapshot snap = h.Snap();
  snap.reservations = {&now_r, &later};
  Plan p = Schedule(snap);
  EXPECT_EQ(NodesOf(p, 10), "gpu02");
  EXPECT_EQ(Outcome(p, 11), "Resources");
  EXPECT_EQ(NodesOf(p, 12), "gpu01");
  // Not its reservation: Slurm's "ReqNodeNotAvail, May be reserved for other job".
  EXPECT_EQ(Outcome(p, 13), "ReqNodeNotAvail");
  for (const PendingDecision& d : p.pending) {
    EXPECT_EQ(d.reserved, d.job_id == 13) << d.job_id;
  }
  EXPECT_EQ(Outcome(p, 14), "Reservation");
  EXPECT_EQ(Outcome(p, 15), "Reservation");
  // Job 11 is planned for when team-ml ends on gpu01, before maint ends
  // on gpu02 and the running jobs on gpu03-04.
  bool planned = false;
  for (const PlannedStart& s : p.planned) {
    if (s.job_id != 11) continue;
    planned = true;
    EXPECT_EQ(s.start, now_r.end);
    EXPECT_EQ(s.alloc[0].node, "gpu01");
  }
  EXPECT_TRUE(planned);
  // Jobs of a reservation are planned too, on its nodes: job 14 for when
  // maint begins on gpu02 (job 10 ends before), job 16 of team-ml, which
  // job 12 fills, for when 12 ends on gpu01 (not on gpu02, free now).
  auto planned_at = [&](const Plan& plan, core::JobId id) -> const PlannedStart* {
    for (const PlannedStart& s : plan.planned) {
      if (s.job_id == id) return &s;
    }
    return nullptr;
  };
  const PlannedStart* maint = planned_at(p, 14);
  ASSERT_NE(maint, nullptr);
  EXPECT_EQ(maint->start, later.start);
  EXPECT_EQ(maint->alloc[0].node, "gpu02");
  h.AddJob(MakeJob(16).Partition("train").Gpus(8).TimeLimit(600).Reservation("team-ml"));
  for (core::Job& j : h.jobs) {
    if (j.id == 12) j.req.time_limit_s = j.time_limit_s = 900;
  }
  snap = h.Snap();
  snap.reservations = {&now_r, &later};
  p = Schedule(snap);
  EXPECT_EQ(NodesOf(p, 12), "gpu01");
  EXPECT_EQ(Outcome(p, 16), "Priority");  // behind job 11 in train
  const PlannedStart* team = planned_at(p, 16);
  ASSERT_NE(team, nullptr);
  EXPECT_EQ(team->start, h.now + 900);
  EXPECT_EQ(team->alloc[0].node, "gpu01");
  // FLEX: the reservation's jobs may also use other nodes.
  Harness f = OracleCluster();
  core::Reservation flex = now_r;
  flex.flags = core::kResvFlex;
  f.AddJob(MakeJob(20).Partition("train").Gpus(8).Reservation("team-ml"));
  f.AddJob(MakeJob(21).Partition("train").Gpus(8).Reservation("team-ml"));
  Snapshot fs = f.Snap();
  fs.reservations = {&flex};
  Plan q = Schedule(fs);
  EXPECT_EQ(NodesOf(q, 20), "gpu01");
  EXPECT_EQ(NodesOf(q, 21), "gpu02");
  fs.reservations = {&now_r};
  EXPECT_EQ(Outcome(Schedule(fs), 21), "Resources");
}

// Preemption (PreemptType=preempt/partition_prio): a job of a higher
// PriorityTier that waits for resources has jobs of lower tiers stopped,
// the most recently started first, and no more than it needs.
TEST(Schedule, PreemptionByPartitionTier) {
  auto make = [](core::PreemptMode mode) {
    Harness h = OracleCluster();
    h.cfg.preempt_type = config::PreemptType::kPartitionPrio;
    h.cfg.preempt_mode = mode;
    for (auto& part : h.cfg.partitions) {
      if (part.name == "train") part.priority_tier = 2;
    }
    // short's jobs hold every GPU: 4 GPUs each, two per node.
    core::JobId id = 1;
    for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04"}) {
      for (int k = 0; k < 2; ++k) {
        h.Running(MakeJob(id).Partition("short").Gpus(4).Nodelist(n), 3600);
        ++id;
      }
    }
    for (auto& j : h.jobs) j.start_time = h.now - 1000 + 10 * static_cast<int64_t>(j.id);
    return h;
  };
  Harness h = make(core::PreemptMode::kRequeue);
  h.AddJob(MakeJob(20).Partition("train").Gpus(4).TimeLimit(600));
  h.AddJob(MakeJob(21).Partition("short").Gpus(4).TimeLimit(600));  // same tier: preempts none
  Plan p = h.Run();
  ASSERT_EQ(p.preemptions.size(), 1u);
  EXPECT_EQ(p.preemptions[0].victim, 8u);  // the last started, on gpu04
  EXPECT_EQ(p.preemptions[0].by, 20u);
  EXPECT_EQ(Outcome(p, 20), "Resources");
  // A whole node: both jobs of one node, the newest node's pair.
  Harness whole = make(core::PreemptMode::kCancel);
  whole.AddJob(MakeJob(30).Partition("train").Gpus(8));
  Plan q = whole.Run();
  ASSERT_EQ(q.preemptions.size(), 2u);
  std::set<core::JobId> victims = {q.preemptions[0].victim, q.preemptions[1].victim};
  EXPECT_EQ(victims, (std::set<core::JobId>{7, 8}));
  // Jobs already stopping count as coming free: none more is chosen.
  Snapshot snap = whole.Snap();
  snap.preempting = {7, 8};
  EXPECT_TRUE(Schedule(snap).preemptions.empty());
  // PreemptMode=OFF (here the cluster's), or jobs younger than
  // PreemptExemptTime, are never preempted.
  Harness off = make(core::PreemptMode::kOff);
  off.AddJob(MakeJob(40).Partition("train").Gpus(4));
  EXPECT_TRUE(off.Run().preemptions.empty());
  Harness young = make(core::PreemptMode::kCancel);
  young.cfg.preempt_exempt_time_s = 985;  // only job 1 (started 990 s ago) has run that long
  young.AddJob(MakeJob(50).Partition("train").Gpus(4));
  Plan r = young.Run();
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].victim, 1u);
  // Without preempt/partition_prio nothing is.
  Harness none = make(core::PreemptMode::kCancel);
  none.cfg.preempt_type = config::PreemptType::kNone;
  none.AddJob(MakeJob(60).Partition("train").Gpus(4));
  EXPECT_TRUE(none.Run().preemptions.empty());
}

// PreemptType=preempt/qos: a job preempts only jobs whose QOS its QOS
// names in Preempt, whatever their partition; the lowest QOS priority
// first; a QOS's PreemptMode and PreemptExemptTime come before the
// cluster's.
TEST(Schedule, PreemptionByQos) {
  core::AccountTable accounts;
  auto qos = [&](const char* name, int64_t priority, std::vector<std::string> preempt) {
    core::QosSettings set;
    set.priority = priority;
    set.preempt = std::move(preempt);
    accounts.AddQos({name}, set);
  };
  qos("scavenger", 1, {});
  qos("low", 5, {});
  qos("high", 100, {"scavenger", "low"});
  qos("mid", 50, {"scavenger"});
  auto make = [&](const std::vector<const char*>& qos_of_running) {
    Harness h = OracleCluster();
    h.cfg.preempt_type = config::PreemptType::kQos;
    h.cfg.preempt_mode = core::PreemptMode::kCancel;
    // Jobs 1.. hold gpu01's 8 GPUs, 4 each (both partitions have gpu01).
    core::JobId id = 1;
    for (const char* q : qos_of_running) {
      h.Running(MakeJob(id).Partition(id % 2 ? "short" : "train").Qos(q).Gpus(4).Nodelist("gpu01"),
                3600);
      h.jobs.back().start_time = h.now - 1000 + 10 * static_cast<int64_t>(id);
      ++id;
    }
    for (const char* n : {"gpu02", "gpu03", "gpu04"}) {
      h.Running(MakeJob(id).Partition("train").Qos("normal").Gpus(8).Nodelist(n), 3600);
      ++id;
    }
    return h;
  };
  auto victims = [&](Harness& h) {
    Snapshot snap = h.Snap();
    snap.accounts = &accounts;
    std::vector<core::JobId> out;
    for (const Preemption& p : Schedule(snap).preemptions) out.push_back(p.victim);
    return out;
  };
  // high may preempt low and scavenger: the scavenger job goes, though
  // the low one started later; normal's jobs are never touched.
  Harness h = make({"low", "scavenger"});
  h.AddJob(MakeJob(20).Partition("train").Qos("high").Gpus(4));
  EXPECT_EQ(victims(h), std::vector<core::JobId>{2});
  // mid may preempt scavenger only: with only low jobs there, nothing.
  Harness m = make({"low", "low"});
  m.AddJob(MakeJob(21).Partition("train").Qos("mid").Gpus(4));
  EXPECT_TRUE(victims(m).empty());
  // A QOS without a Preempt list (normal) preempts nothing.
  Harness n = make({"scavenger", "scavenger"});
  n.AddJob(MakeJob(22).Partition("short").Gpus(8));
  EXPECT_TRUE(victims(n).empty());
  // The same partition is no obstacle: two scavenger jobs for 8 GPUs.
  Harness both = make({"scavenger", "scavenger"});
  both.AddJob(MakeJob(23).Partition("short").Qos("high").Gpus(8));
  std::vector<core::JobId> v = victims(both);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<core::JobId>{1, 2}));
  // scavenger's own PreemptMode=REQUEUE overrides the cluster's CANCEL ...
  core::QosSettings off;
  off.preempt_mode = core::PreemptMode::kRequeue;
  accounts.ModifyQos({"scavenger"}, off);
  core::Job running = MakeJob(99).Qos("scavenger").Partition("short").Build();
  EXPECT_EQ(PreemptTermsOf(running, both.cfg, &accounts).mode, core::PreemptMode::kRequeue);
  // ... and its PreemptExemptTime the cluster's: jobs 1 and 2 ran 990 and
  // 980 s, so an exempt time of 985 s spares job 2.
  core::QosSettings exempt;
  exempt.preempt_exempt_time_s = 985;
  accounts.ModifyQos({"scavenger"}, exempt);
  Harness young = make({"scavenger", "scavenger"});
  young.AddJob(MakeJob(24).Partition("train").Qos("high").Gpus(4));
  EXPECT_EQ(victims(young), std::vector<core::JobId>{1});
  // Under preempt/partition_prio the QOS lists mean nothing.
  young.cfg.preempt_type = config::PreemptType::kPartitionPrio;
  EXPECT_TRUE(victims(young).empty());
}

TEST(Backfill, OnTheReservedNodesOnlyWhatEndsBeforeIt) {
  Harness h;
  h.cfg.def_mem_per_cpu_mb = 100;
  for (const char* name : {"n1", "n2"}) h.AddNode(MakeNode(name).Cpus(8).Mem(8000));
  h.AddPartition(MakePartition("p"));
  h.Running(MakeJob(1).Partition("p").Cpus(8).Nodelist("n1"), 100);
  h.Running(MakeJob(2).Partition("p").Cpus(4).Nodelist("n2"), 1000);
  h.AddJob(MakeJob(10).Partition("p").Nodes(2).Cpus(8).TimeLimit(60));  // both at t+1000
  h.AddJob(MakeJob(11).Partition("p").Cpus(4).TimeLimit(2000));  // would hold n2 past it
  h.AddJob(MakeJob(12).Partition("p").Cpus(4).TimeLimit(500));   // done by then
  Plan p = h.Run();
  EXPECT_EQ(Outcome(p, 10), "Resources");
  EXPECT_EQ(Outcome(p, 11), "Priority");
  EXPECT_EQ(NodesOf(p, 12), "n2");
}

TEST(Backfill, BuiltinKeepsStrictPriorityOrder) {
  Harness h = TrainGpusBusy();
  h.cfg.backfill = false;
  h.AddJob(MakeJob(10).Partition("train").Gpus(8).TimeLimit(1000));
  h.AddJob(MakeJob(11).Partition("train").Cpus(4).TimeLimit(50));
  Plan p = h.Run();
  EXPECT_EQ(Outcome(p, 10), "Resources");
  EXPECT_EQ(Outcome(p, 11), "Priority");
  EXPECT_TRUE(p.planned.empty());
}


TEST(Schedule, QosLimitsHoldTheJobNotItsPartition) {
  Harness h = OracleCluster();
  core::AccountTable accounts;
  core::QosSettings set;
  set.max_jobs_per_user = 1;
  set.grp_tres = core::TresLimits{-1, -1, -1, 3};
  set.max_wall_s = 3600;
  accounts.AddQos({"tq"}, set);
  // Job 1 runs already under tq for user 1000.
  h.AddJob(MakeJob(1).Partition("short").Qos("tq").Uid(1000).Gpus(2).Build());
  h.jobs.back().state = core::JobState::kRunning;
  h.jobs.back().alloc = {core::NodeAlloc{"gpu01", 1, 1000, 1, {0, 1}, {}}};
  h.ends = {{1, 5000}};
  h.AddJob(MakeJob(2).Partition("short").Qos("tq").Uid(1000).TimeLimit(600));  // user at its limit
  h.AddJob(MakeJob(3).Partition("short").Qos("tq").Uid(1001).Gpus(2).TimeLimit(600));  // group GPUs: 2 + 2 > 3
  h.AddJob(MakeJob(4).Partition("short").Qos("tq").Uid(1002).TimeLimit(7200));  // MaxWall
  h.AddJob(MakeJob(5).Partition("short").Qos("tq").Uid(1001).Gpus(1).TimeLimit(600));  // fits every limit
  h.AddJob(MakeJob(6).Partition("short").Qos("tq").Uid(1003).Gpus(1).TimeLimit(600));  // the group is full now
  h.AddJob(MakeJob(7).Partition("short").Uid(1000));                     // normal: no limits
  Snapshot snap = h.Snap();
  snap.accounts = &accounts;
  Plan plan = Schedule(snap);
  EXPECT_EQ(Outcome(plan, 2), "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(Outcome(plan, 3), "QOSGrpGRES");
  EXPECT_EQ(Outcome(plan, 4), "QOSMaxWallDurationPerJobLimit");
  EXPECT_EQ(Outcome(plan, 5), "started");
  EXPECT_EQ(Outcome(plan, 6), "QOSGrpGRES");
  EXPECT_EQ(Outcome(plan, 7), "started");  // nobody's limit holds back the partition
  for (const PendingDecision& d : plan.pending) {
    if (d.job_id == 2) {
      EXPECT_EQ(d.stage, "limits");  // the job stage that held it back
      EXPECT_EQ(d.detail, "MaxJobsPerUser=1 in QOS tq; u1000's running jobs hold 1 and this job needs 1 more");
    } else if (d.job_id == 6) {
      EXPECT_EQ(d.detail, "GrpTRES gres/gpu=3 in QOS tq; its running jobs hold 3 and this job needs 1 more");
    }
  }
  // Without the table (no sacctmgr records), no limit applies.
  snap.accounts = nullptr;
  plan = Schedule(snap);
  EXPECT_EQ(Outcome(plan, 2), "started");
}


TEST(Schedule, AssociationLimitsHoldTheUserAndTheAccountTree) {
  Harness h = OracleCluster();
  core::AccountTable accounts;
  core::AccountSettings lab;
  lab.limits.grp_tres = core::TresLimits{-1, -1, -1, 4};
  lab.limits.max_jobs = 2;
  accounts.AddAccounts({"lab"}, lab, "c");
  core::AccountSettings team;
  team.parent = "lab";
  accounts.AddAccounts({"team"}, team, "c");
  core::UserSettings join;
  join.accounts = {"team"};
  accounts.AddUsers({"u1000", "u1001"}, join, "c");
  core::UserSettings own;
  own.limits.max_jobs = 3;  // the user's own beats the account's 2
  accounts.ModifyUsers({"u1001"}, {}, own, "c");
  auto job = [&](core::JobId id, uint32_t uid, int64_t gpus) {
    core::Job j = MakeJob(id).Partition("short").Uid(uid).TimeLimit(600).Gpus(gpus);
    j.req.account = "team";
    h.AddJob(j);
  };
  job(1, 1000, 1);
  job(2, 1000, 1);
  job(3, 1000, 0);  // u1000 runs 2 already: the account's MaxJobs, inherited
  job(4, 1001, 1);
  job(5, 1001, 2);  // lab's GPUs: 3 held + 2 > 4, counted over its sub-account
  job(6, 1001, 0);
  Snapshot snap = h.Snap();
  snap.accounts = &accounts;
  Plan plan = Schedule(snap);
  EXPECT_EQ(Outcome(plan, 1), "started");
  EXPECT_EQ(Outcome(plan, 2), "started");
  EXPECT_EQ(Outcome(plan, 3), "AssocMaxJobsLimit");
  EXPECT_EQ(Outcome(plan, 4), "started");
  EXPECT_EQ(Outcome(plan, 5), "AssocGrpGRES");
  EXPECT_EQ(Outcome(plan, 6), "started");
  for (const PendingDecision& d : plan.pending) {
    if (d.job_id == 5) {
      EXPECT_EQ(d.detail, "GrpTRES gres/gpu=4 in account lab; its running jobs hold 3 and this job needs 2 more");
    }
  }
}

}  // namespace
}  // namespace muster::sched

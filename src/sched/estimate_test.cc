// EstimateStarts (squeue --start) and ExplainResources (the why-pending
// line) over small clusters with running jobs of known ends. Times print
// as "t+<seconds after now>" so the expected lines read as the setup does.
#include "sched/estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sched/schedule_harness.h"

namespace muster::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakePartition;

// A harness whose running jobs have known ends (Harness::Running).
struct Sim : Harness {
  std::vector<StartEstimate> Estimate(int64_t horizon_s = 100000, size_t max_jobs = 100) {
    Snapshot s = Snap();
    auto running = RunningJobs();
    return EstimateStarts(s, running, horizon_s, max_jobs);
  }
  std::string Explain(const testing::JobBuilder& j) {
    core::Job job = j;
    Snapshot s = Snap();
    auto running = RunningJobs();
    const int64_t t0 = now;
    return ExplainResources(job, s, running,
                            [t0](int64_t t) { return "t+" + std::to_string(t - t0); });
  }
};

// "t+100 gpu01" per job (offset from now and the nodes), "-" for none.
std::vector<std::string> Starts(const std::vector<StartEstimate>& e, int64_t now) {
  std::vector<std::string> out;
  for (const auto& s : e) {
    if (s.start == 0) {
      out.push_back("-");
      continue;
    }
    std::string line = "t+" + std::to_string(s.start - now);
    for (size_t k = 0; k < s.nodes.size(); ++k) line += (k ? "," : " ") + s.nodes[k];
    out.push_back(line);
  }
  return out;
}

// Two nodes with 8 GPUs each in partition "p".
Sim TwoGpuNodes() {
  Sim h;
  h.cfg.def_mem_per_cpu_mb = 1000;
  for (const char* name : {"gpu01", "gpu02"}) {
    h.AddNode(MakeNode(name).Cpus(32).Mem(64000).Gpus("h100", 8));
  }
  h.AddPartition(MakePartition("p"));
  return h;
}

TEST(EstimateStarts, JobsStartAsRunningJobsEnd) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(8).Nodelist("gpu01"), 100);
  h.Running(MakeJob(2).Gpus(8).Nodelist("gpu02"), 200);
  h.AddJob(MakeJob(3).Gpus(8).TimeLimit(1000));
  h.AddJob(MakeJob(4).Gpus(8).TimeLimit(1000));
  h.AddJob(MakeJob(5).Gpus(16));  // no node has 16: BadConstraints
  h.AddJob(MakeJob(6).Gpus(1).Held());
  h.AddJob(MakeJob(7).Gpus(1).Begin(h.now + 50));  // waits for its time, not for resources
  auto e = h.Estimate();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].job_id, 3u);
  EXPECT_EQ(Starts(e, h.now),
            (std::vector<std::string>{"t+100 gpu01", "t+200 gpu02", "-", "-", "-"}));
}

TEST(EstimateStarts, SimulatedJobsRunForTheirTimeLimit) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(8).Nodelist("gpu01"), 100);
  h.Running(MakeJob(2).Gpus(8).Nodelist("gpu02"), 500);
  h.AddJob(MakeJob(3).Gpus(8).TimeLimit(50));
  h.AddJob(MakeJob(4).Gpus(8).TimeLimit(50));           // behind 3 on gpu01, before 2 ends
  h.AddJob(MakeJob(5).Nodes(2).Gpus(8).TimeLimit(50));  // needs both nodes
  EXPECT_EQ(Starts(h.Estimate(), h.now),
            (std::vector<std::string>{"t+100 gpu01", "t+150 gpu01", "t+500 gpu01,gpu02"}));
}

TEST(EstimateStarts, NowWhenItFitsAndOrderIsKept) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(8).Nodelist("gpu01"), 100);
  h.AddJob(MakeJob(2).Gpus(8).Nodelist("gpu01").TimeLimit(60));
  h.AddJob(MakeJob(3).Gpus(4).TimeLimit(60));       // Priority behind 2: no backfill
  h.AddJob(MakeJob(4).Gpus(4).Partition("other"));  // unknown partition
  EXPECT_EQ(Starts(h.Estimate(), h.now),
            (std::vector<std::string>{"t+100 gpu01", "t+100 gpu02", "-"}));

  Sim g = TwoGpuNodes();
  g.AddJob(MakeJob(1).Gpus(8).TimeLimit(60));
  EXPECT_EQ(Starts(g.Estimate(), g.now), (std::vector<std::string>{"t+0 gpu01"}));
}

TEST(EstimateStarts, HorizonAndMaxJobsBoundTheWork) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(8).Nodelist("gpu01"), 100);
  h.Running(MakeJob(2).Gpus(8).Nodelist("gpu02"), 1000);
  h.AddJob(MakeJob(3).Gpus(8).TimeLimit(5000));
  h.AddJob(MakeJob(4).Gpus(8).TimeLimit(5000));
  EXPECT_EQ(Starts(h.Estimate(500), h.now), (std::vector<std::string>{"t+100 gpu01", "-"}));
  EXPECT_EQ(Starts(h.Estimate(100000, 1), h.now), (std::vector<std::string>{"t+100 gpu01", "-"}));
  // UNLIMITED pending jobs never end in the simulation.
  Sim u = TwoGpuNodes();
  u.Running(MakeJob(1).Gpus(8).Nodes(2), 100);
  u.AddJob(MakeJob(2).Gpus(8).Nodes(2));  // time_limit_s -1
  u.AddJob(MakeJob(3).Gpus(8));
  EXPECT_EQ(Starts(u.Estimate(), u.now), (std::vector<std::string>{"t+100 gpu01,gpu02", "-"}));
}

TEST(EstimateStarts, SameInputSameEstimates) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(4).Nodelist("gpu01"), 300);
  h.Running(MakeJob(2).Gpus(4).Nodelist("gpu01"), 100);
  h.Running(MakeJob(3).Gpus(8).Nodelist("gpu02"), 100);
  for (core::JobId id = 4; id < 10; ++id) h.AddJob(MakeJob(id).Gpus(4).TimeLimit(100 * id));
  auto a = Starts(h.Estimate(), h.now);
  EXPECT_EQ(a, Starts(h.Estimate(), h.now));
  // Inputs untouched: the live nodes are still as the running jobs left them.
  EXPECT_EQ(h.Node("gpu02")->alloc_cpus, 1);
  EXPECT_EQ(a, (std::vector<std::string>{"t+100 gpu01", "t+100 gpu02", "t+100 gpu02", "t+300 gpu01",
                                         "t+500 gpu01", "t+600 gpu02"}));
}

Sim Oracle() {
  Sim s;
  static_cast<Harness&>(s) = OracleCluster();
  return s;
}

// The oracle cluster with six jobs running in train (1-4 GPUs, 1-8 CPUs,
// ending 1-20 minutes from now), drawn by `pick`; `*id` is the next job id.
template <typename Pick>
Sim BusyOracle(Pick& pick, core::JobId* id) {
  Sim h = Oracle();
  for (int k = 0; k < 6; ++k) {
    h.Running(MakeJob((*id)++).Partition("train").Gpus(pick(1, 4)).Cpus(pick(1, 8)),
              pick(1, 20) * 60);
  }
  return h;
}

// Seeded random queues on the oracle cluster: every estimate lies in
// [now, now + horizon], names nodes of the job's partition, and a job never
// starts before an earlier job of its partition (no backfill).
TEST(EstimateStarts, PropertiesOnRandomQueues) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 20; ++round) {
    core::JobId id = 1;
    Sim h = BusyOracle(pick, &id);
    std::vector<core::JobId> queue;
    for (int k = 0; k < 40; ++k) {
      auto j = MakeJob(id).Partition(pick(0, 1) ? "train" : "short").TimeLimit(pick(1, 30) * 60);
      if (pick(0, 2) == 0) j.Gpus(pick(1, 8));
      if (pick(0, 3) == 0) j.Nodes(pick(1, 3));
      j.Cpus(pick(1, 32));
      h.AddJob(j);
      queue.push_back(id++);
    }
    const int64_t horizon = 3600;
    auto e = h.Estimate(horizon, 30);
    ASSERT_EQ(e.size(), queue.size());
    std::map<std::string, int64_t> latest;  // partition -> latest estimate so far
    for (size_t k = 0; k < e.size(); ++k) {
      EXPECT_EQ(e[k].job_id, queue[k]);
      const core::Job* job = nullptr;
      for (const auto& j : h.jobs) {
        if (j.id == e[k].job_id) job = &j;
      }
      ASSERT_NE(job, nullptr);
      if (e[k].start == 0) continue;  // did not block, or later ones get none either
      EXPECT_GE(e[k].start, h.now);
      EXPECT_LE(e[k].start, h.now + horizon);
      EXPECT_FALSE(e[k].nodes.empty());
      const core::Partition* part = h.cfg.FindPartition(job->partition);
      for (const auto& n : e[k].nodes) {
        EXPECT_NE(std::find(part->nodes.begin(), part->nodes.end(), n), part->nodes.end());
      }
      EXPECT_GE(e[k].start, latest[job->partition]) << "round " << round << " job " << job->id;
      latest[job->partition] = e[k].start;
    }
    EXPECT_EQ(Starts(e, h.now), Starts(h.Estimate(horizon, 30), h.now));
  }
}

// Backfill never delays the first job that waits for resources: after a
// pass with backfill its estimated start is no later than after the same
// pass in strict order. (One partition: jobs of another partition over
// the same nodes are not held back for it, with or without backfill.)
TEST(Backfill, NeverDelaysTheFirstBlockedJob) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0, backfilled = 0;
  for (int round = 0; round < 40; ++round) {
    core::JobId id = 1;
    Sim base = BusyOracle(pick, &id);
    for (int k = 0; k < 20; ++k) {
      auto j = MakeJob(id++).Partition("train").TimeLimit(pick(1, 30) * 60).Cpus(pick(1, 16));
      if (pick(0, 1) == 0) j.Gpus(pick(1, 8));
      base.AddJob(j);
    }
    core::JobId blocked = 0;
    std::map<bool, int64_t> start;
    std::map<bool, size_t> starts;
    for (bool backfill : {false, true}) {
      Sim h = base;
      h.cfg.backfill = backfill;
      Plan p = h.RunAndApply();
      starts[backfill] = p.starts.size();
      for (const auto& st : p.starts) {
        for (const auto& j : h.jobs) {
          if (j.id == st.job_id) h.ends.emplace_back(j.id, h.now + j.time_limit_s);
        }
      }
      if (!backfill) {
        for (const auto& d : p.pending) {
          if (d.reason == core::PendingReason::kResources) {
            blocked = d.job_id;
            break;
          }
        }
      }
      for (const auto& e : h.Estimate(100000, 1000)) {
        if (e.job_id == blocked) start[backfill] = e.start;
      }
    }
    if (blocked == 0 || start[false] == 0) continue;
    ++checked;
    if (starts[true] > starts[false]) ++backfilled;
    EXPECT_GT(start[true], 0) << "round " << round;
    EXPECT_LE(start[true], start[false]) << "round " << round << " job " << blocked;
  }
  // The rounds did exercise it.
  EXPECT_GE(checked, 20);
  EXPECT_GE(backfilled, 5);
}

TEST(ExplainResources, GpusOnOneNode) {
  Sim h = Oracle();
  h.Node("gpu04")->drain = true;
  h.Running(MakeJob(1).Partition("train").Gpus(8).Nodelist("gpu01"), 500);
  h.Running(MakeJob(2).Partition("train").Gpus(8).Nodelist("gpu02"), 200);
  h.Running(MakeJob(3).Partition("train").Gpus(8).Nodelist("gpu03"), 300);
  EXPECT_EQ(h.Explain(MakeJob(9).Partition("train").Gpus(8, "h100")),
            "waits for 8 GPUs (h100) on one node; 3 nodes have 8, all busy until about t+200");

  Sim p = Oracle();
  p.Node("gpu04")->drain = true;
  p.Running(MakeJob(1).Partition("train").Gpus(4).Nodelist("gpu01"), 500);
  p.Running(MakeJob(2).Partition("train").Gpus(8).Nodelist("gpu02"), 200);
  p.Running(MakeJob(3).Partition("train").Gpus(8).Nodelist("gpu03"), 300);
  EXPECT_EQ(p.Explain(MakeJob(9).Partition("train").Gpus(8)),
            "waits for 8 GPUs on one node; the largest free share is 4 GPUs on gpu01; "
            "gpu02 frees up at about t+200");
}

TEST(ExplainResources, CpusOnOneNode) {
  Sim h;
  h.cfg.def_mem_per_cpu_mb = 1000;
  for (const char* name : {"gpu02", "cpu01", "cpu02"}) {
    h.AddNode(MakeNode(name).Cpus(64).Mem(256000));
  }
  h.AddPartition(MakePartition("p"));
  h.Running(MakeJob(1).Cpus(52).Nodelist("gpu02"), 900);
  h.Running(MakeJob(2).Cpus(64).Nodelist("cpu01"), 300);
  h.Running(MakeJob(3).Cpus(64).Nodelist("cpu02"), 300);
  EXPECT_EQ(h.Explain(MakeJob(9).Cpus(64)),
            "waits for 64 CPUs on one node; the largest free share is 12 CPUs on gpu02; "
            "cpu[01-02] free up at about t+300");
}

TEST(ExplainResources, MemoryOnOneNode) {
  Sim h;
  for (const char* name : {"n1", "n2"}) h.AddNode(MakeNode(name).Cpus(32).Mem(64000));
  h.AddPartition(MakePartition("p"));
  h.Running(MakeJob(1).Mem(40000).Nodelist("n1"), 100);
  h.Running(MakeJob(2).Mem(50000).Nodelist("n2"), 400);
  EXPECT_EQ(h.Explain(MakeJob(9).Mem(40000)),
            "waits for 40000M memory on one node; the largest free share is 24000M on n1; "
            "n1 frees up at about t+100");
}

TEST(ExplainResources, NoNodeHasItAllAtOnce) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(8).Nodelist("gpu01"), 100);   // GPUs used, CPUs free
  h.Running(MakeJob(2).Cpus(32).Nodelist("gpu02"), 200);  // CPUs used, GPUs free
  EXPECT_EQ(h.Explain(MakeJob(9).Gpus(1).Cpus(4)),
            "waits for 4 CPUs, 4000M memory and 1 GPU together on one node; no node has all of "
            "it free at once; gpu01 frees up at about t+100");
}

TEST(ExplainResources, ExclusiveDownAndFree) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(1).Nodelist("gpu01"), 100);
  h.Running(MakeJob(2).Gpus(1).Nodelist("gpu02"), 300);
  EXPECT_EQ(h.Explain(MakeJob(9).Exclusive()),
            "waits for an idle node; none of the 2 nodes that could take it is idle; gpu01 is "
            "idle at about t+100");

  Sim d = TwoGpuNodes();
  d.Node("gpu01")->drain = true;
  d.Node("gpu02")->down = true;
  EXPECT_EQ(d.Explain(MakeJob(9).Gpus(8)),
            "waits for 8 GPUs on one node; gpu[01-02] have that but are down or drained");

  Sim f = TwoGpuNodes();
  EXPECT_EQ(f.Explain(MakeJob(9).Gpus(8)),
            "fits on gpu[01-02] now; the next scheduling pass starts it");
  // A node busy with a job nobody listed as running: no time is given.
  Sim u = TwoGpuNodes();
  for (auto& n : u.nodes) n.gpu_used.assign(8, true), n.running_jobs = 1;
  EXPECT_EQ(u.Explain(MakeJob(9).Gpus(8)),
            "waits for 8 GPUs on one node; 2 nodes have 8, all busy");
}

TEST(ExplainResources, SeveralNodes) {
  Sim h = TwoGpuNodes();
  h.Running(MakeJob(1).Gpus(6).Nodelist("gpu01"), 100);
  EXPECT_EQ(h.Explain(MakeJob(9).Nodes(2).Gpus(4)),
            "waits for 2 nodes with 4 GPUs each; 1 is free now, the next frees up at about t+100");

  Sim b = TwoGpuNodes();
  b.Running(MakeJob(1).Gpus(6).Nodelist("gpu01"), 100);
  b.Running(MakeJob(2).Gpus(6).Nodelist("gpu02"), 400);
  EXPECT_EQ(b.Explain(MakeJob(9).Nodes(2).Gpus(4)),
            "waits for 2 nodes with 4 GPUs each; none is free now, enough free up by about t+400");

  Sim d = TwoGpuNodes();
  d.Node("gpu02")->drain = true;
  EXPECT_EQ(d.Explain(MakeJob(9).Nodes(2).Cpus(8)),
            "waits for 2 nodes with 8 CPUs each; only 1 such node is up (gpu02 down or drained)");

  Sim s = TwoGpuNodes();
  s.Running(MakeJob(1).Cpus(24).Nodelist("gpu01"), 100);
  s.Running(MakeJob(2).Cpus(16).Nodelist("gpu02"), 200);
  EXPECT_EQ(s.Explain(MakeJob(9).Tasks(48)),
            "waits for 48 CPUs across nodes; 24 are free now, enough free up by about t+100");
  EXPECT_EQ(s.Explain(MakeJob(9).GpusPerJob(12)),
            "fits on gpu[01-02] now; the next scheduling pass starts it");
}

TEST(ExplainResources, CountsTasksPerNodeAsThePassDoes) {
  // -N1-3 -n4 --ntasks-per-node=2 over 3, 1 and 1 free CPUs: two tasks
  // fit only the first node, so 4 do not fit now (the pass places none);
  // a count of free CPUs capped at 2 a node (2 + 1 + 1) would say they do.
  Sim h;
  h.cfg.def_mem_per_cpu_mb = 100;
  for (const char* name : {"n1", "n2", "n3"}) h.AddNode(MakeNode(name).Cpus(8).Mem(8000));
  h.AddPartition(MakePartition("p"));
  h.Running(MakeJob(1).Cpus(5).Nodelist("n1"), 100);
  h.Running(MakeJob(2).Cpus(7).Nodelist("n2"), 200);
  h.Running(MakeJob(3).Cpus(7).Nodelist("n3"), 300);
  const auto job = MakeJob(9).Nodes(1, 3).Tasks(4).TasksPerNode(2).TimeLimit(60);
  EXPECT_EQ(h.Explain(job),
            "waits for 4 CPUs across nodes; 2 are free now, enough free up by about t+200");
  h.AddJob(job);
  EXPECT_EQ(StartOf(h.RunAndApply(), 9), nullptr);
  EXPECT_EQ(Starts(h.Estimate(), h.now), (std::vector<std::string>{"t+200 n1,n2"}));
}

TEST(ExplainResources, NeverFits) {
  Sim h = Oracle();
  EXPECT_EQ(h.Explain(MakeJob(9).Partition("short").Mem(512000)),
            "needs 512000M memory on one node; no node of partition short has that much");
  EXPECT_EQ(h.Explain(MakeJob(9).Partition("train").Gpus(16)),
            "needs 16 GPUs on one node; no node of partition train has that many");
  EXPECT_EQ(h.Explain(MakeJob(9).Partition("train").Gpus(1, "a100")),
            "needs 1 GPU (a100) on one node; no node of partition train has a100 GPUs");
  EXPECT_EQ(h.Explain(MakeJob(9).Partition("short").Cpus(64)),
            "needs 64 CPUs on one node; no node of partition short has that many");
  EXPECT_EQ(h.Explain(MakeJob(9).Partition("nosuch")), "partition nosuch does not exist");
}

}  // namespace
}  // namespace muster::sched

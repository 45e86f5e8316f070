// Test-only: runs scheduling passes over a testing::ClusterFixture and
// reads plans back (the plan-recording harness of STYLE.md "Tests").
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "testing/builders.h"

namespace muster::sched {

inline const StartDecision* StartOf(const Plan& p, core::JobId id) {
  for (const auto& s : p.starts) {
    if (s.job_id == id) return &s;
  }
  return nullptr;
}

// "started" when the job starts, else its reason name.
inline std::string Outcome(const Plan& p, core::JobId id) {
  if (StartOf(p, id)) return "started";
  for (const auto& d : p.pending) {
    if (d.job_id == id) return std::string(core::PendingReasonName(d.reason));
  }
  return "missing";
}

struct Harness : testing::ClusterFixture {
  int64_t now = 1000;
  // Running jobs with known ends (Running()): the snapshot's, for backfill
  // and estimates. Jobs started otherwise are not in it.
  std::vector<std::pair<core::JobId, int64_t>> ends;

  Snapshot Snap() {
    ResolvePartitions();
    Snapshot s;
    s.config = &cfg;
    s.now = now;
    for (const auto& n : nodes) s.nodes.push_back(&n);
    for (const auto& j : jobs) {
      if (j.state == core::JobState::kPending) s.pending.push_back(&j);
    }
    s.running = RunningJobs();
    return s;
  }
  std::vector<RunningJob> RunningJobs() const {
    std::vector<RunningJob> v;
    for (const auto& [id, end] : ends) {
      for (const auto& j : jobs) {
        if (j.id == id && j.state == core::JobState::kRunning) v.push_back(RunningJob{&j, end});
      }
    }
    return v;
  }
  Plan Run() { return Schedule(Snap()); }

  // Runs a pass and applies its starts to the nodes and jobs, as the
  // controller does.
  Plan RunAndApply() {
    Plan plan = Run();
    auto ptrs = NodePtrs();
    for (const auto& st : plan.starts) {
      util::Status s = ApplyStart(st, ptrs);
      EXPECT_TRUE(s.ok()) << s.message();
      for (auto& j : jobs) {
        if (j.id == st.job_id) {
          j.state = core::JobState::kRunning;
          j.alloc = st.alloc;
        }
      }
    }
    return plan;
  }
  // Starts `j` now on the nodes the scheduler picks (pin it with -w) and
  // records that it ends `runs_for` seconds from now. Add running jobs
  // before pending ones: every pending job of the harness is tried.
  void Running(const testing::JobBuilder& j, int64_t runs_for) {
    AddJob(j);
    const core::JobId id = j.Build().id;
    Plan p = RunAndApply();
    ASSERT_NE(StartOf(p, id), nullptr) << "job " << id << ": " << Outcome(p, id);
    ends.emplace_back(id, now + runs_for);
  }
  void Finish(core::JobId id) {
    for (auto& j : jobs) {
      if (j.id != id) continue;
      util::Status s = ReleaseJob(j, NodePtrs());
      EXPECT_TRUE(s.ok()) << s.message();
      j.state = core::JobState::kCompleted;
    }
  }
};

// The oracle's cluster (../shared/slurm-oracle): gpu[01-04] (32 CPUs,
// 64000 MB, 8 x h100, features h100,gpu), cpu[01-02] (32 CPUs, 64000 MB,
// feature cpu); partitions short (all nodes, default) and train (gpu
// nodes); DefMemPerCPU=1000, GresTypes=gpu.
inline Harness OracleCluster() {
  using testing::MakeNode;
  using testing::MakePartition;
  Harness h;
  h.cfg.def_mem_per_cpu_mb = 1000;
  h.cfg.gres_types = {"gpu"};
  for (int i = 1; i <= 4; ++i) {
    h.AddNode(MakeNode("gpu0" + std::to_string(i))
                  .Cpus(32)
                  .Mem(64000)
                  .Gpus("h100", 8)
                  .Features({"h100", "gpu"}));
  }
  for (int i = 1; i <= 2; ++i) {
    h.AddNode(MakeNode("cpu0" + std::to_string(i)).Cpus(32).Mem(64000).Features({"cpu"}));
  }
  h.AddPartition(MakePartition("short").Default());  // all nodes
  h.AddPartition(MakePartition("train").Nodes({"gpu01", "gpu02", "gpu03", "gpu04"}));
  h.ResolvePartitions();
  return h;
}

// "gpu01,gpu02" for a start (or "" when not started).
inline std::string NodesOf(const Plan& p, core::JobId id) {
  const StartDecision* s = StartOf(p, id);
  if (!s) return "";
  std::string out;
  for (const auto& a : s->alloc) out += (out.empty() ? "" : ",") + a.node;
  return out;
}

// "gpu01:0,1;gpu02:0" GPU indices per node.
inline std::string GpusOf(const Plan& p, core::JobId id) {
  const StartDecision* s = StartOf(p, id);
  if (!s) return "";
  std::string out;
  for (const auto& a : s->alloc) {
    if (!out.empty()) out += ";";
    out += a.node + ":";
    for (size_t k = 0; k < a.gpu_indices.size(); ++k) {
      out += (k ? "," : "") + std::to_string(a.gpu_indices[k]);
    }
  }
  return out;
}

}  // namespace muster::sched

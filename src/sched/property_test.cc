// Property tests over random clusters and queues (seeded std::mt19937, so a
// failure names its seed and repeats): whatever the input, a pass never
// over-allocates a node (CPUs, memory, GPU indices unique, in range and
// free), honours each job's request, gives every pending job exactly one
// decision, respects partition blocking, and is deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
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

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }

 private:
  std::mt19937 rng_;
};

const std::vector<std::string> kTypes = {"", "a100", "h100"};
const std::vector<std::string> kFeatures = {"a", "b", "c"};

Harness RandomCluster(Gen& g) {
  Harness h;
  h.cfg.def_mem_per_cpu_mb = g.Chance(0.3) ? 0 : 500;
  h.cfg.gres_types = {"gpu"};
  const int n_nodes = g.Int(1, 12);
  for (int i = 0; i < n_nodes; ++i) {
    auto b = MakeNode("n" + std::to_string(i))
                 .Cpus(g.Pick(std::vector<int>{1, 4, 8, 32}))
                 .Mem(g.Pick(std::vector<int64_t>{1000, 8000, 64000}))
                 .Weight(g.Int(1, 3));
    const int gpu_entries = g.Int(0, 2);
    for (int e = 0; e < gpu_entries; ++e) b.Gpus(g.Pick(kTypes), g.Int(1, 4));
    std::vector<std::string> f;
    for (const auto& x : kFeatures) {
      if (g.Chance(0.5)) f.push_back(x);
    }
    b.Features(f);
    core::Node n = b;
    n.drain = g.Chance(0.1);
    n.down = g.Chance(0.1);
    n.registered = !g.Chance(0.1);
    if (g.Chance(0.05)) n.config.initial_state = core::NodeInitialState::kFuture;
    // Pre-existing use, always consistent with the hardware.
    if (g.Chance(0.5)) {
      n.alloc_cpus = g.Int(0, n.config.cpus);
      n.alloc_mem_mb = g.Int(0, static_cast<int>(n.config.real_memory_mb));
      for (size_t k = 0; k < n.gpu_used.size(); ++k) n.gpu_used[k] = g.Chance(0.4);
      n.running_jobs = 1;
    }
    h.AddNode(n);
  }
  const int n_parts = g.Int(1, 3);
  for (int p = 0; p < n_parts; ++p) {
    std::vector<std::string> members;
    for (int i = 0; i < n_nodes; ++i) {
      if (g.Chance(0.6)) members.push_back("n" + std::to_string(i));
    }
    if (members.empty()) members.push_back("n0");
    auto part = MakePartition("p" + std::to_string(p)).Nodes(members);
    if (g.Chance(0.1)) {
      part.State(g.Pick(std::vector<core::PartitionState>{core::PartitionState::kDown,
                                                          core::PartitionState::kDrain,
                                                          core::PartitionState::kInactive}));
    }
    h.AddPartition(part);
  }
  const int n_jobs = g.Int(1, 40);
  for (int j = 1; j <= n_jobs; ++j) {
    auto b =
        MakeJob(static_cast<core::JobId>(j)).Partition("p" + std::to_string(g.Int(0, n_parts - 1)));
    if (g.Chance(0.05)) b.Held();
    if (g.Chance(0.05)) b.Begin(h.now + 10);
    if (g.Chance(0.4)) b.Cpus(g.Int(1, 8));
    if (g.Chance(0.3)) b.Nodes(g.Int(1, 3));
    if (g.Chance(0.3)) b.Tasks(g.Int(1, 40));
    if (g.Chance(0.15)) b.TasksPerNode(g.Int(1, 3));
    switch (g.Int(0, 4)) {
      case 0:
        b.Mem(g.Int(1, 16000));
        break;
      case 1:
        b.MemPerCpu(g.Int(1, 2000));
        break;
      case 2:
        if (g.Chance(0.2)) b.MemWholeNode();
        break;
      default:
        break;
    }
    if (g.Chance(0.4))
      b.Gpus(g.Int(1, 4), g.Pick(kTypes));
    else if (g.Chance(0.15))
      b.GpusPerJob(g.Int(1, 8), g.Pick(kTypes));
    if (g.Chance(0.1)) b.Exclusive();
    if (g.Chance(0.2)) {
      // A feature, two of them, a matching OR or a count (man sbatch -C).
      switch (g.Int(0, 3)) {
        case 0:
          b.Constraint(g.Pick(kFeatures));
          break;
        case 1:
          b.Constraint(g.Pick(kFeatures) + "&" + g.Pick(kFeatures));
          break;
        case 2:
          b.Constraint("[" + g.Pick(kFeatures) + "|" + g.Pick(kFeatures) + "]");
          break;
        default:
          b.Constraint(g.Pick(kFeatures) + "*" + std::to_string(g.Int(1, 2)));
          break;
      }
    }
    if (g.Chance(0.1)) b.Nodelist("n" + std::to_string(g.Int(0, n_nodes - 1)));
    if (g.Chance(0.1)) b.Exclude("n" + std::to_string(g.Int(0, n_nodes - 1)));
    h.AddJob(b);
  }
  return h;
}

bool Usable(const core::Node& n) {
  return n.registered && !n.down && !n.drain &&
         n.config.initial_state != core::NodeInitialState::kFuture;
}

void CheckPlan(Harness& h, const Plan& plan, uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Exactly one decision per pending job, and nothing else.
  std::map<core::JobId, int> seen;
  for (const auto& s : plan.starts) ++seen[s.job_id];
  for (const auto& d : plan.pending) {
    ++seen[d.job_id];
    EXPECT_NE(d.reason, core::PendingReason::kNone);
  }
  ASSERT_EQ(seen.size(), h.jobs.size());
  for (const auto& j : h.jobs) EXPECT_EQ(seen[j.id], 1) << "job " << j.id;

  std::map<std::string, core::Node*> by_name;
  for (auto& n : h.nodes) by_name[n.config.name] = &n;
  std::map<core::JobId, const core::Job*> jobs;
  for (const auto& j : h.jobs) jobs[j.id] = &j;

  // Apply every start on top of the live use; nothing may overflow.
  std::map<std::string, int> cpus;
  std::map<std::string, int64_t> mem;
  std::map<std::string, std::set<int>> gpus;
  for (const auto& n : h.nodes) {
    cpus[n.config.name] = n.alloc_cpus;
    mem[n.config.name] = n.alloc_mem_mb;
    for (size_t k = 0; k < n.gpu_used.size(); ++k) {
      if (n.gpu_used[k]) gpus[n.config.name].insert(static_cast<int>(k));
    }
  }
  for (const auto& s : plan.starts) {
    const core::Job& job = *jobs.at(s.job_id);
    auto r = MakeResourceRequest(job.req, h.cfg.def_mem_per_cpu_mb);
    ASSERT_TRUE(r.ok());
    const core::Partition* part = h.cfg.FindPartition(job.partition);
    ASSERT_NE(part, nullptr);
    EXPECT_EQ(s.partition, part->name);
    EXPECT_GE(static_cast<int>(s.alloc.size()), r->min_nodes) << "job " << job.id;
    EXPECT_LE(static_cast<int>(s.alloc.size()), r->max_nodes) << "job " << job.id;
    int tasks = 0;
    int64_t job_gpus = 0;
    std::set<std::string> names;
    // -C's set constraints: one matching-OR feature on every node, each
    // count met.
    if (!r->feature_match.empty()) {
      const bool one =
          std::any_of(r->feature_match.begin(), r->feature_match.end(), [&](const std::string& f) {
            return std::all_of(s.alloc.begin(), s.alloc.end(), [&](const core::NodeAlloc& a) {
              return HasFeature(by_name[a.node]->config, f);
            });
          });
      EXPECT_TRUE(one) << "job " << job.id << " mixes the features of " << job.req.constraint;
    }
    for (const auto& c : r->feature_counts) {
      const auto n = std::count_if(s.alloc.begin(), s.alloc.end(), [&](const core::NodeAlloc& a) {
        return MeetsCount(by_name[a.node]->config, c);
      });
      EXPECT_GE(n, c.count) << "job " << job.id << ": " << job.req.constraint;
    }
    for (const auto& a : s.alloc) {
      ASSERT_TRUE(by_name.count(a.node));
      const core::Node& n = *by_name[a.node];
      EXPECT_TRUE(names.insert(a.node).second) << "node twice in job " << job.id;
      EXPECT_TRUE(Usable(n)) << a.node;
      EXPECT_NE(std::find(part->nodes.begin(), part->nodes.end(), a.node), part->nodes.end());
      for (const auto& f : r->features) EXPECT_TRUE(HasFeature(n.config, f)) << f;
      EXPECT_EQ(std::find(r->excluded_nodes.begin(), r->excluded_nodes.end(), a.node),
                r->excluded_nodes.end());
      EXPECT_GE(a.tasks, 1);
      EXPECT_GE(a.cpus, a.tasks * r->cpus_per_task);
      if (r->exclusive) {
        EXPECT_EQ(a.cpus, n.config.cpus);
        EXPECT_EQ(cpus[a.node], 0) << "exclusive job on a used node";
      }
      if (r->whole_node_mem) {
        EXPECT_EQ(a.mem_mb, n.config.real_memory_mb);
      }
      tasks += a.tasks;
      job_gpus += static_cast<int64_t>(a.gpu_indices.size());
      EXPECT_GE(static_cast<int64_t>(a.gpu_indices.size()), r->gpus_per_node);
      cpus[a.node] += a.cpus;
      mem[a.node] += a.mem_mb;
      EXPECT_LE(cpus[a.node], n.config.cpus) << "CPUs over-allocated on " << a.node;
      EXPECT_LE(mem[a.node], n.config.real_memory_mb) << "memory over-allocated on " << a.node;
      const int total = GpuCount(n.config);
      for (int gi : a.gpu_indices) {
        EXPECT_GE(gi, 0);
        EXPECT_LT(gi, total);
        EXPECT_TRUE(gpus[a.node].insert(gi).second) << "GPU " << gi << " twice on " << a.node;
        if (!r->gpu_type.empty()) {
          EXPECT_EQ(n.GpuType(gi), r->gpu_type);
        }
      }
    }
    for (const auto& w : r->required_nodes) EXPECT_TRUE(names.count(w)) << w;
    if (r->ntasks_per_node > 0) {
      // Every node counts --ntasks-per-node tasks, as Slurm's NumTasks does.
      EXPECT_EQ(tasks, r->ntasks_per_node * static_cast<int>(s.alloc.size())) << "job " << job.id;
      EXPECT_GE(tasks, r->ntasks) << "job " << job.id;
    } else if (r->ntasks_set) {
      EXPECT_EQ(tasks, r->ntasks) << "job " << job.id;
    }
    EXPECT_EQ(job_gpus, r->gpus_per_job + r->gpus_per_node * static_cast<int64_t>(s.alloc.size()))
        << "job " << job.id;
  }

  // No job starts behind one of its partition that waits for Resources.
  std::map<core::JobId, core::PendingReason> reason;
  for (const auto& d : plan.pending) reason[d.job_id] = d.reason;
  std::set<std::string> blocked;
  for (const auto& j : h.jobs) {
    auto it = reason.find(j.id);
    if (it == reason.end()) {
      EXPECT_FALSE(blocked.count(j.partition)) << "job " << j.id << " started behind a blocker";
    } else if (it->second == core::PendingReason::kResources) {
      EXPECT_FALSE(blocked.count(j.partition)) << "second Resources in " << j.partition;
      blocked.insert(j.partition);
    } else if (it->second == core::PendingReason::kPriority) {
      EXPECT_TRUE(blocked.count(j.partition)) << "Priority without a blocker, job " << j.id;
    }
  }

  // And the controller's accounting accepts the whole plan.
  std::vector<core::Node> copy = h.nodes;
  std::vector<core::Node*> ptrs;
  for (auto& n : copy) ptrs.push_back(&n);
  for (const auto& s : plan.starts) {
    util::Status st = ApplyStart(s, ptrs);
    EXPECT_TRUE(st.ok()) << st.message();
  }
}

TEST(ScheduleProperty, RandomClustersNeverOverAllocate) {
  int started = 0, waiting = 0;
  for (uint32_t seed = 1; seed <= 600; ++seed) {
    Gen g(seed);
    Harness h = RandomCluster(g);
    Plan plan = h.Run();
    CheckPlan(h, plan, seed);
    started += static_cast<int>(plan.starts.size());
    waiting += static_cast<int>(plan.pending.size());
    if (::testing::Test::HasFatalFailure()) return;
    // Same input, same plan.
    Plan again = h.Run();
    ASSERT_EQ(plan.starts.size(), again.starts.size()) << "seed " << seed;
    for (size_t k = 0; k < plan.starts.size(); ++k) {
      ASSERT_EQ(plan.starts[k].job_id, again.starts[k].job_id);
      ASSERT_EQ(plan.starts[k].alloc.size(), again.starts[k].alloc.size());
      for (size_t n = 0; n < plan.starts[k].alloc.size(); ++n) {
        ASSERT_EQ(plan.starts[k].alloc[n].node, again.starts[k].alloc[n].node);
        ASSERT_EQ(plan.starts[k].alloc[n].gpu_indices, again.starts[k].alloc[n].gpu_indices);
      }
    }
    ASSERT_EQ(plan.pending.size(), again.pending.size());
    for (size_t k = 0; k < plan.pending.size(); ++k) {
      ASSERT_EQ(plan.pending[k].job_id, again.pending[k].job_id);
      ASSERT_EQ(plan.pending[k].reason, again.pending[k].reason);
    }
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(started, 500);
  EXPECT_GT(waiting, 500);
}

// A cluster whose every use is a running job with a known end, and a queue
// of jobs with time limits (some without), for the backfill planner.
Harness RandomBusyCluster(Gen& g, uint32_t seed) {
  Harness h;
  h.cfg.def_mem_per_cpu_mb = 100;
  h.cfg.gres_types = {"gpu"};
  h.cfg.bf.resolution_s = g.Pick(std::vector<int64_t>{1, 60});
  const int n_nodes = g.Int(2, 6);
  for (int i = 0; i < n_nodes; ++i) {
    auto b = MakeNode("n" + std::to_string(i)).Cpus(g.Pick(std::vector<int>{4, 8, 16})).Mem(16000);
    if (g.Chance(0.7)) b.Gpus("h100", g.Int(1, 8));
    h.AddNode(b);
  }
  h.AddPartition(MakePartition("p").Default());
  h.ResolvePartitions();
  core::JobId id = 1;
  for (int k = 0; k < g.Int(1, 8); ++k) {
    auto j = MakeJob(id)
                 .Partition("p")
                 .Cpus(g.Int(1, 4))
                 .Nodelist("n" + std::to_string(g.Int(0, n_nodes - 1)));
    if (g.Chance(0.5)) j.Gpus(1);
    h.AddJob(j);
    Plan p = h.RunAndApply();
    if (StartOf(p, id) != nullptr) {
      h.ends.emplace_back(id, h.now + g.Int(1, 40) * 60);
    } else {
      h.jobs.pop_back();
    }
    ++id;
  }
  for (int k = 0; k < g.Int(5, 25); ++k) {
    auto j = MakeJob(id++).Partition("p").Cpus(g.Int(1, 8));
    if (g.Chance(0.9)) j.TimeLimit(g.Int(1, 60) * 60);
    if (g.Chance(0.5)) j.Gpus(g.Int(1, 4));
    if (g.Chance(0.3)) j.Nodes(g.Int(1, 3));
    if (g.Chance(0.1)) j.Exclusive();
    h.AddJob(j);
  }
  (void)seed;
  return h;
}

// What a job holds over time, on one node.
struct Hold {
  int64_t start, end;
  const core::NodeAlloc* share;
};

// Every running job, start and planned start together never ask more of a
// node than it has at any moment: so no start, now or planned, can delay
// one planned before it.
void CheckPlanFeasible(Harness& h, const Plan& plan, uint32_t seed) {
  std::map<std::string, std::vector<Hold>> holds;
  auto limit_of = [&](core::JobId id) {
    for (const auto& j : h.jobs) {
      if (j.id == id) return j.time_limit_s;
    }
    return int64_t{-1};
  };
  auto add = [&](int64_t start, int64_t limit, const std::vector<core::NodeAlloc>& alloc) {
    const int64_t end = limit < 0 ? INT64_MAX : start + limit;
    for (const auto& share : alloc) holds[share.node].push_back(Hold{start, end, &share});
  };
  for (const RunningJob& r : h.RunningJobs()) {
    for (const auto& share : r.job->alloc) {
      holds[share.node].push_back(Hold{h.now, r.expected_end, &share});
    }
  }
  for (const auto& s : plan.starts) add(h.now, limit_of(s.job_id), s.alloc);
  for (const auto& p : plan.planned) {
    EXPECT_GT(p.start, h.now) << "seed " << seed << " job " << p.job_id;
    EXPECT_EQ(StartOf(plan, p.job_id), nullptr) << "seed " << seed;
    add(p.start, limit_of(p.job_id), p.alloc);
  }
  for (const auto& [name, list] : holds) {
    const core::Node* node = h.Node(name);
    ASSERT_NE(node, nullptr);
    for (const Hold& at : list) {
      const int64_t t = at.start;
      int cpus = 0;
      int64_t mem = 0;
      std::set<int> gpus;
      for (const Hold& o : list) {
        if (o.start > t || o.end <= t) continue;
        cpus += o.share->cpus;
        mem += o.share->mem_mb;
        for (int gpu : o.share->gpu_indices) {
          EXPECT_TRUE(gpus.insert(gpu).second) << "seed " << seed << ": GPU " << gpu << " of "
                                               << name << " twice at t+" << t - h.now;
        }
      }
      EXPECT_LE(cpus, node->config.cpus)
          << "seed " << seed << ": " << name << " at t+" << t - h.now;
      EXPECT_LE(mem, node->config.real_memory_mb) << "seed " << seed << ": " << name;
    }
  }
}

// Backfill never delays the planned start of a higher-priority job: every
// start and planned start fit together over time, and a job's plan is the
// same whether or not lower-priority jobs follow it in the queue.
TEST(ScheduleProperty, BackfillNeverDelaysAPlannedStart) {
  int planned = 0, backfilled = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    Gen g(seed);
    Harness h = RandomBusyCluster(g, seed);
    Snapshot snap = h.Snap();
    // Sometimes a node is reserved for others a while from now.
    core::Reservation resv;
    resv.name = "r";
    resv.start = h.now + g.Int(0, 30) * 60;
    resv.end = resv.start + g.Int(10, 60) * 60;
    resv.nodes = {
        h.nodes[static_cast<size_t>(g.Int(0, static_cast<int>(h.nodes.size()) - 1))].config.name};
    if (g.Chance(0.3)) snap.reservations = {&resv};
    Plan plan = Schedule(snap);
    CheckPlanFeasible(h, plan, seed);
    if (::testing::Test::HasFatalFailure()) return;
    // No job (none names it) holds the reserved node in its window.
    auto outside = [&](core::JobId id, int64_t start, const std::vector<core::NodeAlloc>& alloc) {
      if (snap.reservations.empty()) return;
      int64_t limit = -1;
      for (const auto& j : h.jobs) {
        if (j.id == id) limit = j.time_limit_s;
      }
      const int64_t end = limit < 0 ? INT64_MAX : start + limit;
      for (const auto& share : alloc) {
        EXPECT_FALSE(resv.Covers(share.node, start, end))
            << "seed " << seed << ": job " << id << " on reserved " << share.node;
      }
    };
    for (const auto& st : plan.starts) outside(st.job_id, h.now, st.alloc);
    for (const auto& pl : plan.planned) outside(pl.job_id, pl.start, pl.alloc);
    planned += static_cast<int>(plan.planned.size());
    // Each prefix of the queue plans its jobs as the whole queue does.
    std::map<core::JobId, int64_t> start_of;
    for (const auto& p : plan.planned) start_of[p.job_id] = p.start;
    for (const auto& s : plan.starts) start_of[s.job_id] = h.now;
    for (size_t cut = 1; cut < snap.pending.size(); ++cut) {
      Snapshot prefix = snap;
      prefix.pending.resize(cut);
      Plan part = Schedule(prefix);
      const core::JobId last = prefix.pending.back()->id;
      int64_t alone = 0;
      for (const auto& p : part.planned) {
        if (p.job_id == last) alone = p.start;
      }
      if (StartOf(part, last) != nullptr) alone = h.now;
      auto it = start_of.find(last);
      ASSERT_EQ(it == start_of.end() ? 0 : it->second, alone)
          << "seed " << seed << " job " << last << " (0: neither started nor planned)";
    }
    // Some job started now though an earlier one waits.
    bool waiting = false;
    for (const core::Job* j : snap.pending) {
      if (start_of.count(j->id) && start_of[j->id] > h.now) waiting = true;
      if (waiting && start_of.count(j->id) && start_of[j->id] == h.now) {
        ++backfilled;
        break;
      }
    }
  }
  // The generator must exercise planning and backfill.
  EXPECT_GT(planned, 300);
  EXPECT_GT(backfilled, 30);
}

// A job the scheduler calls startable on an idle copy of the partition is
// one CheckSatisfiable accepts, and BadConstraints only goes to jobs that
// CheckSatisfiable refuses.
TEST(ScheduleProperty, BadConstraintsAgreesWithCheckSatisfiable) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    Gen g(seed);
    Harness h = RandomCluster(g);
    Plan plan = h.Run();
    for (const auto& d : plan.pending) {
      if (d.reason != core::PendingReason::kBadConstraints) continue;
      const core::Job* job = nullptr;
      for (const auto& j : h.jobs) {
        if (j.id == d.job_id) job = &j;
      }
      util::Status st =
          CheckSatisfiable(job->req, *h.cfg.FindPartition(job->partition), h.cfg, nullptr);
      EXPECT_FALSE(st.ok()) << "seed " << seed << " job " << job->id;
    }
    for (const auto& s : plan.starts) {
      const core::Job* job = nullptr;
      for (const auto& j : h.jobs) {
        if (j.id == s.job_id) job = &j;
      }
      SubmitRefusal why;
      util::Status st =
          CheckSatisfiable(job->req, *h.cfg.FindPartition(job->partition), h.cfg, &why);
      EXPECT_TRUE(st.ok()) << "seed " << seed << " job " << job->id << ": " << why.detail;
    }
  }
}

// Conservation over many passes: start what fits, finish some jobs at
// random, repeat; the accounting always accepts the plan, and once every
// job has finished every node is back to its starting use.
TEST(ScheduleProperty, ConservationOverPasses) {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Gen g(seed);
    Harness h = RandomCluster(g);
    for (auto& j : h.jobs) j.held = false, j.req.begin_time = 0;
    const std::vector<core::Node> before = h.nodes;
    for (int pass = 0; pass < 30; ++pass) {
      h.RunAndApply();
      for (auto& j : h.jobs) {
        if (j.state == core::JobState::kRunning && g.Chance(0.5)) h.Finish(j.id);
      }
    }
    for (auto& j : h.jobs) {
      if (j.state == core::JobState::kRunning) h.Finish(j.id);
    }
    for (size_t k = 0; k < h.nodes.size(); ++k) {
      EXPECT_EQ(h.nodes[k].alloc_cpus, before[k].alloc_cpus);
      EXPECT_EQ(h.nodes[k].alloc_mem_mb, before[k].alloc_mem_mb);
      EXPECT_EQ(h.nodes[k].running_jobs, before[k].running_jobs);
      EXPECT_EQ(h.nodes[k].gpu_used, before[k].gpu_used);
    }
  }
}

// QOS and association limits over many passes: random users, accounts
// under a random tree, random limits; whatever starts, no limit is ever
// passed by what holds resources after a pass.
TEST(ScheduleProperty, LimitsAreNeverPassed) {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Gen g(seed);
    Harness h = RandomCluster(g);
    core::AccountTable table;
    core::AccountSettings lab;
    lab.limits.grp_tres = core::TresLimits{g.Int(4, 40), -1, -1, g.Int(1, 8)};
    table.AddAccounts({"lab"}, lab, "c");
    core::AccountSettings team;
    team.parent = "lab";
    team.limits.max_jobs = g.Int(1, 4);
    table.AddAccounts({"team"}, team, "c");
    core::QosSettings qos;
    qos.max_jobs_per_user = g.Int(1, 3);
    qos.max_tres_per_user = core::TresLimits{-1, -1, g.Int(1, 4), -1};
    qos.grp_jobs = g.Int(2, 6);
    table.AddQos({"q"}, qos);
    for (auto& j : h.jobs) {
      j.held = false;
      j.req.begin_time = 0;
      j.req.uid = static_cast<uint32_t>(g.Int(1, 3));
      j.req.user_name = "u" + std::to_string(j.req.uid);
      j.req.account = g.Chance(0.5) ? "team" : "lab";
      if (g.Chance(0.5)) j.req.qos = "q";
    }
    for (int pass = 0; pass < 10; ++pass) {
      // As the controller does: every running job is in the snapshot.
      h.ends.clear();
      for (const auto& j : h.jobs) {
        if (j.state == core::JobState::kRunning) h.ends.emplace_back(j.id, h.now + 100);
      }
      Snapshot snap = h.Snap();
      snap.accounts = &table;
      Plan plan = Schedule(snap);
      auto ptrs = h.NodePtrs();
      for (const auto& st : plan.starts) {
        ASSERT_TRUE(ApplyStart(st, ptrs).ok());
        for (auto& j : h.jobs) {
          if (j.id == st.job_id) {
            j.state = core::JobState::kRunning;
            j.alloc = st.alloc;
          }
        }
      }
      std::map<uint32_t, int> q_jobs, q_nodes;
      int q_all = 0, lab_cpus = 0, lab_gpus = 0;
      std::map<uint32_t, int> team_jobs;
      for (const auto& j : h.jobs) {
        if (j.state != core::JobState::kRunning) continue;
        if (j.req.qos == "q") {
          ++q_jobs[j.req.uid];
          q_nodes[j.req.uid] += static_cast<int>(j.alloc.size());
          ++q_all;
        }
        for (const auto& a : j.alloc) {
          lab_cpus += a.cpus;
          lab_gpus += static_cast<int>(a.gpu_indices.size());
        }
        if (j.req.account == "team") ++team_jobs[j.req.uid];
      }
      for (const auto& [uid, n] : q_jobs) EXPECT_LE(n, *qos.max_jobs_per_user) << "uid " << uid;
      for (const auto& [uid, n] : q_nodes)
        EXPECT_LE(n, qos.max_tres_per_user->node) << "uid " << uid;
      EXPECT_LE(q_all, *qos.grp_jobs);
      EXPECT_LE(lab_cpus, lab.limits.grp_tres->cpu);  // team is below lab: all jobs count
      EXPECT_LE(lab_gpus, lab.limits.grp_tres->gpu);
      for (const auto& [uid, n] : team_jobs) EXPECT_LE(n, *team.limits.max_jobs) << "uid " << uid;
      for (auto& j : h.jobs) {
        if (j.state == core::JobState::kRunning && g.Chance(0.3)) h.Finish(j.id);
      }
    }
  }
}

}  // namespace
}  // namespace muster::sched

#include "sched/step_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::sched {
namespace {

// A job's allocation with these CPUs per node (gpu01, gpu02, ...).
std::vector<core::NodeAlloc> Alloc(const std::vector<int>& cpus) {
  std::vector<core::NodeAlloc> out;
  for (size_t i = 0; i < cpus.size(); ++i) {
    core::NodeAlloc a;
    a.node = "gpu0" + std::to_string(i + 1);
    a.cpus = cpus[i];
    a.tasks = cpus[i];
    out.push_back(a);
  }
  return out;
}

// "3,1" (tasks per node), or the error.
std::string Layout(const std::vector<int>& cpus, StepRequest r, int job_tasks = 0) {
  int total = 0;
  for (int c : cpus) total += c;
  auto l = LayoutStep(Alloc(cpus), job_tasks > 0 ? job_tasks : total, r);
  if (!l.ok()) return l.status().message();
  std::string out;
  int rank = 0;
  for (const StepNode& n : l->nodes) {
    EXPECT_EQ(n.first_task, rank);
    rank += n.tasks;
    out += (out.empty() ? "" : ",") + std::to_string(n.tasks);
  }
  EXPECT_EQ(rank, l->ntasks);
  return out;
}

StepRequest Tasks(int n, int nodes = 0) { return StepRequest{n, nodes, 0, 1}; }

TEST(LayoutStep, BlocksCutToTheCpusOfEachNode) {
  // srun inside jobs on the oracle (slurm 22.05), SLURM_STEP_TASKS_PER_NODE:
  EXPECT_EQ(Layout({3, 1}, Tasks(4)), "3,1");          // -N2 -n4, srun
  EXPECT_EQ(Layout({6, 2}, Tasks(4)), "2,2");          // -N2 -n4 -c2, srun
  EXPECT_EQ(Layout({3, 1, 1}, Tasks(5)), "3,1,1");     // -N3 -n5, srun
  EXPECT_EQ(Layout({28, 12}, Tasks(5)), "3,2");        // srun -n5
  EXPECT_EQ(Layout({28, 12}, Tasks(8)), "4,4");        // srun -n8
  EXPECT_EQ(Layout({5, 1}, Tasks(5)), "4,1");          // -N2 -n6, srun -n5
  EXPECT_EQ(Layout({3, 1}, Tasks(3, 2)), "2,1");       // srun -n3 -N2
  EXPECT_EQ(Layout({3, 1}, Tasks(2, 2)), "1,1");       // srun -n2 (nodes from the job)
  EXPECT_EQ(Layout({6, 2}, Tasks(4, 1)), "4");         // srun -N1 (-n4 from the job)
  EXPECT_EQ(Layout({1, 1}, Tasks(0), 2), "1,1");       // -N2: one task per node
}

TEST(LayoutStep, RefusesWhatDoesNotFit) {
  const std::string cpus = "More processors requested than permitted";
  const std::string nodes = "Requested node configuration is not available";
  EXPECT_EQ(Layout({3, 1}, Tasks(4, 1)), cpus);  // srun -N1 in -N2 -n4
  EXPECT_EQ(Layout({3, 1}, Tasks(8)), cpus);     // srun -n8 in -N2 -n4
  EXPECT_EQ(Layout({1, 1}, Tasks(3, 2)), cpus);  // srun -n3 -N2 in -N2
  EXPECT_EQ(Layout({4}, Tasks(3, 2)), nodes);    // more nodes than the job has
  EXPECT_EQ(Layout({4, 4}, Tasks(1, 2)), nodes);  // more nodes than tasks
  EXPECT_EQ(Layout({4, 4}, StepRequest{6, 2, 2, 1}), nodes);  // 2 per node on 2 nodes
}

TEST(LayoutStep, TasksPerNodeAndCpusPerTask) {
  EXPECT_EQ(Layout({3, 3}, StepRequest{4, 0, 3, 1}), "3,1");
  EXPECT_EQ(Layout({4, 4}, StepRequest{0, 0, 2, 1}), "2,2");
  EXPECT_EQ(Layout({4, 4}, StepRequest{0, 1, 3, 1}), "3");
  EXPECT_EQ(Layout({2, 2}, StepRequest{0, 0, 3, 1}), "More processors requested than permitted");
  // -c2 halves what each node holds.
  EXPECT_EQ(Layout({6, 2}, StepRequest{4, 0, 0, 2}), "3,1");
  EXPECT_EQ(Layout({6, 2}, StepRequest{5, 0, 0, 2}), "More processors requested than permitted");
}

TEST(LayoutStep, NodelistNamesNodesTheStepMustInclude) {
  // As the oracle in a job of 3 nodes: srun -w cpu02 runs on all 3; with
  // -N1 or -n1 on cpu02 alone.
  StepRequest r{};
  r.nodelist = {"gpu02"};
  auto l = LayoutStep(Alloc({1, 1, 1}), 3, r);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->nodes.size(), 3u);
  EXPECT_EQ(l->nodes[1].alloc_index, 1);
  r.nodes = 1;
  l = LayoutStep(Alloc({1, 1, 1}), 3, r);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->nodes.size(), 1u);
  EXPECT_EQ(l->nodes[0].alloc_index, 1);
  r = StepRequest{2, 2, 0, 1};
  r.nodelist = {"gpu03"};
  l = LayoutStep(Alloc({2, 2, 2}), 6, r);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->nodes.size(), 2u);
  EXPECT_EQ(l->nodes[0].alloc_index, 0);
  EXPECT_EQ(l->nodes[1].alloc_index, 2);
  // A node outside the job (as the oracle: srun -w cpu09).
  r.nodelist = {"gpu09"};
  EXPECT_EQ(LayoutStep(Alloc({2, 2}), 4, r).status().message(),
            "Requested node configuration is not available");
}

}  // namespace
}  // namespace muster::sched

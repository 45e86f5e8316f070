#include "core/node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::core {
namespace {

Node MakeNode() {
  Node n;
  n.config.name = "gpu01";
  n.config.cpus = 32;
  n.config.gres = {{"gpu", "a100", 2}, {"nic", "", 1}, {"gpu", "h100", 2}};
  n.gpu_used.assign(4, false);
  n.registered = true;
  return n;
}

struct StateCase {
  std::string what;
  bool registered;
  bool down;
  bool drain;
  int alloc_cpus;
  int running_jobs;
  bool gpu0_used;
  NodeBase base;
  std::string sinfo_short;
  std::string sinfo_long;
  std::string scontrol;
};

TEST(NodeStateTest, DerivesSlurmStates) {
  const std::vector<StateCase> cases = {
      {"idle", true, false, false, 0, 0, false, NodeBase::kIdle, "idle", "idle", "IDLE"},
      {"mixed", true, false, false, 4, 1, false, NodeBase::kMixed, "mix", "mixed", "MIXED"},
      {"gpu only", true, false, false, 0, 1, true, NodeBase::kMixed, "mix", "mixed", "MIXED"},
      {"allocated", true, false, false, 32, 1, false, NodeBase::kAllocated, "alloc",
       "allocated", "ALLOCATED"},
      {"down", true, true, false, 0, 0, false, NodeBase::kDown, "down", "down", "DOWN"},
      {"drained", true, false, true, 0, 0, false, NodeBase::kIdle, "drain", "drained",
       "IDLE+DRAIN"},
      {"draining mixed", true, false, true, 4, 1, false, NodeBase::kMixed, "drng",
       "draining", "MIXED+DRAIN"},
      {"draining alloc", true, false, true, 32, 1, false, NodeBase::kAllocated, "drng",
       "draining", "ALLOCATED+DRAIN"},
      {"draining jobs only", true, false, true, 0, 1, false, NodeBase::kIdle, "drng",
       "draining", "IDLE+DRAIN"},
      // sinfo on Slurm 22.05 shows a DOWN+DRAIN node as drained.
      {"down and drain shows drained", true, true, true, 0, 0, false, NodeBase::kDown, "drain",
       "drained", "DOWN+DRAIN"},
      {"never registered", false, false, false, 0, 0, false, NodeBase::kIdle, "unk*",
       "unknown*", "UNKNOWN+NOT_RESPONDING"},
      {"down not responding", false, true, false, 0, 0, false, NodeBase::kDown, "down*",
       "down*", "DOWN+NOT_RESPONDING"},
      {"drained not responding", false, false, true, 0, 0, false, NodeBase::kIdle,
       "drain*", "drained*", "UNKNOWN+DRAIN+NOT_RESPONDING"},
      {"busy not responding", false, false, false, 4, 1, false, NodeBase::kMixed, "mix*",
       "mixed*", "MIXED+NOT_RESPONDING"},
      {"alloc not responding", false, false, false, 32, 1, false, NodeBase::kAllocated,
       "alloc*", "allocated*", "ALLOCATED+NOT_RESPONDING"},
  };
  for (const StateCase& c : cases) {
    SCOPED_TRACE(c.what);
    Node n = MakeNode();
    n.registered = c.registered;
    n.down = c.down;
    n.drain = c.drain;
    n.alloc_cpus = c.alloc_cpus;
    n.running_jobs = c.running_jobs;
    n.gpu_used[0] = c.gpu0_used;
    EXPECT_EQ(n.Base(), c.base);
    EXPECT_EQ(n.Responding(), c.registered);
    EXPECT_EQ(n.SinfoState(false), c.sinfo_short);
    EXPECT_EQ(n.SinfoState(true), c.sinfo_long);
    EXPECT_EQ(n.ScontrolState(), c.scontrol);
  }
}

TEST(NodeInitialStateTest, NamesRoundTripAndAnyCaseParses) {
  for (NodeInitialState s :
       {NodeInitialState::kUnknown, NodeInitialState::kIdle, NodeInitialState::kCloud,
        NodeInitialState::kDown, NodeInitialState::kDrain, NodeInitialState::kFail,
        NodeInitialState::kFailing, NodeInitialState::kFuture}) {
    EXPECT_EQ(ParseNodeInitialState(NodeInitialStateName(s)), s);
  }
  EXPECT_EQ(NodeInitialStateName(NodeInitialState::kFuture), "FUTURE");
  EXPECT_EQ(ParseNodeInitialState("future"), NodeInitialState::kFuture);
  EXPECT_FALSE(ParseNodeInitialState("ALLOCATED"));
  EXPECT_FALSE(ParseNodeInitialState(""));
}

TEST(ReasonSourceTest, NamesRoundTrip) {
  for (ReasonSource s : {ReasonSource::kNone, ReasonSource::kOperator, ReasonSource::kHealth,
                         ReasonSource::kProlog, ReasonSource::kEpilog, ReasonSource::kConfig,
                         ReasonSource::kNotResponding}) {
    EXPECT_EQ(ParseReasonSource(ReasonSourceName(s)), s);
  }
  EXPECT_EQ(ReasonSourceName(ReasonSource::kNone), "");
  EXPECT_EQ(ReasonSourceName(ReasonSource::kNotResponding), "not_responding");
  EXPECT_FALSE(ParseReasonSource("Operator"));  // the label's value, exactly
}

TEST(NodeGresTest, TotalsAndFree) {
  Node n = MakeNode();
  EXPECT_EQ(n.TotalGpus(), 4);
  EXPECT_EQ(n.TotalGres("gpu", ""), 4);
  EXPECT_EQ(n.TotalGres("gpu", "a100"), 2);
  EXPECT_EQ(n.TotalGres("gpu", "h100"), 2);
  EXPECT_EQ(n.TotalGres("gpu", "v100"), 0);
  EXPECT_EQ(n.TotalGres("nic", ""), 1);
  EXPECT_EQ(n.TotalGres("fpga", ""), 0);
  EXPECT_EQ(n.FreeGres("gpu", ""), 4);

  n.gpu_used = {true, false, false, true};  // one a100, one h100 used
  EXPECT_EQ(n.FreeGres("gpu", ""), 2);
  EXPECT_EQ(n.FreeGres("gpu", "a100"), 1);
  EXPECT_EQ(n.FreeGres("gpu", "h100"), 1);
  EXPECT_EQ(n.FreeGres("gpu", "v100"), 0);
  EXPECT_EQ(n.FreeGres("nic", ""), 1);  // non-GPU GRES are not tracked yet

  n.gpu_used.clear();  // not initialised yet: every GPU counts as free
  EXPECT_EQ(n.FreeGres("gpu", ""), 4);
}

TEST(NodeGresTest, GpuTypeByIndex) {
  Node n = MakeNode();
  EXPECT_EQ(n.GpuType(0), "a100");
  EXPECT_EQ(n.GpuType(1), "a100");
  EXPECT_EQ(n.GpuType(2), "h100");  // the nic entry does not count
  EXPECT_EQ(n.GpuType(3), "h100");
  EXPECT_EQ(n.GpuType(4), "");
  EXPECT_EQ(n.GpuType(-1), "");

  Node untyped;
  untyped.config.gres = {{"gpu", "", 2}};
  EXPECT_EQ(untyped.TotalGpus(), 2);
  EXPECT_EQ(untyped.GpuType(0), "");
  Node none;
  EXPECT_EQ(none.TotalGpus(), 0);
  EXPECT_EQ(none.FreeGres("gpu", ""), 0);
}

// gres.conf Cores= per GPU, and as CPU ids: a core's threads when the node
// schedules threads, the core ids when CPUs counts cores.
TEST(NodeGresTest, CpusNearGpu) {
  NodeConfig n;
  n.cpus = 16;
  n.sockets = 2;
  n.cores_per_socket = 4;
  n.threads_per_core = 2;
  n.gres = {GresSpec{"gpu", "a100", 1, {}, {{0, 1, 2, 3}}},
            GresSpec{"gpu", "h100", 2, {}, {{4, 5, 6, 7}, {}}}};
  EXPECT_EQ(CpusNearGpu(n, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(CpusNearGpu(n, 1), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_TRUE(CpusNearGpu(n, 2).empty());  // its line gave no Cores=
  EXPECT_EQ(GpuCores(n, 2), nullptr);
  EXPECT_EQ(GpuCores(n, 3), nullptr);      // no such GPU
  n.cpus = 8;                              // cores only
  EXPECT_EQ(CpusNearGpu(n, 1), (std::vector<int>{4, 5, 6, 7}));
}

TEST(NodeRebootTest, AsapDrainsThenResumesAfterTheReboot) {
  Node n = MakeNode();
  n.alloc_cpus = 4;
  n.running_jobs = 1;
  RequestReboot(n, {.asap = true, .next_state = "", .reason = "", .uid = 0}, 100);
  EXPECT_EQ(n.reboot, RebootState::kRequested);
  EXPECT_TRUE(n.drain);
  EXPECT_EQ(n.reason, "Reboot ASAP");
  EXPECT_EQ(n.ScontrolState(), "MIXED+DRAIN+REBOOT_REQUESTED");
  EXPECT_EQ(n.SinfoState(false), "drng@");
  EXPECT_FALSE(RebootDue(n));  // it runs a job
  n.alloc_cpus = n.running_jobs = 0;
  ASSERT_TRUE(RebootDue(n));
  IssueReboot(n, 150);
  EXPECT_TRUE(n.Rebooting());
  EXPECT_EQ(n.reboot_issued_time, 150);
  // Issued: DOWN until it is back, as the oracle shows it.
  EXPECT_EQ(n.ScontrolState(), "DOWN+DRAIN+REBOOT_ISSUED");
  EXPECT_EQ(n.SinfoState(false), "boot^");
  EXPECT_EQ(n.SinfoState(true), "reboot^");
  EXPECT_EQ(n.reason, "Reboot ASAP : reboot issued");
  FinishReboot(n);
  EXPECT_EQ(n.reboot, RebootState::kNone);
  EXPECT_FALSE(n.drain);
  EXPECT_EQ(n.reason, "");
  EXPECT_EQ(n.ScontrolState(), "IDLE");
}

TEST(NodeRebootTest, NextStateAndTheDefaultKeepWhatTheyShould) {
  Node n = MakeNode();
  RequestReboot(n, {.asap = false, .next_state = "DOWN", .reason = "", .uid = 7}, 100);
  EXPECT_EQ(n.reason, "reboot requested");
  EXPECT_EQ(n.reason_uid, 7u);
  EXPECT_FALSE(n.drain);
  EXPECT_EQ(n.SinfoState(false), "boot");
  EXPECT_EQ(n.SinfoState(true), "reboot");
  EXPECT_EQ(n.ScontrolState(), "IDLE+REBOOT_REQUESTED");
  IssueReboot(n, 100);
  FinishReboot(n);
  EXPECT_TRUE(n.down);
  EXPECT_EQ(n.reason, "reboot requested : reboot issued");
  // A plain reboot: back idle, its reason gone (the oracle); a node an
  // operator drained stays drained.
  Node p = MakeNode();
  RequestReboot(p, {}, 100);
  IssueReboot(p, 100);
  FinishReboot(p);
  EXPECT_EQ(p.ScontrolState(), "IDLE");
  EXPECT_EQ(p.reason, "");
  Node d = MakeNode();
  d.drain = true;
  RequestReboot(d, {.asap = false, .next_state = "", .reason = "bad fan", .uid = 0}, 100);
  IssueReboot(d, 100);
  FinishReboot(d);
  EXPECT_TRUE(d.drain);
  EXPECT_EQ(d.reason, "bad fan : reboot issued");
}

TEST(NodeRebootTest, CancelAndTimeout) {
  Node n = MakeNode();
  RequestReboot(n, {.asap = true, .next_state = "", .reason = "fw", .uid = 0}, 100);
  EXPECT_EQ(n.reason, "fw");
  ASSERT_TRUE(CancelReboot(n));
  EXPECT_FALSE(n.drain);
  EXPECT_EQ(n.reason, "");
  EXPECT_FALSE(CancelReboot(n));  // nothing left to cancel
  RequestReboot(n, {}, 100);
  IssueReboot(n, 100);
  EXPECT_FALSE(CancelReboot(n));  // issued: too late
  RebootTimedOut(n, 200);
  EXPECT_TRUE(n.down);
  EXPECT_EQ(n.reason, "reboot requested : reboot issued : reboot timed out");
  EXPECT_EQ(n.reboot, RebootState::kNone);
}

}  // namespace
}  // namespace muster::core

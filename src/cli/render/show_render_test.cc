// scontrol show node|partition|config|job against Slurm 22.05.8. Expected
// texts are the real scontrol's output on the oracle cluster
// (/etc/slurm/slurm.conf: partitions short (default) and train; nodes
// gpu[01-04] with Gres=gpu:h100:8, cpu[01-02]; 32 CPUs, 2x16 cores,
// 64000 MB) in the state each case names, with the command in a comment.
//
// Values Muster cannot know print Slurm's placeholder instead; these lines
// differ from the oracle's by design and say so:
//   CPULoad=0.17 / FreeMem=23650   -> N/A (agents report no load or free memory)
//   NodeAddr=127.0.0.1 NodeHostName=vm Port=6830 -> the node name, no Port
//                                     (Muster's config has no NodeAddr/NodeHostname)
//   SlurmdStartTime=15:40:36       -> the boot time (Muster tracks one time)

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/render/render.h"
#include "testing/builders.h"
#include "util/users.h"

namespace muster::render {
namespace {

using util::Result;

class UtcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
};
const ::testing::Environment* const kUtc =
    ::testing::AddGlobalTestEnvironment(new UtcEnvironment);

int64_t At(const char* iso) {
  struct tm tm = {};
  ::strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
  return static_cast<int64_t>(::timegm(&tm));
}

core::Partition Part(std::string name, std::vector<std::string> nodes, int64_t max_time,
                     int64_t default_time, bool is_default = false) {
  core::Partition p = muster::testing::MakePartition(std::move(name)).Nodes(std::move(nodes));
  p.max_time_s = max_time;
  p.default_time_s = default_time;
  p.is_default = is_default;
  p.min_nodes = 0;  // slurm.conf's default
  return p;
}

// The oracle cluster, all nodes idle, as musterd would hold it.
struct Cluster {
  config::Config cfg;
  std::vector<core::Node> nodes;
  std::vector<core::Job> jobs;

  Cluster() {
    cfg.path = "/etc/slurm/slurm.conf";
    cfg.cluster_name = "anchor";
    cfg.gres_types = {"gpu"};
    for (const char* name : {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"}) {
      bool gpu = name[0] == 'g';
      auto b = muster::testing::MakeNode(name).Cpus(32).Mem(64000);
      if (gpu) b.Gpus("h100", 8);
      b.Features(gpu ? std::vector<std::string>{"h100", "gpu"} : std::vector<std::string>{"cpu"});
      core::Node n = b.Build();
      n.config.sockets = 2;
      n.config.cores_per_socket = 16;
      n.config.threads_per_core = 1;
      n.boot_time = At("2026-12-02T15:39:05");
      n.last_busy = At("2026-12-02T15:40:36");
      cfg.nodes.push_back(n.config);
      nodes.push_back(std::move(n));
    }
    cfg.partitions = {
        Part("short", {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"}, 4 * 3600, 3600, true),
        Part("train", {"gpu01", "gpu02", "gpu03", "gpu04"}, 3 * 86400, 4 * 3600)};
  }
  core::Node& Node(const std::string& name) {
    for (core::Node& n : nodes) {
      if (n.config.name == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    return nodes[0];
  }
  Cluster& Use(const std::string& name, int cpus, int64_t mem, std::vector<int> gpus = {}) {
    core::Node& n = Node(name);
    n.alloc_cpus = cpus;
    n.alloc_mem_mb = mem;
    for (int g : gpus) n.gpu_used[static_cast<size_t>(g)] = true;
    n.running_jobs = 1;
    return *this;
  }
  ClusterView View(int64_t now = At("2026-12-02T15:46:22")) const {
    ClusterView v;
    v.users = &util::SystemUserDb();
    v.config = &cfg;
    for (const core::Node& n : nodes) v.nodes.push_back(&n);
    for (const core::Job& j : jobs) v.jobs.push_back(&j);
    v.now = now;
    v.version = "22.05.8";
    v.arch = "x86_64";
    v.os = "Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0";
    v.ctld_start_time = At("2026-12-02T15:40:35");
    return v;
  }
  // The state of the first `scontrol show node` run: cpu01 7 CPUs, cpu02 2,
  // gpu01 1 CPU and GPUs 0-1.
  Cluster& M1() { return Use("cpu01", 7, 5000).Use("cpu02", 2, 2000).Use("gpu01", 1, 1000, {0, 1}); }
};

std::string Show(const Cluster& c, std::string what, std::string name, bool one_liner = false,
                 bool details = false) {
  ShowRequest req{std::move(what), std::move(name), one_liner, details};
  Result<ShowRequest> sent = ShowRequestFromJson(ToJson(req));
  if (!sent.ok()) return "json error: " + sent.status().message();
  Result<std::string> out = RenderShow(*sent, c.View());
  if (!out.ok()) return "error: " + out.status().message();
  return *out;
}

// ---- nodes -------------------------------------------------------------------

// scontrol show node gpu01
constexpr char kGpu01[] =
    "NodeName=gpu01 Arch=x86_64 CoresPerSocket=16 \n"
    "   CPUAlloc=1 CPUEfctv=32 CPUTot=32 CPULoad=N/A\n"
    "   AvailableFeatures=h100,gpu\n"
    "   ActiveFeatures=h100,gpu\n"
    "   Gres=gpu:h100:8\n"
    "   NodeAddr=gpu01 NodeHostName=gpu01 Version=22.05.8\n"
    "   OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 \n"
    "   RealMemory=64000 AllocMem=1000 FreeMem=N/A Sockets=2 Boards=1\n"
    "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
    "   Partitions=short,train \n"
    "   BootTime=2026-12-02T15:39:05 SlurmdStartTime=2026-12-02T15:39:05\n"
    "   LastBusyTime=2026-12-02T15:40:36\n"
    "   CfgTRES=cpu=32,mem=62.50G,billing=32,gres/gpu=8\n"
    "   AllocTRES=cpu=1,mem=1000M,gres/gpu=2\n"
    "   CapWatts=n/a\n"
    "   CurrentWatts=0 AveWatts=0\n"
    "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
    "\n";

// scontrol show topology: one line per switch, every node below it.
TEST(ShowTopologyTest, SwitchesWithTheirNodes) {
  Cluster c;
  EXPECT_EQ(Show(c, "topology", ""), "error: No topology information available");
  config::Switch s1{"s1", {"gpu01", "gpu02"}, {}, 2, 0, ""};
  config::Switch s2{"s2", {"gpu03", "gpu04"}, {}, 2, 0, "100"};
  config::Switch top{"top", {}, {0, 1}, -1, 1, ""};
  c.cfg.switches = {s1, s2, top};
  EXPECT_EQ(Show(c, "topology", ""),
            "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=gpu[01-02]\n"
            "SwitchName=s2 Level=0 LinkSpeed=100 Nodes=gpu[03-04]\n"
            "SwitchName=top Level=1 LinkSpeed=1 Nodes=gpu[01-04] Switches=s[1-2]\n");
  EXPECT_EQ(Show(c, "topology", "s2"), "SwitchName=s2 Level=0 LinkSpeed=100 Nodes=gpu[03-04]\n");
  EXPECT_EQ(Show(c, "topology", "s9"), "error: switch s9 not found");
}

TEST(ShowNodeTest, GpuNode) {
  Cluster c;
  c.M1();
  EXPECT_EQ(Show(c, "node", "gpu01"), kGpu01);
}

TEST(ShowNodeTest, CpuNodeAndIdleNode) {
  Cluster c;
  c.M1();
  // scontrol show node cpu01
  EXPECT_EQ(Show(c, "node", "cpu01"),
            "NodeName=cpu01 Arch=x86_64 CoresPerSocket=16 \n"
            "   CPUAlloc=7 CPUEfctv=32 CPUTot=32 CPULoad=N/A\n"
            "   AvailableFeatures=cpu\n"
            "   ActiveFeatures=cpu\n"
            "   Gres=(null)\n"
            "   NodeAddr=cpu01 NodeHostName=cpu01 Version=22.05.8\n"
            "   OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 \n"
            "   RealMemory=64000 AllocMem=5000 FreeMem=N/A Sockets=2 Boards=1\n"
            "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=short \n"
            "   BootTime=2026-12-02T15:39:05 SlurmdStartTime=2026-12-02T15:39:05\n"
            "   LastBusyTime=2026-12-02T15:40:36\n"
            "   CfgTRES=cpu=32,mem=62.50G,billing=32\n"
            "   AllocTRES=cpu=7,mem=5000M\n"
            "   CapWatts=n/a\n"
            "   CurrentWatts=0 AveWatts=0\n"
            "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
            "\n");
  // scontrol show node gpu02
  EXPECT_EQ(Show(c, "node", "gpu02"),
            "NodeName=gpu02 Arch=x86_64 CoresPerSocket=16 \n"
            "   CPUAlloc=0 CPUEfctv=32 CPUTot=32 CPULoad=N/A\n"
            "   AvailableFeatures=h100,gpu\n"
            "   ActiveFeatures=h100,gpu\n"
            "   Gres=gpu:h100:8\n"
            "   NodeAddr=gpu02 NodeHostName=gpu02 Version=22.05.8\n"
            "   OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 \n"
            "   RealMemory=64000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1\n"
            "   State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=short,train \n"
            "   BootTime=2026-12-02T15:39:05 SlurmdStartTime=2026-12-02T15:39:05\n"
            "   LastBusyTime=2026-12-02T15:40:36\n"
            "   CfgTRES=cpu=32,mem=62.50G,billing=32,gres/gpu=8\n"
            "   AllocTRES=\n"
            "   CapWatts=n/a\n"
            "   CurrentWatts=0 AveWatts=0\n"
            "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
            "\n");
}

TEST(ShowNodeTest, OneLiner) {
  Cluster c;
  c.M1();
  // scontrol -o show node gpu01
  EXPECT_EQ(Show(c, "node", "gpu01", /*one_liner=*/true),
            "NodeName=gpu01 Arch=x86_64 CoresPerSocket=16  CPUAlloc=1 CPUEfctv=32 CPUTot=32 "
            "CPULoad=N/A AvailableFeatures=h100,gpu ActiveFeatures=h100,gpu Gres=gpu:h100:8 "
            "NodeAddr=gpu01 NodeHostName=gpu01 Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP "
            "PREEMPT_DYNAMIC @0  RealMemory=64000 AllocMem=1000 FreeMem=N/A Sockets=2 Boards=1 "
            "State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
            "Partitions=short,train  BootTime=2026-12-02T15:39:05 "
            "SlurmdStartTime=2026-12-02T15:39:05 LastBusyTime=2026-12-02T15:40:36 "
            "CfgTRES=cpu=32,mem=62.50G,billing=32,gres/gpu=8 AllocTRES=cpu=1,mem=1000M,gres/gpu=2 "
            "CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 "
            "ExtSensorsTemp=n/s\n");
}

TEST(ShowNodeTest, DetailsAddGresLines) {
  Cluster c;
  c.Use("gpu01", 2, 2000, {0, 1, 2, 3});
  // scontrol -d show node gpu01 (2 CPUs and GPUs 0-3 in use)
  EXPECT_EQ(Show(c, "node", "gpu01", false, /*details=*/true),
            "NodeName=gpu01 Arch=x86_64 CoresPerSocket=16 \n"
            "   CPUAlloc=2 CPUEfctv=32 CPUTot=32 CPULoad=N/A\n"
            "   AvailableFeatures=h100,gpu\n"
            "   ActiveFeatures=h100,gpu\n"
            "   Gres=gpu:h100:8\n"
            "   GresDrain=N/A\n"
            "   GresUsed=gpu:h100:4(IDX:0-3)\n"
            "   NodeAddr=gpu01 NodeHostName=gpu01 Version=22.05.8\n"
            "   OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 \n"
            "   RealMemory=64000 AllocMem=2000 FreeMem=N/A Sockets=2 Boards=1\n"
            "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=short,train \n"
            "   BootTime=2026-12-02T15:39:05 SlurmdStartTime=2026-12-02T15:39:05\n"
            "   LastBusyTime=2026-12-02T15:40:36\n"
            "   CfgTRES=cpu=32,mem=62.50G,billing=32,gres/gpu=8\n"
            "   AllocTRES=cpu=2,mem=2000M,gres/gpu=4\n"
            "   CapWatts=n/a\n"
            "   CurrentWatts=0 AveWatts=0\n"
            "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
            "\n");
}

TEST(ShowNodeTest, DrainingNodeShowsReason) {
  Cluster c;
  c.Use("cpu02", 2, 2000);
  core::Node& n = c.Node("cpu02");
  n.drain = true;
  n.reason = "bad fan";
  n.reason_uid = 0;
  n.reason_time = At("2026-12-02T15:46:00");
  // scontrol update NodeName=cpu02 State=DRAIN Reason="bad fan"; scontrol show node cpu02
  EXPECT_EQ(Show(c, "node", "cpu02"),
            "NodeName=cpu02 Arch=x86_64 CoresPerSocket=16 \n"
            "   CPUAlloc=2 CPUEfctv=32 CPUTot=32 CPULoad=N/A\n"
            "   AvailableFeatures=cpu\n"
            "   ActiveFeatures=cpu\n"
            "   Gres=(null)\n"
            "   NodeAddr=cpu02 NodeHostName=cpu02 Version=22.05.8\n"
            "   OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 \n"
            "   RealMemory=64000 AllocMem=2000 FreeMem=N/A Sockets=2 Boards=1\n"
            "   State=MIXED+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=short \n"
            "   BootTime=2026-12-02T15:39:05 SlurmdStartTime=2026-12-02T15:39:05\n"
            "   LastBusyTime=2026-12-02T15:40:36\n"
            "   CfgTRES=cpu=32,mem=62.50G,billing=32\n"
            "   AllocTRES=cpu=2,mem=2000M\n"
            "   CapWatts=n/a\n"
            "   CurrentWatts=0 AveWatts=0\n"
            "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
            "   Reason=bad fan [root@2026-12-02T15:46:00]\n"
            "\n");
}

TEST(ShowNodeTest, DownNode) {
  Cluster c;
  core::Node& n = c.Node("cpu02");
  n.down = true;
  n.reason = "down test";
  n.reason_time = At("2026-12-02T16:03:53");
  // scontrol update NodeName=cpu02 State=DOWN Reason="down test"; scontrol show node cpu02
  std::string out = Show(c, "node", "cpu02");
  EXPECT_NE(out.find("\n   State=DOWN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n   Reason=down test [root@2026-12-02T16:03:53]\n\n"), std::string::npos);
  // ... then State=DRAIN Reason="both"
  n.drain = true;
  n.reason = "both";
  out = Show(c, "node", "cpu02");
  EXPECT_NE(out.find("\n   State=DOWN+DRAIN ThreadsPerCore=1 "), std::string::npos) << out;
  EXPECT_NE(out.find("\n   Reason=both [root@2026-12-02T16:03:53]\n\n"), std::string::npos);
}

TEST(ShowNodeTest, AllocatedNodeTres) {
  Cluster c;
  c.Use("gpu04", 32, 32000, {0, 1, 2, 3, 4, 5, 6, 7});
  // sbatch --exclusive -w gpu04; scontrol show node gpu04
  std::string out = Show(c, "node", "gpu04");
  EXPECT_NE(out.find("   State=ALLOCATED ThreadsPerCore=1 "), std::string::npos) << out;
  EXPECT_NE(out.find("   AllocTRES=cpu=32,mem=32000M,gres/gpu=8\n"), std::string::npos) << out;
  EXPECT_NE(out.find("   CPUAlloc=32 CPUEfctv=32 CPUTot=32 "), std::string::npos) << out;
}

std::vector<std::string> NodeNames(const std::string& text) {
  std::vector<std::string> names;
  size_t pos = 0;
  while ((pos = text.find("NodeName=", pos)) != std::string::npos) {
    pos += 9;
    names.push_back(text.substr(pos, text.find(' ', pos) - pos));
  }
  return names;
}

TEST(ShowNodeTest, ListsAndHostlists) {
  Cluster c;
  // scontrol show node: by name, though slurm.conf lists gpu nodes first.
  std::string all = Show(c, "node", "");
  EXPECT_EQ(NodeNames(all),
            (std::vector<std::string>{"cpu01", "cpu02", "gpu01", "gpu02", "gpu03", "gpu04"}));
  // Records end with a blank line; with -o one line each.
  EXPECT_EQ(all.substr(all.size() - 3), "s\n\n");
  std::string one = Show(c, "nodes", "", true);
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 6);
  // scontrol show node 'gpu[01-02]' / gpu01,cpu01: in the order named.
  EXPECT_EQ(NodeNames(Show(c, "node", "gpu[01-02]")), (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(NodeNames(Show(c, "node", "gpu01,cpu01")), (std::vector<std::string>{"gpu01", "cpu01"}));
}

TEST(ShowNodeTest, UnregisteredNodeOmitsArchAndOs) {
  Cluster c;
  c.Node("gpu03").registered = false;
  c.Node("gpu03").boot_time = 0;
  std::string out = Show(c, "node", "gpu03");
  EXPECT_EQ(out.substr(0, out.find('\n')), "NodeName=gpu03 CoresPerSocket=16 ");
  EXPECT_EQ(out.find("OS="), std::string::npos);
  EXPECT_NE(out.find("   State=UNKNOWN+NOT_RESPONDING "), std::string::npos) << out;
  EXPECT_NE(out.find("   BootTime=None SlurmdStartTime=None\n"), std::string::npos) << out;
}

// ---- partitions ----------------------------------------------------------------

// scontrol show partition
constexpr char kPartitions[] =
    "PartitionName=short\n"
    "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
    "   AllocNodes=ALL Default=YES QoS=N/A\n"
    "   DefaultTime=01:00:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
    "   MaxNodes=UNLIMITED MaxTime=04:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
    "   Nodes=cpu[01-02],gpu[01-04]\n"
    "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
    "   OverTimeLimit=NONE PreemptMode=OFF\n"
    "   State=UP TotalCPUs=192 TotalNodes=6 SelectTypeParameters=NONE\n"
    "   JobDefaults=(null)\n"
    "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
    "   TRES=cpu=192,mem=375G,node=6,billing=192,gres/gpu=32\n"
    "\n"
    "PartitionName=train\n"
    "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
    "   AllocNodes=ALL Default=NO QoS=N/A\n"
    "   DefaultTime=04:00:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
    "   MaxNodes=UNLIMITED MaxTime=3-00:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
    "   Nodes=gpu[01-04]\n"
    "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
    "   OverTimeLimit=NONE PreemptMode=OFF\n"
    "   State=UP TotalCPUs=128 TotalNodes=4 SelectTypeParameters=NONE\n"
    "   JobDefaults=(null)\n"
    "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
    "   TRES=cpu=128,mem=250G,node=4,billing=128,gres/gpu=32\n"
    "\n";

TEST(ShowPartitionTest, AllAndOne) {
  Cluster c;
  EXPECT_EQ(Show(c, "partition", ""), kPartitions);
  // scontrol show part train
  std::string train = kPartitions;
  EXPECT_EQ(Show(c, "part", "train"), train.substr(train.find("PartitionName=train")));
  // scontrol -o show partition train
  EXPECT_EQ(Show(c, "partition", "train", true),
            "PartitionName=train AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
            "Default=NO QoS=N/A DefaultTime=04:00:00 DisableRootJobs=NO ExclusiveUser=NO "
            "GraceTime=0 Hidden=NO MaxNodes=UNLIMITED MaxTime=3-00:00:00 MinNodes=0 LLN=NO "
            "MaxCPUsPerNode=UNLIMITED Nodes=gpu[01-04] PriorityJobFactor=1 PriorityTier=1 "
            "RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP "
            "TotalCPUs=128 TotalNodes=4 SelectTypeParameters=NONE JobDefaults=(null) "
            "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED "
            "TRES=cpu=128,mem=250G,node=4,billing=128,gres/gpu=32\n");
}

TEST(ShowPartitionTest, NoDefaultTimeOneNode) {
  Cluster c;
  core::Partition p = Part("verylongpartitionname", {"cpu01"}, 30 * 60, -1);
  p.min_nodes = 1;
  c.cfg.partitions.push_back(p);
  // scontrol create PartitionName=verylongpartitionname Nodes=cpu01 MaxTime=30
  EXPECT_EQ(Show(c, "partition", "verylongpartitionname"),
            "PartitionName=verylongpartitionname\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
            "   AllocNodes=ALL Default=NO QoS=N/A\n"
            "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=1 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=cpu01\n"
            "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=OFF\n"
            "   State=UP TotalCPUs=32 TotalNodes=1 SelectTypeParameters=NONE\n"
            "   JobDefaults=(null)\n"
            "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
            "   TRES=cpu=32,mem=62.50G,node=1,billing=32\n"
            "\n");
}

// The access fields, Hidden and OverSubscribe as slurmctld 22.05 printed them
// after `scontrol update PartitionName=train ...` on the oracle (restored
// afterwards): AllowAccounts=ml,research AllowQos=normal -> line 2
// "AllowGroups=ALL AllowAccounts=ml,research AllowQos=normal";
// AllowGroups=daemon,adm -> "AllowGroups=daemon,adm AllowAccounts=ALL ...";
// AllowAccounts=ALL DenyAccounts=research -> "AllowGroups=ALL
// DenyAccounts=research AllowQos=ALL"; DenyQos=normal -> "... DenyQos=normal";
// Hidden=YES -> "... GraceTime=0 Hidden=YES"; OverSubscribe=FORCE ->
// "OverSubscribe=FORCE:4".
TEST(ShowPartitionTest, AccessFieldsHiddenAndOverSubscribe) {
  struct Case {
    std::vector<std::string> allow_groups, allow_accounts, deny_accounts, allow_qos, deny_qos;
    const char* line2;
  };
  const Case cases[] = {
      {{}, {"ml", "research"}, {}, {"normal"}, {},
       "   AllowGroups=ALL AllowAccounts=ml,research AllowQos=normal\n"},
      {{"daemon", "adm"}, {}, {}, {}, {}, "   AllowGroups=daemon,adm AllowAccounts=ALL AllowQos=ALL\n"},
      {{}, {}, {"research"}, {}, {}, "   AllowGroups=ALL DenyAccounts=research AllowQos=ALL\n"},
      {{}, {}, {}, {}, {"normal"}, "   AllowGroups=ALL AllowAccounts=ALL DenyQos=normal\n"},
      // An allow list hides the deny list (AllowQos=normal with a DenyQos set).
      {{}, {"ml"}, {"research"}, {"normal"}, {"limited"},
       "   AllowGroups=ALL AllowAccounts=ml AllowQos=normal\n"},
  };
  for (const Case& k : cases) {
    Cluster c;
    core::Partition& train = c.cfg.partitions[1];
    train.allow_groups = k.allow_groups;
    train.allow_accounts = k.allow_accounts;
    train.deny_accounts = k.deny_accounts;
    train.allow_qos = k.allow_qos;
    train.deny_qos = k.deny_qos;
    std::string out = Show(c, "partition", "train");
    EXPECT_EQ(out.substr(0, out.find("   AllocNodes")), std::string("PartitionName=train\n") + k.line2);
  }
  Cluster c;
  c.cfg.partitions[1].hidden = true;
  c.cfg.partitions[1].oversubscribe = "FORCE:4";
  std::string out = Show(c, "partition", "train");
  EXPECT_NE(out.find(" GraceTime=0 Hidden=YES\n"), std::string::npos) << out;
  EXPECT_NE(out.find(" ReqResv=NO OverSubscribe=FORCE:4\n"), std::string::npos) << out;
}

// As mtest1 (uid 1001) with train Hidden=YES on the oracle: `scontrol show
// partition` lists short only; `scontrol show partition train` prints
// "Partition train not found". As root both appear.
TEST(ShowPartitionTest, HiddenOnlyForPrivilegedCallers) {
  Cluster c;
  c.cfg.partitions[1].hidden = true;
  ClusterView v = c.View();
  v.caller_uid = 1001;
  Result<std::string> all = RenderShow(ShowRequest{"partition", "", false, false}, v);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->find("PartitionName=train"), std::string::npos);
  EXPECT_EQ(all->substr(0, 18), "PartitionName=shor");
  Result<std::string> one = RenderShow(ShowRequest{"partition", "train", false, false}, v);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().message(), "Partition train not found");
  v.caller_uid = 0;
  one = RenderShow(ShowRequest{"partition", "train", false, false}, v);
  ASSERT_TRUE(one.ok());
  EXPECT_NE(one->find("Hidden=YES"), std::string::npos);
}

// scontrol show config on the oracle prints "EnforcePartLimits       = NO"
// (its default); slurm.conf(5) makes YES a synonym of ALL.
TEST(ShowConfigTest, EnforcePartLimitsFromTheTypedConfig) {
  Cluster c;
  auto line = [&] {
    std::string out = Show(c, "config", "");
    size_t at = out.find("EnforcePartLimits");
    return at == std::string::npos ? out : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(line(), "EnforcePartLimits       = NO");
  c.cfg.raw["EnforcePartLimits"] = "YES";
  c.cfg.enforce_part_limits = config::EnforcePartLimits::kAll;
  EXPECT_EQ(line(), "EnforcePartLimits       = ALL");
  c.cfg.enforce_part_limits = config::EnforcePartLimits::kAny;
  EXPECT_EQ(line(), "EnforcePartLimits       = ANY");
}

// ---- errors ----------------------------------------------------------------------

TEST(ShowErrorsTest, MatchScontrol) {
  Cluster c;
  struct Case {
    const char* what;
    const char* name;
    const char* want;
    util::Code code;
  };
  const Case cases[] = {
      // scontrol show node nosuch
      {"node", "nosuch", "Node nosuch not found", util::Code::kNotFound},
      {"node", "gpu[01-02],nosuch", "Node nosuch not found", util::Code::kNotFound},
      // scontrol show partition nosuch
      {"partition", "nosuch", "Partition nosuch not found", util::Code::kNotFound},
      // scontrol show job abc / 12abc / 999999
      {"job", "abc", "scontrol_print_job error: Invalid job id specified",
       util::Code::kInvalidArgument},
      {"job", "12abc", "scontrol_print_job error: Invalid job id specified",
       util::Code::kInvalidArgument},
      {"job", "999999", "slurm_load_jobs error: Invalid job id specified", util::Code::kNotFound},
      {"jobs", "999999", "slurm_load_jobs error: Invalid job id specified", util::Code::kNotFound},
      // scontrol show foo / p / nodename
      {"foo", "", "invalid entity:foo for keyword:show ", util::Code::kInvalidArgument},
      {"p", "", "invalid entity:p for keyword:show ", util::Code::kInvalidArgument},
      {"nodename", "gpu01", "invalid entity:nodename for keyword:show ",
       util::Code::kInvalidArgument},
  };
  for (const Case& k : cases) {
    Result<std::string> out = RenderShow(ShowRequest{k.what, k.name, false, false}, c.View());
    ASSERT_FALSE(out.ok()) << k.what << " " << k.name;
    EXPECT_EQ(out.status().message(), k.want);
    EXPECT_EQ(out.status().code(), k.code) << k.want;
  }
}

TEST(ShowErrorsTest, Abbreviations) {
  Cluster c;
  // scontrol show no gpu01 / partitionname train / conf
  EXPECT_EQ(NodeNames(Show(c, "no", "gpu01")), std::vector<std::string>{"gpu01"});
  EXPECT_EQ(Show(c, "partitionname", "train").substr(0, 20), "PartitionName=train\n");
  EXPECT_EQ(Show(c, "conf", "").substr(0, 26), "Configuration data as of 2");
  EXPECT_EQ(Show(c, "jobid", ""), "No jobs in the system\n");
}

// ---- jobs --------------------------------------------------------------------------

TEST(ShowJobTest, DelegatesToTheJobRecord) {
  Cluster c;
  EXPECT_EQ(Show(c, "job", ""), "No jobs in the system\n");
  c.jobs.push_back(muster::testing::MakeJob(7).Partition("short"));
  c.jobs.push_back(muster::testing::MakeJob(9).Partition("train"));
  ClusterView v = c.View();
  std::string seven = RenderJobRecord(c.jobs[0], v, false, false);
  std::string nine = RenderJobRecord(c.jobs[1], v, false, false);
  EXPECT_EQ(Show(c, "job", "9"), nine);
  EXPECT_EQ(Show(c, "job", ""), seven + nine);
  EXPECT_EQ(Show(c, "job", "7", true, true), RenderJobRecord(c.jobs[0], v, true, true));
}

// ---- config --------------------------------------------------------------------------

// scontrol show config, at 2026-12-02T15:46:22.
constexpr char kOracleConfig[] = R"ORACLE(Configuration data as of 2026-12-02T15:46:22
AccountingStorageBackupHost = (null)
AccountingStorageEnforce = associations,limits,qos
AccountingStorageHost   = localhost
AccountingStorageExternalHost = (null)
AccountingStorageParameters = (null)
AccountingStoragePort   = 6819
AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu
AccountingStorageType   = accounting_storage/slurmdbd
AccountingStorageUser   = N/A
AccountingStoreFlags    = (null)
AcctGatherEnergyType    = acct_gather_energy/none
AcctGatherFilesystemType = acct_gather_filesystem/none
AcctGatherInterconnectType = acct_gather_interconnect/none
AcctGatherNodeFreq      = 0 sec
AcctGatherProfileType   = acct_gather_profile/none
AllowSpecResourcesUsage = No
AuthAltTypes            = (null)
AuthAltParameters       = (null)
AuthInfo                = (null)
AuthType                = auth/munge
BatchStartTimeout       = 10 sec
BcastExclude            = /lib,/usr/lib,/lib64,/usr/lib64
BcastParameters         = (null)
BOOT_TIME               = 2026-12-02T15:40:35
BurstBufferType         = (null)
CliFilterPlugins        = (null)
ClusterName             = anchor
CommunicationParameters = (null)
CompleteWait            = 0 sec
CoreSpecPlugin          = core_spec/none
CpuFreqDef              = Unknown
CpuFreqGovernors        = OnDemand,Performance,UserSpace
CredType                = cred/munge
DebugFlags              = (null)
DefMemPerCPU            = 1000
DependencyParameters    = (null)
DisableRootJobs         = No
EioTimeout              = 60
EnforcePartLimits       = NO
Epilog                  = (null)
EpilogMsgTime           = 2000 usec
EpilogSlurmctld         = (null)
ExtSensorsType          = ext_sensors/none
ExtSensorsFreq          = 0 sec
FairShareDampeningFactor = 1
FederationParameters    = (null)
FirstJobId              = 1
GetEnvTimeout           = 2 sec
GresTypes               = gpu
GpuFreqDef              = high,memory=high
GroupUpdateForce        = 1
GroupUpdateTime         = 600 sec
HASH_VAL                = Match
HealthCheckInterval     = 0 sec
HealthCheckNodeState    = ANY
HealthCheckProgram      = (null)
InactiveLimit           = 0 sec
InteractiveStepOptions  = --interactive --preserve-env --pty $SHELL
JobAcctGatherFrequency  = 30
JobAcctGatherType       = jobacct_gather/linux
JobAcctGatherParams     = (null)
JobCompHost             = localhost
JobCompLoc              = /var/log/slurm_jobcomp.log
JobCompPort             = 0
JobCompType             = jobcomp/none
JobCompUser             = root
JobContainerType        = job_container/none
JobCredentialPrivateKey = (null)
JobCredentialPublicCertificate = (null)
JobDefaults             = (null)
JobFileAppend           = 0
JobRequeue              = 1
JobSubmitPlugins        = (null)
KillOnBadExit           = 0
KillWait                = 5 sec
LaunchParameters        = (null)
LaunchType              = launch/slurm
Licenses                = (null)
LogTimeFormat           = iso8601_ms
MailDomain              = (null)
MailProg                = /bin/true
MaxArraySize            = 100001
MaxDBDMsgs              = 400024
MaxJobCount             = 200000
MaxJobId                = 67043328
MaxMemPerNode           = UNLIMITED
MaxNodeCount            = 6
MaxStepCount            = 40000
MaxTasksPerNode         = 512
MCSPlugin               = mcs/none
MCSParameters           = (null)
MessageTimeout          = 10 sec
MinJobAge               = 300 sec
MpiDefault              = none
MpiParams               = (null)
MULTIPLE_SLURMD         = Yes
NEXT_JOB_ID             = 101
NodeFeaturesPlugins     = (null)
OverTimeLimit           = 0 min
PluginDir               = /usr/lib/x86_64-linux-gnu/slurm-wlm
PlugStackConfig         = (null)
PowerParameters         = (null)
PowerPlugin             = 
PreemptMode             = OFF
PreemptType             = preempt/none
PreemptExemptTime       = 00:00:00
PrEpParameters          = (null)
PrEpPlugins             = prep/script
PriorityParameters      = (null)
PrioritySiteFactorParameters = (null)
PrioritySiteFactorPlugin = (null)
PriorityDecayHalfLife   = 7-00:00:00
PriorityCalcPeriod      = 00:05:00
PriorityFavorSmall      = No
PriorityFlags           = 
PriorityMaxAge          = 7-00:00:00
PriorityUsageResetPeriod = NONE
PriorityType            = priority/multifactor
PriorityWeightAge       = 1000
PriorityWeightAssoc     = 0
PriorityWeightFairShare = 10000
PriorityWeightJobSize   = 1000
PriorityWeightPartition = 1000
PriorityWeightQOS       = 2000
PriorityWeightTRES      = (null)
PrivateData             = none
ProctrackType           = proctrack/linuxproc
Prolog                  = (null)
PrologEpilogTimeout     = 65534
PrologSlurmctld         = (null)
PrologFlags             = (null)
PropagatePrioProcess    = 0
PropagateResourceLimits = ALL
PropagateResourceLimitsExcept = (null)
RebootProgram           = (null)
ReconfigFlags           = (null)
RequeueExit             = (null)
RequeueExitHold         = (null)
ResumeFailProgram       = (null)
ResumeProgram           = (null)
ResumeRate              = 300 nodes/min
ResumeTimeout           = 60 sec
ResvEpilog              = (null)
ResvOverRun             = 0 min
ResvProlog              = (null)
ReturnToService         = 2
RoutePlugin             = route/default
SchedulerParameters     = (null)
SchedulerTimeSlice      = 30 sec
SchedulerType           = sched/backfill
ScronParameters         = (null)
SelectType              = select/cons_tres
SelectTypeParameters    = CR_CORE_MEMORY
SlurmUser               = root(0)
SlurmctldAddr           = (null)
SlurmctldDebug          = info
SlurmctldHost[0]        = vm(127.0.0.1)
SlurmctldLogFile        = /var/tmp/slurm-oracle/log/slurmctld.log
SlurmctldPort           = 6817
SlurmctldSyslogDebug    = (null)
SlurmctldPrimaryOffProg = (null)
SlurmctldPrimaryOnProg  = (null)
SlurmctldTimeout        = 60 sec
SlurmctldParameters     = (null)
SlurmdDebug             = info
SlurmdLogFile           = /var/tmp/slurm-oracle/log/slurmd-%n.log
SlurmdParameters        = config_overrides
SlurmdPidFile           = /var/tmp/slurm-oracle/slurmd-%n.pid
SlurmdPort              = 6818
SlurmdSpoolDir          = /var/tmp/slurm-oracle/spool/%n
SlurmdSyslogDebug       = (null)
SlurmdTimeout           = 120 sec
SlurmdUser              = root(0)
SlurmSchedLogFile       = /var/tmp/slurm-oracle/log/sched.log
SlurmSchedLogLevel      = 0
SlurmctldPidFile        = /var/tmp/slurm-oracle/slurmctld.pid
SlurmctldPlugstack      = (null)
SLURM_CONF              = /etc/slurm/slurm.conf
SLURM_VERSION           = 22.05.8
SrunEpilog              = (null)
SrunPortRange           = 0-0
SrunProlog              = (null)
StateSaveLocation       = /var/tmp/slurm-oracle/state
SuspendExcNodes         = (null)
SuspendExcParts         = (null)
SuspendProgram          = (null)
SuspendRate             = 60 nodes/min
SuspendTime             = INFINITE
SuspendTimeout          = 30 sec
SwitchParameters        = (null)
SwitchType              = switch/none
TaskEpilog              = (null)
TaskPlugin              = task/none
TaskPluginParam         = (null type)
TaskProlog              = (null)
TCPTimeout              = 2 sec
TmpFS                   = /tmp
TopologyParam           = (null)
TopologyPlugin          = topology/none
TrackWCKey              = No
TreeWidth               = 50
UsePam                  = No
UnkillableStepProgram   = (null)
UnkillableStepTimeout   = 60 sec
VSizeFactor             = 0 percent
WaitTime                = 0 sec
X11Parameters           = (null)

Slurmctld(primary) at vm is UP
)ORACLE";

// The oracle's slurm.conf as Config holds it: typed values and every
// top-level Key=Value as written.
Cluster OracleConfigCluster() {
  Cluster c;
  config::Config& cfg = c.cfg;
  cfg.control_host = "vm";
  cfg.control_addr = "127.0.0.1";
  cfg.state_save_location = "/var/tmp/slurm-oracle/state";
  cfg.slurmd_spool_dir = "/var/tmp/slurm-oracle/spool/%n";
  cfg.def_mem_per_cpu_mb = 1000;
  cfg.kill_wait_s = 5;
  cfg.min_job_age_s = 300;
  cfg.slurmd_timeout_s = 120;
  cfg.slurmctld_port = 6817;
  cfg.max_job_count = 200000;
  cfg.first_job_id = 1;
  cfg.slurm_user = "root";
  cfg.raw = {
      {"ClusterName", "anchor"},
      {"SlurmctldHost", "vm(127.0.0.1)"},
      {"SlurmUser", "root"},
      {"SlurmdUser", "root"},
      {"AuthType", "auth/munge"},
      {"CredType", "cred/munge"},
      {"StateSaveLocation", "/var/tmp/slurm-oracle/state"},
      {"SlurmdSpoolDir", "/var/tmp/slurm-oracle/spool/%n"},
      {"SlurmctldPidFile", "/var/tmp/slurm-oracle/slurmctld.pid"},
      {"SlurmdPidFile", "/var/tmp/slurm-oracle/slurmd-%n.pid"},
      {"SlurmctldLogFile", "/var/tmp/slurm-oracle/log/slurmctld.log"},
      {"SlurmdLogFile", "/var/tmp/slurm-oracle/log/slurmd-%n.log"},
      {"SlurmSchedLogFile", "/var/tmp/slurm-oracle/log/sched.log"},
      {"SlurmdParameters", "config_overrides"},
      {"MailProg", "/bin/true"},
      {"MpiDefault", "none"},
      {"ProctrackType", "proctrack/linuxproc"},
      {"TaskPlugin", "task/none"},
      {"ReturnToService", "2"},
      {"SlurmctldTimeout", "60"},
      {"SlurmdTimeout", "120"},
      {"InactiveLimit", "0"},
      {"KillWait", "5"},
      {"Waittime", "0"},
      {"SelectType", "select/cons_tres"},
      {"SelectTypeParameters", "CR_Core_Memory"},
      {"DefMemPerCPU", "1000"},
      {"GresTypes", "gpu"},
      {"MaxJobCount", "200000"},
      {"MaxArraySize", "100001"},
      {"SchedulerType", "sched/backfill"},
      {"PriorityType", "priority/multifactor"},
      {"PriorityDecayHalfLife", "7-0"},
      {"PriorityMaxAge", "7-0"},
      {"PriorityWeightAge", "1000"},
      {"PriorityWeightFairshare", "10000"},
      {"PriorityWeightJobSize", "1000"},
      {"PriorityWeightPartition", "1000"},
      {"PriorityWeightQOS", "2000"},
      {"AccountingStorageType", "accounting_storage/slurmdbd"},
      {"AccountingStorageHost", "localhost"},
      {"AccountingStoragePort", "6819"},
      {"AccountingStorageEnforce", "associations,limits,qos"},
      {"AccountingStorageTRES", "gres/gpu"},
      {"SlurmctldPort", "6817"},
      {"MessageTimeout", "10"},
      {"MinJobAge", "300"},
      {"JobAcctGatherType", "jobacct_gather/linux"},
      {"JobAcctGatherFrequency", "30"},
      {"JobCompType", "jobcomp/none"},
      {"SlurmctldDebug", "info"},
      {"SlurmdDebug", "info"},
  };
  c.jobs.push_back(muster::testing::MakeJob(100));
  return c;
}

TEST(ShowConfigTest, MatchesTheOracle) {
  Cluster c = OracleConfigCluster();
  EXPECT_EQ(Show(c, "config", ""), kOracleConfig);
}

TEST(ShowConfigTest, UnsetValuesAndMusterKeys) {
  Cluster c = OracleConfigCluster();
  c.cfg.def_mem_per_cpu_mb = 0;
  c.cfg.max_mem_per_cpu_mb = 2000;
  c.cfg.raw.erase("AccountingStorageType");
  c.cfg.raw["NodeName"] = "gpu01";        // node lines have their own command
  c.cfg.raw["MusterSchedulerTrace"] = "yes";  // not a Slurm key: sorted in
  c.jobs.clear();
  std::string out = Show(c, "config", "");
  EXPECT_NE(out.find("\nDefMemPerNode           = UNLIMITED\nDependencyParameters"),
            std::string::npos);
  EXPECT_NE(out.find("\nMaxMemPerCPU            = 2000\nMaxNodeCount"), std::string::npos);
  EXPECT_NE(out.find("\nAccountingStorageType   = accounting_storage/none\n"), std::string::npos);
  EXPECT_NE(out.find("\nMULTIPLE_SLURMD         = Yes\nMusterSchedulerTrace    = yes\nNEXT_JOB_ID"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nNEXT_JOB_ID             = 1\n"), std::string::npos);
  EXPECT_EQ(out.find("NodeName"), std::string::npos);
}

TEST(ShowRequestJsonTest, RoundTrip) {
  ShowRequest r{"node", "gpu[01-02]", true, true};
  Result<ShowRequest> back = ShowRequestFromJson(ToJson(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->what, "node");
  EXPECT_EQ(back->name, "gpu[01-02]");
  EXPECT_TRUE(back->one_liner);
  EXPECT_TRUE(back->details);
  EXPECT_FALSE(ShowRequestFromJson(nlohmann::json{{"what", 1}}).ok());
  EXPECT_FALSE(ShowRequestFromJson(nlohmann::json("x")).ok());
}

}  // namespace
}  // namespace muster::render

#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace muster::config {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// tests/data/conf, found from this file's path (CMake compiles with
// absolute source paths).
std::string DataDir() {
  return (fs::path(MUSTER_SOURCE_DIR) / "tests" / "data" / "conf").lexically_normal().string();
}

// A fresh directory under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "muster_config_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    fs::path p = fs::path(path_) / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Parses text as /tmp/none/muster.conf without reading any gres.conf.
util::Result<Config> Parse(const std::string& text, const std::string& gres = {}) {
  return ParseConfig(text, "/nonexistent-muster-test/muster.conf", gres, false);
}

constexpr const char* kTwoNodes =
    "GresTypes=gpu\n"
    "NodeName=gpu[01-02] CPUs=8 Gres=gpu:h100:4 RealMemory=1000\n";

// ---------------------------------------------------------------------------
// The real slurm.conf of the local Slurm loads unchanged.

TEST(OracleConfig, LoadsUnchanged) {
  auto cfg = LoadConfig(DataDir() + "/slurm-oracle/slurm.conf");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->path, DataDir() + "/slurm-oracle/slurm.conf");
  EXPECT_EQ(cfg->cluster_name, "anchor");
  EXPECT_EQ(cfg->control_host, "vm");
  EXPECT_EQ(cfg->control_addr, "127.0.0.1");
  EXPECT_EQ(cfg->state_save_location, "/var/tmp/slurm-oracle/state");
  EXPECT_EQ(cfg->slurmd_spool_dir, "/var/tmp/slurm-oracle/spool/%n");
  EXPECT_EQ(cfg->def_mem_per_cpu_mb, 1000);
  EXPECT_EQ(cfg->kill_wait_s, 5);
  EXPECT_EQ(cfg->slurmd_timeout_s, 120);
  EXPECT_EQ(cfg->min_job_age_s, 300);
  EXPECT_EQ(cfg->slurmctld_port, 6817);
  EXPECT_EQ(cfg->max_job_count, 200000);
  EXPECT_EQ(cfg->slurm_user, "root");
  EXPECT_THAT(cfg->gres_types, ElementsAre("gpu"));

  std::vector<std::string> names;
  for (const auto& n : cfg->nodes) names.push_back(n.name);
  EXPECT_THAT(names, ElementsAre("gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"));
  for (const auto& n : cfg->nodes) {
    SCOPED_TRACE(n.name);
    EXPECT_EQ(n.cpus, 32);
    EXPECT_EQ(n.sockets, 2);
    EXPECT_EQ(n.cores_per_socket, 16);
    EXPECT_EQ(n.threads_per_core, 1);
    EXPECT_EQ(n.real_memory_mb, 64000);
    EXPECT_EQ(n.initial_state, core::NodeInitialState::kUnknown);
    if (n.name.rfind("gpu", 0) == 0) {
      ASSERT_EQ(n.gres.size(), 1u);
      EXPECT_EQ(n.gres[0].name, "gpu");
      EXPECT_EQ(n.gres[0].type, "h100");
      EXPECT_EQ(n.gres[0].count, 8);
      ASSERT_EQ(n.gres[0].files.size(), 8u);
      EXPECT_EQ(n.gres[0].files[0], "/var/tmp/slurm-oracle/dev/nvidia0");
      EXPECT_EQ(n.gres[0].files[7], "/var/tmp/slurm-oracle/dev/nvidia7");
      EXPECT_THAT(n.features, ElementsAre("h100", "gpu"));
    } else {
      EXPECT_TRUE(n.gres.empty());
      EXPECT_THAT(n.features, ElementsAre("cpu"));
    }
  }

  ASSERT_EQ(cfg->partitions.size(), 2u);
  const core::Partition* def = cfg->DefaultPartition();
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->name, "short");
  EXPECT_EQ(def->max_time_s, 4 * 3600);
  EXPECT_EQ(def->default_time_s, 3600);
  EXPECT_EQ(def->state, core::PartitionState::kUp);
  EXPECT_EQ(def->nodes_expr, "gpu[01-04],cpu[01-02]");
  EXPECT_EQ(def->nodes.size(), 6u);
  const core::Partition* train = cfg->FindPartition("train");
  ASSERT_NE(train, nullptr);
  EXPECT_FALSE(train->is_default);
  EXPECT_EQ(train->max_time_s, 3 * 86400);
  EXPECT_EQ(train->default_time_s, 4 * 3600);
  EXPECT_THAT(train->nodes, ElementsAre("gpu01", "gpu02", "gpu03", "gpu04"));

  // Slurm-only keys are accepted and listed for a warning.
  EXPECT_THAT(cfg->ignored_keys, ::testing::Contains("slurm.conf:5: SlurmdUser"));
  // Read, not ignored: how hosts authenticate and where each node's agent is,
  // and the scheduler (sched/backfill).
  EXPECT_EQ(cfg->auth_type, AuthType::kMunge);
  EXPECT_TRUE(cfg->backfill);
  const core::NodeConfig* gpu01 = cfg->FindNode("gpu01");
  ASSERT_NE(gpu01, nullptr);
  EXPECT_EQ(gpu01->addr, "127.0.0.1");
  EXPECT_EQ(gpu01->hostname, "vm");
  EXPECT_GT(gpu01->port, 0);
  EXPECT_EQ(cfg->raw.at("ClusterName"), "anchor");
  EXPECT_EQ(cfg->raw.at("SelectTypeParameters"), "CR_Core_Memory");
  EXPECT_EQ(cfg->raw.count("NodeName"), 0u);
}

// ---------------------------------------------------------------------------
// The Muster-style fixture: Include, DEFAULT records, relative paths.

TEST(MusterConfig, LoadsFixture) {
  const std::string dir = DataDir() + "/muster";
  auto cfg = LoadConfig(dir + "/muster.conf");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->cluster_name, "muster-test");  // lower-cased as Slurm does
  EXPECT_EQ(cfg->control_host, "head");
  EXPECT_EQ(cfg->control_addr, "10.0.0.1");
  EXPECT_EQ(cfg->state_save_location, dir + "/state");
  EXPECT_EQ(cfg->slurmd_spool_dir, dir + "/spool/%n");
  EXPECT_EQ(ControllerSocketPath(*cfg), dir + "/state/musterd.sock");
  EXPECT_EQ(AgentSocketPath(*cfg), dir + "/state/agent.sock");
  EXPECT_EQ(cfg->slurmctld_port, 7817);
  EXPECT_THAT(cfg->admin_users, ElementsAre("alice", "bob"));
  EXPECT_EQ(cfg->def_mem_per_cpu_mb, 2048);
  EXPECT_EQ(cfg->max_mem_per_cpu_mb, 8192);
  EXPECT_EQ(cfg->kill_wait_s, 10);
  EXPECT_EQ(cfg->min_job_age_s, 60);
  EXPECT_EQ(cfg->slurmd_timeout_s, 90);
  EXPECT_EQ(cfg->max_job_count, 5000);
  EXPECT_EQ(cfg->first_job_id, 1000);
  EXPECT_EQ(cfg->slurm_user, "muster");
  EXPECT_THAT(cfg->ignored_keys, ElementsAre("muster.conf:18: SelectType"));
  EXPECT_FALSE(cfg->backfill);

  ASSERT_EQ(cfg->nodes.size(), 6u);
  const core::NodeConfig* gpu = cfg->FindNode("gpu03");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->cpus, 128);
  EXPECT_EQ(gpu->sockets, 2);
  EXPECT_EQ(gpu->cores_per_socket, 32);
  EXPECT_EQ(gpu->threads_per_core, 2);
  EXPECT_EQ(gpu->real_memory_mb, 256000);  // from NodeName=DEFAULT
  EXPECT_EQ(gpu->weight, 10);
  EXPECT_THAT(gpu->features, ElementsAre("a100", "nvlink"));
  ASSERT_EQ(gpu->gres.size(), 1u);
  EXPECT_THAT(gpu->gres[0].files,
              ElementsAre("/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"));
  // Cores= per line: the first two devices near cores 0-31, the others 32-63.
  ASSERT_EQ(gpu->gres[0].device_cores.size(), 4u);
  EXPECT_EQ(gpu->gres[0].device_cores[1].front(), 0);
  EXPECT_EQ(gpu->gres[0].device_cores[1].back(), 31);
  EXPECT_EQ(gpu->gres[0].device_cores[2].front(), 32);
  EXPECT_EQ(gpu->gres[0].device_cores[3].size(), 32u);
  const core::NodeConfig* cpu = cfg->FindNode("cpu2");
  ASSERT_NE(cpu, nullptr);
  // CPUs alone: Slurm infers Sockets=CPUs, one core and thread each.
  EXPECT_EQ(cpu->cpus, 64);
  EXPECT_EQ(cpu->sockets, 64);
  EXPECT_EQ(cpu->cores_per_socket, 1);
  EXPECT_EQ(cpu->threads_per_core, 1);
  EXPECT_EQ(cpu->tmp_disk_mb, 100000);
  EXPECT_EQ(cpu->real_memory_mb, 256000);
  EXPECT_EQ(cfg->FindNode("gpu05"), nullptr);

  ASSERT_EQ(cfg->partitions.size(), 3u);
  const core::Partition* debug = cfg->FindPartition("debug");
  ASSERT_NE(debug, nullptr);
  EXPECT_EQ(debug->nodes.size(), 6u);
  EXPECT_EQ(debug->max_time_s, 30 * 60);
  EXPECT_EQ(debug->default_time_s, 10 * 60);
  EXPECT_EQ(debug->priority_tier, 5);
  EXPECT_EQ(debug->priority_job_factor, 5);
  const core::Partition* gpup = cfg->DefaultPartition();
  ASSERT_NE(gpup, nullptr);
  EXPECT_EQ(gpup->name, "gpu");
  EXPECT_EQ(gpup->max_time_s, 86400);  // from PartitionName=DEFAULT
  EXPECT_THAT(gpup->allow_groups, ElementsAre("ml", "research"));
  EXPECT_EQ(gpup->priority_tier, 10);
  EXPECT_EQ(gpup->priority_job_factor, 1);
  EXPECT_EQ(gpup->max_nodes, 4);
  const core::Partition* cpup = cfg->FindPartition("cpu");
  ASSERT_NE(cpup, nullptr);
  EXPECT_EQ(cpup->state, core::PartitionState::kDrain);
  EXPECT_THAT(cpup->nodes, ElementsAre("cpu1", "cpu2"));
  EXPECT_EQ(cfg->FindPartition("GPU"), nullptr);  // names are case-sensitive
}

// ---------------------------------------------------------------------------
// Syntax.

TEST(Syntax, CommentsQuotesContinuationsAndCase) {
  auto cfg = Parse(
      "# a comment line\n"
      "   \n"
      "clustername=Alpha   # trailing comment\n"
      "SLURMUSER = \"slurm user\"\n"
      "MailProg=/bin/true KillWait=7 \\\n"
      "  MinJobAge=9\n"
      "AdminUsers=a\\#b\n"
      "GresTypes=gpu\n"
      "NodeName=n[1-2] \\\n"
      "   CPUs=4   # cpus\n"
      "PartitionName=p Nodes=n[1-\\\n"
      "2] Default=yes\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->cluster_name, "alpha");
  EXPECT_EQ(cfg->slurm_user, "slurm user");
  EXPECT_EQ(cfg->kill_wait_s, 7);
  EXPECT_EQ(cfg->min_job_age_s, 9);
  EXPECT_THAT(cfg->admin_users, ElementsAre("a#b"));
  ASSERT_EQ(cfg->nodes.size(), 2u);
  EXPECT_EQ(cfg->nodes[1].cpus, 4);
  ASSERT_NE(cfg->DefaultPartition(), nullptr);
  EXPECT_THAT(cfg->DefaultPartition()->nodes, ElementsAre("n1", "n2"));
  EXPECT_THAT(cfg->ignored_keys, ElementsAre("muster.conf:5: MailProg"));
  EXPECT_EQ(cfg->raw.at("clustername"), "Alpha");
  EXPECT_EQ(cfg->raw.at("SLURMUSER"), "slurm user");
}

TEST(Syntax, HashInQuotesStillStartsAComment) {
  // Slurm 22.05 strips comments before it looks at quotes.
  auto cfg = Parse("SlurmUser=\"a # b\"\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->slurm_user, "\"a");
}

TEST(Syntax, RawKeepsLastValueAndSpelling) {
  auto cfg = Parse("ClusterName=a\nclustername=b\nKillWait=1\nKillWait=2\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->cluster_name, "b");
  EXPECT_EQ(cfg->kill_wait_s, 2);
  EXPECT_EQ(cfg->raw.count("ClusterName"), 0u);
  EXPECT_EQ(cfg->raw.at("clustername"), "b");
  EXPECT_EQ(cfg->raw.at("KillWait"), "2");
}

TEST(Keys, MpiDefaultIsNoneOrPmix) {
  auto cfg = Parse("ClusterName=a\n");
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->mpi_default, "none");
  cfg = Parse("MpiDefault=pmix_v4\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->mpi_default, "pmix");
  cfg = Parse("MpiDefault=pmi2\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("MpiDefault"), std::string::npos) << cfg.status().message();
  EXPECT_NE(cfg.status().message().find("none or pmix"), std::string::npos) << cfg.status().message();
}

TEST(Syntax, EmptyPartitionNodes) {
  auto cfg = Parse("PartitionName=empty Nodes= Default=YES\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  ASSERT_EQ(cfg->partitions.size(), 1u);
  EXPECT_TRUE(cfg->partitions[0].nodes.empty());
  EXPECT_TRUE(cfg->partitions[0].is_default);
}

TEST(Syntax, CrLfLines) {
  auto cfg = Parse("KillWait=3\r\nMinJobAge=4\r\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->kill_wait_s, 3);
  EXPECT_EQ(cfg->min_job_age_s, 4);
}

TEST(Defaults, EmptyConfig) {
  auto cfg = Parse("");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->path, "/nonexistent-muster-test/muster.conf");
  EXPECT_EQ(cfg->cluster_name, "cluster");
  EXPECT_EQ(cfg->state_save_location, "/var/spool/muster/ctld");
  EXPECT_EQ(cfg->DefaultPartition(), nullptr);
  EXPECT_EQ(ControllerSocketPath(*cfg), "/var/spool/muster/ctld/musterd.sock");
}

// ---------------------------------------------------------------------------
// Top-level keys.

TEST(TopLevel, ControllerForms) {
  auto a = Parse("SlurmctldHost=c1\nSlurmctldHost=c2(10.1.1.2)\n");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->control_host, "c1");
  EXPECT_EQ(a->control_addr, "");
  EXPECT_THAT(a->backup_control_hosts, ElementsAre("c2"));

  auto b = Parse("ControlMachine=old\nControlAddr=10.0.0.9\nBackupController=old2\n");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->control_host, "old");
  EXPECT_EQ(b->control_addr, "10.0.0.9");
  EXPECT_THAT(b->backup_control_hosts, ElementsAre("old2"));
}

TEST(TopLevel, PortRangeTakesFirst) {
  auto cfg = Parse("SlurmctldPort=6900-6903\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->slurmctld_port, 6900);
}

TEST(TopLevel, MetricsAddress) {
  auto cfg = Parse("MusterMetricsAddress=127.0.0.1:9817\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->metrics_host, "127.0.0.1");
  EXPECT_EQ(cfg->metrics_port, 9817);
  cfg = Parse("MusterMetricsAddress=[::1]:9100\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->metrics_host, "::1");
  EXPECT_EQ(Parse("ClusterName=a\n")->metrics_port, 0);  // the API socket only
}

TEST(TopLevel, RelativePathsFollowTheirFile) {
  auto cfg = ParseConfig("StateSaveLocation=../state/\nSlurmdSpoolDir=/abs/spool\n",
                         "/srv/cluster/etc/muster.conf", {}, false);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->state_save_location, "/srv/cluster/state");
  EXPECT_EQ(cfg->slurmd_spool_dir, "/abs/spool");
}

TEST(TopLevel, EveryDocumentedSlurmKeyIsAccepted) {
  // A sample across the slurm.conf(5) parameter list, in odd cases.
  const char* keys[] = {"AccountingStorageHost",
                        "acctgatherenergytype",
                        "AuthAltTypes",
                        "BurstBufferType",
                        "CommunicationParameters",
                        "DebugFlags",
                        "DefMemPerGPU",
                        "ResvEpilog",
                        "SrunProlog",
                        "JobSubmitPlugins",
                        "LaunchParameters",
                        "Licenses",
                        "MCSPlugin",
                        "MpiParams",
                        "PrioritySiteFactorPlugin",
                        "ResumeProgram",
                        "SrunPortRange",
                        "SuspendTime",
                        "TaskPluginParam",
                        "TCPTimeout",
                        "TreeWidth",
                        "UnkillableStepTimeout",
                        "X11Parameters",
                        "FastSchedule",
                        "BackupAddr"};
  std::string text;
  for (const char* k : keys) text += std::string(k) + "=x\n";
  auto cfg = Parse(text);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->ignored_keys.size(), std::size(keys));
  EXPECT_EQ(cfg->ignored_keys[1], "muster.conf:2: acctgatherenergytype");
}

TEST(TopLevel, PrologFlagsRebootProgramAndResumeTimeout) {
  auto cfg = Parse("PrologFlags=Contain,Serial\nRebootProgram=/sbin/reboot\nResumeTimeout=600\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->prolog_flags.alloc);  // Contain implies Alloc
  EXPECT_TRUE(cfg->prolog_flags.contain);
  EXPECT_EQ(cfg->reboot_program, "/sbin/reboot");
  EXPECT_EQ(cfg->resume_timeout_s, 600);
  // Serial is taken without an effect, and says so.
  EXPECT_THAT(cfg->ignored_keys, ::testing::Contains("muster.conf:1: PrologFlags=Serial"));
  auto alloc = Parse("PrologFlags=alloc\n");
  ASSERT_TRUE(alloc.ok());
  EXPECT_TRUE(alloc->prolog_flags.alloc);
  EXPECT_FALSE(alloc->prolog_flags.contain);
  EXPECT_EQ(Parse("PrologFlags=Alloc,Eager\n").status().message(),
            "muster.conf:1: PrologFlags: invalid value 'Alloc,Eager' (unknown flag 'Eager' (expected "
            "Alloc, Contain, DeferBatch, NoHold, Serial or X11))");
  EXPECT_EQ(Parse("RebootProgram=reboot\n").status().message(),
            "muster.conf:1: RebootProgram: invalid value 'reboot' (expected an absolute path)");
  EXPECT_FALSE(Parse("ResumeTimeout=soon\n").ok());
}

// ---------------------------------------------------------------------------
// Nodes.

struct CpuCase {
  const char* attrs;
  int cpus, sockets, cores, threads;
};

TEST(Nodes, CpuTopologyInference) {
  const CpuCase cases[] = {
      {"", 1, 1, 1, 1},
      {"CPUs=8", 8, 8, 1, 1},
      {"Procs=8", 8, 8, 1, 1},
      {"Sockets=2 CoresPerSocket=4 ThreadsPerCore=2", 16, 2, 4, 2},
      {"CPUs=8 CoresPerSocket=4", 8, 2, 4, 1},
      {"CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2", 8, 2, 4, 2},  // cores only
      {"CPUs=2 Sockets=2 CoresPerSocket=4", 2, 2, 4, 1},                   // sockets only
      {"Boards=2 SocketsPerBoard=2 CoresPerSocket=8", 32, 4, 8, 1},
      // Sockets is the total even with Boards (slurmctld, unlike its man page).
      {"Boards=2 Sockets=2 CoresPerSocket=8", 16, 2, 8, 1},
      {"Boards=2 Sockets=3 CoresPerSocket=8", 24, 3, 8, 1},
      {"CPUs=4 Procs=8", 4, 4, 1, 1},  // CPUs beats Procs in either order
      {"Procs=8 CPUs=4", 4, 4, 1, 1},
  };
  for (const CpuCase& c : cases) {
    SCOPED_TRACE(c.attrs);
    auto cfg = Parse(std::string("NodeName=n1 ") + c.attrs + "\n");
    ASSERT_TRUE(cfg.ok()) << cfg.status().message();
    const core::NodeConfig& n = cfg->nodes[0];
    EXPECT_EQ(n.cpus, c.cpus);
    EXPECT_EQ(n.sockets, c.sockets);
    EXPECT_EQ(n.cores_per_socket, c.cores);
    EXPECT_EQ(n.threads_per_core, c.threads);
  }
}

TEST(Nodes, DefaultsAccumulateAndApplyOnlyLater) {
  auto cfg = Parse(
      "NodeName=early\n"
      "NodeName=DEFAULT RealMemory=100 Weight=5\n"
      "NodeName=DEFAULT TmpDisk=7\n"
      "NodeName=a[1-2] Weight=9 State=DOWN Feature=x Features=y\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  ASSERT_EQ(cfg->nodes.size(), 3u);
  EXPECT_EQ(cfg->nodes[0].real_memory_mb, 1);
  EXPECT_EQ(cfg->nodes[1].name, "a1");
  EXPECT_EQ(cfg->nodes[1].real_memory_mb, 100);
  EXPECT_EQ(cfg->nodes[1].tmp_disk_mb, 7);
  EXPECT_EQ(cfg->nodes[1].weight, 9);
  EXPECT_EQ(cfg->nodes[1].initial_state, core::NodeInitialState::kDown);
  EXPECT_THAT(cfg->nodes[1].features, ElementsAre("x"));  // Feature beats Features
}

TEST(Nodes, DownNodesAndNodeSets) {
  auto cfg = Parse(
      "NodeName=n[1-4] Feature=big\n"
      "NodeName=m1\n"
      "DownNodes=n[2-3] State=DRAIN Reason=\"bad fan\"\n"
      "NodeSet=bigs Feature=big\n"
      "NodeSet=pair Nodes=n1,m1\n"
      "PartitionName=p Nodes=pair,bigs\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->nodes[0].initial_state, core::NodeInitialState::kUnknown);
  EXPECT_EQ(cfg->nodes[1].initial_state, core::NodeInitialState::kDrain);
  EXPECT_EQ(cfg->nodes[2].initial_state, core::NodeInitialState::kDrain);
  // Config order, no duplicates.
  EXPECT_THAT(cfg->partitions[0].nodes, ElementsAre("n1", "n2", "n3", "n4", "m1"));
  EXPECT_THAT(cfg->ignored_keys, ElementsAre("muster.conf:3: Reason"));
}

TEST(Nodes, SlurmOnlyAttributesAreRecorded) {
  auto cfg = Parse(
      "NodeName=n1 NodeHostname=h1 NodeAddr=10.0.0.1 Port=7000 CoreSpecCount=1 "
      "MemSpecLimit=100\n"
      "FrontendName=fe1 FrontendAddr=10.0.0.9\n"
      "PartitionName=p Nodes=n1 GraceTime=0 DisableRootJobs=NO\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_THAT(cfg->ignored_keys,
              ElementsAre("muster.conf:1: CoreSpecCount", "muster.conf:1: MemSpecLimit",
                          "muster.conf:2: FrontendName", "muster.conf:3: DisableRootJobs"));
}

// Each node's host, address and agent port, one per node in order; by
// default the node's own name and SlurmdPort.
TEST(Nodes, HostnameAddrAndPortPerNode) {
  auto cfg = Parse(
      "NodeName=gpu[01-02] NodeHostname=srv[1-2] NodeAddr=10.0.0.[1-2] Port=7000\n"
      "NodeName=cpu01\n"
      "PartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->nodes[1].hostname, "srv2");
  EXPECT_EQ(cfg->nodes[1].addr, "10.0.0.2");
  EXPECT_EQ(cfg->nodes[1].port, 7000);
  EXPECT_EQ(cfg->nodes[2].hostname, "cpu01");
  EXPECT_EQ(cfg->nodes[2].addr, "cpu01");
  EXPECT_EQ(cfg->nodes[2].port, 0);
  auto bad = Parse("NodeName=gpu[01-03] NodeHostname=srv[1-2]\nPartitionName=p Nodes=ALL\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "muster.conf:1: NodeName gpu[01-03]: NodeHostname: invalid value 'srv[1-2]' "
            "(names 2 hosts for 3 nodes)");
}

TEST(Configless, EnableConfiglessIsRead) {
  auto cfg = Parse("SlurmctldParameters=idle_on_node_suspend,enable_configless\nNodeName=n1\n"
                   "PartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->enable_configless);
  EXPECT_EQ(cfg->raw.at("SlurmctldParameters"), "idle_on_node_suspend,enable_configless");
  EXPECT_FALSE(Parse("NodeName=n1\nPartitionName=p Nodes=ALL\n")->enable_configless);
}

TEST(Auth, TypeAndTimeToLive) {
  auto local = Parse("NodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->auth_type, AuthType::kLocal);
  EXPECT_EQ(local->auth_ttl_s, 300);
  auto slurm = Parse("AuthType=auth/slurm\nAuthInfo=ttl=60,cred_expire=30\nNodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(slurm.ok()) << slurm.status().message();
  EXPECT_EQ(slurm->auth_type, AuthType::kSlurm);
  EXPECT_EQ(slurm->auth_ttl_s, 60);
  EXPECT_EQ(slurm->cred_expire_s, 30);
  EXPECT_EQ(slurm->auth_socket, "");
  auto munge = Parse("AuthType=auth/munge\nAuthInfo=socket=/run/m.sock\nNodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(munge.ok()) << munge.status().message();
  EXPECT_EQ(munge->auth_type, AuthType::kMunge);
  EXPECT_EQ(munge->auth_socket, "/run/m.sock");
  EXPECT_EQ(AuthKeyPath(*slurm), "/nonexistent-muster-test/slurm.key");
  auto bad = Parse("AuthType=auth/none\nNodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "muster.conf:1: AuthType: invalid value 'auth/none' (expected auth/munge or "
            "auth/slurm (leave it unset for one host))");
  EXPECT_FALSE(Parse("AuthInfo=ttl=0\nNodeName=n1\nPartitionName=p Nodes=ALL\n").ok());
}

TEST(Config, SchedulerType) {
  auto unset = Parse("NodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(unset.ok());
  EXPECT_TRUE(unset->backfill);  // Slurm's default, sched/backfill
  auto builtin = Parse("SchedulerType=sched/builtin\nNodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(builtin.ok());
  EXPECT_FALSE(builtin->backfill);
  auto bad = Parse("SchedulerType=sched/gang\nNodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "muster.conf:1: SchedulerType: invalid value 'sched/gang' (expected sched/backfill or "
            "sched/builtin)");
}

// ---------------------------------------------------------------------------
// Partitions.

TEST(Partitions, LastDefaultWinsAndForwardNodes) {
  auto cfg = Parse(
      "PartitionName=a Nodes=ALL Default=YES\n"
      "PartitionName=b Nodes=x[1-2] Default=YES MaxTime=UNLIMITED MaxNodes=UNLIMITED\n"
      "PartitionName=c Nodes=x1 Default=NO AllowGroups=ALL MaxTime=1:30 Priority=7 "
      "PriorityTier=3\n"
      "NodeName=x[1-2]\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_FALSE(cfg->partitions[0].is_default);
  EXPECT_TRUE(cfg->partitions[1].is_default);
  ASSERT_NE(cfg->DefaultPartition(), nullptr);
  EXPECT_EQ(cfg->DefaultPartition()->name, "b");
  EXPECT_THAT(cfg->partitions[0].nodes, ElementsAre("x1", "x2"));
  EXPECT_EQ(cfg->partitions[1].max_time_s, -1);
  EXPECT_EQ(cfg->partitions[1].max_nodes, -1);
  EXPECT_TRUE(cfg->partitions[2].allow_groups.empty());
  EXPECT_EQ(cfg->partitions[2].max_time_s, 120);  // 1:30 rounds up to 2 minutes
  // Priority beats PriorityTier, as in slurmctld.
  EXPECT_EQ(cfg->partitions[2].priority_tier, 7);
  EXPECT_EQ(cfg->partitions[2].priority_job_factor, 7);
}

// ---------------------------------------------------------------------------
// Errors: every one names file:line.

struct ErrorCase {
  const char* name;
  const char* text;
  const char* gres;
  const char* want;  // expected message prefix
};

TEST(Errors, NameFileLineAndKey) {
  const ErrorCase cases[] = {
      {"unknown key", "ClusterName=a\nFoo=1\n", "", "muster.conf:2: unknown key 'Foo'"},
      {"bad int", "\n\nDefMemPerCPU=abc\n", "", "muster.conf:3: DefMemPerCPU: invalid value 'abc'"},
      {"negative", "MaxMemPerCPU=-1\n", "", "muster.conf:1: MaxMemPerCPU: invalid value '-1'"},
      {"kill wait range", "KillWait=70000\n", "", "muster.conf:1: KillWait: invalid value '70000'"},
      {"min job age", "MinJobAge=x\n", "", "muster.conf:1: MinJobAge: invalid value 'x'"},
      {"slurmd timeout", "SlurmdTimeout=1.5\n", "", "muster.conf:1: SlurmdTimeout: invalid value"},
      {"port", "SlurmctldPort=99999\n", "", "muster.conf:1: SlurmctldPort: invalid value '99999'"},
      {"port range", "SlurmctldPort=7000-6000\n", "",
       "muster.conf:1: SlurmctldPort: invalid value"},
      {"metrics address", "MusterMetricsAddress=9817\n", "",
       "muster.conf:1: MusterMetricsAddress: invalid value '9817' (expected ADDRESS:PORT"},
      {"metrics host", "MusterMetricsAddress=somehost:9817\n", "",
       "muster.conf:1: MusterMetricsAddress: invalid value 'somehost:9817'"},
      {"metrics port", "MusterMetricsAddress=localhost:0\n", "",
       "muster.conf:1: MusterMetricsAddress: invalid value"},
      {"max job count", "MaxJobCount=0\n", "", "muster.conf:1: MaxJobCount: invalid value '0'"},
      {"first job id", "FirstJobId=0\n", "", "muster.conf:1: FirstJobId: invalid value '0'"},
      {"empty cluster", "ClusterName=\n", "", "muster.conf:1: ClusterName: invalid value ''"},
      {"empty state dir", "StateSaveLocation=\n", "", "muster.conf:1: StateSaveLocation: invalid"},
      {"empty slurm user", "SlurmUser=\n", "", "muster.conf:1: SlurmUser: invalid value"},
      {"ctld host", "SlurmctldHost=h(x\n", "", "muster.conf:1: SlurmctldHost: invalid value 'h(x'"},
      {"ctld host empty addr", "SlurmctldHost=h()\n", "", "muster.conf:1: SlurmctldHost: invalid"},
      {"ctld and control machine", "SlurmctldHost=a\nControlMachine=b\n", "",
       "muster.conf:2: ControlMachine conflicts with SlurmctldHost at muster.conf:1"},
      {"not key value", "KillWait=1\nhello world\n", "",
       "muster.conf:2: expected Key=Value, got 'hello'"},
      {"addr in node default", "NodeName=DEFAULT CPUs=2 NodeAddr=10.0.0.1\n", "",
       "muster.conf:1: NodeAddr is not allowed with NodeName=DEFAULT"},
      {"nodename mid line", "KillWait=1 NodeName=x\n", "",
       "muster.conf:1: NodeName must begin its line"},
      {"node unknown key", "NodeName=n1 Foo=2\n", "",
       "muster.conf:1: unknown key 'Foo' in NodeName line"},
      {"node bad cpus", "NodeName=n[1-2] CPUs=x\n", "",
       "muster.conf:1: NodeName n[1-2]: CPUs: invalid value 'x'"},
      {"node zero sockets", "NodeName=n1 Sockets=0\n", "",
       "muster.conf:1: NodeName n1: Sockets: invalid value '0'"},
      {"node cpus mismatch", "NodeName=n1 CPUs=6 CoresPerSocket=4\n", "",
       "muster.conf:1: NodeName n1: CPUs=6 does not match Sockets*CoresPerSocket*ThreadsPerCore="},
      {"sockets and spb", "NodeName=n1 Sockets=2 SocketsPerBoard=2\n", "",
       "muster.conf:1: NodeName n1: Sockets and SocketsPerBoard are mutually exclusive"},
      {"node bad memory", "NodeName=n1 RealMemory=64G\n", "",
       "muster.conf:1: NodeName n1: RealMemory: invalid value '64G'"},
      {"node bad tmp", "NodeName=n1 TmpDisk=x\n", "",
       "muster.conf:1: NodeName n1: TmpDisk: invalid value 'x'"},
      {"node bad weight", "NodeName=n1 Weight=-3\n", "",
       "muster.conf:1: NodeName n1: Weight: invalid value '-3'"},
      {"node bad state", "NodeName=n1 State=BUSY\n", "",
       "muster.conf:1: NodeName n1: State: invalid value 'BUSY'"},
      {"node bad gres", "GresTypes=gpu\nNodeName=n1 Gres=gpu:h100:x\n", "",
       "muster.conf:2: NodeName n1: Gres: invalid value 'gpu:h100:x'"},
      {"gres not in types", "NodeName=n1 Gres=gpu:2\n", "",
       "muster.conf:1: NodeName n1: Gres 'gpu' is not listed in GresTypes"},
      {"bad default in later line", "NodeName=DEFAULT CPUs=q\nNodeName=n1\n", "",
       "muster.conf:1: NodeName DEFAULT: CPUs: invalid value 'q'"},
      {"bad hostlist", "NodeName=n[1-\n", "", "muster.conf:1: NodeName: invalid value 'n[1-'"},
      {"node all", "NodeName=ALL\n", "", "muster.conf:1: NodeName: invalid value 'ALL'"},
      {"bad node name", "NodeName=n1,n@2\n", "",
       "muster.conf:1: NodeName: invalid value 'n1,n@2' (node name 'n@2' may hold only letters, "
       "digits, '-', '_' and '.')"},
      {"node name with =", "NodeName=a=b\n", "",
       "muster.conf:1: NodeName: invalid value 'a=b' (node name 'a=b' may hold"},
      {"duplicate node", "NodeName=n[1-3]\n\nNodeName=n3\n", "",
       "muster.conf:3: NodeName: duplicate node 'n3' (first defined at muster.conf:1)"},
      {"part unknown node", "NodeName=n[1-2]\nPartitionName=p Nodes=n[1-3]\n", "",
       "muster.conf:2: PartitionName p: Nodes: unknown node 'n3'"},
      {"part unknown key", "PartitionName=p Foo=1\n", "",
       "muster.conf:1: unknown key 'Foo' in PartitionName line"},
      {"part bad default", "PartitionName=p Default=maybe\n", "",
       "muster.conf:1: PartitionName p: Default: invalid value 'maybe'"},
      {"part bad maxtime", "PartitionName=p MaxTime=soon\n", "",
       "muster.conf:1: PartitionName p: MaxTime: invalid value 'soon'"},
      {"part bad deftime", "PartitionName=p DefaultTime=1:2:3:4\n", "",
       "muster.conf:1: PartitionName p: DefaultTime: invalid value"},
      {"part deftime over max", "PartitionName=p MaxTime=10 DefaultTime=20\n", "",
       "muster.conf:1: PartitionName p: DefaultTime=20 exceeds MaxTime=10"},
      {"part bad state", "PartitionName=p State=OPEN\n", "",
       "muster.conf:1: PartitionName p: State: invalid value 'OPEN'"},
      {"part bad priority", "PartitionName=p Priority=70000\n", "",
       "muster.conf:1: PartitionName p: Priority: invalid value '70000'"},
      {"part bad tier", "PartitionName=p PriorityTier=x\n", "",
       "muster.conf:1: PartitionName p: PriorityTier: invalid value 'x'"},
      {"part bad factor", "PartitionName=p PriorityJobFactor=x\n", "",
       "muster.conf:1: PartitionName p: PriorityJobFactor: invalid"},
      {"part bad maxnodes", "PartitionName=p MaxNodes=x\n", "",
       "muster.conf:1: PartitionName p: MaxNodes: invalid value 'x'"},
      {"part bad minnodes", "PartitionName=p MinNodes=x\n", "",
       "muster.conf:1: PartitionName p: MinNodes: invalid value 'x'"},
      {"part min over max", "PartitionName=p MinNodes=3 MaxNodes=2\n", "",
       "muster.conf:1: PartitionName p: MinNodes=3 exceeds MaxNodes=2"},
      {"part duplicate", "PartitionName=p\nPartitionName=p\n", "",
       "muster.conf:2: PartitionName: duplicate partition 'p' (first defined at muster.conf:1)"},
      {"part empty name", "PartitionName= Nodes=ALL\n", "",
       "muster.conf:1: PartitionName: invalid value ''"},
      {"downnodes unknown", "NodeName=n1\nDownNodes=n2\n", "",
       "muster.conf:2: DownNodes: unknown node 'n2'"},
      {"downnodes state", "NodeName=n1\nDownNodes=n1 State=UP\n", "",
       "muster.conf:2: DownNodes: State: invalid value 'UP'"},
      {"nodeset unknown", "NodeName=n1\nNodeSet=s Nodes=n9\n", "",
       "muster.conf:2: NodeSet s: Nodes: unknown node 'n9'"},
      {"nodeset empty", "NodeSet=s\n", "", "muster.conf:1: NodeSet s: needs Nodes= or Feature="},
      {"include missing", "\nInclude\n", "", "muster.conf:2: Include: missing file name"},
      {"include unreadable", "Include nope.conf\n", "",
       "muster.conf:1: Include 'nope.conf': cannot read /nonexistent-muster-test/nope.conf"},
      // gres.conf
      {"gres count mismatch", kTwoNodes,
       "\nNodeName=gpu01 Name=gpu Type=h100 File=/dev/nvidia[0-1]\n",
       "gres.conf:2: node gpu01: gres.conf gives 2 gpu:h100 but Gres= says 4 (muster.conf:2)"},
      {"gres count vs files", kTwoNodes, "Name=gpu Type=h100 File=/dev/nvidia[0-3] Count=3\n",
       "gres.conf:1: Count=3 does not match the 4 devices of File=/dev/nvidia[0-3]"},
      {"gres unknown key", kTwoNodes, "Name=gpu Foo=1\n", "gres.conf:1: unknown key 'Foo'"},
      {"gres bad count", kTwoNodes, "Name=gpu Type=h100 Count=lots\n",
       "gres.conf:1: Count: invalid value 'lots'"},
      {"gres bad file", kTwoNodes, "Name=gpu File=/dev/nvidia[0-\n",
       "gres.conf:1: File: invalid value"},
      {"gres bad autodetect", kTwoNodes, "AutoDetect=magic\n",
       "gres.conf:1: AutoDetect: invalid value 'magic'"},
      {"gres type without name", kTwoNodes, "Type=h100 Count=4\n",
       "gres.conf:1: Type without Name"},
      {"gres bad nodename", kTwoNodes, "NodeName=gpu[01 Name=gpu Count=4\n",
       "gres.conf:1: NodeName: invalid value 'gpu[01'"},
      {"gres for node without it", kTwoNodes, "NodeName=gpu01 Name=gpu Type=a100 Count=4\n",
       "gres.conf:1: gpu:a100 for node gpu01, which has no such Gres (muster.conf:2: "
       "Gres=gpu:h100:4)"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = Parse(c.text, c.gres);
    ASSERT_FALSE(cfg.ok());
    EXPECT_THAT(cfg.status().message(), StartsWith(c.want));
    EXPECT_EQ(cfg.status().code(), util::Code::kInvalidArgument);
  }
}

// ---------------------------------------------------------------------------
// gres.conf.

TEST(Gres, LinesWithoutNodeNameApplyToNodesHavingTheGres) {
  auto cfg = Parse(
      "GresTypes=gpu,nic\n"
      "NodeName=g[1-2] CPUs=4 Gres=gpu:2,nic:1\n"
      "NodeName=c1\n",
      "AutoDetect=off\n"
      "Name=gpu File=/dev/nvidia[0-1] Cores=0-3\n"
      "Name=nic Count=1\n"
      "NodeName=other[1-9] Name=gpu Count=99\n");  // not in this cluster
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_THAT(cfg->nodes[1].gres[0].files, ElementsAre("/dev/nvidia0", "/dev/nvidia1"));
  EXPECT_THAT(cfg->nodes[1].gres[0].device_cores,
              ElementsAre(ElementsAre(0, 1, 2, 3), ElementsAre(0, 1, 2, 3)));
  EXPECT_TRUE(cfg->nodes[1].gres[1].files.empty());
  EXPECT_TRUE(cfg->nodes[1].gres[1].device_cores.empty());
  EXPECT_TRUE(cfg->nodes[2].gres.empty());
}

// Cores= names cores of the node: one beyond its Sockets x CoresPerSocket,
// or a malformed list, is refused with the line.
TEST(Gres, CoresMustBeCoresOfTheNode) {
  auto beyond = Parse("GresTypes=gpu\nNodeName=g1 CPUs=8 Gres=gpu:2\n",
                      "NodeName=g1 Name=gpu File=/dev/nvidia0 Cores=0-3\n"
                      "NodeName=g1 Name=gpu File=/dev/nvidia1 Cores=4-8\n");
  ASSERT_FALSE(beyond.ok());
  EXPECT_THAT(std::string(beyond.status().message()),
              HasSubstr("gres.conf:2: Cores: invalid value '4-8' (core 8 is beyond node g1, which "
                        "has 8 cores (0-7))"));
  auto bad = Parse("GresTypes=gpu\nNodeName=g1 CPUs=8 Gres=gpu:1\n",
                   "NodeName=g1 Name=gpu File=/dev/nvidia0 Cores=socket0\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("gres.conf:1: Cores: invalid value"));
}

TEST(Gres, MultipleFilesMakeOneDevice) {
  auto cfg = Parse("GresTypes=gpu\nNodeName=n1 Gres=gpu:2\n",
                   "Name=gpu MultipleFiles=/dev/dri/card0,/dev/dri/renderD128\n"
                   "Name=gpu MultipleFiles=/dev/dri/card1,/dev/dri/renderD129\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->nodes[0].gres[0].files.size(), 4u);
}

TEST(Gres, CountWithSuffix) {
  auto cfg =
      Parse("GresTypes=bw\nNodeName=n1 Gres=bw:lustre:4G\n", "Name=bw Type=lustre Count=4G\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
}

TEST(Gres, ReadBesideConfigOnlyWhenAsked) {
  TempDir dir;
  std::string main = dir.Write("muster.conf", kTwoNodes);
  dir.Write("gres.conf", "Name=gpu Type=h100 Count=3\n");
  auto loaded = LoadConfig(main);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), StartsWith("gres.conf:1: node gpu01:"));
  auto skipped = ParseConfig(kTwoNodes, main, {}, false);
  EXPECT_TRUE(skipped.ok()) << skipped.status().message();
}

// ---------------------------------------------------------------------------
// Include.

TEST(Include, RelativeToIncludingFileNestedAndModifiers) {
  TempDir dir;
  std::string main = dir.Write("muster.conf",
                               "ClusterName=Blue\n"
                               "Include sub/nodes.conf\n"
                               "include \"%c-parts.conf\"\n");
  dir.Write("sub/nodes.conf", "GresTypes=gpu\nInclude more.conf\n");
  dir.Write("sub/more.conf", "NodeName=n[1-2]\nStateSaveLocation=state\nBogusKeyX=1\n");
  dir.Write("blue-parts.conf", "PartitionName=p Nodes=ALL Default=YES\n");
  auto cfg = LoadConfig(main);
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.status().message(), StartsWith("sub/more.conf:3: unknown key 'BogusKeyX'"));

  dir.Write("sub/more.conf", "NodeName=n[1-2]\nStateSaveLocation=state\n");
  cfg = LoadConfig(main);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->nodes.size(), 2u);
  EXPECT_EQ(cfg->state_save_location, dir.path() + "/sub/state");
  ASSERT_NE(cfg->DefaultPartition(), nullptr);
  EXPECT_EQ(cfg->DefaultPartition()->nodes.size(), 2u);
}

TEST(Include, Glob) {
  TempDir dir;
  std::string main = dir.Write("muster.conf", "Include conf.d/*.conf\n");
  dir.Write("conf.d/b.conf", "NodeName=b1\n");
  dir.Write("conf.d/a.conf", "NodeName=a1\n");
  auto cfg = LoadConfig(main);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  ASSERT_EQ(cfg->nodes.size(), 2u);
  EXPECT_EQ(cfg->nodes[0].name, "a1");  // sorted

  std::string none = dir.Write("none.conf", "Include nothing/*.conf\n");
  auto bad = LoadConfig(none);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), StartsWith("none.conf:1: Include 'nothing/*.conf': no file"));
}

TEST(Include, CycleIsAnError) {
  TempDir dir;
  std::string main = dir.Write("muster.conf", "KillWait=1\nInclude a.conf\n");
  dir.Write("a.conf", "\nInclude b.conf\n");
  dir.Write("b.conf", "Include muster.conf\n");
  auto cfg = LoadConfig(main);
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message(),
            "b.conf:1: Include cycle: muster.conf -> a.conf -> b.conf -> muster.conf");

  std::string self = dir.Write("self.conf", "Include self.conf\n");
  cfg = LoadConfig(self);
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.status().message(), StartsWith("self.conf:1: Include cycle"));
}

TEST(Include, ErrorsInIncludedFileNameThatFile) {
  TempDir dir;
  std::string main = dir.Write("muster.conf", "Include nodes.conf\nPartitionName=p Nodes=x9\n");
  dir.Write("nodes.conf", "NodeName=x1\n");
  auto cfg = LoadConfig(main);
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.status().message(),
              StartsWith("muster.conf:2: PartitionName p: Nodes: unknown node 'x9'"));
}

// ---------------------------------------------------------------------------
// Loading and paths.

TEST(Load, MissingFile) {
  auto cfg = LoadConfig("/nonexistent-muster-test/muster.conf");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.status().message(), HasSubstr("/nonexistent-muster-test/muster.conf"));
  EXPECT_THAT(cfg.status().message(), HasSubstr("No such file"));
}

TEST(Load, RelativePathBecomesAbsolute) {
  TempDir dir;
  dir.Write("muster.conf", "KillWait=4\n");
  std::string old = fs::current_path().string();
  fs::current_path(dir.path());
  auto cfg = LoadConfig("muster.conf");
  fs::current_path(old);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->path, dir.path() + "/muster.conf");
  EXPECT_EQ(cfg->kill_wait_s, 4);
}

// Sets an environment variable for the scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Paths, DefaultConfigPathOrder) {
  {
    ScopedEnv a("MUSTER_CONF", "/a/muster.conf");
    ScopedEnv b("SLURM_CONF", "/b/slurm.conf");
    EXPECT_EQ(DefaultConfigPath(), "/a/muster.conf");
  }
  {
    ScopedEnv a("MUSTER_CONF", nullptr);
    ScopedEnv b("SLURM_CONF", "/b/slurm.conf");
    EXPECT_EQ(DefaultConfigPath(), "/b/slurm.conf");
  }
  {
    ScopedEnv a("MUSTER_CONF", "");
    ScopedEnv b("SLURM_CONF", nullptr);
    EXPECT_EQ(DefaultConfigPath(), "/etc/muster/muster.conf");
  }
}

}  // namespace
}  // namespace muster::config

namespace muster::config {
namespace {

TEST(ConfigJobRequeue, DefaultsToSlurmsAndParses) {
  auto def = ParseConfig("ClusterName=c\n", "/tmp/muster.conf", "", false);
  ASSERT_TRUE(def.ok()) << def.status().message();
  EXPECT_EQ(def->job_requeue, 1);
  auto off = ParseConfig("ClusterName=c\nJobRequeue=0\n", "/tmp/muster.conf", "", false);
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(off->job_requeue, 0);
  auto bad = ParseConfig("ClusterName=c\nJobRequeue=2\n", "/tmp/muster.conf", "", false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("muster.conf:2"), std::string::npos);
}

}  // namespace
}  // namespace muster::config

namespace muster::config {
namespace {

// ---------------------------------------------------------------------------
// Partition access rules and the submit-time policy keys.

TEST(PartitionRules, DefaultsAreSlurms) {
  // `scontrol show config` on the oracle (no such keys in its slurm.conf
  // but MaxArraySize=100001): EnforcePartLimits = NO,
  // SchedulerParameters = (null); slurm.conf(5): MaxArraySize default 1001.
  auto cfg = Parse("PartitionName=p\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->enforce_part_limits, EnforcePartLimits::kNo);
  EXPECT_EQ(cfg->max_array_size, 1001);
  EXPECT_TRUE(cfg->scheduler_parameters.empty());
  EXPECT_FALSE(cfg->kill_invalid_depend);
  const core::Partition& p = cfg->partitions[0];
  EXPECT_TRUE(p.allow_accounts.empty());
  EXPECT_TRUE(p.deny_accounts.empty());
  EXPECT_TRUE(p.allow_qos.empty());
  EXPECT_TRUE(p.deny_qos.empty());
  EXPECT_FALSE(p.hidden);
  EXPECT_EQ(p.oversubscribe, "NO");
  EXPECT_TRUE(cfg->ignored_keys.empty());
}

TEST(PartitionRules, AccessListsHiddenAndOverSubscribe) {
  auto cfg = Parse(
      "PartitionName=DEFAULT Hidden=YES\n"
      "PartitionName=a AllowAccounts=ml,research DenyAccounts=x AllowGroups=wheel,adm "
      "AllowQos=normal DenyQos=limited OverSubscribe=FORCE State=DRAIN\n"
      "PartitionName=b AllowAccounts=ALL AllowQos=normal,ALL Hidden=NO OverSubscribe=YES:2 "
      "State=inactive\n"
      "PartitionName=c Shared=EXCLUSIVE\n"
      "PartitionName=d Shared=YES OverSubscribe=NO\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const auto& parts = cfg->partitions;
  EXPECT_THAT(parts[0].allow_accounts, ElementsAre("ml", "research"));
  EXPECT_THAT(parts[0].deny_accounts, ElementsAre("x"));
  EXPECT_THAT(parts[0].allow_groups, ElementsAre("wheel", "adm"));
  EXPECT_THAT(parts[0].allow_qos, ElementsAre("normal"));
  EXPECT_THAT(parts[0].deny_qos, ElementsAre("limited"));
  EXPECT_TRUE(parts[0].hidden);  // from PartitionName=DEFAULT
  // slurmctld 22.05 shows OverSubscribe=FORCE as FORCE:4 (scontrol update
  // PartitionName=train OverSubscribe=FORCE; scontrol show partition train).
  EXPECT_EQ(parts[0].oversubscribe, "FORCE:4");
  EXPECT_EQ(parts[0].state, core::PartitionState::kDrain);
  EXPECT_TRUE(parts[1].allow_accounts.empty());
  EXPECT_TRUE(parts[1].allow_qos.empty());  // ALL anywhere means everyone
  EXPECT_FALSE(parts[1].hidden);
  EXPECT_EQ(parts[1].oversubscribe, "YES:2");
  EXPECT_EQ(parts[1].state, core::PartitionState::kInactive);
  EXPECT_TRUE(parts[2].hidden);
  EXPECT_EQ(parts[2].oversubscribe, "EXCLUSIVE");
  EXPECT_EQ(parts[3].oversubscribe, "NO");  // OverSubscribe beats Shared
  EXPECT_TRUE(cfg->ignored_keys.empty());
}

TEST(PartitionRules, TopLevelPolicyKeys) {
  struct Case {
    const char* text;
    EnforcePartLimits want;
  };
  const Case cases[] = {{"EnforcePartLimits=ALL\n", EnforcePartLimits::kAll},
                        {"EnforcePartLimits=yes\n", EnforcePartLimits::kAll},
                        {"EnforcePartLimits=Any\n", EnforcePartLimits::kAny},
                        {"EnforcePartLimits=ALL\nEnforcePartLimits=NO\n", EnforcePartLimits::kNo}};
  for (const Case& c : cases) {
    auto cfg = Parse(c.text);
    ASSERT_TRUE(cfg.ok()) << c.text << cfg.status().message();
    EXPECT_EQ(cfg->enforce_part_limits, c.want) << c.text;
    EXPECT_TRUE(cfg->ignored_keys.empty()) << c.text;
  }
  auto cfg = Parse(
      "MaxArraySize=100001\n"
      "SchedulerParameters=bf_interval=30,Kill_Invalid_Depend,,max_array_tasks=10\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->max_array_size, 100001);
  EXPECT_THAT(cfg->scheduler_parameters,
              ElementsAre("bf_interval=30", "Kill_Invalid_Depend", "max_array_tasks=10"));
  EXPECT_TRUE(cfg->kill_invalid_depend);
  EXPECT_FALSE(cfg->enable_user_top);
  EXPECT_EQ(cfg->raw.at("SchedulerParameters"),
            "bf_interval=30,Kill_Invalid_Depend,,max_array_tasks=10");
  auto zero = Parse("MaxArraySize=0\nSchedulerParameters=bf_continue\n");
  ASSERT_TRUE(zero.ok()) << zero.status().message();
  EXPECT_EQ(zero->max_array_size, 0);
  EXPECT_FALSE(zero->kill_invalid_depend);
  auto top = Parse("SchedulerParameters=Enable_User_Top,bf_continue\n");
  ASSERT_TRUE(top.ok()) << top.status().message();
  EXPECT_TRUE(top->enable_user_top);
}

// The backfill planner's SchedulerParameters, in Slurm's units (bf_window
// in minutes); a bad value names the file, line, key and item.
TEST(Config, BackfillParameters) {
  auto unset = Parse("NodeName=n1\nPartitionName=p Nodes=ALL\n");
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(unset->bf.window_s, 86400);  // Slurm's defaults
  EXPECT_EQ(unset->bf.resolution_s, 60);
  EXPECT_EQ(unset->bf.interval_s, 30);
  EXPECT_EQ(unset->bf.max_job_test, 0);  // every job, where Slurm stops at 500
  auto cfg = Parse(
      "SchedulerParameters=bf_window=2880,bf_resolution=300,BF_MAX_JOB_TEST=1000,"
      "bf_max_job_user=20,bf_min_prio_reserve=5000,bf_interval=60,bf_continue,"
      "bf_yield_interval=2000000\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->bf.window_s, 2880 * 60);
  EXPECT_EQ(cfg->bf.resolution_s, 300);
  EXPECT_EQ(cfg->bf.max_job_test, 1000);
  EXPECT_EQ(cfg->bf.max_job_user, 20);
  EXPECT_EQ(cfg->bf.min_prio_reserve, 5000);
  EXPECT_EQ(cfg->bf.interval_s, 60);
  EXPECT_TRUE(cfg->bf.continue_after_yield);
  // A later line replaces an earlier one, defaults included.
  auto later = Parse("SchedulerParameters=bf_window=60\nSchedulerParameters=bf_interval=10\n");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->bf.window_s, 86400);
  EXPECT_EQ(later->bf.interval_s, 10);
  auto bad = Parse("SchedulerParameters=bf_window=0\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "muster.conf:1: SchedulerParameters: bf_window: invalid value '0' (must be 1..43200)");
  auto word = Parse("\nSchedulerParameters=bf_resolution=soon\n");
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(word.status().message(),
            "muster.conf:2: SchedulerParameters: bf_resolution: invalid value 'soon' (must be "
            "1..3600)");
}

// Preemption: PreemptType, PreemptMode and PreemptExemptTime, and a
// partition's own PreemptMode and GraceTime; what Muster cannot do yet is
// refused by name, not ignored.
TEST(Config, Preemption) {
  auto cfg = Parse(
      "PreemptType=preempt/partition_prio\nPreemptMode=requeue\nPreemptExemptTime=00:10:00\n"
      "NodeName=n1\nPartitionName=low Nodes=ALL PriorityTier=1 PreemptMode=CANCEL "
      "GraceTime=30\nPartitionName=high Nodes=ALL PriorityTier=5\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->preempt_type, PreemptType::kPartitionPrio);
  EXPECT_EQ(cfg->preempt_mode, core::PreemptMode::kRequeue);
  EXPECT_EQ(cfg->preempt_exempt_time_s, 600);
  EXPECT_EQ(cfg->FindPartition("low")->preempt_mode, core::PreemptMode::kCancel);
  EXPECT_EQ(cfg->FindPartition("low")->grace_time_s, 30);
  EXPECT_FALSE(cfg->FindPartition("high")->preempt_mode.has_value());
  EXPECT_TRUE(cfg->ignored_keys.empty());
  auto qos = Parse("PreemptType=preempt/qos\n");
  ASSERT_TRUE(qos.ok()) << qos.status().message();
  EXPECT_EQ(qos->preempt_type, PreemptType::kQos);
  auto other = Parse("PreemptType=preempt/job_prio\n");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "muster.conf:1: PreemptType: invalid value 'preempt/job_prio' (expected "
            "preempt/none, preempt/partition_prio or preempt/qos)");
  auto gang = Parse("PreemptMode=SUSPEND,GANG\n");
  ASSERT_FALSE(gang.ok());
  auto bad = Parse("NodeName=n1\nPartitionName=p Nodes=ALL PreemptMode=sometimes\n");
  ASSERT_FALSE(bad.ok());
}

TEST(Config, SelectTypeParametersChooseTheNodeOrder) {
  auto cfg = Parse(
      "SelectTypeParameters=CR_Core_Memory,CR_Pack_Nodes\nNodeName=n1\n"
      "PartitionName=a Nodes=ALL LLN=YES\nPartitionName=b Nodes=ALL\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->pack_nodes);
  EXPECT_FALSE(cfg->least_loaded);
  EXPECT_TRUE(cfg->FindPartition("a")->least_loaded);
  EXPECT_FALSE(cfg->FindPartition("b")->least_loaded);
  EXPECT_TRUE(cfg->ignored_keys.empty());
  EXPECT_EQ(cfg->raw.at("SelectTypeParameters"), "CR_Core_Memory,CR_Pack_Nodes");
  auto lln = Parse("SelectTypeParameters=cr_cpu_memory,CR_LLN\n");
  ASSERT_TRUE(lln.ok()) << lln.status().message();
  EXPECT_TRUE(lln->least_loaded);
  auto unknown = Parse("SelectTypeParameters=CR_Core_Memory,CR_Tight\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("muster.conf:1: SelectTypeParameters: invalid value"),
            std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("unknown item 'CR_Tight'"), std::string::npos);
  EXPECT_FALSE(Parse("SelectTypeParameters=CR_Pack_Nodes,CR_LLN\n").ok());
  EXPECT_FALSE(Parse("NodeName=n1\nPartitionName=a Nodes=ALL LLN=maybe\n").ok());
}

TEST(Config, GpuReserve) {
  auto cfg = Parse("GpuReserve=CPUs=2,Mem=8G\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->gpu_reserve_cpus, 2);
  EXPECT_EQ(cfg->gpu_reserve_mem_mb, 8192);
  auto none = Parse("NodeName=n1\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->gpu_reserve_cpus, 0);
  EXPECT_EQ(none->gpu_reserve_mem_mb, 0);
  auto bad = Parse("DefMemPerCPU=100\nGpuReserve=CPUs=two\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "muster.conf:2: GpuReserve: invalid value 'CPUs=two' (CPUs= needs a count from 0 to "
            "4096, not 'two')");
  EXPECT_FALSE(Parse("GpuReserve=Disk=1G\n").ok());
  EXPECT_FALSE(Parse("GpuReserve=Mem=lots\n").ok());
}

TEST(Config, TopologyTreeReadsTopologyConf) {
  TempDir dir;
  const std::string nodes = "NodeName=n[1-6]\nSchedulerParameters=max_switch_wait=60\n";
  std::string main = dir.Write("muster.conf", "TopologyPlugin=topology/tree\n" + nodes);
  dir.Write("topology.conf",
            "# two leaves under a spine; n6 under none\n"
            "SwitchName=s1 Nodes=n[1-3] LinkSpeed=100\n"
            "SwitchName=s2 Nodes=n[4-5]\n"
            "SwitchName=spine Switches=s[1-2]\n");
  auto cfg = LoadConfig(main);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->topology_tree);
  EXPECT_EQ(cfg->max_switch_wait_s, 60);
  ASSERT_EQ(cfg->switches.size(), 3u);
  EXPECT_EQ(cfg->switches[0].nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(cfg->switches[0].parent, 2);
  EXPECT_EQ(cfg->switches[0].link_speed, "100");
  EXPECT_EQ(cfg->switches[2].children, (std::vector<int>{0, 1}));
  EXPECT_EQ(cfg->switches[2].level, 1);
  EXPECT_EQ(cfg->leaf_of_node.at("n4"), 1);
  EXPECT_EQ(cfg->leaf_of_node.count("n6"), 0u);

  // Each error names topology.conf's line.
  const std::pair<const char*, const char*> bad[] = {
      {"SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n2\n",
       "topology.conf:2: node n2 is under two leaf switches (s1 and s2)"},
      {"SwitchName=s1 Nodes=n9\n", "topology.conf:1: switch s1: unknown node 'n9'"},
      {"SwitchName=top Switches=s9\n", "topology.conf:1: switch top: unknown switch 's9'"},
      {"SwitchName=s1\n", "topology.conf:1: switch s1 needs either Nodes= (a leaf) or Switches="},
      {"SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n",
       "topology.conf:2: switch s1 is defined twice"},
      {"SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "is its own ancestor"},
      {"SwitchName=s1 Nodes=n1 Speed=9\n", "topology.conf:1: unknown key 'Speed'"},
  };
  for (const auto& [text, want] : bad) {
    dir.Write("topology.conf", text);
    auto c = LoadConfig(main);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.status().message().find(want), std::string::npos) << c.status().message();
  }
  fs::remove(fs::path(dir.path()) / "topology.conf");
  auto missing = LoadConfig(main);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("TopologyPlugin=topology/tree needs"),
            std::string::npos)
      << missing.status().message();
  EXPECT_FALSE(Parse("TopologyPlugin=topology/3d_torus\n").ok());
}

TEST(Config, CgroupConfBesideTheMainFile) {
  TempDir dir;
  std::string main = dir.Write("muster.conf", "NodeName=n1\n");
  auto none = LoadConfig(main);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->cgroup.constrain_devices);

  dir.Write("cgroup.conf",
            "# Slurm's example\nCgroupPlugin=autodetect\nConstrainCores=yes\n"
            "ConstrainDevices=yes\nConstrainRAMSpace=yes AllowedRAMSpace=99.5\nMinRAMSpace=30\n");
  auto cfg = LoadConfig(main);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->cgroup.constrain_devices);
  // The keys without an effect are listed for a warning, with their line.
  EXPECT_THAT(cfg->ignored_keys, ::testing::Contains("cgroup.conf:3: ConstrainCores"));
  EXPECT_THAT(cfg->ignored_keys, ::testing::Contains("cgroup.conf:5: AllowedRAMSpace"));

  const std::pair<const char*, const char*> bad[] = {
      {"ConstrainDevices=maybe\n", "cgroup.conf:1: ConstrainDevices: invalid value 'maybe' (expected YES or NO)"},
      {"ConstrainGpus=yes\n", "cgroup.conf:1: unknown key 'ConstrainGpus'"},
      {"\nCgroupPlugin=cgroup/v3\n", "cgroup.conf:2: CgroupPlugin: invalid value 'cgroup/v3'"},
      {"AllowedRAMSpace=lots\n", "cgroup.conf:1: AllowedRAMSpace: invalid value 'lots'"},
      {"CgroupMountpoint=sys/fs\n", "cgroup.conf:1: CgroupMountpoint: invalid value 'sys/fs'"},
  };
  for (const auto& [text, want] : bad) {
    dir.Write("cgroup.conf", text);
    auto c = LoadConfig(main);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.status().message().find(want), std::string::npos) << c.status().message();
  }
}

TEST(Config, MultipleFilesAreOneDevice) {
  TempDir dir;
  std::string main = dir.Write("muster.conf", "GresTypes=gpu\nNodeName=n1 Gres=gpu:1g.10gb:2,gpu:h100:1\n");
  dir.Write("gres.conf",
            "Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21\n"
            "Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap30\n"
            "Name=gpu Type=h100 File=/dev/nvidia1\n");
  auto cfg = LoadConfig(main);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const core::NodeConfig& n = cfg->nodes[0];
  ASSERT_EQ(n.gres[0].device_files.size(), 2u);
  EXPECT_THAT(n.gres[0].device_files[1], ElementsAre("/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap30"));
  EXPECT_THAT(n.gres[1].device_files, ElementsAre(ElementsAre("/dev/nvidia1")));
}

TEST(Config, PartitionOfAJobAndItsMemoryDefaults) {
  auto cfg = Parse(
      "DefMemPerCPU=700\n"
      "NodeName=a CPUs=4 RealMemory=8000\nNodeName=b CPUs=4 RealMemory=16000\n"
      "PartitionName=small Nodes=a Default=YES\nPartitionName=big Nodes=b\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  core::Job job;
  EXPECT_EQ(cfg->PartitionOf(job)->name, "small");  // the default
  EXPECT_EQ(cfg->MemoryDefaultsFor(job).node_memory_mb, 8000);
  EXPECT_EQ(cfg->MemoryDefaultsFor(job).def_mem_per_cpu_mb, 700);
  job.req.partition = "big";
  EXPECT_EQ(cfg->MemoryDefaultsFor(job).node_memory_mb, 16000);  // the one asked for
  job.partition = "small";
  EXPECT_EQ(cfg->PartitionOf(job)->name, "small");  // the one given wins
  job.partition = "gone";
  EXPECT_EQ(cfg->PartitionOf(job), nullptr);
  EXPECT_EQ(cfg->MemoryDefaultsFor(job).node_memory_mb, 0);
}

TEST(Config, SlurmdPortIsTyped) {
  auto def = Parse("ClusterName=c\n");
  ASSERT_TRUE(def.ok()) << def.status().message();
  EXPECT_EQ(def->slurmd_port, 6818);
  auto cfg = Parse("SlurmdPort=7003\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->slurmd_port, 7003);
  EXPECT_TRUE(cfg->ignored_keys.empty());  // acted on, not ignored
  EXPECT_EQ(cfg->raw.at("SlurmdPort"), "7003");  // still shown by `scontrol show config`
  auto bad = Parse("\nSlurmdPort=70000\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("muster.conf:2: SlurmdPort"), std::string::npos)
      << bad.status().message();
}

TEST(Config, AuthInfoCredExpireAndTmpFS) {
  // AuthInfo=cred_expire holds a requeued job back (slurm.conf(5): default
  // 120 s); the rest of AuthInfo has no effect. TmpFS is a job's TMPDIR.
  auto def = Parse("ClusterName=c\n");
  ASSERT_TRUE(def.ok()) << def.status().message();
  EXPECT_EQ(def->cred_expire_s, 120);
  EXPECT_EQ(def->tmp_fs, "/tmp");
  auto cfg = Parse("AuthInfo=socket=/run/munge/munge.socket.2,cred_expire=30\nTmpFS=/scratch\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->cred_expire_s, 30);
  EXPECT_EQ(cfg->tmp_fs, "/scratch");
  EXPECT_TRUE(cfg->ignored_keys.empty());
  auto old = Parse("AuthInfo=/var/run/munge/munge.socket.2\n");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->cred_expire_s, 120);
  auto bad = Parse("\nAuthInfo=cred_expire=soon\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "muster.conf:2: AuthInfo: invalid value 'cred_expire=soon' (cred_expire must be a "
            "number of seconds)");
}

// ---------------------------------------------------------------------------
// SchedulerParameters=max_script_size and MusterApiParameters.

TEST(ApiLimits, DefaultsFollowTheScriptLimit) {
  auto cfg = Parse("PartitionName=p\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->max_script_size, 4 << 20);  // slurm.conf(5): 4 MB
  EXPECT_EQ(cfg->api.max_body_size, 2 * (4 << 20) + (8 << 20));
  EXPECT_EQ(cfg->api.max_header_size, 64 << 10);
  EXPECT_EQ(cfg->api.max_connections, 1024);
  EXPECT_EQ(cfg->api.max_connections_per_user, 64);

  auto big = Parse("SchedulerParameters=bf_continue,max_script_size=10485760\n");
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(big->max_script_size, 10 << 20);
  EXPECT_EQ(big->api.max_body_size, 2 * (10 << 20) + (8 << 20));
  EXPECT_THAT(big->scheduler_parameters, ElementsAre("bf_continue", "max_script_size=10485760"));
}

TEST(ApiLimits, MusterApiParametersSetsEach) {
  auto cfg = Parse(
      "MusterApiParameters=max_body_size=5000000,max_header_size=2048,"
      "max_connections=10,MAX_CONNECTIONS_PER_USER=3\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->api.max_body_size, 5000000);
  EXPECT_EQ(cfg->api.max_header_size, 2048);
  EXPECT_EQ(cfg->api.max_connections, 10);
  EXPECT_EQ(cfg->api.max_connections_per_user, 3);
  EXPECT_TRUE(cfg->ignored_keys.empty());
  // A later line replaces an earlier one whole.
  auto again = Parse(
      "MusterApiParameters=max_connections=10\nMusterApiParameters=max_header_size=4096\n");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->api.max_connections, 1024);
  EXPECT_EQ(again->api.max_header_size, 4096);
}

TEST(ApiLimits, BadValuesNameFileLineAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"SchedulerParameters=max_script_size=big\n",
       "muster.conf:1: SchedulerParameters: max_script_size: invalid value 'big' (must be "
       "1..1073741824)"},
      {"\nSchedulerParameters=max_script_size=0\n",
       "muster.conf:2: SchedulerParameters: max_script_size: invalid value '0'"},
      {"MusterApiParameters=max_bodysize=1\n",
       "muster.conf:1: MusterApiParameters: unknown option 'max_bodysize' (max_body_size, "
       "max_header_size, max_connections, max_connections_per_user)"},
      {"MusterApiParameters=max_connections\n",
       "muster.conf:1: MusterApiParameters: 'max_connections' is not name=value"},
      {"MusterApiParameters=max_connections=0\n",
       "muster.conf:1: MusterApiParameters: max_connections: invalid value '0' (must be "
       "1..1000000)"},
      {"MusterApiParameters=max_header_size=10\n",
       "muster.conf:1: MusterApiParameters: max_header_size: invalid value '10'"},
      {"MusterApiParameters=max_body_size=2000000\n",
       "muster.conf:1: MusterApiParameters: max_body_size=2000000 is below SchedulerParameters "
       "max_script_size=4194304"},
  };
  for (const auto& [text, want] : cases) {
    auto cfg = Parse(text);
    ASSERT_FALSE(cfg.ok()) << text;
    EXPECT_THAT(cfg.status().message(), HasSubstr(want)) << text;
  }
  // Below the default script limit is fine once the script limit is lower.
  EXPECT_TRUE(Parse("SchedulerParameters=max_script_size=1000\n"
                    "MusterApiParameters=max_body_size=2000\n")
                  .ok());
}

TEST(PartitionRules, BadValuesNameFileLineAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"EnforcePartLimits=SOME\n",
       "muster.conf:1: EnforcePartLimits: invalid value 'SOME' (expected ALL, ANY or NO)"},
      {"\nMaxArraySize=4000002\n",
       "muster.conf:2: MaxArraySize: invalid value '4000002' (must be 0..4000001)"},
      {"MaxArraySize=-1\n", "muster.conf:1: MaxArraySize: invalid value '-1'"},
      {"PartitionName=p Hidden=maybe\n",
       "muster.conf:1: PartitionName p: Hidden: invalid value 'maybe' (expected YES or NO)"},
      {"PartitionName=p OverSubscribe=SOMETIMES\n",
       "muster.conf:1: PartitionName p: OverSubscribe: invalid value 'SOMETIMES' (expected NO, "
       "EXCLUSIVE, YES[:n] or FORCE[:n])"},
      {"PartitionName=p OverSubscribe=YES:0\n",
       "muster.conf:1: PartitionName p: OverSubscribe: invalid value 'YES:0' (count must be "
       "1..65535)"},
      {"PartitionName=p Shared=NO:3\n",
       "muster.conf:1: PartitionName p: Shared: invalid value 'NO:3' (NO takes no count)"},
      {"PartitionName=p State=DRAINING\n",
       "muster.conf:1: PartitionName p: State: invalid value 'DRAINING' (expected UP, DOWN, "
       "DRAIN or INACTIVE)"},
      {"PartitionName=p MaxNodes=x\n", "muster.conf:1: PartitionName p: MaxNodes: invalid value"},
      {"PartitionName=p MinNodes=3 MaxNodes=2\n",
       "muster.conf:1: PartitionName p: MinNodes=3 exceeds MaxNodes=2"},
      {"PartitionName=p MaxTime=forever\n",
       "muster.conf:1: PartitionName p: MaxTime: invalid value 'forever'"},
      {"PartitionName=p MaxTime=1:00:00 DefaultTime=2:00:00\n",
       "muster.conf:1: PartitionName p: DefaultTime=2:00:00 exceeds MaxTime=1:00:00"},
      {"PartitionName=p AllowUsers=a\n",
       "muster.conf:1: unknown key 'AllowUsers' in PartitionName line"},
  };
  for (const auto& [text, want] : cases) {
    auto cfg = Parse(text);
    ASSERT_FALSE(cfg.ok()) << text;
    EXPECT_THAT(cfg.status().message(), StartsWith(want)) << text;
  }
}

TEST(Priority, MultifactorKeysAreRead) {
  auto cfg = Parse(
      "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightFairshare=10000\n"
      "PriorityWeightTRES=CPU=100,Mem=0.5G,GRES/gpu=1000\nPriorityMaxAge=1-0\n"
      "PriorityDecayHalfLife=30\nPriorityFlags=NO_FAIR_TREE,SMALL_RELATIVE_TO_TIME\n"
      "PriorityUsageResetPeriod=weekly\nPriorityFavorSmall=YES\n"
      "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 TRESBillingWeights=CPU=1.0,Mem=0.25G\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const PriorityConfig& p = cfg->priority;
  EXPECT_TRUE(p.multifactor);
  EXPECT_EQ(p.weight_age, 1000);
  EXPECT_EQ(p.weight_fairshare, 10000);
  ASSERT_EQ(p.weight_tres.size(), 3u);
  EXPECT_EQ(p.weight_tres[1].name, "mem");
  EXPECT_DOUBLE_EQ(p.weight_tres[1].weight, 0.5 / 1024);  // per MB
  EXPECT_EQ(p.max_age_s, 86400);
  EXPECT_EQ(p.decay_half_life_s, 30 * 60);  // a bare number is minutes
  EXPECT_FALSE(p.fair_tree);
  EXPECT_EQ(p.usage_reset, UsageReset::kWeekly);
  EXPECT_TRUE(p.favor_small);
  // A flag Muster does not act on is reported with the keys without effect.
  EXPECT_EQ(cfg->ignored_keys.back(), "muster.conf:7: PriorityFlags=SMALL_RELATIVE_TO_TIME");
  ASSERT_EQ(cfg->partitions[0].billing_weights.size(), 2u);
  EXPECT_EQ(cfg->partitions[0].billing_weights_text, "CPU=1.0,Mem=0.25G");
}

TEST(Priority, BadValuesNameTheLine) {
  EXPECT_EQ(Parse("\nPriorityType=priority/fancy\n").status().message(),
            "muster.conf:2: PriorityType: invalid value 'priority/fancy' (expected priority/basic "
            "or priority/multifactor)");
  EXPECT_EQ(Parse("PriorityWeightAge=4294967296\n").status().message(),
            "muster.conf:1: PriorityWeightAge: invalid value '4294967296' (must be 0..4294967295)");
  EXPECT_EQ(Parse("PriorityWeightTRES=CPU=1,Foo=2\n").status().message(),
            "muster.conf:1: PriorityWeightTRES: Foo=2: unknown TRES (expected CPU, Mem, Node or "
            "GRES/<name>)");
  EXPECT_EQ(Parse("PriorityUsageResetPeriod=sometimes\n").status().message(),
            "muster.conf:1: PriorityUsageResetPeriod: invalid value 'sometimes' (expected NONE, "
            "NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY)");
  EXPECT_EQ(Parse("NodeName=n1\nPartitionName=p Nodes=n1 TRESBillingWeights=CPU=x\n")
                .status()
                .message(),
            "muster.conf:2: PartitionName p: TRESBillingWeights: CPU=x: the weight must be a "
            "number of at least 0");
}

TEST(Observability, SamplingIdleGpuAndHealthKeysAreRead) {
  auto cfg = Parse(std::string(kTwoNodes) +
                   "JobAcctGatherFrequency=task=5,energy=0\n"
                   "MusterAgentMetricsAddress=127.0.0.1:9818\n"
                   "IdleGpuThreshold=10\nIdleGpuFlagTime=30\nIdleGpuReportTime=1:00:00\n"
                   "IdleGpuCancelTime=0:90\nIdleGpuNotifyProgram=/usr/local/bin/notify\n"
                   "HealthCheckInterval=60\nHealthCheckProgram=/usr/sbin/nhc\n"
                   "HealthCheckNodeState=NONDRAINED_IDLE,CYCLE\n"
                   "MusterHealthChecks=gpu_count,ecc,mounts\nMusterHealthMounts=/,/home\n"
                   "MusterHealthSpoolMinFree=2G\nMusterHealthAutoResume=program,nvml\n"
                   "MusterHealthMaxDrainPercent=20\n"
                   "PartitionName=p Nodes=gpu01 IdleGpuCancel=YES\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->acct_gather_frequency_s, 5);
  EXPECT_EQ(cfg->agent_metrics_host, "127.0.0.1");
  EXPECT_EQ(cfg->agent_metrics_port, 9818);
  EXPECT_TRUE(cfg->idle_gpu.enabled());
  EXPECT_EQ(cfg->idle_gpu.threshold_pct, 10);
  EXPECT_EQ(cfg->idle_gpu.flag_after_s, 30 * 60);
  EXPECT_EQ(cfg->idle_gpu.report_after_s, 3600);
  EXPECT_EQ(cfg->idle_gpu.cancel_after_s, 90);
  EXPECT_EQ(cfg->idle_gpu.notify_program, "/usr/local/bin/notify");
  EXPECT_TRUE(cfg->health.enabled());
  EXPECT_EQ(cfg->health.program, "/usr/sbin/nhc");
  EXPECT_EQ(cfg->health.node_states, std::vector<std::string>{"idle"});
  EXPECT_TRUE(cfg->health.skip_drained);
  EXPECT_TRUE(cfg->health.cycle);
  EXPECT_FALSE(cfg->health.start_only);
  EXPECT_EQ(cfg->health.checks, (std::vector<std::string>{"gpu_count", "ecc", "mounts"}));
  EXPECT_EQ(cfg->health.mounts, (std::vector<std::string>{"/", "/home"}));
  EXPECT_EQ(cfg->health.spool_min_free_mb, 2048);
  EXPECT_EQ(cfg->health.auto_resume, (std::vector<std::string>{"program", "nvml"}));
  EXPECT_EQ(cfg->health.max_drain_percent, 20);
  EXPECT_TRUE(cfg->FindPartition("p")->idle_gpu_cancel);
  // Off unless configured: Slurm's default sampling, no policy, no checks.
  auto plain = Parse(kTwoNodes);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->acct_gather_frequency_s, 30);
  EXPECT_FALSE(plain->idle_gpu.enabled());
  EXPECT_FALSE(plain->health.enabled());
  // START_ONLY: checked when a node joins, never on the interval.
  auto start_only = Parse(std::string(kTwoNodes) +
                          "HealthCheckInterval=60\nHealthCheckProgram=/usr/sbin/nhc\n"
                          "HealthCheckNodeState=START_ONLY\n");
  ASSERT_TRUE(start_only.ok()) << start_only.status().message();
  EXPECT_TRUE(start_only->health.start_only);
  EXPECT_TRUE(start_only->health.any());
  EXPECT_FALSE(start_only->health.enabled());
}

TEST(Observability, WatchedFilesystemsAreMountPoints) {
  auto cfg = Parse(std::string(kTwoNodes) + "MusterWatchedFilesystems=/home,/scratch/,/\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->watched_filesystems, (std::vector<std::string>{"/home", "/scratch", "/"}));
  EXPECT_TRUE(Parse(kTwoNodes)->watched_filesystems.empty());
  EXPECT_EQ(Parse("ClusterName=c\nMusterWatchedFilesystems=/home,scratch\n").status().message(),
            "muster.conf:2: MusterWatchedFilesystems: invalid value '/home,scratch' ('scratch' is "
            "not an absolute path)");
  EXPECT_EQ(Parse("MusterWatchedFilesystems=/home/../scratch\n").status().message(),
            "muster.conf:1: MusterWatchedFilesystems: invalid value '/home/../scratch' "
            "('/home/../scratch' is not a plain path (no '.', '..' or '//'))");
  EXPECT_EQ(Parse("MusterWatchedFilesystems=/a//b\n").status().message(),
            "muster.conf:1: MusterWatchedFilesystems: invalid value '/a//b' ('/a//b' is not a "
            "plain path (no '.', '..' or '//'))");
  EXPECT_EQ(Parse("MusterWatchedFilesystems=/home,/home/\n").status().message(),
            "muster.conf:1: MusterWatchedFilesystems: invalid value '/home,/home/' ('/home' is "
            "listed twice)");
}

TEST(Observability, BadValuesNameTheLineAndWhy) {
  EXPECT_EQ(Parse("MusterHealthChecks=ecc,fans\n").status().message(),
            "muster.conf:1: MusterHealthChecks: invalid value 'ecc,fans' (unknown check 'fans' "
            "(expected gpu_count, gpu_model, driver_version, mounts, spool_space, ecc, "
            "remapped_rows, xid or nvml))");
  // Hardware faults never heal by themselves.
  EXPECT_EQ(Parse("MusterHealthAutoResume=nvml,ecc\n").status().message(),
            "muster.conf:1: MusterHealthAutoResume: invalid value 'nvml,ecc' (check 'ecc' finds "
            "hardware faults: a node it drains is resumed by an operator only)");
  EXPECT_EQ(Parse("HealthCheckNodeState=BUSY\n").status().message(),
            "muster.conf:1: HealthCheckNodeState: invalid value 'BUSY' (unknown state 'BUSY' "
            "(expected ANY, ALLOC, IDLE, MIXED, NONDRAINED_IDLE, CYCLE or START_ONLY))");
  EXPECT_EQ(Parse("IdleGpuFlagTime=soon\n").status().message(),
            "muster.conf:1: IdleGpuFlagTime: invalid value 'soon' (expected a time: MINUTES, "
            "MINUTES:SECONDS or HOURS:MINUTES:SECONDS)");
  EXPECT_EQ(Parse("IdleGpuThreshold=101\n").status().message(),
            "muster.conf:1: IdleGpuThreshold: invalid value '101' (must be 0..100)");
  EXPECT_EQ(Parse("IdleGpuNotifyProgram=notify.sh\n").status().message(),
            "muster.conf:1: IdleGpuNotifyProgram: invalid value 'notify.sh' (expected an absolute "
            "path)");
  EXPECT_EQ(Parse("JobAcctGatherFrequency=task=often\n").status().message(),
            "muster.conf:1: JobAcctGatherFrequency: invalid value 'task=often' (expected seconds "
            "0..86400, or task=SECONDS)");
  EXPECT_EQ(Parse("MusterAgentMetricsAddress=localhost:9818\n").status().message(),
            "muster.conf:1: MusterAgentMetricsAddress: invalid value 'localhost:9818' (expected "
            "ADDRESS:PORT, an IP address to listen on (0.0.0.0 for all) and a port 1..65535, e.g. "
            "127.0.0.1:9817)");
}

}  // namespace
}  // namespace muster::config

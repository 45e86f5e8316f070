// sinfo against Slurm 22.05.8. Every expected text below is what the real
// sinfo printed on the oracle cluster (/etc/slurm/slurm.conf: partitions
// short (default, MaxTime 4h, DefaultTime 1h, nodes cpu[01-02],gpu[01-04])
// and train (3 days, DefaultTime 4h, gpu[01-04]); nodes 32 CPUs, 2x16
// cores, 64000 MB; gpu nodes Gres=gpu:h100:8 Feature=h100,gpu, cpu nodes
// Feature=cpu), in the node state named by each case; the command is in
// the case's name. Deliberate differences are noted where they occur.

#include <stdlib.h>
#include <time.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/args.h"
#include "cli/render/render.h"
#include "testing/builders.h"
#include "util/users.h"

namespace muster::render {
namespace {

// The requests come from command lines, as the commands make them.
using cli::ParseSinfoArgs;
using cli::SinfoUsage;

// Times in the expected texts are UTC, the oracle's zone.
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

// The oracle's cluster, all nodes idle.
struct Cluster {
  config::Config cfg;
  std::vector<core::Node> nodes;

  core::Node& Node(const std::string& name) {
    for (core::Node& n : nodes) {
      if (n.config.name == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    return nodes[0];
  }
  // Puts work on a node: CPUs, memory and GPU indices in use.
  Cluster& Use(const std::string& name, int cpus, int64_t mem, std::vector<int> gpus = {}) {
    core::Node& n = Node(name);
    n.alloc_cpus = cpus;
    n.alloc_mem_mb = mem;
    for (int g : gpus) n.gpu_used[static_cast<size_t>(g)] = true;
    n.running_jobs = 1;
    return *this;
  }
  ClusterView View(int64_t now) const {
    ClusterView v;
    v.users = &util::SystemUserDb();
    v.config = &cfg;
    for (const core::Node& n : nodes) v.nodes.push_back(&n);
    v.now = now;
    v.version = "22.05.8";
    return v;
  }
};

core::Partition Part(std::string name, std::vector<std::string> nodes, int64_t max_time,
                     int64_t default_time) {
  core::Partition p = muster::testing::MakePartition(std::move(name)).Nodes(std::move(nodes));
  p.max_time_s = max_time;
  p.default_time_s = default_time;
  p.min_nodes = 0;  // slurm.conf's default, as `scontrol show partition` shows
  return p;
}

Cluster Oracle() {
  Cluster c;
  c.cfg.path = "/etc/slurm/slurm.conf";
  c.cfg.cluster_name = "anchor";
  c.cfg.gres_types = {"gpu"};
  // slurm.conf lists the gpu nodes first; sinfo orders by name anyway.
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
    c.cfg.nodes.push_back(n.config);
    c.nodes.push_back(std::move(n));
  }
  core::Partition short_p = Part("short", {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"},
                                 4 * 3600, 3600);
  short_p.is_default = true;
  short_p.nodes_expr = "gpu[01-04],cpu[01-02]";
  core::Partition train = Part("train", {"gpu01", "gpu02", "gpu03", "gpu04"}, 3 * 86400, 4 * 3600);
  train.nodes_expr = "gpu[01-04]";
  c.cfg.partitions = {short_p, train};
  return c;
}

// The node states the oracle was in when the outputs were taken.
enum class State {
  kIdle,    // nothing running
  kM1,      // cpu01 7 CPUs, cpu02 2, gpu01 1 CPU + GPUs 0-1
  kWeight,  // kM1 with `scontrol update NodeName=cpu01 Weight=5`
  kLongPart,  // kM1 with `scontrol create PartitionName=verylongpartitionname Nodes=cpu01 MaxTime=30`
  kDrain,   // cpu01 12 CPUs, gpu01 as kM1, cpu02 2 CPUs and
            // `scontrol update NodeName=cpu02 State=DRAIN Reason="bad fan"` at 15:46:00
  kAlloc,   // cpu01 12, cpu02 2, gpu01 1 + GPUs 0-1, gpu03 4 + GPUs 0-2,
            // gpu04 `sbatch --exclusive` (32 CPUs, 8 GPUs)
  kBusy,    // every node mixed but gpu03, allocated
  kLate,    // cpu01 11 CPUs, gpu01 2, gpu02 1, gpu04 1, gpu03 allocated
  kDown,    // idle but `scontrol update NodeName=cpu02 State=DOWN Reason="down test"` at 16:03:53
  kDownDrain,  // kDown, then `scontrol update NodeName=cpu02 State=DRAIN Reason="both"`
};

Cluster InState(State s) {
  Cluster c = Oracle();
  switch (s) {
    case State::kIdle: break;
    case State::kM1:
    case State::kWeight:
    case State::kLongPart:
      c.Use("cpu01", 7, 5000).Use("cpu02", 2, 2000).Use("gpu01", 1, 1000, {0, 1});
      break;
    case State::kDrain:
      c.Use("cpu01", 12, 10000).Use("cpu02", 2, 2000).Use("gpu01", 1, 1000, {0, 1});
      c.Node("cpu02").drain = true;
      c.Node("cpu02").reason = "bad fan";
      c.Node("cpu02").reason_uid = 0;
      c.Node("cpu02").reason_time = At("2026-12-02T15:46:00");
      break;
    case State::kAlloc:
      c.Use("cpu01", 12, 10000).Use("cpu02", 2, 2000).Use("gpu01", 1, 1000, {0, 1});
      c.Use("gpu03", 4, 4000, {0, 1, 2}).Use("gpu04", 32, 32000, {0, 1, 2, 3, 4, 5, 6, 7});
      break;
    case State::kBusy:
      for (const char* n : {"cpu01", "cpu02", "gpu01", "gpu02", "gpu04"}) c.Use(n, 1, 1000);
      c.Use("gpu03", 32, 32000);
      break;
    case State::kDown:
    case State::kDownDrain: {
      core::Node& n = c.Node("cpu02");
      n.down = true;
      n.drain = s == State::kDownDrain;
      n.reason = s == State::kDownDrain ? "both" : "down test";
      n.reason_time = At("2026-12-02T16:03:53");
      break;
    }
    case State::kLate:
      c.Use("cpu01", 11, 11000).Use("gpu01", 2, 2000).Use("gpu02", 1, 1000).Use("gpu04", 1, 1000);
      c.Use("gpu03", 32, 32000);
      break;
  }
  if (s == State::kWeight) {
    c.Node("cpu01").config.weight = 5;
  }
  if (s == State::kLongPart) {
    core::Partition p = Part("verylongpartitionname", {"cpu01"}, 30 * 60, -1);
    p.min_nodes = 1;
    c.cfg.partitions.push_back(p);
  }
  return c;
}

struct Case {
  const char* name;
  State state;
  std::vector<std::string> args;
  std::string want;
  const char* now = "2026-12-02T15:44:57";
};

using util::Result;

std::string RunSinfo(const Case& c) {
  Cluster cluster = InState(c.state);
  Result<SinfoRequest> req = ParseSinfoArgs(c.args, {});
  if (!req.ok()) return "parse error: " + req.status().message();
  // The request travels to musterd as JSON.
  Result<SinfoRequest> sent = SinfoRequestFromJson(ToJson(*req));
  if (!sent.ok()) return "json error: " + sent.status().message();
  Result<std::string> out = RenderSinfo(*sent, cluster.View(At(c.now)));
  if (!out.ok()) return "render error: " + out.status().message();
  return *out;
}

class SinfoTest : public ::testing::TestWithParam<Case> {};

TEST_P(SinfoTest, MatchesSlurm) {
  const Case& c = GetParam();
  EXPECT_EQ(RunSinfo(c), c.want) << c.name;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string out;
  for (const char* p = info.param.name; *p; ++p) {
    out += (std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_');
  }
  return out + "_" + std::to_string(info.index);
}

// ---- the built-in views ----------------------------------------------------
const Case kViews[] = {
    {"sinfo", State::kIdle, {},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      6   idle cpu[01-02],gpu[01-04]\n"
     "train        up 3-00:00:00      4   idle gpu[01-04]\n"},
    {"sinfo", State::kM1, {},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      3    mix cpu[01-02],gpu01\n"
     "short*       up    4:00:00      3   idle gpu[02-04]\n"
     "train        up 3-00:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    {"sinfo", State::kDrain, {},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      1   drng cpu02\n"
     "short*       up    4:00:00      2    mix cpu01,gpu01\n"
     "short*       up    4:00:00      3   idle gpu[02-04]\n"
     "train        up 3-00:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    {"sinfo", State::kAlloc, {},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      4    mix cpu[01-02],gpu[01,03]\n"
     "short*       up    4:00:00      1  alloc gpu04\n"
     "short*       up    4:00:00      1   idle gpu02\n"
     "train        up 3-00:00:00      2    mix gpu[01,03]\n"
     "train        up 3-00:00:00      1  alloc gpu04\n"
     "train        up 3-00:00:00      1   idle gpu02\n"},
    // Slurm 22.05 lists a node's partitions in an unstable order under -N
    // (this run printed train before short* for every gpu node, the -N -l run
    // just after short* first); Muster lists them as configured.
    {"sinfo -N", State::kIdle, {"-N"},
     "NODELIST   NODES PARTITION STATE \n"
     "cpu01          1    short* idle  \n"
     "cpu02          1    short* idle  \n"
     "gpu01          1    short* idle  \n"
     "gpu01          1     train idle  \n"
     "gpu02          1    short* idle  \n"
     "gpu02          1     train idle  \n"
     "gpu03          1    short* idle  \n"
     "gpu03          1     train idle  \n"
     "gpu04          1    short* idle  \n"
     "gpu04          1     train idle  \n"},
    {"sinfo -N", State::kDrain, {"-N"},
     "NODELIST   NODES PARTITION STATE \n"
     "cpu01          1    short* mix   \n"
     "cpu02          1    short* drng  \n"
     "gpu01          1    short* mix   \n"
     "gpu01          1     train mix   \n"
     "gpu02          1    short* idle  \n"
     "gpu02          1     train idle  \n"
     "gpu03          1    short* idle  \n"
     "gpu03          1     train idle  \n"
     "gpu04          1    short* idle  \n"
     "gpu04          1     train idle  \n"},
    {"sinfo -l", State::kIdle, {"-l"},
     "Wed Dec 02 15:44:57 2026\n"
     "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      6        idle cpu[01-02],gpu[01-04]\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      4        idle gpu[01-04]\n"},
    {"sinfo -l", State::kDrain, {"-l"},
     "Wed Dec 02 15:46:00 2026\n"
     "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      1    draining cpu02\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      2       mixed cpu01,gpu01\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      3        idle gpu[02-04]\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      1       mixed gpu01\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      3        idle gpu[02-04]\n",
     "2026-12-02T15:46:00"},
    {"sinfo -l", State::kAlloc, {"-l"},
     "Wed Dec 02 15:46:16 2026\n"
     "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      4       mixed cpu[01-02],gpu[01,03]\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      1   allocated gpu04\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      1        idle gpu02\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      2       mixed gpu[01,03]\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      1   allocated gpu04\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      1        idle gpu02\n",
     "2026-12-02T15:46:16"},
    {"sinfo -N -l", State::kIdle, {"-N", "-l"},
     "Wed Dec 02 15:44:57 2026\n"
     "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n"
     "cpu01          1    short*        idle 32     2:16:1  64000        0      1      cpu none                \n"
     "cpu02          1    short*        idle 32     2:16:1  64000        0      1      cpu none                \n"
     "gpu01          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu01          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu02          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu02          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu03          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu03          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu04          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu04          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"},
    {"sinfo -N -l", State::kDrain, {"-N", "-l"},
     "Wed Dec 02 15:46:00 2026\n"
     "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n"
     "cpu01          1    short*       mixed 32     2:16:1  64000        0      1      cpu none                \n"
     "cpu02          1    short*    draining 32     2:16:1  64000        0      1      cpu bad fan             \n"
     "gpu01          1    short*       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu01          1     train       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu02          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu02          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu03          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu03          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu04          1    short*        idle 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu04          1     train        idle 32     2:16:1  64000        0      1 h100,gpu none                \n",
     "2026-12-02T15:46:00"},
    {"sinfo -Nel", State::kBusy, {"-Nel"},
     "Wed Dec 02 15:48:31 2026\n"
     "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n"
     "cpu01          1    short*       mixed 32     2:16:1  64000        0      1      cpu none                \n"
     "cpu02          1    short*       mixed 32     2:16:1  64000        0      1      cpu none                \n"
     "gpu01          1    short*       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu01          1     train       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu02          1    short*       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu02          1     train       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu03          1    short*   allocated 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu03          1     train   allocated 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu04          1    short*       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n"
     "gpu04          1     train       mixed 32     2:16:1  64000        0      1 h100,gpu none                \n",
     "2026-12-02T15:48:31"},
    {"sinfo -s", State::kIdle, {"-s"},
     "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*       up    4:00:00          0/6/0/6 cpu[01-02],gpu[01-04]\n"
     "train        up 3-00:00:00          0/4/0/4 gpu[01-04]\n"},
    // A draining node counts as allocated.
    {"sinfo -s", State::kDrain, {"-s"},
     "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*       up    4:00:00          3/3/0/6 cpu[01-02],gpu[01-04]\n"
     "train        up 3-00:00:00          1/3/0/4 gpu[01-04]\n"},
    {"sinfo -s", State::kAlloc, {"-s"},
     "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*       up    4:00:00          5/1/0/6 cpu[01-02],gpu[01-04]\n"
     "train        up 3-00:00:00          3/1/0/4 gpu[01-04]\n"},
    {"sinfo -s -N", State::kBusy, {"-s", "-N"},
     "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*       up    4:00:00          1/0/0/1 cpu01\n"
     "short*       up    4:00:00          1/0/0/1 cpu02\n"
     "short*       up    4:00:00          1/0/0/1 gpu01\n"
     "train        up 3-00:00:00          1/0/0/1 gpu01\n"
     "short*       up    4:00:00          1/0/0/1 gpu02\n"
     "train        up 3-00:00:00          1/0/0/1 gpu02\n"
     "short*       up    4:00:00          1/0/0/1 gpu03\n"
     "train        up 3-00:00:00          1/0/0/1 gpu03\n"
     "short*       up    4:00:00          1/0/0/1 gpu04\n"
     "train        up 3-00:00:00          1/0/0/1 gpu04\n"},
    {"sinfo -R", State::kIdle, {"-R"},
     "REASON               USER      TIMESTAMP           NODELIST\n"},
    {"sinfo -R", State::kDrain, {"-R"},
     "REASON               USER      TIMESTAMP           NODELIST\n"
     "bad fan              root      2026-12-02T15:46:00 cpu02\n"},
    {"sinfo -R -l", State::kDrain, {"-R", "-l"},
     "Wed Dec 02 15:46:00 2026\n"
     "REASON               USER         TIMESTAMP           STATE  NODELIST\n"
     "bad fan              root(0)      2026-12-02T15:46:00 drng   cpu02\n",
     "2026-12-02T15:46:00"},
    {"sinfo -R -N", State::kBusy, {"-R", "-N"}, "NODELIST   NODES PARTITION STATE \n"},
    {"sinfo -R -s", State::kBusy, {"-R", "-s"},
     "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*       up    4:00:00          0/0/0/0 \n"
     "train        up 3-00:00:00          0/0/0/0 \n"},
    {"sinfo -l -h", State::kBusy, {"-l", "-h"},
     "short*       up    4:00:00 1-infinite   no       NO        all      5       mixed cpu[01-02],gpu[01-02,04]\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      1   allocated gpu03\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      3       mixed gpu[01-02,04]\n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      1   allocated gpu03\n"},
    {"sinfo -h", State::kBusy, {"-h"},
     "short*       up    4:00:00      5    mix cpu[01-02],gpu[01-02,04]\n"
     "short*       up    4:00:00      1  alloc gpu03\n"
     "train        up 3-00:00:00      3    mix gpu[01-02,04]\n"
     "train        up 3-00:00:00      1  alloc gpu03\n"},
    {"sinfo -s -o %P", State::kBusy, {"-s", "-o", "%P"}, "PARTITION\nshort*\ntrain\n"},
};
INSTANTIATE_TEST_SUITE_P(Views, SinfoTest, ::testing::ValuesIn(kViews), CaseName);

// ---- filters -----------------------------------------------------------------
const Case kFilters[] = {
    {"sinfo -t drain", State::kDrain, {"-t", "drain"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      1   drng cpu02\n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -t drng", State::kDrain, {"-t", "drng"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      1   drng cpu02\n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -t drained", State::kDrain, {"-t", "drained"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      0    n/a \n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -t idle", State::kDrain, {"-t", "idle"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      3   idle gpu[02-04]\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    // A draining node is not "mix".
    {"sinfo -t mix", State::kDrain, {"-t", "mix"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      2    mix cpu01,gpu01\n"
     "train        up 3-00:00:00      1    mix gpu01\n"},
    // "alloc" takes in mixed nodes.
    {"sinfo -t alloc", State::kM1, {"-t", "alloc"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      3    mix cpu[01-02],gpu01\n"
     "train        up 3-00:00:00      1    mix gpu01\n"},
    {"sinfo -t alloc", State::kAlloc, {"-t", "alloc"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      4    mix cpu[01-02],gpu[01,03]\n"
     "short*       up    4:00:00      1  alloc gpu04\n"
     "train        up 3-00:00:00      2    mix gpu[01,03]\n"
     "train        up 3-00:00:00      1  alloc gpu04\n"},
    {"sinfo -t idle,mix", State::kM1, {"-t", "idle,mix"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      3    mix cpu[01-02],gpu01\n"
     "short*       up    4:00:00      3   idle gpu[02-04]\n"
     "train        up 3-00:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    {"sinfo -t all", State::kM1, {"-t", "all"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      3    mix cpu[01-02],gpu01\n"
     "short*       up    4:00:00      3   idle gpu[02-04]\n"
     "train        up 3-00:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    {"sinfo -t DRAIN", State::kM1, {"-t", "DRAIN"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      0    n/a \n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -t down", State::kM1, {"-t", "down"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      0    n/a \n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -s -t down", State::kM1, {"-s", "-t", "down"},
     "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*       up    4:00:00          0/0/0/0 \n"
     "train        up 3-00:00:00          0/0/0/0 \n"},
    {"sinfo -t down -l", State::kM1, {"-t", "down", "-l"},
     "Wed Dec 02 15:47:11 2026\n"
     "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n"
     "short*       up    4:00:00 1-infinite   no       NO        all      0         n/a \n"
     "train        up 3-00:00:00 1-infinite   no       NO        all      0         n/a \n",
     "2026-12-02T15:47:11"},
    // An empty partition row: sinfo prints a zeroed record (uid 0 as the
    // reason's user, no timestamp).
    {"sinfo -t down -o %P|%D|...", State::kM1,
     {"-t", "down", "-o",
      "%P|%D|%t|%T|%N|%C|%F|%A|%c|%m|%G|%l|%E|%z|%f|%e|%O|%w|%d|%a|%U|%H|%n|%o"},
     "PARTITION|NODES|STATE|STATE|NODELIST|CPUS(A/I/O/T)|NODES(A/I/O/T)|NODES(A/I)|CPUS|MEMORY|GRES|"
     "TIMELIMIT|REASON|S:C:T|AVAIL_FEATURES|FREE_MEM|CPU_LOAD|WEIGHT|TMP_DISK|AVAIL|USER|TIMESTAMP|"
     "HOSTNAMES|NODE_ADDR\n"
     "short*|0|n/a|n/a||0/0/0/0|0/0/0/0|0/0|0|0|(null)|4:00:00|none|0:0:0|(null)|0|0.00|0|0|up|root(0)|"
     "Unknown||\n"
     "train|0|n/a|n/a||0/0/0/0|0/0/0/0|0/0|0|0|(null)|3-00:00:00|none|0:0:0|(null)|0|0.00|0|0|up|"
     "root(0)|Unknown||\n"},
    // Without a partition column there are no empty rows.
    {"sinfo -t down -o '%t %N'", State::kM1, {"-t", "down", "-o", "%t %N"}, "STATE NODELIST\n"},
    {"sinfo -t down -o '%a|%N|%D'", State::kM1, {"-t", "down", "-o", "%a|%N|%D"},
     "AVAIL|NODELIST|NODES\n"},
    {"sinfo -t down -o '%P %t'", State::kM1, {"-t", "down", "-o", "%P %t"},
     "PARTITION STATE\nshort* n/a\ntrain n/a\n"},
    {"sinfo -t down -o %R", State::kM1, {"-t", "down", "-o", "%R"}, "PARTITION\nshort\ntrain\n"},
    {"sinfo -t down -O Partition,StateLong,NodeList,CPUsState,GresUsed,AllocMem", State::kM1,
     {"-t", "down", "-O", "Partition,StateLong,NodeList,CPUsState,GresUsed,AllocMem"},
     "PARTITION           STATE               NODELIST            CPUS(A/I/O/T)       GRES_USED           ALLOCMEM            \n"
     "short*              n/a                                     0/0/0/0             (null)              0                   \n"
     "train               n/a                                     0/0/0/0             (null)              0                   \n"},
    {"sinfo -t down -R", State::kM1, {"-t", "down", "-R"},
     "REASON               USER      TIMESTAMP           NODELIST\n"},
    {"sinfo -t idle -o '%P %D'", State::kBusy, {"-t", "idle", "-o", "%P %D"},
     "PARTITION NODES\nshort* 0\ntrain 0\n"},
    {"sinfo -t idle -N -p train", State::kBusy, {"-t", "idle", "-N", "-p", "train"},
     "NODELIST   NODES PARTITION STATE \n"},
    {"sinfo -p nosuch", State::kM1, {"-p", "nosuch"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"},
    {"sinfo -p ''", State::kM1, {"-p", ""}, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"},
    {"sinfo -p train,short", State::kM1, {"-p", "train,short"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      3    mix cpu[01-02],gpu01\n"
     "short*       up    4:00:00      3   idle gpu[02-04]\n"
     "train        up 3-00:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    {"sinfo -p short -p train", State::kM1, {"-p", "short", "-p", "train"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "train        up 3-00:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      3   idle gpu[02-04]\n"},
    {"sinfo -N -o '%P %N' -p train", State::kM1, {"-N", "-o", "%P %N", "-p", "train"},
     "PARTITION NODELIST\ntrain gpu01\ntrain gpu02\ntrain gpu03\ntrain gpu04\n"},
    {"sinfo -n gpu01", State::kM1, {"-n", "gpu01"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      1    mix gpu01\n"
     "train        up 3-00:00:00      1    mix gpu01\n"},
    {"sinfo -N -n gpu01", State::kM1, {"-N", "-n", "gpu01"},
     "NODELIST   NODES PARTITION STATE \n"
     "gpu01          1    short* mix   \n"
     "gpu01          1     train mix   \n"},
    {"sinfo -n nosuch", State::kM1, {"-n", "nosuch"},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      0    n/a \n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -n 'bad['", State::kM1, {"-n", "bad["},
     "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*       up    4:00:00      0    n/a \n"
     "train        up 3-00:00:00      0    n/a \n"},
    {"sinfo -N -n nosuch", State::kM1, {"-N", "-n", "nosuch"}, "NODELIST   NODES PARTITION STATE \n"},
    {"sinfo -n cpu01 -o '%P %D %N'", State::kM1, {"-n", "cpu01", "-o", "%P %D %N"},
     "PARTITION NODES NODELIST\nshort* 1 cpu01\ntrain 0 \n"},
    {"sinfo -r -o '%P %N'", State::kM1, {"-r", "-o", "%P %N"},
     "PARTITION NODELIST\nshort* cpu[01-02],gpu[01-04]\ntrain gpu[01-04]\n"},
    {"sinfo -d -o '%P %N'", State::kM1, {"-d", "-o", "%P %N"}, "PARTITION NODELIST\nshort* \ntrain \n"},
    // A down node's CPUs are all "other".
    {"sinfo -N -n cpu02 -o '%N %t %T %C %F %A %E|%U|%H'", State::kDown,
     {"-N", "-n", "cpu02", "-o", "%N %t %T %C %F %A %E|%U|%H"},
     "NODELIST STATE STATE CPUS(A/I/O/T) NODES(A/I/O/T) NODES(A/I) REASON|USER|TIMESTAMP\n"
     "cpu02 down down 0/0/32/32 0/0/1/1 0/0 down test|root(0)|2026-12-02T16:03:53\n"},
    {"sinfo -O StateComplete -n cpu02", State::kDown, {"-O", "StateComplete", "-n", "cpu02"},
     "STATECOMPLETE       \ndown                \n"},
    {"sinfo -R", State::kDown, {"-R"},
     "REASON               USER      TIMESTAMP           NODELIST\n"
     "down test            root      2026-12-02T16:03:53 cpu02\n"},
    {"sinfo -t down -o '%P %t %N'", State::kDown, {"-t", "down", "-o", "%P %t %N"},
     "PARTITION STATE NODELIST\nshort* down cpu02\ntrain n/a \n"},
    {"sinfo -t idle -n cpu02 -o '%P %t %N'", State::kDown, {"-t", "idle", "-n", "cpu02", "-o", "%P %t %N"},
     "PARTITION STATE NODELIST\nshort* n/a \ntrain n/a \n"},
    // Slurm prints this node's %t/%T as drain/drained (core::Node says down).
    {"sinfo -N -n cpu02 -o '%C %F %E'", State::kDownDrain, {"-N", "-n", "cpu02", "-o", "%C %F %E"},
     "CPUS(A/I/O/T) NODES(A/I/O/T) REASON\n0/0/32/32 0/0/1/1 both\n"},
    {"sinfo -O StateComplete -n cpu02", State::kDownDrain, {"-O", "StateComplete", "-n", "cpu02"},
     "STATECOMPLETE       \ndown+drain          \n"},
    {"sinfo -t drain -n cpu02 -o %N", State::kDownDrain, {"-t", "drain", "-n", "cpu02", "-o", "%N"},
     "NODELIST\ncpu02\n"},
    {"sinfo -t down -n cpu02 -o %N", State::kDownDrain, {"-t", "down", "-n", "cpu02", "-o", "%N"},
     "NODELIST\ncpu02\n"},
    {"sinfo -R", State::kDownDrain, {"-R"},
     "REASON               USER      TIMESTAMP           NODELIST\n"
     "both                 root      2026-12-02T16:03:53 cpu02\n"},
};
INSTANTIATE_TEST_SUITE_P(Filters, SinfoTest, ::testing::ValuesIn(kFilters), CaseName);

// ---- -o fields, one at a time (`sinfo -o %X` in state kM1) ---------------------
// Not compared: %e/%O (free memory, load: Muster's agents do not report
// them and print N/A), %n/%o (host names and addresses: Muster prints the
// node names) and %v (the version string comes from the view).
const Case kLetters[] = {
    {"sinfo -a -o '%P %G %l %p %c %m' (Toil)", State::kIdle, {"-a", "-o", "%P %G %l %p %c %m"},
     "PARTITION GRES TIMELIMIT PRIO_TIER CPUS MEMORY\n"
     "short* (null) 4:00:00 1 32 64000\n"
     "short* gpu:h100:8 4:00:00 1 32 64000\n"
     "train gpu:h100:8 3-00:00:00 1 32 64000\n"},
    {"sinfo -o %P (Snakemake)", State::kM1, {"-o", "%P"}, "PARTITION\nshort*\ntrain\n"},
    {"%a", State::kM1, {"-o", "%a"}, "AVAIL\nup\n"},
    {"%l", State::kM1, {"-o", "%l"}, "TIMELIMIT\n4:00:00\n3-00:00:00\n"},
    {"%D", State::kM1, {"-o", "%D"}, "NODES\n6\n"},
    {"%t", State::kM1, {"-o", "%t"}, "STATE\nmix\nidle\n"},
    {"%T", State::kM1, {"-o", "%T"}, "STATE\nmixed\nidle\n"},
    {"%N", State::kM1, {"-o", "%N"}, "NODELIST\ncpu[01-02],gpu[01-04]\n"},
    {"%c", State::kM1, {"-o", "%c"}, "CPUS\n32\n"},
    {"%m", State::kM1, {"-o", "%m"}, "MEMORY\n64000\n"},
    {"%G", State::kM1, {"-o", "%G"}, "GRES\n(null)\ngpu:h100:8\n"},
    {"%f", State::kM1, {"-o", "%f"}, "AVAIL_FEATURES\ncpu\nh100,gpu\n"},
    {"%b", State::kM1, {"-o", "%b"}, "ACTIVE_FEATURES\ncpu\nh100,gpu\n"},
    {"%C", State::kM1, {"-o", "%C"}, "CPUS(A/I/O/T)\n10/182/0/192\n"},
    {"%R", State::kM1, {"-o", "%R"}, "PARTITION\nshort\ntrain\n"},
    {"%E", State::kM1, {"-o", "%E"}, "REASON\nnone\n"},
    {"%U", State::kM1, {"-o", "%U"}, "USER\nUnknown\n"},
    {"%u", State::kM1, {"-o", "%u"}, "USER\nUnknown\n"},
    {"%H", State::kM1, {"-o", "%H"}, "TIMESTAMP\nUnknown\n"},
    {"%w", State::kM1, {"-o", "%w"}, "WEIGHT\n1\n"},
    {"%z", State::kM1, {"-o", "%z"}, "S:C:T\n2:16:1\n"},
    {"%s", State::kM1, {"-o", "%s"}, "JOB_SIZE\n1-infinite\n"},
    {"%X", State::kM1, {"-o", "%X"}, "SOCKETS\n2\n"},
    {"%Y", State::kM1, {"-o", "%Y"}, "CORES\n16\n"},
    {"%Z", State::kM1, {"-o", "%Z"}, "THREADS\n1\n"},
    {"%h", State::kM1, {"-o", "%h"}, "OVERSUBSCRIBE\nNO\n"},
    {"%g", State::kM1, {"-o", "%g"}, "GROUPS\nall\n"},
    {"%L", State::kM1, {"-o", "%L"}, "DEFAULTTIME\n1:00:00\n4:00:00\n"},
    {"%F", State::kM1, {"-o", "%F"}, "NODES(A/I/O/T)\n3/3/0/6\n"},
    {"%A", State::kM1, {"-o", "%A"}, "NODES(A/I)\n3/3\n"},
    {"%p", State::kM1, {"-o", "%p"}, "PRIO_TIER\n1\n"},
    {"%I", State::kM1, {"-o", "%I"}, "PRIO_JOB_FACTOR\n1\n"},
    {"%S", State::kM1, {"-o", "%S"}, "ALLOCNODES\nall\n"},
    {"%V", State::kM1, {"-o", "%V"}, "CLUSTER\nN/A\n"},
    {"%v", State::kM1, {"-o", "%v"}, "VERSION\n22.05.8\n"},
    {"%d", State::kM1, {"-o", "%d"}, "TMP_DISK\n0\n"},
    {"%B", State::kM1, {"-o", "%B"}, "MAX_CPUS_PER_NODE\nUNLIMITED\n"},
    {"%M", State::kM1, {"-o", "%M"}, "PREEMPT_MODE\nOFF\n"},
    {"%r", State::kM1, {"-o", "%r"}, "ROOT\nno\n"},
    // An invalid type prints as written (sinfo also warns on stderr). These
    // are from a rerun with only cpu01 busy; the first run, in kM1, printed
    // "%x" rows once per node state, which a rerun did not reproduce.
    {"%x", State::kM1, {"-o", "%x"}, "%x\n%x\n"},
    {"%x %N", State::kM1, {"-o", "%x %N"}, "%x NODELIST\n%x cpu[01-02],gpu[01-04]\n"},
    {"%N %-", State::kM1, {"-o", "%N %-"}, "NODELIST %-\ncpu[01-02],gpu[01-04] %-\n"},
    {"%a %D %N", State::kM1, {"-o", "%a %D %N"}, "AVAIL NODES NODELIST\nup 6 cpu[01-02],gpu[01-04]\n"},
    {"%l %D %N", State::kM1, {"-o", "%l %D %N"},
     "TIMELIMIT NODES NODELIST\n4:00:00 6 cpu[01-02],gpu[01-04]\n3-00:00:00 4 gpu[01-04]\n"},
    {"%D %N", State::kM1, {"-o", "%D %N"}, "NODES NODELIST\n6 cpu[01-02],gpu[01-04]\n"},
    {"%p %D %N", State::kM1, {"-o", "%p %D %N"},
     "PRIO_TIER NODES NODELIST\n1 6 cpu[01-02],gpu[01-04]\n"},
    {"%g %D", State::kM1, {"-o", "%g %D"}, "GROUPS NODES\nall 6\n"},
    {"-p train -o '%D %N'", State::kM1, {"-p", "train", "-o", "%D %N"}, "NODES NODELIST\n4 gpu[01-04]\n"},
    {"%P %t %C %F %A %N", State::kAlloc, {"-o", "%P %t %C %F %A %N"},
     "PARTITION STATE CPUS(A/I/O/T) NODES(A/I/O/T) NODES(A/I) NODELIST\n"
     "short* mix 19/109/0/128 4/0/0/4 4/0 cpu[01-02],gpu[01,03]\n"
     "short* alloc 32/0/0/32 1/0/0/1 1/0 gpu04\n"
     "short* idle 0/32/0/32 0/1/0/1 0/1 gpu02\n"
     "train mix 5/59/0/64 2/0/0/2 2/0 gpu[01,03]\n"
     "train alloc 32/0/0/32 1/0/0/1 1/0 gpu04\n"
     "train idle 0/32/0/32 0/1/0/1 0/1 gpu02\n"},
    // A draining node's idle CPUs are "other"; the node counts as allocated.
    {"%E|%U|%u|%H|%t|%T|%N|%C|%F|%A", State::kDrain, {"-o", "%E|%U|%u|%H|%t|%T|%N|%C|%F|%A"},
     "REASON|USER|USER|TIMESTAMP|STATE|STATE|NODELIST|CPUS(A/I/O/T)|NODES(A/I/O/T)|NODES(A/I)\n"
     "bad fan|root(0)|root|2026-12-02T15:46:00|drng|draining|cpu02|2/0/30/32|1/0/0/1|1/0\n"
     "none|Unknown|Unknown|Unknown|mix|mixed|cpu01,gpu01|13/51/0/64|2/0/0/2|2/0\n"
     "none|Unknown|Unknown|Unknown|idle|idle|gpu[02-04]|0/96/0/96|0/3/0/3|0/3\n"},
};
INSTANTIATE_TEST_SUITE_P(Letters, SinfoTest, ::testing::ValuesIn(kLetters), CaseName);

// ---- widths and format syntax ------------------------------------------------
const Case kWidths[] = {
    // A cut default partition keeps its '*'; the header is cut too.
    {"%3P|%.3P|...", State::kM1,
     {"-o", "%3P|%.3P|%3l|%.3l|%3D|%.3D|%3t|%.3t|%3c|%.3c|%3T|%.3T|%3a|%.3a|"},
     "PAR|PAR|TIM|TIM|NOD|NOD|STA|STA|CPU|CPU|STA|STA|AVA|AVA|\n"
     "sh*|sh*|4:0|4:0|3  |  3|mix|mix|32 | 32|mix|mix|up | up|\n"
     "sh*|sh*|4:0|4:0|3  |  3|idl|idl|32 | 32|idl|idl|up | up|\n"
     "tra|tra|3-0|3-0|1  |  1|mix|mix|32 | 32|mix|mix|up | up|\n"
     "tra|tra|3-0|3-0|3  |  3|idl|idl|32 | 32|idl|idl|up | up|\n"},
    {"%12P|%.12P|...", State::kM1,
     {"-o",
      "%12P|%.12P|%12l|%.12l|%12D|%.12D|%12t|%.12t|%12N|%.12N|%12c|%.12c|%12G|%.12G|%12C|%.12C|%12E|"
      "%.12E|"},
     "PARTITION   |   PARTITION|TIMELIMIT   |   TIMELIMIT|NODES       |       NODES|STATE       |       STATE|NODELIST    |    NODELIST|CPUS        |        CPUS|GRES        |        GRES|CPUS(A/I/O/T|CPUS(A/I/O/T|REASON      |      REASON|\n"
     "short*      |      short*|4:00:00     |     4:00:00|2           |           2|mix         |         mix|cpu[01-02]  |  cpu[01-02]|32          |          32|(null)      |      (null)|9/55/0/64   |   9/55/0/64|none        |        none|\n"
     "short*      |      short*|4:00:00     |     4:00:00|1           |           1|mix         |         mix|gpu01       |       gpu01|32          |          32|gpu:h100:8  |  gpu:h100:8|1/31/0/32   |   1/31/0/32|none        |        none|\n"
     "short*      |      short*|4:00:00     |     4:00:00|3           |           3|idle        |        idle|gpu[02-04]  |  gpu[02-04]|32          |          32|gpu:h100:8  |  gpu:h100:8|0/96/0/96   |   0/96/0/96|none        |        none|\n"
     "train       |       train|3-00:00:00  |  3-00:00:00|1           |           1|mix         |         mix|gpu01       |       gpu01|32          |          32|gpu:h100:8  |  gpu:h100:8|1/31/0/32   |   1/31/0/32|none        |        none|\n"
     "train       |       train|3-00:00:00  |  3-00:00:00|3           |           3|idle        |        idle|gpu[02-04]  |  gpu[02-04]|32          |          32|gpu:h100:8  |  gpu:h100:8|0/96/0/96   |   0/96/0/96|none        |        none|\n"},
    // Right-justified host lists keep their whole header; width 0 = natural.
    {"%.3N|%3N|%.1N|%1N|%0N|%.0P|%0P", State::kM1, {"-o", "%.3N|%3N|%.1N|%1N|%0N|%.0P|%0P"},
     "NODELIST|NOD|NODELIST|N|NODELIST|PARTITION|PARTITION\n"
     "cpu|cpu|c|c|cpu[01-02],gpu[01-04]|short*|short*\n"
     "gpu|gpu|g|g|gpu[01-04]|train|train\n"},
    {"%20N|", State::kM1, {"-o", "%20N|"}, "NODELIST            |\ncpu[01-02],gpu[01-04|\n"},
    {"-N %.3N|%3N|%N", State::kM1, {"-N", "-o", "%.3N|%3N|%N"},
     "NODELIST|NOD|NODELIST\ncpu|cpu|cpu01\ncpu|cpu|cpu02\ngpu|gpu|gpu01\ngpu|gpu|gpu01\n"
     "gpu|gpu|gpu02\ngpu|gpu|gpu02\ngpu|gpu|gpu03\ngpu|gpu|gpu03\ngpu|gpu|gpu04\ngpu|gpu|gpu04\n"},
    // (Slurm's run also had %.3n|%.3o, " vm|127": Muster prints node names.)
    {"%.3E|%.3G|%.3f|%.3T|%.3C|%.3P|%.3l|%.3H|%.3u|%.3z|%.2c|%.3R", State::kLate,
     {"-o", "%.3E|%.3G|%.3f|%.3T|%.3C|%.3P|%.3l|%.3H|%.3u|%.3z|%.2c|%.3R"},
     "REA|GRE|AVA|STA|CPU|PAR|TIM|TIM|USE|S:C|CP|PAR\n"
     "non|(nu|cpu|mix|11/|sh*|4:0|Unk|Unk|2:1|32|sho\n"
     "non|gpu|h10|mix|4/9|sh*|4:0|Unk|Unk|2:1|32|sho\n"
     "non|gpu|h10|all|32/|sh*|4:0|Unk|Unk|2:1|32|sho\n"
     "non|(nu|cpu|idl|0/3|sh*|4:0|Unk|Unk|2:1|32|sho\n"
     "non|gpu|h10|mix|4/9|tra|3-0|Unk|Unk|2:1|32|tra\n"
     "non|gpu|h10|all|32/|tra|3-0|Unk|Unk|2:1|32|tra\n"},
    // "%%" is no escape: a run of '%' starts one field; the text after a
    // field's type is its suffix; a lone '%' at the end vanishes.
    {"%P %a %N %%  x%", State::kM1, {"-o", "%P %a %N %%  x%"},
     "PARTITION AVAIL NODELIST %  x\nshort* up cpu[01-02],gpu[01-04] %  x\ntrain up gpu[01-04] %  x\n"},
    {"abc%Pdef", State::kM1, {"-o", "abc%Pdef"}, "abcPARTITIONdef\nabcshort*def\nabctraindef\n"},
    {"%%P|%%%D|a%%", State::kM1, {"-o", "%%P|%%%D|a%%"}, "PARTITION|NODES|a\nshort*|6|a\ntrain|4|a\n"},
    {"%P%%x%.4D!", State::kM1, {"-o", "%P%%x%.4D!"}, "PARTITION%xNODE!\nshort*%x   6!\ntrain%x   4!\n"},
    {"%-10P", State::kM1, {"-o", "%-10P|"}, "%-10P|\n%-10P|\n"},
    {"%.3N|%-3N", State::kM1, {"-o", "%.3N|%-3N"}, "NODELIST|%-3N\ncpu|%-3N\n"},
    {"abc", State::kM1, {"-o", "abc"}, "abc\nabc\n"},
    {"%5", State::kM1, {"-o", "%5"}, "%5\n%5\n"},
    {"%.P|%.0P|", State::kM1, {"-o", "%.P|%.0P|"}, "PARTITION|PARTITION|\nshort*|short*|\ntrain|train|\n"},
    // CPUs, memory, disk and weight show "min+" over a record; -e splits.
    {"%P %w %N", State::kWeight, {"-o", "%P %w %N"},
     "PARTITION WEIGHT NODELIST\nshort* 1+ cpu[01-02],gpu[01-04]\ntrain 1 gpu[01-04]\n"},
    {"-e %P %w %N", State::kWeight, {"-e", "-o", "%P %w %N"},
     "PARTITION WEIGHT NODELIST\nshort* 5 cpu01\nshort* 1 cpu02,gpu[01-04]\ntrain 1 gpu[01-04]\n"},
    {"%P %c %w %N", State::kWeight, {"-o", "%P %c %w %N"},
     "PARTITION CPUS WEIGHT NODELIST\nshort* 32 1+ cpu[01-02],gpu[01-04]\ntrain 32 1 gpu[01-04]\n"},
    {"-N %N %w", State::kWeight, {"-N", "-o", "%N %w"},
     "NODELIST WEIGHT\ncpu01 5\ncpu02 1\ngpu01 1\ngpu01 1\ngpu02 1\ngpu02 1\ngpu03 1\ngpu03 1\n"
     "gpu04 1\ngpu04 1\n"},
    {"%w", State::kWeight, {"-o", "%w"}, "WEIGHT\n1+\n"},
    {"-O Partition,Weight,NodeList", State::kWeight, {"-O", "Partition,Weight,NodeList"},
     "PARTITION           WEIGHT              NODELIST            \n"
     "short*              1+                  cpu[01-02],gpu[01-04\n"
     "train               1                   gpu[01-04]          \n"},
    // The '#' columns grow with the longest partition name.
    {"sinfo (long partition)", State::kLongPart, {},
     "PARTITION             AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
     "short*                   up    4:00:00      3    mix cpu[01-02],gpu01\n"
     "short*                   up    4:00:00      3   idle gpu[02-04]\n"
     "train                    up 3-00:00:00      1    mix gpu01\n"
     "train                    up 3-00:00:00      3   idle gpu[02-04]\n"
     "verylongpartitionname    up      30:00      1    mix cpu01\n"},
    {"sinfo -N (long partition)", State::kLongPart, {"-N"},
     "NODELIST   NODES             PARTITION STATE \n"
     "cpu01          1                short* mix   \n"
     "cpu01          1 verylongpartitionname mix   \n"
     "cpu02          1                short* mix   \n"
     "gpu01          1                short* mix   \n"
     "gpu01          1                 train mix   \n"
     "gpu02          1                short* idle  \n"
     "gpu02          1                 train idle  \n"
     "gpu03          1                short* idle  \n"
     "gpu03          1                 train idle  \n"
     "gpu04          1                short* idle  \n"
     "gpu04          1                 train idle  \n"},
    {"sinfo -l (long partition)", State::kLongPart, {"-l"},
     "Wed Dec 02 15:45:54 2026\n"
     "PARTITION             AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n"
     "short*                   up    4:00:00 1-infinite   no       NO        all      3       mixed cpu[01-02],gpu01\n"
     "short*                   up    4:00:00 1-infinite   no       NO        all      3        idle gpu[02-04]\n"
     "train                    up 3-00:00:00 1-infinite   no       NO        all      1       mixed gpu01\n"
     "train                    up 3-00:00:00 1-infinite   no       NO        all      3        idle gpu[02-04]\n"
     "verylongpartitionname    up      30:00 1-infinite   no       NO        all      1       mixed cpu01\n",
     "2026-12-02T15:45:54"},
    {"sinfo -s (long partition)", State::kLongPart, {"-s"},
     "PARTITION             AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
     "short*                   up    4:00:00          3/3/0/6 cpu[01-02],gpu[01-04]\n"
     "train                    up 3-00:00:00          1/3/0/4 gpu[01-04]\n"
     "verylongpartitionname    up      30:00          1/0/0/1 cpu01\n"},
    {"-o '%P %l' (long partition)", State::kLongPart, {"-o", "%P %l"},
     "PARTITION TIMELIMIT\nshort* 4:00:00\ntrain 3-00:00:00\nverylongpartitionname 30:00\n"},
    {"-N -p verylongpartitionname", State::kLongPart, {"-N", "-p", "verylongpartitionname"},
     "NODELIST   NODES             PARTITION STATE \n"
     "cpu01          1 verylongpartitionname mix   \n"},
};
INSTANTIATE_TEST_SUITE_P(Widths, SinfoTest, ::testing::ValuesIn(kWidths), CaseName);

// ---- -O ------------------------------------------------------------------------
const Case kLong[] = {
    {"-O Partition", State::kM1, {"-O", "Partition"},
     "PARTITION           \nshort*              \ntrain               \n"},
    {"-O StateCompact", State::kM1, {"-O", "StateCompact"},
     "STATE               \nmix                 \nidle                \n"},
    {"-O NodeList", State::kM1, {"-O", "NodeList"},
     "NODELIST            \ncpu[01-02],gpu[01-04\n"},
    {"-O CPUsState", State::kM1, {"-O", "CPUsState"},
     "CPUS(A/I/O/T)       \n10/182/0/192        \n"},
    {"-O GresUsed", State::kM1, {"-O", "GresUsed"},
     "GRES_USED           \ngpu:0               \ngpu:h100:2(IDX:0-1) \ngpu:h100:0(IDX:N/A) \n"},
    {"-O AllocMem", State::kM1, {"-O", "AllocMem"},
     "ALLOCMEM            \n5000                \n2000                \n1000                \n0                   \n"},
    {"-O Gres", State::kM1, {"-O", "Gres"}, "GRES                \n(null)              \ngpu:h100:8          \n"},
    {"-O Features", State::kM1, {"-O", "Features"},
     "AVAIL_FEATURES      \ncpu                 \nh100,gpu            \n"},
    {"-O features_act,TimeStamp,Cluster", State::kM1, {"-O", "features_act,TimeStamp,Cluster"},
     "ACTIVE_FEATURES     TIMESTAMP           CLUSTER             \n"
     "cpu                 Unknown             N/A                 \n"
     "h100,gpu            Unknown             N/A                 \n"},
    {"-O StateComplete", State::kM1, {"-O", "StateComplete"},
     "STATECOMPLETE       \nmixed               \nidle                \n"},
    {"-O PartitionName", State::kM1, {"-O", "PartitionName"},
     "PARTITION           \nshort               \ntrain               \n"},
    {"-O NodeAI,NodeAIOT,Size,Root,Comment,Extra", State::kM1,
     {"-O", "NodeAI,NodeAIOT,Size,Root,Comment,Extra"},
     "NODES(A/I)          NODES(A/I/O/T)      JOB_SIZE            ROOT                COMMENT             EXTRA               \n"
     "3/3                 3/3/0/6             1-infinite          no                  (null)              (null)              \n"},
    {"-O DefaultTime,PriorityTier,PriorityJobFactor", State::kM1,
     {"-O", "DefaultTime,PriorityTier,PriorityJobFactor"},
     "DEFAULTTIME         PRIO_TIER           PRIO_JOB_FACTOR     \n"
     "1:00:00             1                   1                   \n"
     "4:00:00             1                   1                   \n"},
    {"-O partition,nodelist:30,cpus:.5,Memory:8|,StateLong:", State::kBusy,
     {"-O", "partition,nodelist:30,cpus:.5,Memory:8|,StateLong:"},
     "PARTITION           NODELIST                       CPUSMEMORY  |STATE\n"
     "short*              cpu[01-02],gpu[01-02,04]         3264000   |mixed\n"
     "short*              gpu03                            3264000   |allocated\n"
     "train               gpu[01-02,04]                    3264000   |mixed\n"
     "train               gpu03                            3264000   |allocated\n"},
    {"-O PARTITION:0,NodeList:0", State::kM1, {"-O", "PARTITION:0,NodeList:0"},
     "PARTITIONNODELIST\nshort*cpu[01-02],gpu[01-04]\ntraingpu[01-04]\n"},
    {"-O Partition:3,NodeList:.3", State::kM1, {"-O", "Partition:3,NodeList:.3"},
     "PARNODELIST\nsh*cpu\ntragpu\n"},
    {"--Format=partition -h", State::kM1, {"--Format=partition", "-h"},
     "short*              \ntrain               \n"},
    {"-t down -O PartitionName", State::kM1, {"-O", "PartitionName", "-t", "down"},
     "PARTITION           \nshort               \ntrain               \n"},
    {"-O StateComplete,Reason,User,UserLong,Timestamp,NodeList", State::kDrain,
     {"-O", "StateComplete,Reason,User,UserLong,Timestamp,NodeList"},
     "STATECOMPLETE       REASON              USER                USER                TIMESTAMP           NODELIST            \n"
     "allocated+drain     bad fan             root                root(0)             2026-12-02T15:46:00 cpu02               \n"
     "mixed               none                Unknown             Unknown             Unknown             cpu01,gpu01         \n"
     "idle                none                Unknown             Unknown             Unknown             gpu[02-04]          \n"},
    // Slurm again printed gpu01's and gpu02's partitions the other way round.
    {"-N -O NodeList:8,Partition:.8,StateLong,CPUsState,GresUsed:30,AllocMem,Gres", State::kAlloc,
     {"-N", "-O", "NodeList:8,Partition:.8,StateLong,CPUsState,GresUsed:30,AllocMem,Gres"},
     "NODELISTPARTITIOSTATE               CPUS(A/I/O/T)       GRES_USED                     ALLOCMEM            GRES                \n"
     "cpu01     short*mixed               12/20/0/32          gpu:0                         10000               (null)              \n"
     "cpu02     short*mixed               2/30/0/32           gpu:0                         2000                (null)              \n"
     "gpu01     short*mixed               1/31/0/32           gpu:h100:2(IDX:0-1)           1000                gpu:h100:8          \n"
     "gpu01      trainmixed               1/31/0/32           gpu:h100:2(IDX:0-1)           1000                gpu:h100:8          \n"
     "gpu02     short*idle                0/32/0/32           gpu:h100:0(IDX:N/A)           0                   gpu:h100:8          \n"
     "gpu02      trainidle                0/32/0/32           gpu:h100:0(IDX:N/A)           0                   gpu:h100:8          \n"
     "gpu03     short*mixed               4/28/0/32           gpu:h100:3(IDX:0-2)           4000                gpu:h100:8          \n"
     "gpu03      trainmixed               4/28/0/32           gpu:h100:3(IDX:0-2)           4000                gpu:h100:8          \n"
     "gpu04     short*allocated           32/0/0/32           gpu:h100:8(IDX:0-7)           32000               gpu:h100:8          \n"
     "gpu04      trainallocated           32/0/0/32           gpu:h100:8(IDX:0-7)           32000               gpu:h100:8          \n"},
};
INSTANTIATE_TEST_SUITE_P(Long, SinfoTest, ::testing::ValuesIn(kLong), CaseName);

// ---- argument errors (the text sinfo prints; exit status 1) ---------------------
struct ErrorCase {
  std::vector<std::string> args;
  std::string want;
};

TEST(ParseSinfoArgsTest, ErrorsMatchSlurm) {
  const ErrorCase cases[] = {
      {{"--foo"}, "sinfo: unrecognized option '--foo'\nTry \"sinfo --help\" for more information"},
      {{"-z"}, "sinfo: invalid option -- 'z'\nTry \"sinfo --help\" for more information"},
      {{"-o"}, "sinfo: option requires an argument -- 'o'\nTry \"sinfo --help\" for more information"},
      {{"--format"},
       "sinfo: option '--format' requires an argument\nTry \"sinfo --help\" for more information"},
      {{"--no"},
       "sinfo: option '--no' is ambiguous; possibilities: '--nodes' '--noconvert' '--noheader'\n"
       "Try \"sinfo --help\" for more information"},
      {{"-l", "-o", "%P"},
       "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one "
       "and retry."},
      {{"-O", "Partition", "-l"},
       "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one "
       "and retry."},
      {{"-t", "foo"},
       "sinfo: error: Bad state string: \"foo\"\n"
       "sinfo: error: valid states: unknown,down,idle,allocated,?,mixed,future,drain,drained,"
       "draining,no_respond,reserved,perfctrs,cloud,completing,powering_down,powered_down,"
       "power_down,powering_up,fail,maint,reboot,reboot^,unknown"},
      {{"-t", "idle&bogus"},
       "sinfo: error: Bad state string: \"bogus\"\n"
       "sinfo: error: valid states: unknown,down,idle,allocated,?,mixed,future,drain,drained,"
       "draining,no_respond,reserved,perfctrs,cloud,completing,powering_down,powered_down,"
       "power_down,powering_up,fail,maint,reboot,reboot^,unknown"},
      {{"-O", "FeaturesAct"}, "sinfo: error: Invalid job format specification: FeaturesAct"},
      {{"-O", "Part"}, "sinfo: error: Invalid job format specification: Part"},
      {{"-O", "Priority"}, "sinfo: error: Invalid job format specification: Priority"},
  };
  for (const ErrorCase& c : cases) {
    Result<SinfoRequest> r = ParseSinfoArgs(c.args, {});
    ASSERT_FALSE(r.ok()) << c.args[0];
    EXPECT_EQ(r.status().message(), c.want);
    EXPECT_EQ(r.status().code(), util::Code::kInvalidArgument);
  }
}

TEST(ParseSinfoArgsTest, Flags) {
  Result<SinfoRequest> r = ParseSinfoArgs(
      {"-Ne", "-ptrain,short", "--st=idle,mix", "--form=%P %N", "operand", "-n", "gpu[01-02]",
       "-S", "-t", "-ad", "--noheader", "--list-reasons", "-r", "--summarize", "-i5", "-V", "--usage"},
      {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->node_view);
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->partitions, (std::vector<std::string>{"train", "short"}));
  EXPECT_EQ(r->states, (std::vector<std::string>{"idle", "mix"}));
  EXPECT_EQ(r->format, "%P %N");
  EXPECT_EQ(r->nodes, "gpu[01-02]");
  EXPECT_EQ(r->sort, "-t");
  EXPECT_TRUE(r->all);
  EXPECT_TRUE(r->dead);
  EXPECT_TRUE(r->noheader);
  EXPECT_TRUE(r->reasons);
  EXPECT_TRUE(r->responding);
  EXPECT_TRUE(r->summarize);
  EXPECT_EQ(r->iterate_s, 5);
  EXPECT_TRUE(r->version);
  EXPECT_TRUE(r->help);
  EXPECT_FALSE(SinfoUsage().empty());
}

TEST(ParseSinfoArgsTest, Environment) {
  std::map<std::string, std::string> env = {
      {"SINFO_FORMAT", "%P %D"}, {"SINFO_PARTITION", "train"}, {"SINFO_ALL", "1"}, {"SINFO_SORT", "N"}};
  Result<SinfoRequest> r = ParseSinfoArgs({}, env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format, "%P %D");
  EXPECT_EQ(r->partitions, std::vector<std::string>{"train"});
  EXPECT_TRUE(r->all);
  EXPECT_EQ(r->sort, "N");
  // The command line wins; -l does not clash with SINFO_FORMAT.
  r = ParseSinfoArgs({"-o", "%N", "-p", "short"}, env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format, "%N");
  EXPECT_EQ(r->partitions, std::vector<std::string>{"short"});
  r = ParseSinfoArgs({"-l"}, env);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->format, "");
}

TEST(SinfoRequestJsonTest, RoundTripsAndRejectsBadTypes) {
  SinfoRequest r;
  r.node_view = r.long_view = r.summarize = r.reasons = r.noheader = r.all = true;
  r.exact = r.dead = r.responding = true;
  r.format = "%P";
  r.format_long = "NodeList:10";
  r.partitions = {"a", "b"};
  r.states = {"idle&drain"};
  r.nodes = "n[1-2]";
  r.sort = "-N";
  Result<SinfoRequest> back = SinfoRequestFromJson(ToJson(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson(*back), ToJson(r));
  EXPECT_FALSE(SinfoRequestFromJson(nlohmann::json{{"partitions", 3}}).ok());
  EXPECT_FALSE(SinfoRequestFromJson(nlohmann::json::array()).ok());
  EXPECT_TRUE(SinfoRequestFromJson(nlohmann::json::object()).ok());
}

TEST(RenderSinfoTest, RejectsBadStatesFromJson) {
  Cluster c = InState(State::kIdle);
  SinfoRequest r;
  r.states = {"nosuch"};
  Result<std::string> out = RenderSinfo(r, c.View(0));
  ASSERT_FALSE(r.states.empty());
  EXPECT_FALSE(out.ok());
}

TEST(RenderSinfoTest, SortOption) {
  // -S: node names descending, and partitions by name.
  Cluster c = InState(State::kM1);
  Result<SinfoRequest> r = ParseSinfoArgs({"-N", "-o", "%N %P", "-S", "-N,P"}, {});
  ASSERT_TRUE(r.ok());
  Result<std::string> out = RenderSinfo(*r, c.View(0));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "NODELIST PARTITION\ngpu04 short*\ngpu04 train\ngpu03 short*\ngpu03 train\n"
            "gpu02 short*\ngpu02 train\ngpu01 short*\ngpu01 train\ncpu02 short*\ncpu01 short*\n");
}

TEST(NodeNameLessTest, NumericSuffixOrder) {
  EXPECT_TRUE(NodeNameLess("n9", "n10"));
  EXPECT_FALSE(NodeNameLess("n10", "n9"));
  EXPECT_TRUE(NodeNameLess("cpu02", "gpu01"));
  EXPECT_TRUE(NodeNameLess("a", "a1"));
  EXPECT_FALSE(NodeNameLess("gpu01", "gpu01"));
}

// Nodes that are down, unregistered or drained, as Muster's node states
// print them (no oracle run: Slurm's emulated nodes cannot be made to stop
// responding without stopping their slurmd).
TEST(RenderSinfoTest, DownAndUnregisteredNodes) {
  Cluster c = InState(State::kIdle);
  c.Node("gpu04").down = true;
  c.Node("gpu04").reason = "Not responding";
  c.Node("gpu04").reason_time = At("2026-12-02T15:00:00");
  c.Node("gpu04").registered = false;
  c.Node("gpu03").drain = true;
  c.Node("gpu03").reason = "maintenance";
  c.Node("gpu03").reason_time = At("2026-12-02T15:10:00");
  Result<SinfoRequest> r = ParseSinfoArgs({"-p", "train", "-o", "%P %.6t %C %F %N"}, {});
  ASSERT_TRUE(r.ok());
  Result<std::string> out = RenderSinfo(*r, c.View(0));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "PARTITION  STATE CPUS(A/I/O/T) NODES(A/I/O/T) NODELIST\n"
            "train  down* 0/0/32/32 0/0/1/1 gpu04\n"
            "train  drain 0/0/32/32 0/0/1/1 gpu03\n"
            "train   idle 0/64/0/64 0/2/0/2 gpu[01-02]\n");
  r = ParseSinfoArgs({"-R"}, {});
  ASSERT_TRUE(r.ok());
  out = RenderSinfo(*r, c.View(0));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "REASON               USER      TIMESTAMP           NODELIST\n"
            "Not responding       root      2026-12-02T15:00:00 gpu04\n"
            "maintenance          root      2026-12-02T15:10:00 gpu03\n");
  r = ParseSinfoArgs({"-t", "down,drained", "-o", "%P %D %N", "-d"}, {});
  ASSERT_TRUE(r.ok());
  out = RenderSinfo(*r, c.View(0));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "PARTITION NODES NODELIST\nshort* 1 gpu04\ntrain 1 gpu04\n");
}

// With `scontrol update PartitionName=train Hidden=YES` on the oracle, as
// mtest1 (uid 1001): `sinfo` lists short only; `sinfo -a`, `sinfo --all -o
// %P` and `sinfo -p train` show train too; root sees it without -a.
TEST(RenderSinfoTest, HiddenPartitions) {
  Cluster c = InState(State::kIdle);
  c.cfg.partitions[1].hidden = true;
  ClusterView v = c.View(0);
  v.caller_uid = 1001;
  auto run = [&](std::vector<std::string> args) {
    Result<SinfoRequest> r = ParseSinfoArgs(args, {});
    if (!r.ok()) return "parse error: " + r.status().message();
    Result<std::string> out = RenderSinfo(*r, v);
    return out.ok() ? *out : "error: " + out.status().message();
  };
  EXPECT_EQ(run({}),
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "short*       up    4:00:00      6   idle cpu[01-02],gpu[01-04]\n");
  const std::string both =
      "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
      "short*       up    4:00:00      6   idle cpu[01-02],gpu[01-04]\n"
      "train        up 3-00:00:00      4   idle gpu[01-04]\n";
  EXPECT_EQ(run({"-a"}), both);
  EXPECT_EQ(run({"--all", "-o", "%P"}), "PARTITION\nshort*\ntrain\n");
  EXPECT_EQ(run({"-p", "train"}),
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "train        up 3-00:00:00      4   idle gpu[01-04]\n");
  EXPECT_EQ(run({"-N", "-o", "%N %P"}),
            "NODELIST PARTITION\ncpu01 short*\ncpu02 short*\ngpu01 short*\ngpu02 short*\n"
            "gpu03 short*\ngpu04 short*\n");
  // An administrator (AdminUsers) sees it too, as root does.
  v.caller_admin = true;
  EXPECT_EQ(run({}), both);
  v.caller_admin = false;
  v.caller_uid = 0;
  EXPECT_EQ(run({}), both);
}

// sinfo -p train -o %h after `scontrol update PartitionName=train
// OverSubscribe=FORCE` printed "FORCE:4" (then YES:2 for OverSubscribe=YES:2).
TEST(RenderSinfoTest, OverSubscribeField) {
  Cluster c = InState(State::kIdle);
  c.cfg.partitions[1].oversubscribe = "FORCE:4";
  Result<SinfoRequest> r = ParseSinfoArgs({"-h", "-o", "%P %h"}, {});
  ASSERT_TRUE(r.ok());
  Result<std::string> out = RenderSinfo(*r, c.View(0));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "short* NO\ntrain FORCE:4\n");
}

// sinfo -T on the oracle (the same reservations made in the same order,
// the first two in the window sinfo was run in).
TEST(RenderSinfoTest, Reservations) {
  auto resv = [](const char* name, const char* state, const char* start, const char* end,
                 std::vector<std::string> nodes) {
    return nlohmann::json{{"name", name}, {"state", state}, {"start", At(start)},
                          {"end", At(end)}, {"nodes", nodes}};
  };
  nlohmann::json list = {
      resv("r_now", "ACTIVE", "2026-12-07T11:39:58", "2026-12-07T12:39:58", {"gpu01"}),
      resv("r_later", "INACTIVE", "2026-12-07T12:39:58", "2026-12-08T14:42:58",
           {"cpu01", "gpu02", "gpu03"})};
  Result<SinfoRequest> r = ParseSinfoArgs({"-T"}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->reservation);
  const int64_t now = At("2026-12-07T11:40:15");
  EXPECT_EQ(RenderSinfoReservations(list, false, false, now),
            "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
            "r_now        ACTIVE  2026-12-07T11:39:58  2026-12-07T12:39:58     01:00:00  gpu01\n"
            "r_later    INACTIVE  2026-12-07T12:39:58  2026-12-08T14:42:58   1-02:03:00  cpu01,gpu[02-03]\n");
  // A longer name widens its column, but only under the header.
  list.push_back(resv("a_very_long_reservation_name", "INACTIVE", "2026-12-07T13:40:04",
                      "2027-12-07T13:40:04", {"cpu02"}));
  list.push_back(resv("x", "INACTIVE", "2026-12-20T00:00:00", "2027-01-05T00:00:00",
                      {"cpu01", "cpu02", "gpu01", "gpu02", "gpu03", "gpu04"}));
  EXPECT_EQ(RenderSinfoReservations(list, false, true, now),
            "Mon Dec 07 11:40:15 2026\n"
            "RESV_NAME                        STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
            "r_now                           ACTIVE  2026-12-07T11:39:58  2026-12-07T12:39:58     01:00:00  gpu01\n"
            "r_later                       INACTIVE  2026-12-07T12:39:58  2026-12-08T14:42:58   1-02:03:00  cpu01,gpu[02-03]\n"
            "a_very_long_reservation_name  INACTIVE  2026-12-07T13:40:04  2027-12-07T13:40:04  365-00:00:00  cpu02\n"
            "x                             INACTIVE  2026-12-20T00:00:00  2027-01-05T00:00:00  16-00:00:00  cpu[01-02],gpu[01-04]\n");
  EXPECT_EQ(RenderSinfoReservations(list, true, true, now),
            "r_now        ACTIVE  2026-12-07T11:39:58  2026-12-07T12:39:58     01:00:00  gpu01\n"
            "r_later    INACTIVE  2026-12-07T12:39:58  2026-12-08T14:42:58   1-02:03:00  cpu01,gpu[02-03]\n"
            "a_very_long_reservation_name  INACTIVE  2026-12-07T13:40:04  2027-12-07T13:40:04  365-00:00:00  cpu02\n"
            "x          INACTIVE  2026-12-20T00:00:00  2027-01-05T00:00:00  16-00:00:00  cpu[01-02],gpu[01-04]\n");
  EXPECT_EQ(RenderSinfoReservations(nlohmann::json::array(), false, false, now),
            "No reservations in the system\n");
  EXPECT_EQ(RenderSinfoReservations(nlohmann::json::array(), false, true, now),
            "Mon Dec 07 11:40:15 2026\nNo reservations in the system\n");
}

}  // namespace
}  // namespace muster::render

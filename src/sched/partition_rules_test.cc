// ResolveJobPartitions against what the Slurm 22.05 oracle answers (quoted
// per case) and, for EnforcePartLimits=ALL/ANY, slurm.conf(5).
#include "sched/partition_rules.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "util/strings.h"

namespace muster::sched {
namespace {

// The oracle's partitions (short: 6 nodes, MaxTime=4:00:00, Default; train:
// 4 nodes, MaxTime=3-00:00:00) plus `extra` attributes on train.
config::Config Cluster(const std::string& top = {}, const std::string& train_extra = {},
                       const std::string& short_extra = {}) {
  std::string text = top +
                     "NodeName=gpu[01-04] CPUs=32\nNodeName=cpu[01-02] CPUs=32\n"
                     "PartitionName=short Nodes=gpu[01-04],cpu[01-02] Default=YES "
                     "MaxTime=04:00:00 DefaultTime=01:00:00 " +
                     short_extra +
                     "\n"
                     "PartitionName=train Nodes=gpu[01-04] MaxTime=72:00:00 " +
                     train_extra + "\n";
  auto cfg = config::ParseConfig(text, "/nonexistent-muster-test/muster.conf", {}, false);
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  return cfg.ok() ? *cfg : config::Config{};
}

GroupLookup Groups() {
  static const std::map<std::string, uint32_t> kGroups = {{"ml", 2000}, {"adm", 4}};
  return [](const std::string& name) -> std::optional<uint32_t> {
    auto it = kGroups.find(name);
    if (it == kGroups.end()) return std::nullopt;
    return it->second;
  };
}

// A job of user alice (uid 1001, gid 1001, supplementary `groups`).
core::JobRequest Job(const std::string& partition, const std::string& account = "research",
                     std::vector<uint32_t> groups = {}) {
  core::JobRequest req;
  req.partition = partition;
  req.account = account;
  req.uid = 1001;
  req.gid = 1001;
  req.user_name = "alice";
  req.groups = std::move(groups);
  return req;
}

constexpr int64_t kNoTime = -2;
constexpr int64_t kHour = 3600;

std::vector<std::string> Names(const std::vector<const core::Partition*>& parts) {
  std::vector<std::string> out;
  for (const core::Partition* p : parts) out.push_back(p->name);
  return out;
}

// "ok:short,train" or "<code>:<message>".
std::string Outcome(const core::JobRequest& req, int64_t time_limit_s, const config::Config& cfg) {
  auto r = ResolveJobPartitions(req, time_limit_s, cfg, Groups());
  if (r.ok()) return "ok:" + util::Join(Names(*r), ",");
  return std::to_string(static_cast<int>(r.status().code())) + ":" + r.status().message();
}

std::string Err(util::Code code, const char* msg) {
  return std::to_string(static_cast<int>(code)) + ":" + msg;
}

const util::Code kInvalid = util::Code::kInvalidArgument;
const util::Code kDenied = util::Code::kPermissionDenied;
const util::Code kUnavailable = util::Code::kUnavailable;

TEST(PartitionNames, SplitAtCommasKeepingBlanks) {
  EXPECT_EQ(RequestedPartitionNames("short,,train,short"),
            (std::vector<std::string>{"short", "train"}));
  EXPECT_EQ(RequestedPartitionNames("short, train"),
            (std::vector<std::string>{"short", " train"}));
}

TEST(ResolveJobPartitions, NamesAndDefault) {
  config::Config cfg = Cluster();
  struct Case {
    const char* oracle;
    const char* partition;
    std::string want;
  } cases[] = {
      {"sbatch --wrap true (default partition short)", "", "ok:short"},
      {"sbatch -p short,train: squeue %P shows short,train", "short,train", "ok:short,train"},
      {"sbatch -p train,short", "train,short", "ok:train,short"},
      {"sbatch -p short,,train: accepted", "short,,train", "ok:short,train"},
      {"sbatch -p nosuch: Invalid partition name specified", "nosuch",
       Err(kInvalid, kInvalidPartitionMsg)},
      {"sbatch -p short,nosuch: Invalid partition name specified", "short,nosuch",
       Err(kInvalid, kInvalidPartitionMsg)},
      {"sbatch -p 'short, train': Invalid partition name specified", "short, train",
       Err(kInvalid, kInvalidPartitionMsg)},
  };
  for (const Case& c : cases) EXPECT_EQ(Outcome(Job(c.partition), kNoTime, cfg), c.want) << c.oracle;

  config::Config no_default = config::ParseConfig("PartitionName=p\n", "/x/muster.conf", {}, false).value();
  EXPECT_EQ(Outcome(Job(""), kNoTime, no_default), Err(kInvalid, kNoDefaultPartitionMsg));
}

// sbatch prints Slurm's line naming the first unknown name before "Batch
// job submission failed: Invalid partition name specified".
TEST(ResolveJobPartitions, UnknownNameLineMatchesTheOracle) {
  config::Config cfg = Cluster();
  struct Case {
    const char* partition;
    const char* line;  // as the oracle printed it after "sbatch: error: "
  } cases[] = {
      {"nosuch", "invalid partition specified: nosuch"},
      {"short,nosuch", "invalid partition specified: nosuch"},
      {"train,nosuch2,nosuch3", "invalid partition specified: nosuch2"},
      {"short,,nosuch", "invalid partition specified: nosuch"},
      {" short", "invalid partition specified:  short"},
      {",", "invalid partition specified: (null)"},
  };
  for (const Case& c : cases) {
    SubmitRefusal why;
    auto r = ResolveJobPartitions(Job(c.partition), kNoTime, cfg, Groups(), &why);
    ASSERT_FALSE(r.ok()) << c.partition;
    EXPECT_EQ(r.status().message(), kInvalidPartitionMsg) << c.partition;
    EXPECT_EQ(why.slurm_line, c.line) << c.partition;
    EXPECT_NE(why.detail.find("(short, train)"), std::string::npos) << why.detail;
  }
  SubmitRefusal why;
  EXPECT_TRUE(ResolveJobPartitions(Job("short,train"), kNoTime, cfg, Groups(), &why).ok());
  EXPECT_EQ(why.slurm_line, "");
}

TEST(ResolveJobPartitions, PartitionState) {
  // scontrol update PartitionName=train State=DRAIN (then INACTIVE, DOWN):
  //   sbatch -p train       -> "Required partition not available (inactive or drain)"
  //   sbatch -p short,train -> accepted, squeue %P shows "short"
  //   State=DOWN            -> accepted, squeue %P shows "short,train"
  for (const char* state : {"DRAIN", "INACTIVE"}) {
    config::Config cfg = Cluster("", std::string("State=") + state);
    EXPECT_EQ(Outcome(Job("train"), kNoTime, cfg), Err(kUnavailable, kPartitionNotAvailableMsg))
        << state;
    EXPECT_EQ(Outcome(Job("short,train"), kNoTime, cfg), "ok:short") << state;
    EXPECT_EQ(Outcome(Job("train,short"), kNoTime, cfg), "ok:short") << state;
  }
  config::Config down = Cluster("", "State=DOWN");
  EXPECT_EQ(Outcome(Job("short,train"), kNoTime, down), "ok:short,train");
  // Root is not exempt from the state rule (the DRAIN case above was root's).
  config::Config drain = Cluster("", "State=DRAIN");
  core::JobRequest root = Job("train");
  root.uid = 0;
  EXPECT_EQ(Outcome(root, kNoTime, drain), Err(kUnavailable, kPartitionNotAvailableMsg));
}

TEST(ResolveJobPartitions, Accounts) {
  config::Config allow = Cluster("", "AllowAccounts=ml,Physics DenyAccounts=research");
  EXPECT_EQ(Outcome(Job("train", "ml"), kNoTime, allow), "ok:train");
  EXPECT_EQ(Outcome(Job("train", "physics"), kNoTime, allow), "ok:train");  // case-insensitive
  EXPECT_EQ(Outcome(Job("train", "research"), kNoTime, allow), Err(kDenied, kInvalidAccountMsg));
  EXPECT_EQ(Outcome(Job("train", ""), kNoTime, allow), Err(kDenied, kInvalidAccountMsg));
  EXPECT_EQ(Outcome(Job("short,train", "research"), kNoTime, allow), "ok:short");

  config::Config deny = Cluster("", "DenyAccounts=research");
  EXPECT_EQ(Outcome(Job("train", "research"), kNoTime, deny), Err(kDenied, kInvalidAccountMsg));
  EXPECT_EQ(Outcome(Job("train", "ml"), kNoTime, deny), "ok:train");

  // scontrol update PartitionName=train AllowAccounts=ml; sbatch -p train
  // -A research as root: "Submitted batch job 14277" (root is exempt).
  core::JobRequest root = Job("train", "research");
  root.uid = 0;
  root.user_name = "root";
  EXPECT_EQ(Outcome(root, kNoTime, allow), "ok:train");
  core::JobRequest slurm_user = Job("train", "research");
  slurm_user.user_name = "slurm";
  config::Config slurm = Cluster("SlurmUser=slurm\n", "AllowAccounts=ml");
  EXPECT_EQ(Outcome(slurm_user, kNoTime, slurm), "ok:train");
}

TEST(ResolveJobPartitions, Groups) {
  config::Config cfg = Cluster("", "AllowGroups=ml,nosuchgroup");
  EXPECT_EQ(Outcome(Job("train"), kNoTime, cfg), Err(kDenied, kGroupNotPermittedMsg));
  EXPECT_EQ(Outcome(Job("train", "research", {4, 2000}), kNoTime, cfg), "ok:train");
  core::JobRequest primary = Job("train");
  primary.gid = 2000;
  EXPECT_EQ(Outcome(primary, kNoTime, cfg), "ok:train");
  EXPECT_EQ(Outcome(Job("train,short"), kNoTime, cfg), "ok:short");
  // An unresolvable group admits nobody; no lookup at all is the same.
  config::Config unknown = Cluster("", "AllowGroups=nosuchgroup");
  EXPECT_EQ(Outcome(Job("train", "x", {2000}), kNoTime, unknown),
            Err(kDenied, kGroupNotPermittedMsg));
  EXPECT_FALSE(ResolveJobPartitions(Job("train"), kNoTime, cfg, GroupLookup{}).ok());
  // scontrol update PartitionName=train AllowGroups=daemon,adm; sbatch -p
  // train as root: accepted.
  core::JobRequest root = Job("train");
  root.uid = 0;
  EXPECT_EQ(Outcome(root, kNoTime, cfg), "ok:train");
}

TEST(ResolveJobPartitions, EnforcePartLimitsNo) {
  // The oracle's setting (scontrol show config: EnforcePartLimits = NO).
  config::Config cfg = Cluster("", "MaxNodes=2");
  // sbatch -p short -t 5:00:00: accepted, pends PartitionTimeLimit.
  EXPECT_EQ(Outcome(Job("short"), 5 * kHour, cfg), "ok:short");
  // sbatch -p short -N 7 (6 nodes): accepted, pends PartitionNodeLimit.
  core::JobRequest big = Job("short");
  big.min_nodes = 7;
  EXPECT_EQ(Outcome(big, kNoTime, cfg), "ok:short");
  // sbatch -p short,train -t 10:00:00: accepted, started in train.
  EXPECT_EQ(Outcome(Job("short,train"), 10 * kHour, cfg), "ok:short,train");
}

TEST(ResolveJobPartitions, EnforcePartLimitsAll) {
  // slurm.conf(5): "the job must satisfy the limits on all the requested
  // partitions".
  config::Config cfg = Cluster("EnforcePartLimits=ALL\n", "MaxNodes=2");
  EXPECT_EQ(Outcome(Job("short"), 4 * kHour, cfg), "ok:short");
  EXPECT_EQ(Outcome(Job("short"), 5 * kHour, cfg), Err(kInvalid, kInvalidTimeLimitMsg));
  EXPECT_EQ(Outcome(Job("short,train"), 10 * kHour, cfg), Err(kInvalid, kInvalidTimeLimitMsg));
  EXPECT_EQ(Outcome(Job("train"), -1, cfg), Err(kInvalid, kInvalidTimeLimitMsg));  // UNLIMITED
  core::JobRequest three = Job("short,train");
  three.min_nodes = 3;
  EXPECT_EQ(Outcome(three, kNoTime, cfg), Err(kInvalid, kInvalidNodeCountMsg));
  three.partition = "short";
  EXPECT_EQ(Outcome(three, kNoTime, cfg), "ok:short");
  core::JobRequest seven = Job("short");
  seven.min_nodes = 7;  // more than the partition's 6 nodes
  EXPECT_EQ(Outcome(seven, kNoTime, cfg), Err(kInvalid, kInvalidNodeCountMsg));
  // Access refusals refuse the job too, instead of dropping the partition.
  config::Config drain = Cluster("EnforcePartLimits=ALL\n", "State=DRAIN");
  EXPECT_EQ(Outcome(Job("short,train"), kNoTime, drain),
            Err(kUnavailable, kPartitionNotAvailableMsg));
}

TEST(ResolveJobPartitions, EnforcePartLimitsAny) {
  // slurm.conf(5): "a job must satisfy any of the requested partitions".
  config::Config cfg = Cluster("EnforcePartLimits=ANY\n", "", "MinNodes=2");
  EXPECT_EQ(Outcome(Job("short,train"), 10 * kHour, cfg), "ok:short,train");
  EXPECT_EQ(Outcome(Job("train"), 73 * kHour, cfg), Err(kInvalid, kInvalidTimeLimitMsg));
  // short's MinNodes=2 refuses a one-node job unless train is asked too.
  EXPECT_EQ(Outcome(Job("short"), kNoTime, cfg), Err(kInvalid, kInvalidNodeCountMsg));
  EXPECT_EQ(Outcome(Job("short,train"), kNoTime, cfg), "ok:short,train");
  core::JobRequest spread = Job("short");
  spread.min_nodes = 1;
  spread.max_nodes = 2;
  EXPECT_EQ(Outcome(spread, kNoTime, cfg), "ok:short");
  // Access still only drops: train drained leaves short, over its MaxTime.
  config::Config drain = Cluster("EnforcePartLimits=ANY\n", "State=DRAIN");
  EXPECT_EQ(Outcome(Job("short,train"), 5 * kHour, drain), Err(kInvalid, kInvalidTimeLimitMsg));
}

}  // namespace
}  // namespace muster::sched

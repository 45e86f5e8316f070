// Multifactor priority, fairshare and usage, checked against what Slurm
// 22.05 printed for the same cluster and jobs (the oracle's sprio and
// sshare; figures in the comments).
#include "sched/priority.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sched/fairshare.h"
#include "sched/pipeline.h"
#include "sched/usage.h"
#include "testing/builders.h"

namespace muster::sched {
namespace {

using testing::MakeJob;

// The oracle's cluster: 4 GPU nodes and 2 CPU nodes of 32 CPUs each, the
// handbook's weights.
config::Config OracleConfig(const std::string& extra = "") {
  auto cfg = config::ParseConfig(
      "ClusterName=anchor\n"
      "GresTypes=gpu\n"
      "PriorityType=priority/multifactor\n"
      "PriorityDecayHalfLife=7-0\nPriorityMaxAge=7-0\n"
      "PriorityWeightAge=1000\nPriorityWeightFairshare=10000\n"
      "PriorityWeightJobSize=1000\nPriorityWeightPartition=1000\nPriorityWeightQOS=2000\n" +
          extra +
          "NodeName=gpu[01-04] CPUs=32 RealMemory=256000 Gres=gpu:h100:8\n"
          "NodeName=cpu[01-02] CPUs=32 RealMemory=128000\n"
          "PartitionName=short Nodes=ALL Default=YES\n"
          "PartitionName=train Nodes=gpu[01-04]\n",
      "/etc/muster/muster.conf", "NodeName=gpu[01-04] Name=gpu Type=h100 Count=8\n",
      false);
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  return *cfg;
}

// sshare -a on the oracle: root/root used 7559, ml and research nothing.
ShareTree OracleShares(bool fair_tree = true) {
  std::vector<Association> assocs = {{"ml", "", "root", 100},    {"research", "", "root", 100},
                                     {"root", "root", "", 1},     {"ml", "root", "", 1},
                                     {"research", "root", "", 1}};
  return ShareTree::Build(assocs, {{{"root", "root"}, 7559}}, fair_tree);
}

core::Job Pending(core::JobId id, const std::string& account, const std::string& partition) {
  core::Job job = MakeJob(id).Partition(partition);
  job.req.account = account;
  job.req.user_name = "root";
  job.eligible_time = 1000;
  return job;
}

TEST(Fairshare, FairTreeMatchesSlurmsSshare) {
  ShareTree tree = OracleShares();
  // root, then root's user, then each account and its user.
  ASSERT_EQ(tree.rows().size(), 6u);
  const ShareRow& root_user = tree.rows()[1];
  EXPECT_EQ(root_user.account, "root");
  EXPECT_EQ(root_user.user, "root");
  EXPECT_NEAR(root_user.norm_shares, 0.004975, 1e-6);
  EXPECT_NEAR(root_user.effective_usage, 1.0, 1e-9);
  EXPECT_EQ(tree.rows()[2].account, "ml");
  EXPECT_NEAR(tree.rows()[2].norm_shares, 0.497512, 1e-6);
  EXPECT_TRUE(std::isinf(tree.rows()[2].level_fs));
  // Three users: the two under unused accounts share the top rank.
  EXPECT_NEAR(tree.Factor("root", "root"), 1.0 / 3, 1e-9);
  EXPECT_NEAR(tree.Factor("ml", "root"), 1.0, 1e-9);
  EXPECT_NEAR(tree.Factor("research", "root"), 1.0, 1e-9);
  EXPECT_EQ(tree.Factor("nobody", "root"), 0);
}

TEST(Fairshare, AHeavyAccountRanksBehindALightOne) {
  std::vector<AssocKey> keys = {{"heavy", "alice"}, {"light", "bob"}, {"light", "carol"}};
  ShareTree tree = ShareTree::Build(
      DefaultAssociations(keys),
      {{{"heavy", "alice"}, 1000}, {{"light", "bob"}, 300}, {{"light", "carol"}, 10}}, true);
  // Every user of the account that used less ranks above every user of the other.
  EXPECT_NEAR(tree.Factor("light", "carol"), 1.0, 1e-9);
  EXPECT_NEAR(tree.Factor("light", "bob"), 2.0 / 3, 1e-9);
  EXPECT_NEAR(tree.Factor("heavy", "alice"), 1.0 / 3, 1e-9);
}

TEST(Fairshare, ClassicHalvesTheFactorAtEachShareUsed) {
  std::vector<AssocKey> keys = {{"a", "u1"}, {"b", "u2"}};
  ShareTree tree = ShareTree::Build(DefaultAssociations(keys), {{{"a", "u1"}, 100}}, false);
  // a used everything with half the shares: 2^(-1 / 0.5); b nothing: 2^0.
  EXPECT_NEAR(tree.Factor("a", "u1"), 0.25, 1e-9);
  EXPECT_NEAR(tree.Factor("b", "u2"), 1.0, 1e-9);
}

TEST(Fairshare, AParentCycleIsBrokenAtTheRoot) {
  std::vector<Association> assocs = {{"a", "", "b", 1}, {"b", "", "a", 1}, {"a", "u", "", 1}};
  ShareTree tree = ShareTree::Build(assocs, {}, true);
  EXPECT_EQ(tree.rows().size(), 4u);
  EXPECT_NEAR(tree.Factor("a", "u"), 1.0, 1e-9);
}

TEST(Priority, MultifactorMatchesSlurmsSprio) {
  config::Config cfg = OracleConfig();
  ShareTree shares = OracleShares();
  PriorityCalculator calc(cfg, &shares, 1000);
  // sbatch -p train -N1 -n4: 4427 (fairshare 3333, job size 94, partition 1000).
  core::Job j56 = Pending(56, "root", "train");
  j56.req.ntasks = 4;
  PriorityFactors f = calc.Factors(j56);
  EXPECT_NEAR(f.job_size, 0.09375, 1e-9);
  EXPECT_NEAR(f.fairshare, 1.0 / 3, 1e-9);
  EXPECT_EQ(f.partition, 1.0);
  EXPECT_EQ(f.age, 0);
  EXPECT_EQ(f.priority, 4427u);
  // sbatch -A research -n2 --nice=100: 10988.
  core::Job j57 = Pending(57, "research", "short");
  j57.req.ntasks = 2;
  j57.req.nice = 100;
  EXPECT_NEAR(calc.Factors(j57).job_size, 0.0885417, 1e-7);
  EXPECT_EQ(calc.Priority(j57), 10988u);
  // sbatch -A ml -N2: 11171.
  core::Job j58 = Pending(58, "ml", "short");
  j58.req.min_nodes = 2;
  j58.req.max_nodes = 2;
  EXPECT_EQ(calc.Priority(j58), 11171u);
}

TEST(Priority, AgeGrowsToItsMaximum) {
  config::Config cfg = OracleConfig();
  core::Job job = Pending(1, "root", "short");
  EXPECT_NEAR(PriorityCalculator(cfg, nullptr, 1000 + 84 * 3600).Factors(job).age, 0.5, 1e-9);
  EXPECT_EQ(PriorityCalculator(cfg, nullptr, 1000 + 30 * 86400).Factors(job).age, 1.0);
  job.eligible_time = 0;  // not yet eligible: no age
  EXPECT_EQ(PriorityCalculator(cfg, nullptr, 1000 + 30 * 86400).Factors(job).age, 0);
}

TEST(Priority, FavorSmallAndTresWeights) {
  config::Config cfg =
      OracleConfig("PriorityFavorSmall=YES\nPriorityWeightTRES=CPU=100,GRES/gpu=1000\n");
  core::Job job = Pending(1, "root", "train");
  job.req.gres.push_back({"gpu", "", 8, false});
  job.req.ntasks = 32;
  PriorityFactors f = PriorityCalculator(cfg, nullptr, 1000).Factors(job);
  // One of 6 nodes, 32 of 192 CPUs: 1 - 1/6.
  EXPECT_NEAR(f.job_size, 1 - 1.0 / 6, 1e-9);
  ASSERT_EQ(f.tres.size(), 2u);
  EXPECT_NEAR(f.tres[0], 32.0 / 128, 1e-9);  // of train's CPUs
  EXPECT_NEAR(f.tres[1], 8.0 / 32, 1e-9);    // of train's GPUs
}

TEST(Priority, PartitionFactorIsRelativeToTheHighest) {
  config::Config cfg = OracleConfig();
  cfg.partitions[1].priority_job_factor = 4;
  PriorityCalculator calc(cfg, nullptr, 1000);
  EXPECT_EQ(calc.Factors(Pending(1, "root", "train")).partition, 1.0);
  EXPECT_EQ(calc.Factors(Pending(2, "root", "short")).partition, 0.25);
}

TEST(Priority, BasicIsSubmissionOrderLessNice) {
  config::Config cfg = OracleConfig();
  cfg.priority.multifactor = false;
  PriorityCalculator calc(cfg, nullptr, 1000);
  core::Job a = Pending(10, "root", "short");
  core::Job b = Pending(11, "root", "short");
  EXPECT_GT(calc.Priority(a), calc.Priority(b));
  a.req.nice = 5;
  EXPECT_LT(calc.Priority(a), calc.Priority(b));
}

TEST(Priority, AnOperatorsPriorityWinsAndTiersGoFirst) {
  config::Config cfg = OracleConfig();
  PriorityCalculator calc(cfg, nullptr, 1000);
  core::Job set = Pending(1, "root", "short");
  set.admin_priority = 7;
  EXPECT_EQ(calc.Priority(set), 7u);
  // Jobs of a higher PriorityTier partition are tried first, whatever
  // their priority.
  cfg.partitions[1].priority_tier = 2;  // train
  core::Job a = Pending(1, "root", "short");
  core::Job b = Pending(2, "root", "train");
  core::Job c = Pending(3, "root", "short");
  a.priority = 100;
  b.priority = 1;
  c.priority = 100;
  std::vector<const core::Job*> order = {&a, &c, &b};
  OrderByPriority(&order, cfg);
  EXPECT_EQ(order, (std::vector<const core::Job*>{&b, &a, &c}));
}

// The queue sort is a stage of the core chosen by PriorityType: it decides
// every job's priority from the snapshot (the stored ones are stale) and
// orders the queue by them.
TEST(Priority, OrderQueueDecidesPrioritiesInTheCore) {
  config::Config cfg = OracleConfig();
  ShareTree shares = OracleShares();
  // root's account has used the cluster, ml nothing: ml goes first though
  // it was submitted later and its stored priority says otherwise.
  core::Job heavy = Pending(1, "root", "short");
  core::Job light = Pending(2, "ml", "short");
  heavy.priority = 1000000;
  light.priority = 1;
  Snapshot snap;
  snap.config = &cfg;
  snap.now = 1000;
  snap.pending = {&heavy, &light};
  EXPECT_EQ(QueueSortFor(snap, &shares)->name(), "priority/multifactor");
  std::vector<JobPriority> decided = OrderQueue(&snap, &shares);
  PriorityCalculator calc(cfg, &shares, 1000);
  ASSERT_EQ(decided.size(), 2u);
  EXPECT_EQ(decided[0].job_id, 1u);
  EXPECT_EQ(decided[0].priority, calc.Priority(heavy));
  EXPECT_EQ(decided[1].priority, calc.Priority(light));
  EXPECT_EQ(snap.pending, (std::vector<const core::Job*>{&light, &heavy}));
  // priority/basic: submission order, whatever the stored priorities; an
  // operator's Priority= still wins.
  cfg.priority.multifactor = false;
  EXPECT_EQ(QueueSortFor(snap, nullptr)->name(), "priority/basic");
  OrderQueue(&snap, nullptr);
  EXPECT_EQ(snap.pending, (std::vector<const core::Job*>{&heavy, &light}));
  light.admin_priority = UINT32_MAX - 1;
  decided = OrderQueue(&snap, nullptr);
  EXPECT_EQ(snap.pending, (std::vector<const core::Job*>{&light, &heavy}));
  EXPECT_EQ(decided[1].priority, UINT32_MAX - 1);
}

TEST(Usage, DecaysByHalfEachHalfLife) {
  config::PriorityConfig policy;
  policy.decay_half_life_s = 100;
  UsageLedger ledger(policy, 0);
  ledger.Advance(10, {{{"a", "u"}, 2, 0}});  // 2 units for 10 s
  EXPECT_DOUBLE_EQ(ledger.usage().at({"a", "u"}), 20);
  ledger.Advance(110, {});
  EXPECT_NEAR(ledger.usage().at({"a", "u"}), 10, 1e-9);
  // A job that ended is charged up to its end, once.
  ledger.ChargeEnded({{"b", "v"}, 1, 50}, 130);
  EXPECT_DOUBLE_EQ(ledger.usage().at({"b", "v"}), 20);
  // Time going back changes nothing.
  ledger.Advance(5, {{{"a", "u"}, 100, 0}});
  EXPECT_NEAR(ledger.usage().at({"a", "u"}), 10, 1e-9);
}

TEST(Usage, SurvivesASaveAndLoadAndDecaysMeanwhile) {
  config::PriorityConfig policy;
  policy.decay_half_life_s = 100;
  UsageLedger ledger(policy, 0);
  ledger.Advance(10, {{{"a", "u"}, 4, 0}});
  UsageLedger later(policy, 110);
  ASSERT_TRUE(later.Load(ledger.ToJson()).ok());
  // What ran while the controller was down is charged at the next advance.
  later.Advance(110, {{{"a", "u"}, 1, 0}});
  EXPECT_NEAR(later.usage().at({"a", "u"}), 20 + 100, 1e-9);
  EXPECT_FALSE(later.Load(nlohmann::json{{"time", 1}, {"usage", {{"a", "u", "x"}}}}).ok());
  EXPECT_NEAR(later.usage().at({"a", "u"}), 120, 1e-9);  // a bad record changes nothing
}

TEST(Usage, KeepsEachTresBesideTheBilling) {
  config::PriorityConfig policy;
  policy.decay_half_life_s = 100;
  UsageLedger ledger(policy, 0);
  // 4 CPUs, 8000 MB, 1 node and 2 GPUs for 10 s.
  ledger.Advance(10, {{{"a", "u"}, 4, 0, {4, 8000, 1, 2}}});
  const TresUsage& t = ledger.tres_usage().at({"a", "u"});
  EXPECT_DOUBLE_EQ(t.cpu, 40);
  EXPECT_DOUBLE_EQ(t.mem_mb, 80000);
  EXPECT_DOUBLE_EQ(t.node, 10);
  EXPECT_DOUBLE_EQ(t.gpu, 20);
  // They decay with it, and are saved and loaded with it.
  ledger.Advance(110, {});
  EXPECT_NEAR(ledger.tres_usage().at({"a", "u"}).cpu, 20, 1e-9);
  UsageLedger later(policy, 110);
  ASSERT_TRUE(later.Load(ledger.ToJson()).ok());
  EXPECT_NEAR(later.tres_usage().at({"a", "u"}).gpu, 10, 1e-9);
  // A record saved before the TRES were kept loads with none.
  ASSERT_TRUE(later.Load(nlohmann::json{{"time", 110}, {"usage", {{"b", "v", 5.0}}}}).ok());
  EXPECT_DOUBLE_EQ(later.usage().at({"b", "v"}), 5);
  EXPECT_TRUE(later.tres_usage().empty());
  EXPECT_FALSE(
      later.Load(nlohmann::json{{"time", 1}, {"usage", {{"a", "u", 1.0, {1, 2}}}}}).ok());
}

TEST(Usage, AResetPeriodClearsIt) {
  config::PriorityConfig policy;
  policy.decay_half_life_s = 0;
  policy.usage_reset = config::UsageReset::kDaily;
  const int64_t start = 1'700'000'000;
  UsageLedger ledger(policy, start);
  ledger.Advance(start + 60, {{{"a", "u"}, 1, start}});
  EXPECT_DOUBLE_EQ(ledger.usage().at({"a", "u"}), 60);
  const int64_t midnight = NextUsageReset(config::UsageReset::kDaily, start);
  ASSERT_GT(midnight, start);
  ASSERT_LE(midnight - start, 25 * 3600);
  // A running job is charged from the reset on only.
  ledger.Advance(midnight + 30, {{{"a", "u"}, 1, start}});
  EXPECT_DOUBLE_EQ(ledger.usage().at({"a", "u"}), 30);
}

}  // namespace
}  // namespace muster::sched

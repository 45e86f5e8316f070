// The account table's operations and sacctmgr's report of each, against
// the lines Slurm 22.05's sacctmgr printed for the same commands.
#include "core/accounts.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

using Lines = std::vector<std::string>;

TEST(Accounts, AddAccountReportsAsSlurm) {
  AccountTable t;
  AccountSettings set;
  set.description = "test acct";
  set.organization = "torg";
  set.shares = 5;
  AccountsOutcome out = t.AddAccounts({"ml"}, {}, "anchor");
  ASSERT_TRUE(out.changed);
  set.parent = "ml";
  out = t.AddAccounts({"tacct"}, set, "anchor");
  ASSERT_TRUE(out.changed);
  EXPECT_EQ(out.lines, (Lines{" Adding Account(s)", "  tacct", " Settings",
                              "  Description     = test acct", "  Organization    = torg",
                              " Associations", "  A = tacct      C = anchor    ", " Settings",
                              "  Fairshare     = 5", "  Parent        = ml"}));
  const AccountRecord* a = t.FindAccount("tacct");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->parent, "ml");
  EXPECT_EQ(a->shares, 5);
  // Defaults: the name, and the parent's name for the organization
  // (its own under root).
  EXPECT_EQ(t.FindAccount("ml")->description, "ml");
  EXPECT_EQ(t.FindAccount("ml")->organization, "ml");
  out = t.AddAccounts({"tacct"}, {}, "anchor");
  EXPECT_FALSE(out.changed);
  EXPECT_EQ(out.lines, Lines{" Nothing new added."});
  AccountSettings orphan;
  orphan.parent = "nosuch";
  out = t.AddAccounts({"x"}, orphan, "anchor");
  EXPECT_FALSE(out.changed);
  EXPECT_EQ(out.lines[0], " Parent account 'nosuch' doesn't exist on cluster anchor");
  EXPECT_EQ(t.FindAccount("x"), nullptr);
}

TEST(Accounts, UsersJoinExistingAccountsOnly) {
  AccountTable t;
  t.AddAccounts({"tacct"}, {}, "anchor");
  UserSettings set;
  set.accounts = {"tacct"};
  set.shares = 3;
  AccountsOutcome out = t.AddUsers({"nobody"}, set, "anchor");
  ASSERT_TRUE(out.changed);
  EXPECT_EQ(out.lines, (Lines{" Adding User(s)", "  nobody", " Associations =",
                              "  U = nobody    A = tacct      C = anchor    ",
                              " Non Default Settings", "  Fairshare     = 3"}));
  EXPECT_EQ(t.FindUser("nobody")->default_account, "tacct");
  EXPECT_TRUE(t.HasAssociation("tacct", "nobody"));
  set.accounts = {"nosuch"};
  out = t.AddUsers({"bob"}, set, "anchor");
  EXPECT_FALSE(out.changed);
  EXPECT_EQ(out.lines, (Lines{" This account 'nosuch' doesn't exist.",
                              "        Contact your admin to add this account.",
                              " No associations or wckeys created."}));
  EXPECT_EQ(t.FindUser("bob"), nullptr);
}

TEST(Accounts, ModifyAndDelete) {
  AccountTable t;
  t.AddAccounts({"ml", "tacct"}, {}, "anchor");
  UserSettings join;
  join.accounts = {"tacct"};
  t.AddUsers({"nobody"}, join, "anchor");
  AccountSettings shares;
  shares.shares = 7;
  AccountsOutcome out = t.ModifyAccounts({"tacct"}, shares, "anchor");
  EXPECT_EQ(out.lines, (Lines{" Modified account associations...", "  C = anchor     A = tacct of root"}));
  UserSettings user_shares;
  user_shares.shares = 9;
  out = t.ModifyUsers({"nobody"}, {"tacct"}, user_shares, "anchor");
  EXPECT_EQ(out.lines, (Lines{" Modified user associations...",
                              "  C = anchor     A = tacct                U = nobody   "}));
  EXPECT_EQ(t.associations().front().shares, 9);
  // A default account must be one of the user's.
  UserSettings def;
  def.default_account = "root";
  out = t.ModifyUsers({"nobody"}, {}, def, "anchor");
  EXPECT_FALSE(out.changed);
  EXPECT_EQ(out.lines, (Lines{" Can't modify because these users aren't associated with new default "
                              "account 'root'...",
                              "  U = nobody C = anchor"}));
  // No account may move below itself.
  AccountSettings move;
  move.parent = "tacct";
  t.ModifyAccounts({"ml"}, move, "anchor");
  move.parent = "ml";
  EXPECT_FALSE(t.ModifyAccounts({"tacct"}, move, "anchor").changed);
  // An account with a sub-account stays; deleting an account takes its
  // users' associations with it.
  EXPECT_FALSE(t.DeleteAccounts({"tacct"}).changed);
  EXPECT_TRUE(t.DeleteAccounts({"ml", "tacct"}).changed);
  EXPECT_FALSE(t.HasAssociation("tacct", "nobody"));
  EXPECT_EQ(t.FindUser("nobody")->default_account, "");
  out = t.DeleteAccounts({"tacct"});
  EXPECT_EQ(out.lines, Lines{" Nothing deleted"});
  EXPECT_FALSE(t.DeleteAccounts({"root"}).changed);
  EXPECT_EQ(t.DeleteUsers({"nobody"}, {}, "anchor").lines, (Lines{" Deleting users...", "  nobody"}));
}

TEST(Accounts, SurviveJson) {
  AccountTable t;
  AccountSettings set;
  set.shares = 100;
  t.AddAccounts({"ml"}, set, "c");
  UserSettings join;
  join.accounts = {"ml"};
  t.AddUsers({"alice"}, join, "c");
  auto back = AccountTable::FromJson(t.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ToJson(), t.ToJson());
  EXPECT_FALSE(AccountTable::FromJson({{"accounts", 1}}).ok());
}


TEST(Accounts, QosAddModifyDelete) {
  AccountTable t;
  ASSERT_NE(t.FindQos("normal"), nullptr);
  QosSettings set;
  set.priority = 10;
  set.max_jobs_per_user = 1;
  set.max_tres_per_user = TresLimits{-1, -1, -1, 2};
  set.max_wall_s = 3600;
  set.grp_tres = TresLimits{64, -1, -1, -1};
  set.deny_on_limit = true;
  AccountsOutcome out = t.AddQos({"tq"}, set);
  ASSERT_TRUE(out.changed);
  // Slurm's report, its uneven columns included.
  EXPECT_EQ(out.lines, (Lines{" Adding QOS(s)", "  tq", " Settings", "  Description    = tq",
                              "  Flags                    = DenyOnLimit",
                              "  GrpTRES                  = cpu=64", "  MaxJobsPerUser = 1",
                              "  MaxTRESPerUser           = gres/gpu=2",
                              "  MaxWall                  = 01:00:00",
                              "  Priority                 = 10"}));
  EXPECT_EQ(t.FindQos("tq")->max_tres_per_user.gpu, 2);
  QosSettings clear;
  clear.max_jobs_per_user = -1;
  EXPECT_EQ(t.ModifyQos({"tq"}, clear).lines, (Lines{" Modified qos...", "  tq"}));
  EXPECT_EQ(t.FindQos("tq")->max_jobs_per_user, -1);
  auto back = AccountTable::FromJson(t.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->FindQos("tq")->grp_tres.cpu, 64);
  EXPECT_FALSE(t.DeleteQos({"normal"}).changed);
  EXPECT_EQ(t.DeleteQos({"tq"}).lines, (Lines{" Deleting QOS(s)...", "  tq"}));
}

// preempt/qos's settings: the Preempt list (=, += and -=), PreemptMode,
// GraceTime and PreemptExemptTime, reported, kept and checked.
TEST(Accounts, QosPreemptSettings) {
  AccountTable t;
  ASSERT_TRUE(t.AddQos({"low"}, QosSettings{}).changed);
  QosSettings high;
  high.preempt = Lines{"low"};
  high.preempt_mode = PreemptMode::kRequeue;
  high.grace_time_s = 5;
  high.preempt_exempt_time_s = 60;
  AccountsOutcome out = t.AddQos({"high"}, high);
  EXPECT_EQ(out.lines, (Lines{" Adding QOS(s)", "  high", " Settings", "  Description    = high",
                              "  GraceTime                = 5", "  Preempt                  = low",
                              "  PreemptExemptTime        = 00:01:00",
                              "  PreemptMode              = REQUEUE"}));
  const QosRecord* q = t.FindQos("high");
  EXPECT_EQ(q->preempt, Lines{"low"});
  EXPECT_EQ(q->preempt_mode, PreemptMode::kRequeue);
  EXPECT_EQ(q->grace_time_s, 5);
  EXPECT_EQ(t.FindQos("low")->preempt_exempt_time_s, -1);  // the cluster's
  EXPECT_TRUE(t.CheckPreemptLists().ok());
  auto back = AccountTable::FromJson(t.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->FindQos("high")->preempt, Lines{"low"});
  EXPECT_EQ(back->FindQos("high")->preempt_mode, PreemptMode::kRequeue);
  EXPECT_FALSE(back->FindQos("low")->preempt_mode.has_value());
  EXPECT_EQ(back->FindQos("high")->preempt_exempt_time_s, 60);
  // += and -=; OFF means the cluster's mode again.
  QosSettings more;
  more.preempt_add = {"normal", "low"};
  more.preempt_remove = {"low"};
  more.preempt_mode = PreemptMode::kOff;
  t.ModifyQos({"high"}, more);
  EXPECT_EQ(t.FindQos("high")->preempt, Lines{"normal"});
  EXPECT_FALSE(t.FindQos("high")->preempt_mode.has_value());
  // A name that is no QOS, and a loop (direct or through another), are refused.
  AccountTable unknown = t;
  QosSettings bad;
  bad.preempt_add = {"nosuch"};
  unknown.ModifyQos({"low"}, bad);
  EXPECT_EQ(unknown.CheckPreemptLists().message(),
            "You gave a bad qos 'nosuch'. Valid QOS's are high,low,normal");
  for (const char* self : {"high", "normal"}) {
    AccountTable loop = t;
    QosSettings back_edge;
    back_edge.preempt_add = {"high"};
    loop.ModifyQos({self}, back_edge);
    EXPECT_EQ(loop.CheckPreemptLists().message(),
              "Error with request: QOS Preemption loop detected")
        << self;
  }
  // A deleted QOS leaves the lists that named it.
  t.DeleteQos({"normal"});  // refused: normal stays
  ASSERT_TRUE(t.AddQos({"gone"}, QosSettings{}).changed);
  QosSettings name_it;
  name_it.preempt_add = {"gone"};
  t.ModifyQos({"high"}, name_it);
  t.DeleteQos({"gone"});
  EXPECT_EQ(t.FindQos("high")->preempt, Lines{"normal"});
  EXPECT_TRUE(t.CheckPreemptLists().ok());
}

TEST(Accounts, TresLimitsParseAndFormat) {
  auto t = ParseTresLimits("CPU=64,mem=100G,node=4,gres/gpu=8");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->mem_mb, 102400);
  EXPECT_EQ(FormatTresLimits(*t), "cpu=64,mem=100G,node=4,gres/gpu=8");
  EXPECT_EQ(ParseTresLimits("gres/fpga=1").status().message(),
            "gres/fpga=1: unknown TRES (expected cpu, mem, node or gres/gpu)");
  EXPECT_FALSE(ParseTresLimits("cpu=lots").ok());
}


TEST(Accounts, LimitsAreInheritedDownTheTree) {
  AccountTable t;
  AccountSettings lab;
  lab.limits.max_jobs = 2;
  lab.limits.max_wall_s = 3600;
  lab.limits.grp_tres = TresLimits{64, -1, -1, -1};
  AccountsOutcome out = t.AddAccounts({"lab"}, lab, "c");
  EXPECT_EQ(std::vector<std::string>(out.lines.end() - 4, out.lines.end()),
            (Lines{" Settings", "  GrpTRES       = cpu=64", "  MaxJobs       = 2",
                   "  MaxWall       = 01:00:00"}));
  AccountSettings team;
  team.parent = "lab";
  t.AddAccounts({"team"}, team, "c");
  UserSettings join;
  join.accounts = {"team"};
  join.limits.max_jobs = 5;
  t.AddUsers({"alice"}, join, "c");
  const AssocLimits eff = t.EffectiveMaxLimits("team", "alice");
  EXPECT_EQ(eff.max_jobs, 5);        // her own
  EXPECT_EQ(eff.max_wall_s, 3600);   // lab's, two levels up
  EXPECT_EQ(t.Lineage("team").size(), 3u);  // team, lab, root
  auto back = AccountTable::FromJson(t.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->FindAccount("lab")->limits.grp_tres.cpu, 64);
  EXPECT_EQ(back->FindAssociation("team", "alice")->limits.max_jobs, 5);
}

}  // namespace
}  // namespace muster::core

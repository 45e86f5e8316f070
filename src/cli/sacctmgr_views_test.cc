// sacctmgr's command line and listings, against Slurm 22.05's output for
// the same table (the oracle's accounts ml and research under root).
#include "cli/sacctmgr_views.h"

#include <gtest/gtest.h>

namespace muster::cli {
namespace {

using nlohmann::json;

json Table() {
  return {{"accounts",
           {{{"name", "ml"}, {"parent", "root"}, {"description", "anchor ml"},
             {"organization", "anchor"}, {"shares", 100}},
            {{"name", "research"}, {"parent", "root"}, {"description", "anchor research"},
             {"organization", "anchor"}, {"shares", 100}},
            {{"name", "root"}, {"parent", ""}, {"description", "default root account"},
             {"organization", "root"}, {"shares", 1}}}},
          {"users", {{{"name", "root"}, {"default_account", "root"}, {"admin_level", "Administrator"}}}},
          {"associations",
           {{{"account", "ml"}, {"user", "root"}, {"shares", 1}},
            {{"account", "research"}, {"user", "root"}, {"shares", 1}},
            {{"account", "root"}, {"user", "root"}, {"shares", 1}}}}};
}

std::string List(std::vector<std::string> args) {
  auto cmd = ParseSacctmgrArgs(args);
  EXPECT_TRUE(cmd.ok()) << cmd.status().message();
  auto text = RenderSacctmgrList(*cmd, Table(), {{"name", "anchor"}, {"host", "127.0.0.1"}, {"port", 6817}});
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

TEST(Sacctmgr, ListsAsSlurm) {
  EXPECT_EQ(List({"list", "account"}),
            "   Account                Descr                  Org \n"
            "---------- -------------------- -------------------- \n"
            "        ml            anchor ml               anchor \n"
            "  research      anchor research               anchor \n"
            "      root default root account                 root \n");
  // Narrow columns: values cut with a '+', headers without (the oracle's
  // sacctmgr list account format=account%5,descr%4).
  EXPECT_EQ(List({"list", "account", "format=account%5,descr%4"}),
            "Accou Desc \n----- ---- \n   ml anc+ \nrese+ anc+ \n root def+ \n");
  EXPECT_EQ(List({"list", "user"}),
            "      User   Def Acct     Admin \n"
            "---------- ---------- --------- \n"
            "      root       root Administ+ \n");
  EXPECT_EQ(List({"-P", "list", "assoc", "format=account,user,fairshare,parentname"}),
            "Account|User|Share|ParentName\n"
            "root||1|\nroot|root|1|\nml||100|root\nml|root|1|\nresearch||100|root\nresearch|root|1|\n");
  EXPECT_EQ(List({"show", "cluster", "-P"}),
            "Cluster|ControlHost|ControlPort|RPC|Share|GrpJobs|GrpTRES|GrpSubmit|MaxJobs|MaxTRES|"
            "MaxSubmit|MaxWall|QOS|Def QOS\nanchor|127.0.0.1|6817|9728|1||||||||normal|\n");
  EXPECT_EQ(List({"-n", "-p", "list", "assoc", "user=root", "account=ml", "format=Account%5,User"}),
            "ml|root|\n");
}

TEST(Sacctmgr, ParsesSlurmsGrammar) {
  auto add = ParseSacctmgrArgs({"-i", "add", "account", "tacct", "Description=test acct",
                                "Organization=torg", "Parent=ml", "Fairshare=5"});
  ASSERT_TRUE(add.ok()) << add.status().message();
  EXPECT_TRUE(add->immediate);
  EXPECT_EQ(SacctmgrRequest(*add, true),
            json({{"action", "add"}, {"entity", "account"}, {"names", {"tacct"}}, {"where", json::object()},
                  {"set", {{"description", "test acct"}, {"organization", "torg"}, {"parent", "ml"}, {"fairshare", 5}}},
                  {"commit", true}}));
  auto mod = ParseSacctmgrArgs({"modify", "user", "where", "name=nobody", "account=tacct", "set", "fairshare=9"});
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  EXPECT_EQ(mod->names, std::vector<std::string>{"nobody"});
  EXPECT_EQ(mod->where.at("accounts"), std::vector<std::string>{"tacct"});
  EXPECT_EQ(mod->set, json({{"fairshare", 9}}));
  auto limits = ParseSacctmgrArgs({"add", "account", "lab", "GrpTRES=gres/gpu=4", "MaxJobs=2",
                                   "MaxSubmitJobs=-1", "MaxWall=2-0", "GrpJobs=10"});
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  EXPECT_EQ(limits->set, json({{"grp_tres", "gres/gpu=4"}, {"max_jobs", 2}, {"max_submit_jobs", -1},
                               {"max_wall_s", 2 * 86400}, {"grp_jobs", 10}}));
  EXPECT_EQ(ParseSacctmgrArgs({"list", "foo"}).status().message(),
            "No valid entity in list command\n"
            "Input line must include \"Account\", \"Association\", \"Cluster\", \"QOS\" or \"User\"");
  EXPECT_EQ(ParseSacctmgrArgs({"add", "account", "x", "Color=red"}).status().message(),
            "sacctmgr: error: Unknown option: Color=red");
  EXPECT_EQ(ParseSacctmgrArgs({"add", "user", "x", "Fairshare=lots"}).status().message(),
            "sacctmgr: error: Invalid Fairshare value: lots");
  EXPECT_FALSE(ParseSacctmgrArgs({"modify", "account", "x"}).ok());  // nothing to set
  EXPECT_FALSE(ParseSacctmgrArgs({"delete", "user"}).ok());          // no name
  EXPECT_FALSE(ParseSacctmgrArgs({"add", "wckey", "high"}).ok());
  EXPECT_EQ(ParseSacctmgrArgs({"add", "qos", "q", "Flags=NoDecay"}).status().message(),
            "sacctmgr: error: Flags=NoDecay: Muster knows the flag DenyOnLimit only");
  auto bad_field = ParseSacctmgrArgs({"list", "user", "format=Color"});
  ASSERT_TRUE(bad_field.ok());
  EXPECT_EQ(RenderSacctmgrList(*bad_field, Table(), json::object()).status().message(),
            "sacctmgr: error: Unknown field 'Color'");
}


TEST(Sacctmgr, QosSettingsAndListing) {
  auto add = ParseSacctmgrArgs({"-i", "add", "qos", "tq", "Priority=10", "MaxJobsPerUser=1",
                                "MaxTRESPerUser=gres/gpu=2", "MaxWall=1:00:00", "GrpTRES=cpu=64",
                                "Flags=DenyOnLimit", "MaxSubmitJobsPU=-1"});
  ASSERT_TRUE(add.ok()) << add.status().message();
  EXPECT_EQ(add->set, json({{"priority", 10}, {"max_jobs_per_user", 1}, {"max_tres_per_user", "gres/gpu=2"},
                            {"max_wall_s", 3600}, {"grp_tres", "cpu=64"}, {"deny_on_limit", true},
                            {"max_submit_jobs_per_user", -1}}));
  json table = Table();
  table["qos"] = {{{"name", "normal"}, {"description", "Normal QOS default"}, {"priority", 0},
                   {"max_jobs_per_user", -1}, {"max_submit_jobs_per_user", -1}, {"grp_jobs", -1},
                   {"max_wall_s", -1}, {"usage_factor", 1.0}, {"deny_on_limit", false}},
                  {{"name", "limited"}, {"description", "limited"}, {"priority", 0},
                   {"max_jobs_per_user", 2}, {"max_submit_jobs_per_user", -1}, {"grp_jobs", -1},
                   {"max_wall_s", -1}, {"usage_factor", 1.0}, {"deny_on_limit", false},
                   {"max_tres_per_user", {{"cpu", -1}, {"mem_mb", -1}, {"node", -1}, {"gpu", 2}}}}};
  auto list = ParseSacctmgrArgs({"-P", "list", "qos",
                                 "format=name,priority,maxjobsperuser,maxtresperuser,maxwall,grptres,grpjobs,flags"});
  ASSERT_TRUE(list.ok());
  auto text = RenderSacctmgrList(*list, table, json::object());
  ASSERT_TRUE(text.ok()) << text.status().message();
  // The oracle's QOS "limited": MaxJobsPU=2.
  EXPECT_EQ(*text, "Name|Priority|MaxJobsPU|MaxTRESPU|MaxWall|GrpTRES|GrpJobs|Flags\n"
                   "normal|0||||||\nlimited|0|2|gres/gpu=2||||\n");
  list = ParseSacctmgrArgs({"list", "qos", "normal"});
  ASSERT_TRUE(list.ok());
  text = RenderSacctmgrList(*list, table, json::object());
  ASSERT_TRUE(text.ok());
  // Slurm's default columns, first and last of them.
  EXPECT_TRUE(text->starts_with("      Name   Priority  GraceTime    Preempt   PreemptExemptTime PreemptMode"));
  EXPECT_NE(text->find("    normal          0   00:00:00 "), std::string::npos) << *text;
}

// preempt/qos's keys, and their columns as the oracle shows them
// (GraceTime in plain seconds, PreemptExemptTime in minutes or a time).
TEST(Sacctmgr, QosPreemptSettings) {
  auto add = ParseSacctmgrArgs({"-i", "add", "qos", "high", "Preempt=low,scavenger",
                                "PreemptMode=requeue", "GraceTime=5", "PreemptExemptTime=5"});
  ASSERT_TRUE(add.ok()) << add.status().message();
  EXPECT_EQ(add->set, json({{"preempt", {"low", "scavenger"}},
                            {"preempt_mode", "requeue"},
                            {"grace_time_s", 5},
                            {"preempt_exempt_time_s", 300}}));
  auto modify = ParseSacctmgrArgs({"-i", "modify", "qos", "high", "set", "Preempt+=normal",
                                   "Preempt-=low", "PreemptMode=Cluster", "PreemptExemptTime=-1"});
  ASSERT_TRUE(modify.ok()) << modify.status().message();
  EXPECT_EQ(modify->set, json({{"preempt_add", {"normal"}},
                               {"preempt_remove", {"low"}},
                               {"preempt_mode", "OFF"},
                               {"preempt_exempt_time_s", -1}}));
  auto clear = ParseSacctmgrArgs({"-i", "modify", "qos", "high", "set", "Preempt="});
  ASSERT_TRUE(clear.ok()) << clear.status().message();
  EXPECT_EQ(clear->set, json({{"preempt", json::array()}}));
  auto bad = ParseSacctmgrArgs({"-i", "modify", "qos", "high", "set", "PreemptMode=bogus"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            " Bad Preempt Mode given: PreemptMode=bogus (Muster's QOS take Cluster, Cancel or "
            "Requeue)");
  json table = Table();
  table["qos"] = {{{"name", "high"}, {"preempt", {"low", "normal"}}, {"preempt_mode", "REQUEUE"},
                   {"grace_time_s", 5}, {"preempt_exempt_time_s", 60}},
                  {{"name", "low"}, {"preempt", json::array()}, {"preempt_mode", ""},
                   {"grace_time_s", 0}, {"preempt_exempt_time_s", -1}}};
  auto list = ParseSacctmgrArgs(
      {"-P", "show", "qos", "format=name,preempt,preemptmode,preemptexempttime,gracetime"});
  ASSERT_TRUE(list.ok());
  auto text = RenderSacctmgrList(*list, table, json::object());
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "Name|Preempt|PreemptMode|PreemptExemptTime|GraceTime\n"
                   "high|low,normal|requeue|00:01:00|00:00:05\n"
                   "low||cluster||00:00:00\n");
}

}  // namespace
}  // namespace muster::cli

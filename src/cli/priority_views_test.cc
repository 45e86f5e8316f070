// sprio's and sshare's layouts, against what Slurm 22.05 printed for the
// same figures on the oracle (byte for byte, trailing blanks included).
#include "cli/priority_views.h"

#include <gtest/gtest.h>

#include <cmath>

namespace muster::cli {
namespace {

using nlohmann::json;

json Job(uint32_t id, const char* part, uint32_t prio, double fs, double size, int nice) {
  return {{"job_id", id},
          {"partition", part},
          {"user", "root"},
          {"uid", 0},
          {"priority", prio},
          {"nice", nice},
          {"tres", json::array()},
          {"factors",
           {{"age", 0.0}, {"assoc", 0.0}, {"fairshare", fs}, {"job_size", size},
            {"partition", 1.0}, {"qos", 0.0}}}};
}

// The oracle's queue: jobs 56-58 and the handbook's weights.
json Report() {
  return {{"multifactor", true},
          {"weights",
           {{"age", 1000}, {"assoc", 0}, {"fairshare", 10000}, {"job_size", 1000},
            {"partition", 1000}, {"qos", 2000}, {"tres_names", json::array()},
            {"tres", json::array()}, {"tres_text", ""}}},
          {"jobs",
           {Job(58, "short", 11171, 1.0, 0.171875, 0), Job(56, "train", 4427, 1.0 / 3, 0.09375, 0),
            Job(57, "short", 10988, 1.0, 0.0885417, 100)}}};
}

std::string Sprio(std::vector<std::string> args) {
  auto opts = ParseSprioArgs(args, nullptr);
  EXPECT_TRUE(opts.ok()) << opts.status().message();
  return RenderSprio(*opts, Report(), {});
}

TEST(Sprio, DefaultLeavesOutFactorsWithoutWeight) {
  EXPECT_EQ(Sprio({}),
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION        QOS\n"
            "             56 train           4427          0          0       3333         94       1000          0\n"
            "             57 short          10988          0          0      10000         89       1000          0\n"
            "             58 short          11171          0          0      10000        172       1000          0\n");
}

TEST(Sprio, LongNormalizedAndWeights) {
  EXPECT_EQ(Sprio({"-l", "-j56"}),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "             56 train         root       4427          0          0          0       3333         94       1000          0           0                     \n");
  EXPECT_EQ(Sprio({"-n", "-j", "57"}),
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION  QOS       \n"
            "             57 short     0.00000255 0.0000000  1.0000000  0.0885417  1.0000000  0.0000000 \n");
  EXPECT_EQ(Sprio({"-w", "-l"}),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "        Weights                                        1       1000          0      10000       1000       1000       2000                           (null)\n");
  EXPECT_EQ(Sprio({"-w", "-n"}),
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION  QOS       \n"
            "        Weights                      1000       10000      1000       1000       2000      \n");
}

TEST(Sprio, SelectsByJobUserAndPartition) {
  EXPECT_EQ(Sprio({"-h", "-p", "train", "-o", "%i %Y"}), "56 4427\n");
  EXPECT_EQ(Sprio({"-j", "99"}), "Unable to find jobs matching user/id(s) specified\n");
  auto opts = ParseSprioArgs({"-u", "nobody", "-h"}, nullptr);
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(RenderSprio(*opts, Report(), {std::nullopt}), "");
  EXPECT_EQ(ParseSprioArgs({"-j", "abc"}, nullptr).status().message(),
            "sprio: error: Invalid job id: abc");
  // SPRIO_FORMAT is the default format; -o beats it.
  opts = ParseSprioArgs({"-h", "-j58"}, "%i:%F");
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(RenderSprio(*opts, Report(), {}), "58:10000\n");
}

// -o is cut as Slurm's sprio cuts it (observed on the oracle): a run of
// '%' only separates fields, a width cuts or pads, text after a field
// follows it, and an invalid field is dropped (with its text) after an
// error line.
TEST(Sprio, FormatsAsSlurmCutsThem) {
  EXPECT_EQ(Sprio({"-j58", "-o", "%.15i%%%u"}),
            "          JOBIDUSER\n"
            "             58root\n");
  EXPECT_EQ(Sprio({"-j58", "-o", "%i|%u|"}), "JOBID|USER|\n58|root|\n");
  EXPECT_EQ(Sprio({"-j58", "-o", "%.3i %Y"}), "JOB PRIORITY\n 58 11171\n");
  EXPECT_EQ(Sprio({"-j58", "-o", "ab %i x"}), "ab JOBID x\nab 58 x\n");
  EXPECT_EQ(Sprio({"-j58", "-o", "%i%"}), "JOBID\n58\n");
  EXPECT_EQ(Sprio({"-j58", "-o", "%z %i"}), "JOBID\n58\n");
  EXPECT_EQ(Sprio({"-j58", "-o", "%N %c"}), "NICE CLUSTER\n0 (null)\n");
  EXPECT_EQ(SprioFormatErrors("%z %i%n"),
            (std::vector<std::string>{"sprio: error: Invalid job format specification: z",
                                      "sprio: error: Invalid job format specification: n"}));
  EXPECT_TRUE(SprioFormatErrors("").empty());
}

json ShareRow(const char* account, const char* user, int depth, int64_t shares, double norm,
              double raw, double norm_usage, double eff, double fs, json level) {
  return {{"account", account},        {"user", user},
          {"depth", depth},            {"raw_shares", shares},
          {"norm_shares", norm},       {"raw_usage", raw},
          {"norm_usage", norm_usage},  {"effective_usage", eff},
          {"level_fs", level},         {"fairshare", fs},
          {"tres_run_mins", {{"cpu", 0}, {"mem", 0}, {"node", 0}, {"billing", 0}, {"gres/gpu", 0}}}};
}

// The oracle's tree: root/root used 65135, ml and research 19 each.
json Shares() {
  return {{"rows",
           {ShareRow("root", "", 0, 0, 0, 65175, 1, 1, 0, nullptr),
            ShareRow("root", "root", 1, 1, 0.004975, 65135, 0.999387, 0.999387, 1.0 / 3, 0.004978),
            ShareRow("ml", "", 1, 100, 0.497512, 19, 0.000307, 0.000307, 0, 1622.417024),
            ShareRow("ml", "root", 2, 1, 1, 19, 0.000307, 1, 1, 1),
            ShareRow("research", "", 1, 100, 0.497512, 19, 0.000307, 0.000307, 0, 1622.417024),
            ShareRow("research", "root", 2, 1, 1, 19, 0.000307, 1, 1, 1)}},
          {"cluster", "anchor"}};
}

std::string Sshare(std::vector<std::string> args, const std::string& caller = "root") {
  auto opts = ParseSshareArgs(args);
  EXPECT_TRUE(opts.ok()) << opts.status().message();
  return RenderSshare(*opts, Shares(), caller);
}

TEST(Sshare, MatchesSlurmsLayouts) {
  EXPECT_EQ(Sshare({}),
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
            "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n"
            "root                                          0.000000       65175      1.000000            \n"
            " root                      root          1    0.004975       65135      0.999387   0.333333 \n"
            " ml                                    100    0.497512          19      0.000307            \n"
            "  ml                       root          1    1.000000          19      1.000000   1.000000 \n"
            " research                              100    0.497512          19      0.000307            \n"
            "  research                 root          1    1.000000          19      1.000000   1.000000 \n");
  EXPECT_EQ(Sshare({"-P", "-l", "-A", "ml"}),
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins\n"
            "ml||100|0.497512|19|0.000307|0.000307||1622.417024||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0\n"
            " ml|root|1|1.000000|19|0.000307|1.000000|1.000000|1.000000||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0\n");
}

TEST(Sshare, ShowsOtherUsersOnlyWhenAsked) {
  // Without -a another user sees the accounts and none of root's rows.
  EXPECT_EQ(Sshare({"-n"}, "alice"),
            "root                                          0.000000       65175      1.000000            \n"
            " ml                                    100    0.497512          19      0.000307            \n"
            " research                              100    0.497512          19      0.000307            \n");
  EXPECT_EQ(Sshare({"-n", "-a", "-U"}, "alice"),
            "root                       root          1    0.004975       65135      0.999387   0.333333 \n"
            "ml                         root          1    1.000000          19      1.000000   1.000000 \n"
            "research                   root          1    1.000000          19      1.000000   1.000000 \n");
  EXPECT_EQ(Sshare({"-n", "-p", "-u", "root", "-A", "research"}, "alice"),
            "research||100|0.497512|19|0.000307||\n"
            " research|root|1|1.000000|19|1.000000|1.000000|\n");
}

// The oracle's tree when it answered the -o formats below: root/root had
// run jobs (392 CPU-seconds; ids as its database gave them; 1 and 100
// shares of 201). Slurm's root row has NormShares 2^-32 where Muster's
// has 0.
json OracleShares() {
  auto row = [](const char* account, const char* user, int depth, int id, int64_t shares,
                double norm, double raw, double norm_usage, double eff, double fs, json level,
                json raw_mins) {
    json r = ShareRow(account, user, depth, shares, norm, raw, norm_usage, eff, fs, level);
    r["id"] = id;
    r["tres_raw_mins"] = raw_mins;
    return r;
  };
  const json used = {{"cpu", 6}, {"mem", 6549}, {"node", 6}, {"billing", 6}, {"gres/gpu", 0}};
  const json none = json::object();
  return {{"cluster", "anchor"},
          {"rows",
           {row("root", "", 0, 1, 0, std::ldexp(1.0, -32), 392, 1, 1, 0, nullptr, used),
            row("root", "root", 1, 2, 1, 1.0 / 201, 392, 1, 1, 1.0 / 3, 1.0 / 201, used),
            row("ml", "", 1, 5, 100, 100.0 / 201, 0, 0, 0, 0, nullptr, none),
            row("ml", "root", 2, 6, 1, 1, 0, 0, 0, 1, nullptr, none),
            row("research", "", 1, 3, 100, 100.0 / 201, 0, 0, 0, 0, nullptr, none),
            row("research", "root", 2, 4, 1, 1, 0, 0, 0, 1, nullptr, none)}}};
}

std::string SshareAll(const std::string& format) {
  auto opts = ParseSshareArgs({"-a", "-o", format});
  EXPECT_TRUE(opts.ok()) << opts.status().message();
  return RenderSshare(*opts, OracleShares(), "root");
}

// sshare -a -o FORMAT, byte for byte as the oracle printed it.
TEST(Sshare, FormatTakesSlurmsFieldsAndWidths) {
  EXPECT_EQ(SshareAll("Account%20,User,RawShares,FairShare"),
            "             Account       User  RawShares  FairShare \n"
            "-------------------- ---------- ---------- ---------- \n"
            "                root                                  \n"
            "                root       root          1   0.333333 \n"
            "                  ml                   100            \n"
            "                  ml       root          1   1.000000 \n"
            "            research                   100            \n"
            "            research       root          1   1.000000 \n");
  // Text is cut with a '+' (a header without one).
  EXPECT_EQ(SshareAll("Account%5,User%3"),
            "Accou Use \n"
            "----- --- \n"
            " root     \n"
            " root ro+ \n"
            "   ml     \n"
            "   ml ro+ \n"
            " res+     \n"
            "  re+ ro+ \n");
  // Any prefix, in any case; %-N is left-justified.
  EXPECT_EQ(SshareAll("acc%-12,rawsh%-5,c"),
            "Account      RawSh    Cluster \n"
            "------------ ----- ---------- \n"
            "root                   anchor \n"
            " root        1         anchor \n"
            " ml          100       anchor \n"
            "  ml         1         anchor \n"
            " research    100       anchor \n"
            "  research   1         anchor \n");
  // Numbers run over a narrow column; a real takes e-notation with the
  // decimals the column leaves.
  EXPECT_EQ(SshareAll("LevelFS%2,EffectvUsage%3,NormUsage%4,FairShare%9,RawUsage%2"),
            "Le Eff Norm FairShare Ra \n"
            "-- --- ---- --------- -- \n"
            "   1.000000e+00                392 \n"
            "4.975124e-03 1.000000e+00 1.000000e+00  0.333333 392 \n"
            "inf 0.000000e+00 0.000000e+00            0 \n"
            "inf 0.000000e+00 0.000000e+00  1.000000  0 \n"
            "inf 0.000000e+00 0.000000e+00            0 \n"
            "inf 0.000000e+00 0.000000e+00  1.000000  0 \n");
  // The last width given for a field sets all its columns.
  EXPECT_EQ(SshareAll("NormShares%7,NormShares%-6,LevelFS%10,EffectvUsage%6"),
            "NormSh NormSh    LevelFS Effect \n"
            "------ ------ ---------- ------ \n"
            "2e-10 2e-10            1e+00 \n"
            "5e-03 5e-03   0.004975 1e+00 \n"
            "5e-01 5e-01        inf 0e+00 \n"
            "1e+00 1e+00        inf 0e+00 \n"
            "5e-01 5e-01        inf 0e+00 \n"
            "1e+00 1e+00        inf 0e+00 \n");
  EXPECT_EQ(SshareAll("User%-12,User,ID"),
            "User         User             ID \n"
            "------------ ------------ ------ \n"
            "                               1 \n"
            "root         root              2 \n"
            "                               5 \n"
            "root         root              6 \n"
            "                               3 \n"
            "root         root              4 \n");
  // A prefix names the first field it begins; an empty name is Account.
  EXPECT_EQ(SshareAll("R,N,%5"),
            " RawShares  NormShares Accou \n"
            "---------- ----------- ----- \n"
            "              0.000000  root \n"
            "         1    0.004975  root \n"
            "       100    0.497512    ml \n"
            "         1    1.000000    ml \n"
            "       100    0.497512  res+ \n"
            "         1    1.000000   re+ \n");
  EXPECT_EQ(SshareAll("GrpTRESRaw%-40,NormUsage%7"),
            "GrpTRESRaw                               NormUsa \n"
            "---------------------------------------- ------- \n"
            "cpu=6,mem=6549,energy=0,node=6,billing=+         \n"
            "cpu=6,mem=6549,energy=0,node=6,billing=+ 1.0e+00 \n"
            "cpu=0,mem=0,energy=0,node=0,billing=0,f+ 0.0e+00 \n"
            "cpu=0,mem=0,energy=0,node=0,billing=0,f+ 0.0e+00 \n"
            "cpu=0,mem=0,energy=0,node=0,billing=0,f+ 0.0e+00 \n"
            "cpu=0,mem=0,energy=0,node=0,billing=0,f+ 0.0e+00 \n");
  // A list of nothing shows Account.
  EXPECT_EQ(SshareAll(","), SshareAll("Account"));
  EXPECT_EQ(SshareAll(""), SshareAll("Account"));
  // Widths mean nothing to -p/-P; -o wins over -l and -m.
  EXPECT_EQ(Sshare({"-P", "-l", "-m", "-o", "Account%5,User%3,NormShares%4,Partition", "-A", "ml"}),
            "Account|User|NormShares|Partition\n"
            "ml||0.497512|\n"
            " ml|root|1.000000|\n");
  EXPECT_EQ(Sshare({"-P", "-o", "GrpTRESRaw,Cluster,ID", "-A", "ml"}),
            "GrpTRESRaw|Cluster|ID\n"
            "cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|anchor|0\n"
            "cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0|anchor|0\n");
}

TEST(Sshare, PartitionColumnAndHelpFormat) {
  EXPECT_EQ(Sshare({"-m", "-A", "ml"}),
            "Account                    User    Partition  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
            "-------------------- ---------- ------------ ---------- ----------- ----------- ------------- ---------- \n"
            "ml                                                  100    0.497512          19      0.000307            \n"
            " ml                        root                       1    1.000000          19      1.000000   1.000000 \n");
  EXPECT_EQ(SshareHelpFormat(),
            "Account           Cluster           EffectvUsage      FairShare        \n"
            "GrpTRESMins       GrpTRESRaw        ID                LevelFS          \n"
            "NormShares        NormUsage         Partition         RawShares        \n"
            "RawUsage          TRESRunMins       User             \n");
}

TEST(Sshare, RefusesAFieldItLacks) {
  for (const auto& [format, name] : std::vector<std::pair<std::string, std::string>>{
           {"Foo", "foo"}, {"Account,FoO%5", "foo"}, {" Account", " account"},
           {"Accountx", "accountx"}}) {
    auto opts = ParseSshareArgs({"-o", format});
    ASSERT_FALSE(opts.ok()) << format;
    EXPECT_EQ(opts.status().message(), "sshare: error: Invalid field requested: \"" + name + "\"");
  }
}

}  // namespace
}  // namespace muster::cli

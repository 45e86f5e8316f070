// sprio's and sshare's layouts, against what Slurm 22.05 printed for the
// same figures on the oracle (byte for byte, trailing blanks included).
#include "cli/priority_views.h"

#include <gtest/gtest.h>

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
            ShareRow("research", "root", 2, 1, 1, 19, 0.000307, 1, 1, 1)}}};
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

}  // namespace
}  // namespace muster::cli

// Expected strings from Slurm 22.05.8 (cluster "anchor", 192 CPUs and 32
// GPUs configured, TZ=UTC). The oracle's hour 16:00-17:00 held
// 3564 CPU-seconds allocated, 19755 planned and 3 GPU-seconds; the records
// below reproduce those totals:
//   sreport cluster Utilization start=2026-12-02T16:00 end=2026-12-02T17:00 [-t ...]
//   sreport -P cluster AccountUtilizationByUser start=... end=... -t seconds
//   sreport -P user TopUsage start=... end=... -t seconds|percent
//   sreport user TopUsage start=... end=... --tres=gres/gpu
// and the hour 15:00-16:00 (root used 283 CPU-minutes in account root and
// 5 in account ml):
//   sreport user TopUsage start=2026-12-02T15:00 end=2026-12-02T16:00
#include <stdlib.h>
#include <time.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/args.h"
#include "cli/render/render.h"

namespace muster::render {
namespace {

// The requests come from command lines, as the commands make them.
using cli::ParseSreportArgs;

using store::JobRecord;

constexpr int64_t k15 = 1796223600;  // 2026-12-02T15:00:00Z
constexpr int64_t k16 = k15 + 3600;
constexpr int64_t k17 = k16 + 3600;
constexpr int64_t kNow = k17 + 300;

JobRecord Job(int64_t id, std::string account, int ncpus, int64_t eligible, int64_t start,
              int64_t end, std::string extra_tres = "") {
  JobRecord j;
  j.job_id = id;
  j.user = "root";
  j.account = std::move(account);
  j.ncpus = ncpus;
  j.eligible_time = j.submit_time = eligible;
  j.start_time = start;
  j.end_time = end;
  j.alloc_tres = "billing=" + std::to_string(ncpus) + ",cpu=" + std::to_string(ncpus) + extra_tres +
                 ",mem=1000M,node=1";
  return j;
}

class SreportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
    cluster_.name = "anchor";
    cluster_.cpus = 192;
    cluster_.gpus = 32;
    cluster_.proper_names = {{"root", "root"}};
    // 3561 + 3 CPU-seconds allocated; the gpu job holds 1 GPU for 3 s.
    hour16_.push_back(Job(1, "root", 1, k16, k16, k16 + 3561));
    hour16_.push_back(Job(2, "root", 1, k16 + 100, k16 + 100, k16 + 103, ",gres/gpu=1"));
    // 15 CPUs eligible for the last 1317 s of the hour, started after it.
    hour16_.push_back(Job(3, "root", 15, k17 - 1317, k17 + 10, k17 + 20));
    // Outside the window entirely.
    hour16_.push_back(Job(4, "root", 4, k15, k15 + 5, k15 + 50));
  }
  std::string Run(std::vector<std::string> args, const std::vector<JobRecord>& jobs) {
    auto req = ParseSreportArgs(args);
    EXPECT_TRUE(req.ok()) << req.status().message();
    if (!req.ok()) return "";
    auto back = SreportRequestFromJson(ToJson(*req));
    EXPECT_TRUE(back.ok());
    auto out = RenderSreport(*back, jobs, {}, cluster_, kNow);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : "";
  }
  SreportCluster cluster_;
  std::vector<JobRecord> hour16_;
};

const char* kW16[] = {"start=2026-12-02T16:00", "end=2026-12-02T17:00"};

std::string Banner(const std::string& title, const std::string& unit) {
  const std::string d(80, '-');
  return d + "\n" + title + "\nUsage reported in " + unit + "\n" + d + "\n";
}

TEST_F(SreportTest, ClusterUtilizationUnits) {
  const std::string title = "Cluster Utilization 2026-12-02T16:00:00 - 2026-12-02T16:59:59";
  const std::string head =
      "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n"
      "--------- -------- -------- -------- -------- -------- -------- \n";
  EXPECT_EQ(Run({"cluster", "Utilization", kW16[0], kW16[1]}, hour16_),
            Banner(title, "CPU Minutes") + head +
                "   anchor       59        0        0    11131      329    11520 \n");
  EXPECT_EQ(Run({"cluster", "Utilization", kW16[0], kW16[1], "-t", "seconds"}, hour16_),
            Banner(title, "CPU Seconds") + head +
                "   anchor     3564        0        0   667881    19755   691200 \n");
  EXPECT_EQ(Run({"cluster", "Utilization", kW16[0], kW16[1], "-t", "hours"}, hour16_),
            Banner(title, "CPU Hours") + head +
                "   anchor        1        0        0      186        5      192 \n");
  EXPECT_EQ(Run({"cluster", "Utilization", kW16[0], kW16[1], "-t", "percent"}, hour16_),
            Banner(title, "Percentage of Total") + head +
                "   anchor    0.52%    0.00%    0.00%   96.63%    2.86%  100.00% \n");
  EXPECT_EQ(Run({"cluster", "Utilization", kW16[0], kW16[1], "--tres=gres/gpu", "-t", "seconds"}, hour16_),
            Banner(title, "TRES Seconds") +
                "  Cluster      TRES Name Allocate     Down PLND Dow     Idle  Planned Reported \n"
                "--------- -------------- -------- -------- -------- -------- -------- -------- \n"
                "   anchor       gres/gpu        3        0        0   115197        0   115200 \n");
  // sreport -P cluster Utilization start=2026-12-02T15:00 end=2026-12-02T16:00 (header form)
  EXPECT_EQ(Run({"-P", "cluster", "Utilization", kW16[0], kW16[1], "-t", "seconds"}, hour16_),
            Banner(title, "CPU Seconds") +
                "Cluster|Allocated|Down|PLND Down|Idle|Planned|Reported\n"
                "anchor|3564|0|0|667881|19755|691200\n");
}

TEST_F(SreportTest, AccountUtilizationByUserParsable) {
  EXPECT_EQ(Run({"-P", "cluster", "AccountUtilizationByUser", kW16[0], kW16[1], "-t", "seconds"}, hour16_),
            Banner("Cluster/Account/User Utilization 2026-12-02T16:00:00 - 2026-12-02T16:59:59 (3600 secs)",
                   "CPU Seconds") +
                "Cluster|Account|Login|Proper Name|Used|Energy\n"
                "anchor|root|||3564|0\n"
                "anchor|root|root|root|3564|0\n");
}

TEST_F(SreportTest, TopUsage) {
  const std::string title = "Top 10 Users 2026-12-02T16:00:00 - 2026-12-02T16:59:59 (3600 secs)";
  EXPECT_EQ(Run({"-P", "user", "TopUsage", kW16[0], kW16[1], "-t", "seconds"}, hour16_),
            Banner(title, "CPU Seconds") +
                "Cluster|Login|Proper Name|Account|Used|Energy\n"
                "anchor|root|root|root|3564|0\n");
  EXPECT_EQ(Run({"-P", "user", "TopUsage", kW16[0], kW16[1], "-t", "percent"}, hour16_),
            Banner(title, "Percentage of Total") +
                "Cluster|Login|Proper Name|Account|Used|Energy\n"
                "anchor|root|root|root|0.52%|0.00%\n");
  EXPECT_EQ(Run({"user", "TopUsage", kW16[0], kW16[1], "--tres=gres/gpu"}, hour16_),
            Banner(title, "TRES Minutes") +
                "  Cluster     Login     Proper Name         Account      TRES Name     Used \n"
                "--------- --------- --------------- --------------- -------------- -------- \n"
                "   anchor      root            root            root       gres/gpu        0 \n");
  // sreport user TopUsage start=2026-12-02T15:00 end=2026-12-02T16:00
  std::vector<JobRecord> hour15 = {Job(10, "root", 5, k15, k15, k15 + 283 * 60 / 5),
                                   Job(11, "ml", 1, k15, k15, k15 + 5 * 60)};
  EXPECT_EQ(Run({"user", "TopUsage", "start=2026-12-02T15:00", "end=2026-12-02T16:00"}, hour15),
            Banner("Top 10 Users 2026-12-02T15:00:00 - 2026-12-02T15:59:59 (3600 secs)", "CPU Minutes") +
                "  Cluster     Login     Proper Name         Account     Used   Energy \n"
                "--------- --------- --------------- --------------- -------- -------- \n"
                "   anchor      root            root            root      283        0 \n"
                "   anchor      root            root              ml        5        0 \n");
  // sreport -n -P user TopUsage ... -t hours
  EXPECT_EQ(Run({"-n", "-P", "user", "TopUsage", "start=2026-12-02T15:00", "end=2026-12-02T16:00", "-t", "hours"}, hour15),
            "anchor|root|root|root|5|0\nanchor|root|root|ml|0|0\n");
}

TEST_F(SreportTest, OverRequest) {
  std::vector<JobRecord> jobs;
  auto add = [&](int64_t id, std::string acct, int64_t req_mb, int64_t rss_kb) {
    JobRecord j = Job(id, std::move(acct), 1, kNow - 7200, kNow - 7200, kNow - 3600);
    j.req_mem_mb = req_mb;
    j.max_rss_kb = rss_kb;
    jobs.push_back(j);
  };
  add(1, "ml", 4096, 512 * 1024);     // 8x: over
  add(2, "ml", 1024, 512 * 1024);     // 2x: fine
  add(3, "bio", 10240, 1024 * 1024);  // 10x: over
  add(4, "bio", 1000, -1);            // never sampled: ignored
  EXPECT_EQ(Run({"-P", "-n", "job", "OverRequest", "days=7"}, jobs),
            "bio|1|1|10G|1G|10.0x|9.00\n"
            "ml|2|1|4G|512M|8.0x|3.50\n");
  const std::string text = Run({"job", "OverRequest", "days=1"}, jobs);
  EXPECT_NE(text.find("Jobs whose ReqMem exceeds 3x their MaxRSS, by account"), std::string::npos) << text;
}

// sreport cluster Utilization start=2026-12-02T15:54 end=2026-12-02T16:10
// sreport cluster Utilization start=2026-12-02T15:54:30 end=now   (at 17:16)
TEST_F(SreportTest, WindowsSnapToHours) {
  auto req = ParseSreportArgs({"cluster", "Utilization", "start=2026-12-02T15:54", "end=2026-12-02T16:10"});
  ASSERT_TRUE(req.ok());
  auto w = SreportWindow(*req, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->first, k16);
  EXPECT_EQ(w->second, k17);
  req = ParseSreportArgs({"cluster", "Utilization", "start=2026-12-02T15:54:30", "end=now"});
  w = SreportWindow(*req, k17 + 16 * 60);
  EXPECT_EQ(w->first, k16);
  EXPECT_EQ(w->second, k17);
}

TEST_F(SreportTest, Errors) {
  EXPECT_FALSE(ParseSreportArgs({"cluster", "Bogus"}).ok());
  // sreport -t fortnight user TopUsage: warns, reports in minutes.
  auto t = ParseSreportArgs({"-t", "fortnight", "user", "TopUsage"});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->warning, "unknown time format fortnight");
  EXPECT_EQ(t->time_format, "minutes");
  // sreport cluster Bogus
  EXPECT_EQ(ParseSreportArgs({"cluster", "Bogus"}).status().message(),
            "Not valid report Bogus\nValid cluster reports are, \"AccountUtilizationByUser\", "
            "\"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and "
            "\"WCKeyUtilizationByUser\"");
  EXPECT_FALSE(ParseSreportArgs({"user", "TopUsage", "colour=red"}).ok());
}

}  // namespace
}  // namespace muster::render

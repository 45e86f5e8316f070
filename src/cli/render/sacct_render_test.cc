// Expected strings come from Slurm 22.05.8 with slurmdbd (TZ=UTC), jobs:
//   sbatch -J ok --wrap='sleep 2; echo hi'            (13183)
//   sbatch -J fail --wrap='sleep 1; exit 3'            (13184)
//   sbatch -J steps --mem=1G --wrap='srun -n1 sleep 1; srun -n1 true'   (13185)
//   sbatch -J gpu -p train --gres=gpu:1 --mem=1G -c 2 --wrap='sleep 3' (13186)
//   sbatch -J canc --wrap='sleep 300'; scancel 13187   (13187)
//   sbatch -J mem --mem=1G -c 2 --wrap='python3 ... 300 MB, 40 s busy'  (13188)
// and the sacct command named above each case.
#include <stdlib.h>
#include <time.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/args.h"
#include "cli/render/render.h"
#include "util/users.h"

namespace muster::render {
namespace {

// The requests come from command lines, as the commands make them.
using cli::ParseSacctArgs;

using store::JobRecord;
using store::StepRecord;

constexpr int64_t kT = 1796230484;  // 2026-12-02T16:54:44Z

class SacctTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
    auto job = [&](int64_t id, std::string name, std::string part, std::string state,
                   int code, int64_t dur, int ncpus, std::string tres, int64_t limit,
                   int64_t cpu_ms, int64_t mem_mb) {
      JobRecord j;
      j.job_id = id;
      j.name = name;
      j.user = "root";
      j.account = "root";
      j.partition = part;
      j.qos = "normal";
      j.submit_time = j.eligible_time = j.start_time = kT;
      j.end_time = kT + dur;
      j.time_limit_min = limit;
      j.state = state;
      j.exit_code = code;
      j.req_tres = j.alloc_tres = tres;
      j.node_list = "gpu01";
      j.nnodes = 1;
      j.ncpus = ncpus;
      j.req_mem_mb = mem_mb;
      j.work_dir = "/tmp/oracle";
      j.total_cpu_ms = cpu_ms;
      j.reason = "None";
      jobs_.push_back(j);
    };
    auto step = [&](int64_t id, std::string sid, std::string name, std::string state, int code,
                    int sig, int64_t start, int64_t end, int ncpus, std::string tres,
                    int64_t cpu_ms) {
      StepRecord s;
      s.job_id = id;
      s.step_id = sid;
      s.name = name;
      s.state = state;
      s.exit_code = code;
      s.exit_signal = sig;
      s.start_time = start;
      s.end_time = end;
      s.node_list = "gpu01";
      s.nnodes = 1;
      s.ntasks = 1;
      s.ncpus = ncpus;
      s.alloc_tres = tres;
      s.total_cpu_ms = cpu_ms;
      steps_.push_back(s);
    };
    job(13183, "ok", "short", "COMPLETED", 0, 2, 1, "billing=1,cpu=1,mem=1000M,node=1", 60, 3, 1000);
    job(13184, "fail", "short", "FAILED", 3, 1, 1, "billing=1,cpu=1,mem=1000M,node=1", 60, 3, 1000);
    job(13185, "steps", "short", "COMPLETED", 0, 2, 1, "billing=1,cpu=1,mem=1G,node=1", 60, 27, 1024);
    job(13186, "gpu", "train", "COMPLETED", 0, 3, 2, "billing=2,cpu=2,gres/gpu=1,mem=1G,node=1", 240, 3, 1024);
    job(13187, "canc", "short", "CANCELLED by 0", 0, 5, 1, "billing=1,cpu=1,mem=1000M,node=1", 60, 2, 1000);
    step(13183, "batch", "batch", "COMPLETED", 0, 0, kT, kT + 2, 1, "cpu=1,mem=1000M,node=1", 3);
    step(13184, "batch", "batch", "FAILED", 3, 0, kT, kT + 1, 1, "cpu=1,mem=1000M,node=1", 3);
    // Out of order on purpose: the renderer sorts batch, extern, 0, 1.
    step(13185, "1", "true", "COMPLETED", 0, 0, kT + 1, kT + 2, 1, "cpu=1,mem=1G,node=1", 1);
    step(13185, "batch", "batch", "COMPLETED", 0, 0, kT, kT + 2, 1, "cpu=1,mem=1G,node=1", 24);
    step(13185, "0", "sleep", "COMPLETED", 0, 0, kT, kT + 1, 1, "cpu=1,mem=1G,node=1", 1);
    step(13186, "batch", "batch", "COMPLETED", 0, 0, kT, kT + 3, 2, "cpu=2,gres/gpu=1,mem=1G,node=1", 3);
    step(13187, "batch", "batch", "CANCELLED", 0, 15, kT, kT + 5, 1, "cpu=1,mem=1000M,node=1", 2);
  }

  std::string Sacct(std::vector<std::string> args, int64_t now = kT + 600) {
    auto req = ParseSacctArgs(args);
    EXPECT_TRUE(req.ok()) << req.status().message();
    if (!req.ok()) return "";
    // Through JSON, as the CLI sends it.
    auto back = SacctRequestFromJson(ToJson(*req));
    EXPECT_TRUE(back.ok());
    auto out = RenderSacct(*back, util::SystemUserDb(), jobs_, steps_, now, 0, true);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : "";
  }

  std::vector<JobRecord> jobs_;
  std::vector<StepRecord> steps_;
};

constexpr const char* kAll =
    "JobID,JobIDRaw,JobName,User,Account,Partition,State,ExitCode,DerivedExitCode,Elapsed,ElapsedRaw,Submit,Start,End,Timelimit,NNodes,NCPUS,NodeList,ReqMem,ReqTRES,AllocTRES,MaxRSS,TotalCPU,CPUTime,Reason,Comment,WorkDir";
constexpr const char* kIds = "13183,13184,13185,13186,13187";

// sacct -P -j 13183,13184,13185,13186,13187 -o <all of kAll>
TEST_F(SacctTest, Parsable2AllFields) {
  EXPECT_EQ(Sacct({"-P", "-j", kIds, "-o", kAll}),
      "JobID|JobIDRaw|JobName|User|Account|Partition|State|ExitCode|DerivedExitCode|Elapsed|ElapsedRaw|Submit|Start|End|Timelimit|NNodes|NCPUS|NodeList|ReqMem|ReqTRES|AllocTRES|MaxRSS|TotalCPU|CPUTime|Reason|Comment|WorkDir\n"
      "13183|13183|ok|root|root|short|COMPLETED|0:0|0:0|00:00:02|2|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:46|01:00:00|1|1|gpu01|1000M|billing=1,cpu=1,mem=1000M,node=1|billing=1,cpu=1,mem=1000M,node=1||00:00.003|00:00:02|None||/tmp/oracle\n"
      "13183.batch|13183.batch|batch||root||COMPLETED|0:0||00:00:02|2|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:46||1|1|gpu01|||cpu=1,mem=1000M,node=1||00:00.003|00:00:02|||\n"
      "13184|13184|fail|root|root|short|FAILED|3:0|0:0|00:00:01|1|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:45|01:00:00|1|1|gpu01|1000M|billing=1,cpu=1,mem=1000M,node=1|billing=1,cpu=1,mem=1000M,node=1||00:00.003|00:00:01|None||/tmp/oracle\n"
      "13184.batch|13184.batch|batch||root||FAILED|3:0||00:00:01|1|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:45||1|1|gpu01|||cpu=1,mem=1000M,node=1||00:00.003|00:00:01|||\n"
      "13185|13185|steps|root|root|short|COMPLETED|0:0|0:0|00:00:02|2|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:46|01:00:00|1|1|gpu01|1G|billing=1,cpu=1,mem=1G,node=1|billing=1,cpu=1,mem=1G,node=1||00:00.027|00:00:02|None||/tmp/oracle\n"
      "13185.batch|13185.batch|batch||root||COMPLETED|0:0||00:00:02|2|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:46||1|1|gpu01|||cpu=1,mem=1G,node=1||00:00.024|00:00:02|||\n"
      "13185.0|13185.0|sleep||root||COMPLETED|0:0||00:00:01|1|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:45||1|1|gpu01|||cpu=1,mem=1G,node=1||00:00.001|00:00:01|||\n"
      "13185.1|13185.1|true||root||COMPLETED|0:0||00:00:01|1|2026-12-02T16:54:45|2026-12-02T16:54:45|2026-12-02T16:54:46||1|1|gpu01|||cpu=1,mem=1G,node=1||00:00.001|00:00:01|||\n"
      "13186|13186|gpu|root|root|train|COMPLETED|0:0|0:0|00:00:03|3|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:47|04:00:00|1|2|gpu01|1G|billing=2,cpu=2,gres/gpu=1,mem=1G,node=1|billing=2,cpu=2,gres/gpu=1,mem=1G,node=1||00:00.003|00:00:06|None||/tmp/oracle\n"
      "13186.batch|13186.batch|batch||root||COMPLETED|0:0||00:00:03|3|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:47||1|2|gpu01|||cpu=2,gres/gpu=1,mem=1G,node=1||00:00.003|00:00:06|||\n"
      "13187|13187|canc|root|root|short|CANCELLED by 0|0:0|0:0|00:00:05|5|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:49|01:00:00|1|1|gpu01|1000M|billing=1,cpu=1,mem=1000M,node=1|billing=1,cpu=1,mem=1000M,node=1||00:00.002|00:00:05|None||/tmp/oracle\n"
      "13187.batch|13187.batch|batch||root||CANCELLED|0:15||00:00:05|5|2026-12-02T16:54:44|2026-12-02T16:54:44|2026-12-02T16:54:49||1|1|gpu01|||cpu=1,mem=1000M,node=1||00:00.002|00:00:05|||\n");
}

// sacct -j 13183,13184,13185,13186,13187 -o <all of kAll>
TEST_F(SacctTest, FixedWidthAllFields) {
  EXPECT_EQ(Sacct({"-j", kIds, "-o", kAll}),
      "JobID        JobIDRaw        JobName      User    Account  Partition      State ExitCode DerivedExitCode    Elapsed ElapsedRaw              Submit               Start                 End  Timelimit   NNodes      NCPUS        NodeList     ReqMem    ReqTRES  AllocTRES     MaxRSS   TotalCPU    CPUTime                 Reason        Comment              WorkDir \n"
      "------------ ------------ ---------- --------- ---------- ---------- ---------- -------- --------------- ---------- ---------- ------------------- ------------------- ------------------- ---------- -------- ---------- --------------- ---------- ---------- ---------- ---------- ---------- ---------- ---------------------- -------------- -------------------- \n"
      "13183        13183                ok      root       root      short  COMPLETED      0:0             0:0   00:00:02          2 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:46   01:00:00        1          1           gpu01      1000M billing=1+ billing=1+             00:00.003   00:00:02                   None                         /tmp/oracle \n"
      "13183.batch  13183.batch       batch                 root             COMPLETED      0:0                   00:00:02          2 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:46                   1          1           gpu01                       cpu=1,mem+             00:00.003   00:00:02                                                            \n"
      "13184        13184              fail      root       root      short     FAILED      3:0             0:0   00:00:01          1 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:45   01:00:00        1          1           gpu01      1000M billing=1+ billing=1+             00:00.003   00:00:01                   None                         /tmp/oracle \n"
      "13184.batch  13184.batch       batch                 root                FAILED      3:0                   00:00:01          1 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:45                   1          1           gpu01                       cpu=1,mem+             00:00.003   00:00:01                                                            \n"
      "13185        13185             steps      root       root      short  COMPLETED      0:0             0:0   00:00:02          2 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:46   01:00:00        1          1           gpu01         1G billing=1+ billing=1+             00:00.027   00:00:02                   None                         /tmp/oracle \n"
      "13185.batch  13185.batch       batch                 root             COMPLETED      0:0                   00:00:02          2 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:46                   1          1           gpu01                       cpu=1,mem+             00:00.024   00:00:02                                                            \n"
      "13185.0      13185.0           sleep                 root             COMPLETED      0:0                   00:00:01          1 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:45                   1          1           gpu01                       cpu=1,mem+             00:00.001   00:00:01                                                            \n"
      "13185.1      13185.1            true                 root             COMPLETED      0:0                   00:00:01          1 2026-12-02T16:54:45 2026-12-02T16:54:45 2026-12-02T16:54:46                   1          1           gpu01                       cpu=1,mem+             00:00.001   00:00:01                                                            \n"
      "13186        13186               gpu      root       root      train  COMPLETED      0:0             0:0   00:00:03          3 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:47   04:00:00        1          2           gpu01         1G billing=2+ billing=2+             00:00.003   00:00:06                   None                         /tmp/oracle \n"
      "13186.batch  13186.batch       batch                 root             COMPLETED      0:0                   00:00:03          3 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:47                   1          2           gpu01                       cpu=2,gre+             00:00.003   00:00:06                                                            \n"
      "13187        13187              canc      root       root      short CANCELLED+      0:0             0:0   00:00:05          5 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:49   01:00:00        1          1           gpu01      1000M billing=1+ billing=1+             00:00.002   00:00:05                   None                         /tmp/oracle \n"
      "13187.batch  13187.batch       batch                 root             CANCELLED     0:15                   00:00:05          5 2026-12-02T16:54:44 2026-12-02T16:54:44 2026-12-02T16:54:49                   1          1           gpu01                       cpu=1,mem+             00:00.002   00:00:05                                                            \n");
}

// sacct -p -X -j ... -o JobID,State
TEST_F(SacctTest, ParsableTrailingBar) {
  EXPECT_EQ(Sacct({"-p", "-X", "-j", kIds, "-o", "JobID,State"}),
      "JobID|State|\n"
      "13183|COMPLETED|\n"
      "13184|FAILED|\n"
      "13185|COMPLETED|\n"
      "13186|COMPLETED|\n"
      "13187|CANCELLED by 0|\n");
}

// sacct -n -X -j ...   (the default field list)
TEST_F(SacctTest, DefaultFormatNoHeaderAllocations) {
  EXPECT_EQ(Sacct({"-n", "-X", "-j", kIds}),
      "13183                ok      short       root          1  COMPLETED      0:0 \n"
      "13184              fail      short       root          1     FAILED      3:0 \n"
      "13185             steps      short       root          1  COMPLETED      0:0 \n"
      "13186               gpu      train       root          2  COMPLETED      0:0 \n"
      "13187              canc      short       root          1 CANCELLED+      0:0 \n");
}

// A width is at most 100000, as squeue's and sinfo's: musterd renders
// sacct, and pads every row to it (atoi once read any number of digits).
TEST_F(SacctTest, WidthsAreBounded) {
  const std::string out = Sacct({"-j", "13185", "-X", "-n", "-o", "JobID%99999999999999999999"});
  EXPECT_EQ(out.size(), 100002u);  // the column, its separating blank, the newline
  EXPECT_EQ(out.substr(out.size() - 7), "13185 \n");
}

// sacct -j 13185 -o JobID%20,State%5,JobName%-12
TEST_F(SacctTest, ExplicitWidths) {
  EXPECT_EQ(Sacct({"-j", "13185", "-o", "JobID%20,State%5,JobName%-12"}),
      "               JobID State JobName      \n"
      "-------------------- ----- ------------ \n"
      "               13185 COMP+ steps        \n"
      "         13185.batch COMP+ batch        \n"
      "             13185.0 COMP+ sleep        \n"
      "             13185.1 COMP+ true         \n");
}

// sacct -X -s CA,F -o JobID,State -j ...
TEST_F(SacctTest, StateFilter) {
  EXPECT_EQ(Sacct({"-X", "-s", "CA,F", "-o", "JobID,State", "-j", kIds}),
            "JobID             State \n"
            "------------ ---------- \n"
            "13184            FAILED \n"
            "13187        CANCELLED+ \n");
}

// sacct -n -j 13185.batch -o JobID ; with -X only the job row.
TEST_F(SacctTest, StepSelection) {
  // sacct -n -j 13185.batch -o JobID (oracle): the step alone.
  EXPECT_EQ(Sacct({"-n", "-j", "13185.batch", "-o", "JobID"}), "13185.batch  \n");
  EXPECT_EQ(Sacct({"-nX", "-j", "13185.batch", "-o", "JobID"}), "13185        \n");
  EXPECT_EQ(Sacct({"-n", "-j", "99999999", "-o", "JobID"}), "");
}

// sacct -X -n -s CD -S 16:54:46 -o JobID  (with -s and no -E the window is
// the instant -S: jobs running then). sacct -X -n -s CD -S 16:54 -> nothing.
// sacct -X -n -S 2026-12-02T16:54 -E 2026-12-02T16:54:44 -> nothing
// (eligible must be before -E).
TEST_F(SacctTest, TimeWindows) {
  EXPECT_EQ(Sacct({"-X", "-n", "-s", "CD", "-S", "16:54:46", "-o", "JobID"}),
            "13183        \n13185        \n13186        \n");
  EXPECT_EQ(Sacct({"-X", "-n", "-s", "CD", "-S", "16:54", "-o", "JobID"}), "");
  EXPECT_EQ(Sacct({"-X", "-n", "-S", "2026-12-02T16:54", "-E", "2026-12-02T16:54:44", "-o", "JobID"}), "");
  EXPECT_EQ(Sacct({"-X", "-n", "-S", "now-1hour", "-o", "JobID"}),
            "13183        \n13184        \n13185        \n13186        \n13187        \n");
  // Default window: midnight today. A day later nothing shows.
  EXPECT_EQ(Sacct({"-X", "-n", "-o", "JobID"}, kT + 86400), "");
  EXPECT_EQ(Sacct({"-X", "-n", "-S", "2026-12-01", "-o", "JobID"}, kT + 86400).size(), 5 * 14u);
}

TEST_F(SacctTest, SlurmTimeForms) {
  EXPECT_EQ(*ParseSlurmTime("now-1day", kT), kT - 86400);
  EXPECT_EQ(*ParseSlurmTime("now+30minutes", kT), kT + 1800);
  EXPECT_EQ(*ParseSlurmTime("2026-12-01", kT), 1796083200);
  EXPECT_EQ(*ParseSlurmTime("2026-12-01T10:00", kT), 1796083200 + 36000);
  EXPECT_EQ(*ParseSlurmTime("2026-12-01T10:00:05", kT), 1796083200 + 36005);
  EXPECT_EQ(*ParseSlurmTime("12/01", kT), 1796083200);
  EXPECT_EQ(*ParseSlurmTime("midnight", kT), 1796169600);
  EXPECT_FALSE(ParseSlurmTime("yesterdayish", kT).ok());
  // Found by slurm_time_fuzz: the offset overflowed (signed overflow, UB).
  EXPECT_FALSE(ParseSlurmTime("now+1777777277777777777777", kT).ok());
  EXPECT_FALSE(ParseSlurmTime("now-6000weeks", kT).ok());
  EXPECT_EQ(*ParseSlurmTime("now-520weeks", kT), kT - 520 * 7 * 86400);
  // Slurm's sacct refuses abbreviated units (checked on the oracle).
  EXPECT_EQ(*ParseSlurmTime("now-1hour", kT), kT - 3600);
  EXPECT_FALSE(ParseSlurmTime("now-1h", kT).ok());
  EXPECT_FALSE(ParseSlurmTime("now-2min", kT).ok());
}

// A normal user sees only their jobs unless -a, -u or -j.
TEST_F(SacctTest, Visibility) {
  jobs_[1].uid = 1000;
  auto req = ParseSacctArgs({"-X", "-n", "-P", "-o", "JobID", "-S", "now-1hour"});
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*RenderSacct(*req, util::SystemUserDb(), jobs_, steps_, kT + 60, 1000, false),
            "13184\n");
  req = ParseSacctArgs({"-X", "-n", "-P", "-o", "JobID", "-S", "now-1hour", "-a"});
  EXPECT_EQ(
      RenderSacct(*req, util::SystemUserDb(), jobs_, steps_, kT + 60, 1000, false)->size(),
      30u);
  EXPECT_EQ(SacctQuery(*req, util::SystemUserDb(), kT, 1000, false).uids.size(), 0u);
}

// -p and -P together: the last one given wins (the oracle: -p -P ends
// lines without '|', -P -p with one), never both separators.
TEST_F(SacctTest, LastOfParsableOptionsWins) {
  jobs_[1].uid = 1000;
  auto req = ParseSacctArgs({"-X", "-n", "-p", "-P", "-o", "JobID,State", "-S", "now-1hour"});
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*RenderSacct(*req, util::SystemUserDb(), jobs_, steps_, kT + 60, 1000, false),
            "13184|FAILED\n");
  req = ParseSacctArgs({"-X", "-n", "-P", "-p", "-o", "JobID,State", "-S", "now-1hour"});
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*RenderSacct(*req, util::SystemUserDb(), jobs_, steps_, kT + 60, 1000, false),
            "13184|FAILED|\n");
}

// -u names a user that exists, by name or uid, or sacct fails (as Slurm's).
TEST_F(SacctTest, UnknownUsersAreRefused) {
  auto req = ParseSacctArgs({"-X", "-n", "-u", "root,no-such-user-x", "-o", "JobID"});
  ASSERT_TRUE(req.ok());
  auto out = RenderSacct(*req, util::SystemUserDb(), jobs_, steps_, kT + 60, 0, true);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "sacct: error: Invalid user id: no-such-user-x");
  req = ParseSacctArgs({"-X", "-n", "-u", "4000000000"});
  EXPECT_EQ(CheckSacctUsers(*req, util::SystemUserDb()).message(),
            "sacct: error: Invalid user id: 4000000000");
  req = ParseSacctArgs({"-X", "-n", "-u", "root,0"});
  EXPECT_TRUE(CheckSacctUsers(*req, util::SystemUserDb()).ok());
}

// The tools' invocations (COMPAT.md): clustered flags, --job prefix, %20.
TEST_F(SacctTest, ToolInvocations) {
  auto r = ParseSacctArgs({"-nu", "root", "-o", "Account%20"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->noheader);
  EXPECT_EQ(r->users, std::vector<std::string>{"root"});
  // sacct -X --noheader --format=jobid,state%20 --job 13187
  EXPECT_EQ(Sacct({"-X", "--noheader", "--format=jobid,state%20", "--job", "13187"}),
            "13187              CANCELLED by 0 \n");
  // sacct -X --parsable2 --clusters all --noheader --format=JobIdRaw,State --starttime ... --endtime now --name canc
  EXPECT_EQ(Sacct({"-X", "--parsable2", "--clusters", "all", "--noheader", "--format=JobIdRaw,State",
                   "--starttime", "2026-12-02T16:00", "--endtime", "now", "--name", "canc"}),
            "13187|CANCELLED by 0\n");
  EXPECT_EQ(Sacct({"-XPn", "-o", "JobID", "-j13184"}), "13184\n");
}

// sacct -o Bogus
TEST_F(SacctTest, Errors) {
  auto r = ParseSacctArgs({"-o", "Bogus"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "sacct: error: Invalid field requested: \"Bogus\"");
  // sacct -S bogus ; sacct -s XX ; sacct -j abc   (each exits 1)
  EXPECT_EQ(ParseSacctArgs({"-S", "bogus"}).status().message(),
            "Invalid time specification (pos=0): bogus");
  EXPECT_EQ(ParseSacctArgs({"-s", "XX"}).status().message(),
            "sacct: fatal: unrecognized job state value 'XX'");
  EXPECT_EQ(ParseSacctArgs({"-j", "abc"}).status().message(),
            "sacct: fatal: Bad job/step specified: abc");
  // sacct -j ; sacct --jobs
  EXPECT_EQ(ParseSacctArgs({"-j"}).status().message(), "sacct: option requires an argument -- 'j'");
  EXPECT_EQ(ParseSacctArgs({"--jobs"}).status().message(), "sacct: option '--jobs' requires an argument");
  EXPECT_EQ(ParseSacctArgs({"--bogus"}).status().message(),
            "sacct: unrecognized option '--bogus'");
}

// sacct -P -j 13188 -o JobID,MaxRSS,TotalCPU,CPUTime
TEST_F(SacctTest, MaxRssAndCpu) {
  JobRecord j = jobs_[0];
  j.job_id = 13188;
  j.ncpus = 2;
  j.end_time = kT + 40;
  j.total_cpu_ms = 38902;
  StepRecord s = steps_[0];
  s.job_id = 13188;
  s.ncpus = 2;
  s.end_time = kT + 40;
  s.max_rss_kb = 322132;
  s.total_cpu_ms = 38902;
  auto req = ParseSacctArgs({"-P", "-j", "13188", "-o", "JobID,MaxRSS,TotalCPU,CPUTime"});
  EXPECT_EQ(*RenderSacct(*req, util::SystemUserDb(), {j}, {s}, kT + 100, 0, true),
            "JobID|MaxRSS|TotalCPU|CPUTime\n"
            "13188||00:38.902|00:01:20\n"
            "13188.batch|322132K|00:38.902|00:01:20\n");
  EXPECT_EQ(SacctKiloBytes(1048576), "1G");
  EXPECT_EQ(SacctCpuTime(3723000), "01:02:03");
}

// sacct -l -j 13186 ; sacct -l -j 13186 -P
TEST_F(SacctTest, LongView) {
  EXPECT_EQ(Sacct({"-l", "-j", "13186"}),
            "JobID        JobIDRaw        JobName  Partition  MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode MaxRSSTask     AveRSS MaxPages MaxPagesNode   MaxPagesTask   AvePages     MinCPU MinCPUNode MinCPUTask     AveCPU   NTasks  AllocCPUS    Elapsed      State ExitCode AveCPUFreq ReqCPUFreqMin ReqCPUFreqMax ReqCPUFreqGov     ReqMem ConsumedEnergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTask    AveDiskRead MaxDiskWrite MaxDiskWriteNode MaxDiskWriteTask   AveDiskWrite    ReqTRES  AllocTRES TRESUsageInAve TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode TRESUsageInMinTask TRESUsageInTot TRESUsageOutMax TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutAve TRESUsageOutTot \n"
            "------------ ------------ ---------- ---------- ---------- -------------- -------------- ---------- ---------- ---------- ---------- ---------- -------- ------------ -------------- ---------- ---------- ---------- ---------- ---------- -------- ---------- ---------- ---------- -------- ---------- ------------- ------------- ------------- ---------- -------------- ------------ --------------- --------------- -------------- ------------ ---------------- ---------------- -------------- ---------- ---------- -------------- -------------- ------------------ ------------------ -------------- ------------------ ------------------ -------------- --------------- ------------------- ------------------- --------------- --------------- \n"
            "13186        13186               gpu      train                                                                                                                                                                                                               2   00:00:03  COMPLETED      0:0                  Unknown       Unknown       Unknown         1G                                                                                                                                          billing=2+ billing=2+                                                                                                                                                                                                                                 \n"
            "13186.batch  13186.batch       batch                                                                                                                                                                                                               1          2   00:00:03  COMPLETED      0:0          0             0             0             0                         0                                                                                                                                      cpu=2,gre+       energy=0                                                                                                                 energy=0                                                                energy=0        energy=0 \n");
  EXPECT_EQ(Sacct({"-l", "-j", "13186", "-P"}),
            "JobID|JobIDRaw|JobName|Partition|MaxVMSize|MaxVMSizeNode|MaxVMSizeTask|AveVMSize|MaxRSS|MaxRSSNode|MaxRSSTask|AveRSS|MaxPages|MaxPagesNode|MaxPagesTask|AvePages|MinCPU|MinCPUNode|MinCPUTask|AveCPU|NTasks|AllocCPUS|Elapsed|State|ExitCode|AveCPUFreq|ReqCPUFreqMin|ReqCPUFreqMax|ReqCPUFreqGov|ReqMem|ConsumedEnergy|MaxDiskRead|MaxDiskReadNode|MaxDiskReadTask|AveDiskRead|MaxDiskWrite|MaxDiskWriteNode|MaxDiskWriteTask|AveDiskWrite|ReqTRES|AllocTRES|TRESUsageInAve|TRESUsageInMax|TRESUsageInMaxNode|TRESUsageInMaxTask|TRESUsageInMin|TRESUsageInMinNode|TRESUsageInMinTask|TRESUsageInTot|TRESUsageOutMax|TRESUsageOutMaxNode|TRESUsageOutMaxTask|TRESUsageOutAve|TRESUsageOutTot\n"
            "13186|13186|gpu|train||||||||||||||||||2|00:00:03|COMPLETED|0:0||Unknown|Unknown|Unknown|1G||||||||||billing=2,cpu=2,gres/gpu=1,mem=1G,node=1|billing=2,cpu=2,gres/gpu=1,mem=1G,node=1|||||||||||||\n"
            "13186.batch|13186.batch|batch||||||||||||||||||1|2|00:00:03|COMPLETED|0:0|0|0|0|0||0||||||||||cpu=2,gres/gpu=1,mem=1G,node=1|energy=0|||||||energy=0||||energy=0|energy=0\n");
}

TEST_F(SacctTest, JsonShape) {
  auto req = ParseSacctArgs({"--json", "-j", "13185"});
  auto out = RenderSacct(*req, util::SystemUserDb(), jobs_, steps_, kT + 60, 0, true);
  ASSERT_TRUE(out.ok());
  auto j = nlohmann::json::parse(*out);
  ASSERT_EQ(j["jobs"].size(), 1u);
  EXPECT_EQ(j["jobs"][0]["job_id"], 13185);
  EXPECT_EQ(j["jobs"][0]["state"]["current"], "COMPLETED");
  EXPECT_EQ(j["jobs"][0]["steps"].size(), 3u);
  EXPECT_EQ(j["jobs"][0]["steps"][0]["step"]["id"], "batch");
  EXPECT_EQ(j["meta"]["Slurm"]["release"], "22.05.8");
}

// ---- job arrays and requeued runs ----
//
// sbatch --array=1,3,5-7%2 --wrap 'sleep 15' was 14491 on the oracle (kT +
// 7602 = 19:01:26); tasks 1 and 3 started at once as raw ids 14493 and
// 14494, 5 and 6 later as 14500 and 14501, and 7, last, kept 14491.
// sbatch --wrap 'sleep 100' was 14504: scontrol requeue at 19:02:35 while it
// ran, again at 19:06:10 after it restarted, then scancel while pending.
class SacctRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  static JobRecord Job(int64_t raw, int64_t task, std::string state, int64_t start,
                       int64_t end) {
    JobRecord j;
    j.job_id = raw;
    j.array_job_id = task == -2 ? 0 : 14491;
    j.array_task_id = task < 0 ? -1 : task;
    j.array_max_running = task == -2 ? 0 : 2;
    j.name = "wrap";
    j.user = "root";
    j.account = "root";
    j.partition = "short";
    j.ncpus = 1;
    j.nnodes = 1;
    j.submit_time = j.eligible_time = kT + 7602;
    j.start_time = start;
    j.end_time = end;
    j.state = std::move(state);
    return j;
  }
  static StepRecord Batch(const JobRecord& j, int run = -1) {
    StepRecord s;
    s.job_id = j.job_id;
    s.run = run;
    s.step_id = "batch";
    s.name = "batch";
    s.state = j.state == "PENDING" ? "RUNNING" : j.state;
    s.start_time = j.start_time;
    s.end_time = j.end_time;
    s.ncpus = 1;
    return s;
  }
  std::string Sacct(std::vector<std::string> args) {
    auto req = ParseSacctArgs(args);
    EXPECT_TRUE(req.ok()) << req.status().message();
    if (!req.ok()) return "";
    auto back = SacctRequestFromJson(ToJson(*req));
    EXPECT_TRUE(back.ok());
    auto out = RenderSacct(*back, util::SystemUserDb(), jobs_, steps_, kT + 8000, 0, true);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : "";
  }
  // 14491 while tasks 1 and 3 ran, in the store's arbitrary input order.
  void ArrayRunning() {
    JobRecord pending = Job(14491, -1, "PENDING", 0, 0);
    pending.array_pending = "5-7";
    jobs_ = {pending, Job(14494, 3, "RUNNING", kT + 7603, 0), Job(14493, 1, "RUNNING", kT + 7603, 0)};
    for (const auto& j : jobs_)
      if (j.start_time > 0) steps_.push_back(Batch(j));
  }
  // 14491 after all its tasks ended.
  void ArrayDone() {
    jobs_ = {Job(14491, 7, "COMPLETED", kT + 7635, kT + 7650),
             Job(14501, 6, "COMPLETED", kT + 7619, kT + 7634),
             Job(14500, 5, "COMPLETED", kT + 7619, kT + 7634),
             Job(14494, 3, "COMPLETED", kT + 7603, kT + 7618),
             Job(14493, 1, "COMPLETED", kT + 7603, kT + 7618)};
    for (const auto& j : jobs_) steps_.push_back(Batch(j));
  }
  std::vector<JobRecord> jobs_;
  std::vector<StepRecord> steps_;
};

// sacct -j 14491 ; sacct -j 14491 -X ; sacct -j 14491 -o JobID,JobIDRaw,State ;
// sacct -j 14491 -o JobID%30,JobIDRaw,State -X   (tasks 1 and 3 running)
TEST_F(SacctRecordsTest, ArrayWhileTasksPending) {
  ArrayRunning();
  EXPECT_EQ(Sacct({"-j", "14491"}),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "14491_1            wrap      short       root          1    RUNNING      0:0 \n"
            "14491_1.bat+      batch                  root          1    RUNNING      0:0 \n"
            "14491_3            wrap      short       root          1    RUNNING      0:0 \n"
            "14491_3.bat+      batch                  root          1    RUNNING      0:0 \n"
            "14491_[5-7%+       wrap      short       root          1    PENDING      0:0 \n");
  EXPECT_EQ(Sacct({"-j", "14491", "-X"}),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "14491_1            wrap      short       root          1    RUNNING      0:0 \n"
            "14491_3            wrap      short       root          1    RUNNING      0:0 \n"
            "14491_[5-7%+       wrap      short       root          1    PENDING      0:0 \n");
  EXPECT_EQ(Sacct({"-j", "14491", "-o", "JobID,JobIDRaw,State"}),
            "JobID        JobIDRaw          State \n"
            "------------ ------------ ---------- \n"
            "14491_1      14493           RUNNING \n"
            "14491_1.bat+ 14493.batch     RUNNING \n"
            "14491_3      14494           RUNNING \n"
            "14491_3.bat+ 14494.batch     RUNNING \n"
            "14491_[5-7%+ 14491           PENDING \n");
  EXPECT_EQ(Sacct({"-j", "14491", "-o", "JobID%30,JobIDRaw,State", "-X"}),
            "                         JobID JobIDRaw          State \n"
            "------------------------------ ------------ ---------- \n"
            "                       14491_1 14493           RUNNING \n"
            "                       14491_3 14494           RUNNING \n"
            "                 14491_[5-7%2] 14491           PENDING \n");
  // A task still inside the pending part: sacct -j 14506_3 printed the
  // header only (14506_[3,5,...%1] pending).
  EXPECT_EQ(Sacct({"-n", "-j", "14491_5", "-o", "JobID"}), "");
}

// sacct -j <spec> -o JobID%20,JobIDRaw,State after 14491 ended.
TEST_F(SacctRecordsTest, ArraySelection) {
  ArrayDone();
  const std::vector<std::string> fmt = {"-o", "JobID%20,JobIDRaw,State"};
  auto sacct = [&](std::string j) {
    std::vector<std::string> args = fmt;
    args.push_back("-j");
    args.push_back(j);
    return Sacct(args);
  };
  const std::string head =
      "               JobID JobIDRaw          State \n"
      "-------------------- ------------ ---------- \n";
  EXPECT_EQ(sacct("14491"), head +
                                "             14491_1 14493         COMPLETED \n"
                                "       14491_1.batch 14493.batch   COMPLETED \n"
                                "             14491_3 14494         COMPLETED \n"
                                "       14491_3.batch 14494.batch   COMPLETED \n"
                                "             14491_5 14500         COMPLETED \n"
                                "       14491_5.batch 14500.batch   COMPLETED \n"
                                "             14491_6 14501         COMPLETED \n"
                                "       14491_6.batch 14501.batch   COMPLETED \n"
                                "             14491_7 14491         COMPLETED \n"
                                "       14491_7.batch 14491.batch   COMPLETED \n");
  EXPECT_EQ(sacct("14493"), head +
                                "             14491_1 14493         COMPLETED \n"
                                "       14491_1.batch 14493.batch   COMPLETED \n");
  EXPECT_EQ(sacct("14491_3"), head +
                                  "             14491_3 14494         COMPLETED \n"
                                  "       14491_3.batch 14494.batch   COMPLETED \n");
  EXPECT_EQ(sacct("14491_3.batch"), head + "       14491_3.batch 14494.batch   COMPLETED \n");
  EXPECT_EQ(sacct("14493.batch"), head + "       14491_1.batch 14493.batch   COMPLETED \n");
  EXPECT_EQ(sacct("14491.batch"), head +
                                      "       14491_1.batch 14493.batch   COMPLETED \n"
                                      "       14491_3.batch 14494.batch   COMPLETED \n"
                                      "       14491_5.batch 14500.batch   COMPLETED \n"
                                      "       14491_6.batch 14501.batch   COMPLETED \n"
                                      "       14491_7.batch 14491.batch   COMPLETED \n");
  // The task that kept the array's id, by index; a task that never existed.
  EXPECT_EQ(sacct("14491_7"), head +
                                  "             14491_7 14491         COMPLETED \n"
                                  "       14491_7.batch 14491.batch   COMPLETED \n");
  EXPECT_EQ(sacct("14491_9"), head);
  EXPECT_EQ(sacct("14500,14491_1"), head +
                                        "             14491_1 14493         COMPLETED \n"
                                        "       14491_1.batch 14493.batch   COMPLETED \n"
                                        "             14491_5 14500         COMPLETED \n"
                                        "       14491_5.batch 14500.batch   COMPLETED \n");
}

// sacct -j 14492,14491,14490 -X -o JobID%20,JobIDRaw,State: jobs around an
// array keep id order, the array's records sit at the array's id.
TEST_F(SacctRecordsTest, ArrayOrderAmongJobs) {
  ArrayDone();
  jobs_.push_back(Job(14492, -2, "CANCELLED by 0", kT + 7604, kT + 7610));
  jobs_.push_back(Job(14490, -2, "PENDING", 0, 0));
  EXPECT_EQ(Sacct({"-j", "14492,14491,14490", "-X", "-o", "JobID%20,JobIDRaw,State"}),
            "               JobID JobIDRaw          State \n"
            "-------------------- ------------ ---------- \n"
            "               14490 14490           PENDING \n"
            "             14491_1 14493         COMPLETED \n"
            "             14491_3 14494         COMPLETED \n"
            "             14491_5 14500         COMPLETED \n"
            "             14491_6 14501         COMPLETED \n"
            "             14491_7 14491         COMPLETED \n"
            "               14492 14492        CANCELLED+ \n");
}

// sacct -j 14491_[1-3] ; -j 14491_* ; -j 14491_ ; -j 14491_x (each exits 1)
TEST_F(SacctRecordsTest, ArrayElementErrors) {
  for (const char* bad : {"14491_[1-3]", "14491_[1,3]", "14491_*", "14491_", "14491_x"})
    EXPECT_EQ(ParseSacctArgs({"-j", bad}).status().message(),
              "sacct: fatal: Bad job array element specified: 14491")
        << bad;
}

// sacct -D -j 14504 -o JobID,JobIDRaw,State,Submit,Start,End,ExitCode and
// without -D, after two requeues and a cancel.
TEST_F(SacctRecordsTest, RequeuedRuns) {
  JobRecord run0 = Job(14504, -2, "REQUEUED", kT + 7669, kT + 7671);
  run0.submit_time = kT + 7668;
  JobRecord run1 = Job(14504, -2, "REQUEUED", kT + 7793, kT + 7886);
  run1.submit_time = kT + 7671;
  run1.restarts = 1;
  JobRecord run2 = Job(14504, -2, "CANCELLED by 0", kT + 7888, kT + 7888);
  run2.submit_time = kT + 7886;
  run2.restarts = 2;
  jobs_ = {run2, run0, run1};
  for (const JobRecord* j : {&run0, &run1}) {
    StepRecord b = Batch(*j, j->restarts);
    b.state = "CANCELLED";
    b.exit_signal = 15;
    steps_.push_back(b);
  }
  const char* fmt = "JobID,JobIDRaw,State,Submit,Start,End,ExitCode";
  const std::string head =
      "JobID        JobIDRaw          State              Submit               Start                 End ExitCode \n"
      "------------ ------------ ---------- ------------------- ------------------- ------------------- -------- \n";
  EXPECT_EQ(Sacct({"-D", "-j", "14504", "-o", fmt}),
            head +
                "14504        14504          REQUEUED 2026-12-02T19:02:32 2026-12-02T19:02:33 2026-12-02T19:02:35      0:0 \n"
                "14504.batch  14504.batch   CANCELLED 2026-12-02T19:02:33 2026-12-02T19:02:33 2026-12-02T19:02:35     0:15 \n"
                "14504        14504          REQUEUED 2026-12-02T19:02:35 2026-12-02T19:04:37 2026-12-02T19:06:10      0:0 \n"
                "14504.batch  14504.batch   CANCELLED 2026-12-02T19:04:37 2026-12-02T19:04:37 2026-12-02T19:06:10     0:15 \n"
                "14504        14504        CANCELLED+ 2026-12-02T19:06:10 2026-12-02T19:06:12 2026-12-02T19:06:12      0:0 \n");
  EXPECT_EQ(Sacct({"-j", "14504", "-o", fmt}),
            head +
                "14504        14504        CANCELLED+ 2026-12-02T19:06:10 2026-12-02T19:06:12 2026-12-02T19:06:12      0:0 \n");
  // sacct -j 14504 -D -X -P -o JobID,State
  EXPECT_EQ(Sacct({"--duplicates", "-j", "14504", "-XP", "-o", "JobID,State"}),
            "JobID|State\n14504|REQUEUED\n14504|REQUEUED\n14504|CANCELLED by 0\n");
  // The store's query asks for every run only with -D.
  auto req = ParseSacctArgs({"-D", "-j", "14504"});
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(SacctQuery(*req, util::SystemUserDb(), kT, 0, true).duplicates);
  EXPECT_FALSE(
      SacctQuery(*ParseSacctArgs({"-j", "14504"}), util::SystemUserDb(), kT, 0, true).duplicates);
}

// The oracle after scontrol update NodeName=cpu02 State=DOWN under job 16:
// sacct -D -P -j 16 -o JobID,State,ExitCode showed the killed run
// NODE_FAIL 0:0, its batch step CANCELLED with an empty ExitCode (the step
// never reported one; --json "PENDING" with a null return code), and the
// new run PENDING.
TEST_F(SacctRecordsTest, ARunEndedByANodeFailure) {
  JobRecord run0 = Job(16, -2, "NODE_FAIL", kT + 10, kT + 13);
  JobRecord run1 = Job(16, -2, "PENDING", 0, 0);
  run1.restarts = 1;
  jobs_ = {run0, run1};
  StepRecord b = Batch(run0, 0);
  b.state = "CANCELLED";
  b.exit_code = -1;
  steps_.push_back(b);
  EXPECT_EQ(Sacct({"-D", "-j", "16", "-P", "-o", "JobID,State,ExitCode"}),
            "JobID|State|ExitCode\n16|NODE_FAIL|0:0\n16.batch|CANCELLED|\n16|PENDING|0:0\n");
  const nlohmann::json job = SacctJobJson(run0, {&steps_[0]}, kT + 20);
  EXPECT_EQ(job["steps"][0]["exit_code"],
            (nlohmann::json{{"status", "PENDING"}, {"return_code", nullptr}}));
}

}  // namespace
}  // namespace muster::render

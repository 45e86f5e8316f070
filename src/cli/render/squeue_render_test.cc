// squeue rendering and argument parsing against Slurm 22.05 outputs.
//
// Oracle: a Slurm 22.05.8 cluster "anchor" (partitions short (default,
// DefaultTime=1:00:00) and train (DefaultTime=4:00:00); gpu[01-04] with 32
// CPUs, 64000 MB and Gres=gpu:h100:8, cpu[01-02]; DefMemPerCPU=1000; TZ=UTC),
// jobs submitted as root from /tmp/sqo at 2026-12-02T15:44:58 with
//   1 sbatch --wrap 'sleep 300' -J test
//   2 sbatch --wrap 'sleep 300' -J held -H
//   3 sbatch --wrap 'sleep 300' -J big -N 6 -p train
//   4 sbatch --wrap 'sleep 300' -J gpujob --gres=gpu:2 -p train -t 30
//   5 sbatch --wrap 'sleep 300' -J averyveryverylongjobname -n 4 --mem-per-cpu=500
//   6 sbatch --wrap 'sleep 5' -J quick
//   7 sbatch --wrap 'sleep 300' -J twonode -N 2 --ntasks-per-node=2
// and started at 15:44:59. Each expectation names the command it came from.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cli/render/format_util.h"
#include "cli/args.h"
#include "cli/render/render.h"
#include "util/strings.h"
#include "util/hostlist.h"
#include "util/users.h"

namespace muster::render {
namespace {

// The requests come from command lines, as the commands make them.
using cli::ParseSqueueArgs;

using core::Job;
using core::JobState;
using core::PendingReason;

class UtcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};
[[maybe_unused]] ::testing::Environment* const kUtc =
    ::testing::AddGlobalTestEnvironment(new UtcEnvironment);

constexpr int64_t kSubmit = 1796226298;  // 2026-12-02T15:44:58Z
constexpr int64_t kStart = kSubmit + 1;

// Builds jobs as the oracle's sbatch calls made them.
class JobBuilder {
 public:
  explicit JobBuilder(core::JobId id) {
    job_.id = id;
    job_.req.name = "wrap";
    job_.req.uid = 0;
    job_.req.gid = 0;
    job_.req.user_name = "root";
    job_.req.account = "root";
    job_.req.work_dir = "/tmp/sqo";
    job_.req.submit_host = "localhost";
    job_.req.command = "(null)";
    job_.req.requeue = true;
    job_.partition = "short";
    job_.submit_time = kSubmit;
    job_.eligible_time = kSubmit;
    job_.time_limit_s = 3600;
    job_.reason = PendingReason::kNone;
  }
  JobBuilder& Name(std::string n) { job_.req.name = std::move(n); return *this; }
  JobBuilder& Partition(std::string p) { job_.partition = std::move(p); return *this; }
  JobBuilder& Priority(uint32_t p) { job_.priority = p; return *this; }
  JobBuilder& Limit(int64_t s) { job_.time_limit_s = s; return *this; }
  JobBuilder& Pending(PendingReason r) {
    job_.state = JobState::kPending;
    job_.reason = r;
    return *this;
  }
  JobBuilder& Held() {
    job_.held = true;
    job_.eligible_time = 0;
    return Pending(PendingReason::kJobHeldUser);
  }
  // Running since kStart on `nodes`, `cpus` and `mem_mb` per node.
  JobBuilder& Running(const std::vector<std::string>& nodes, int cpus = 1, int64_t mem_mb = 1000,
                      int gpus = 0, int tasks = 1) {
    job_.state = JobState::kRunning;
    job_.start_time = kStart;
    for (const std::string& n : nodes) {
      core::NodeAlloc a;
      a.node = n;
      a.cpus = cpus;
      a.mem_mb = mem_mb;
      a.tasks = tasks;
      for (int g = 0; g < gpus; ++g) a.gpu_indices.push_back(g);
      job_.alloc.push_back(a);
    }
    job_.nodelist = util::CompressHostlist(nodes);
    job_.batch_host = nodes.front();
    return *this;
  }
  JobBuilder& Ended(JobState s, int64_t end) {
    job_.state = s;
    job_.end_time = end;
    return *this;
  }
  JobBuilder& Nodes(int n) { job_.req.min_nodes = n; job_.req.max_nodes = n; return *this; }
  JobBuilder& Tasks(int n) { job_.req.ntasks = n; return *this; }
  JobBuilder& TasksPerNode(int n) { job_.req.ntasks_per_node = n; return *this; }
  JobBuilder& MemPerCpu(int64_t mb) { job_.req.mem_per_cpu_mb = mb; return *this; }
  JobBuilder& Gpus(int64_t n) {
    job_.req.gres.push_back({"gpu", "", n, false});
    return *this;
  }
  JobBuilder& Comment(std::string c) { job_.req.comment = std::move(c); return *this; }
  JobBuilder& Exit(int code, int sig) {
    job_.exit_code = code;
    job_.exit_signal = sig;
    return *this;
  }
  JobBuilder& User(uint32_t uid, std::string name) {
    job_.req.uid = uid;
    job_.req.user_name = std::move(name);
    return *this;
  }
  Job Build() const { return job_; }

 private:
  Job job_;
};

JobBuilder MakeJob(core::JobId id) { return JobBuilder(id); }

config::Config AnchorConfig() {
  config::Config cfg;
  cfg.cluster_name = "anchor";
  cfg.def_mem_per_cpu_mb = 1000;
  for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"}) {
    core::NodeConfig nc;
    nc.name = n;
    nc.cpus = 32;
    nc.real_memory_mb = 64000;
    if (n[0] == 'g') nc.gres.push_back({"gpu", "h100", 8, {}, {}});
    cfg.nodes.push_back(nc);
  }
  core::Partition shortp;
  shortp.name = "short";
  shortp.is_default = true;
  shortp.nodes = {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"};
  core::Partition train;
  train.name = "train";
  train.nodes = {"gpu01", "gpu02", "gpu03", "gpu04"};
  cfg.partitions = {shortp, train};
  return cfg;
}

// The seven oracle jobs as they stood at 15:45:03 (job 6 still running).
std::vector<Job> OracleJobs() {
  return {
      MakeJob(1).Name("test").Priority(11085).Running({"cpu01"}).Build(),
      MakeJob(2).Name("held").Held().Build(),
      MakeJob(3).Name("big").Partition("train").Priority(11515).Limit(4 * 3600).Nodes(6)
          .Pending(PendingReason::kPartitionNodeLimit).Build(),
      MakeJob(4).Name("gpujob").Partition("train").Priority(11085).Limit(1800).Gpus(2)
          .Running({"gpu01"}, 1, 1000, 2).Build(),
      MakeJob(5).Name("averyveryverylongjobname").Priority(11093).Tasks(4).MemPerCpu(500)
          .Running({"cpu01"}, 4, 2000, 0, 4).Build(),
      MakeJob(6).Name("quick").Priority(11085).Running({"cpu01"}).Build(),
      MakeJob(7).Name("twonode").Priority(11177).Nodes(2).TasksPerNode(2)
          .Running({"cpu01", "cpu02"}, 2, 2000, 0, 2).Build(),
  };
}

class SqueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_ = AnchorConfig();
    for (const core::NodeConfig& nc : cfg_.nodes) {
      core::Node n;
      n.config = nc;
      nodes_.push_back(n);
    }
  }

  ClusterView View(const std::vector<Job>& jobs, int64_t now) {
    ClusterView v;
    v.users = &util::SystemUserDb();
    v.config = &cfg_;
    for (const Job& j : jobs) v.jobs.push_back(&j);
    for (const core::Node& n : nodes_) v.nodes.push_back(&n);
    v.now = now;
    v.caller_uid = 0;
    return v;
  }

  // Parses `args` (no environment) and renders `jobs` at `now`.
  std::string Squeue(const std::vector<std::string>& args, const std::vector<Job>& jobs,
                     int64_t now, const std::map<std::string, std::string>& env = {}) {
    util::Result<SqueueRequest> req = ParseSqueueArgs(args, env);
    EXPECT_TRUE(req.ok()) << req.status().message();
    if (!req.ok()) return "";
    // The request travels to the daemon as JSON.
    util::Result<SqueueRequest> sent = SqueueRequestFromJson(ToJson(*req));
    EXPECT_TRUE(sent.ok()) << sent.status().message();
    util::Result<std::string> out = RenderSqueue(*sent, View(jobs, now));
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : "";
  }

  config::Config cfg_;
  std::vector<core::Node> nodes_;
};

// --- default, -l, -t all, --start --------------------------------------

TEST_F(SqueueTest, DefaultFormatAndOrder) {
  // Oracle: `squeue` at 15:45:01 (pending and running mixed; default sort
  // P,t,-p; jobs 1 and 6 tie on priority).
  std::string want =
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
      "                 2     short     held     root PD       0:00      1 (JobHeldUser)\n"
      "                 7     short  twonode     root  R       0:02      2 cpu[01-02]\n"
      "                 5     short averyver     root  R       0:02      1 cpu01\n"
      "                 1     short     test     root  R       0:02      1 cpu01\n"
      "                 6     short    quick     root  R       0:02      1 cpu01\n"
      "                 3     train      big     root PD       0:00      6 (PartitionNodeLimit)\n"
      "                 4     train   gpujob     root  R       0:02      1 gpu01\n";
  EXPECT_EQ(Squeue({}, OracleJobs(), kStart + 2), want);
}

std::vector<Job> JobsAt1545() {
  std::vector<Job> jobs = OracleJobs();
  jobs[5] = MakeJob(6).Name("quick").Priority(11085).Running({"cpu01"})
                .Ended(JobState::kCompleted, kStart + 5).Build();
  return jobs;
}

TEST_F(SqueueTest, LongView) {
  // Oracle: `squeue -l` at 15:45:20 (job 6 completed: not shown).
  std::string want =
      "Wed Dec 02 15:45:20 2026\n"
      "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n"
      "                 2     short     held     root  PENDING       0:00   1:00:00      1 (JobHeldUser)\n"
      "                 7     short  twonode     root  RUNNING       0:21   1:00:00      2 cpu[01-02]\n"
      "                 5     short averyver     root  RUNNING       0:21   1:00:00      1 cpu01\n"
      "                 1     short     test     root  RUNNING       0:21   1:00:00      1 cpu01\n"
      "                 3     train      big     root  PENDING       0:00   4:00:00      6 (PartitionNodeLimit)\n"
      "                 4     train   gpujob     root  RUNNING       0:21     30:00      1 gpu01\n";
  EXPECT_EQ(Squeue({"-l"}, JobsAt1545(), kSubmit + 22), want);
  // Oracle: `squeue -l -h -j 5`: no date line without the header.
  EXPECT_EQ(Squeue({"-l", "-h", "-j", "5"}, JobsAt1545(), kSubmit + 22),
            "                 5     short averyver     root  RUNNING       0:21   1:00:00      1 cpu01\n");
}

TEST_F(SqueueTest, AllStates) {
  // Oracle: `squeue -t all` at 15:45:20: states sort by name (CD < PD < R).
  std::string want =
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
      "                 6     short    quick     root CD       0:05      1 cpu01\n"
      "                 2     short     held     root PD       0:00      1 (JobHeldUser)\n"
      "                 7     short  twonode     root  R       0:21      2 cpu[01-02]\n"
      "                 5     short averyver     root  R       0:21      1 cpu01\n"
      "                 1     short     test     root  R       0:21      1 cpu01\n"
      "                 3     train      big     root PD       0:00      6 (PartitionNodeLimit)\n"
      "                 4     train   gpujob     root  R       0:21      1 gpu01\n";
  EXPECT_EQ(Squeue({"-t", "all"}, JobsAt1545(), kSubmit + 22), want);
  EXPECT_EQ(Squeue({"--states=ALL"}, JobsAt1545(), kSubmit + 22), want);
}

TEST_F(SqueueTest, FinishedStatesOrderAndReasons) {
  // Oracle: `squeue -t all -o '%i %t %T %P %Q'` and `... -o '%i|%t|%r|%R|%M|%L'`
  // with cancelled, completed, failed and timed-out jobs: CA < CD < F < PD
  // < R < TO, priority descending within a state; a failed job shows its
  // reason in parentheses, a cancelled one its (empty) node list.
  std::vector<Job> jobs = {
      MakeJob(73).Held().Ended(JobState::kCancelled, kSubmit + 30).Build(),
      MakeJob(84).Priority(11687).Nodes(8).Pending(PendingReason::kPartitionNodeLimit)
          .Ended(JobState::kCancelled, kSubmit + 33).Build(),
      MakeJob(97).Name("failer").Priority(4419).Running({"cpu01"})
          .Ended(JobState::kFailed, kStart).Exit(3, 0).Build(),
      MakeJob(98).Name("tout").Priority(4419).Limit(60).Running({"cpu01"})
          .Ended(JobState::kTimeout, kStart + 80).Exit(0, 15).Build(),
      MakeJob(99).Name("sigkill").Priority(4419).Running({"cpu01"})
          .Ended(JobState::kFailed, kStart).Exit(0, 9).Build(),
      MakeJob(100).Name("tocancel").Priority(4419).Running({"cpu01"})
          .Ended(JobState::kCancelled, kStart + 3).Exit(0, 15).Build(),
      MakeJob(6).Name("quick").Priority(11085).Running({"cpu01"})
          .Ended(JobState::kCompleted, kStart + 5).Build(),
  };
  std::string want =
      "JOBID|ST|REASON|NODELIST(REASON)|TIME|TIME_LEFT\n"
      "84|CA|PartitionNodeLimit||0:00|1:00:00\n"
      "100|CA|None|cpu01|0:03|59:57\n"
      "73|CA|JobHeldUser||0:00|1:00:00\n"
      "6|CD|None|cpu01|0:05|59:55\n"
      "97|F|NonZeroExitCode|(NonZeroExitCode)|0:00|1:00:00\n"
      "99|F|JobLaunchFailure|(JobLaunchFailure)|0:00|1:00:00\n"
      "98|TO|TimeLimit|(TimeLimit)|1:20|INVALID\n";
  EXPECT_EQ(Squeue({"-t", "all", "-o", "%i|%t|%r|%R|%M|%L"}, jobs, kStart + 200), want);
  // Without -t finished jobs are not listed at all.
  EXPECT_EQ(Squeue({"-h"}, jobs, kStart + 200), "");
}

TEST_F(SqueueTest, StartView) {
  // Oracle: `squeue --start` at 15:45:20.
  std::string want =
      "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)\n"
      "                 2     short     held     root PD                 N/A      1 (null)               (JobHeldUser)\n"
      "                 3     train      big     root PD                 N/A      6 (null)               (PartitionNodeLimit)\n";
  EXPECT_EQ(Squeue({"--start"}, JobsAt1545(), kSubmit + 22), want);

  // Oracle: `squeue --start -h` with a --begin=now+1hour job (106): known
  // start times first.
  std::vector<Job> jobs = JobsAt1545();
  Job begin = MakeJob(106).Name("begin").Priority(4419).Pending(PendingReason::kBeginTime).Build();
  begin.req.begin_time = kSubmit + 3600;
  jobs.push_back(begin);
  EXPECT_EQ(Squeue({"--start", "-h"}, jobs, kSubmit + 22),
            "               106     short    begin     root PD 2026-12-02T16:44:58      1 (null)               (BeginTime)\n"
            "                 2     short     held     root PD                 N/A      1 (null)               (JobHeldUser)\n"
            "                 3     train      big     root PD                 N/A      6 (null)               (PartitionNodeLimit)\n");
}

TEST_F(SqueueTest, EmptyOutput) {
  // Oracle: `squeue -p nosuch`, `squeue -n nosuch -h`, `squeue -l -j 99998,99999`.
  EXPECT_EQ(Squeue({"-p", "nosuch"}, OracleJobs(), kStart),
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n");
  EXPECT_EQ(Squeue({"-n", "nosuch", "-h"}, OracleJobs(), kStart), "");
  EXPECT_EQ(Squeue({"-l", "-j", "99998,99999"}, OracleJobs(), kSubmit + 22),
            "Wed Dec 02 15:45:20 2026\n"
            "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n");
  // Oracle: `squeue -o ''` prints an empty header and an empty line per job.
  EXPECT_EQ(Squeue({"-o", "", "-j", "5"}, OracleJobs(), kStart), "\n\n");
  EXPECT_EQ(Squeue({"-o", "%", "-j", "5"}, OracleJobs(), kStart), "\n\n");
}

// --- -o ----------------------------------------------------------------

TEST_F(SqueueTest, PercentAll) {
  // Oracle: `squeue -o '%all'` at 15:45:27, jobs 2 and 7.
  std::string want =
      "ACCOUNT|TRES_PER_NODE|MIN_CPUS|MIN_TMP_DISK|END_TIME|FEATURES|GROUP|OVER_SUBSCRIBE|JOBID|NAME|"
      "COMMENT|TIME_LIMIT|MIN_MEMORY|REQ_NODES|COMMAND|PRIORITY|QOS|REASON||ST|USER|RESERVATION|WCKEY|"
      "EXC_NODES|NICE|S:C:T|JOBID|EXEC_HOST|CPUS|NODES|DEPENDENCY|ARRAY_JOB_ID|GROUP|SOCKETS_PER_NODE|"
      "CORES_PER_SOCKET|THREADS_PER_CORE|ARRAY_TASK_ID|TIME_LEFT|TIME|NODELIST|CONTIGUOUS|PARTITION|"
      "PRIORITY|NODELIST(REASON)|START_TIME|STATE|UID|SUBMIT_TIME|LICENSES|CORE_SPEC|SCHEDNODES|WORK_DIR\n"
      "root|N/A|1|0|N/A|(null)|root|OK|2|held|(null)|1:00:00|1000M||(null)|0.00000000000000|normal|"
      "JobHeldUser||PD|root|(null)|(null)||0|*:*:*|2|n/a|1|1|(null)|2|0|*|*|*|N/A|1:00:00|0:00||0|short|"
      "0|(JobHeldUser)|N/A|PENDING|0|2026-12-02T15:44:58|(null)|N/A|(null)|/tmp/sqo\n"
      "root|N/A|2|0|2026-12-02T16:44:59|(null)|root|OK|7|twonode|(null)|1:00:00|1000M||(null)|"
      "0.00000260234810|normal|None||R|root|(null)|(null)||0|*:*:*|7|cpu01|4|2|(null)|7|0|*|*|*|N/A|"
      "59:32|0:28|cpu[01-02]|0|short|11177|cpu[01-02]|2026-12-02T15:44:59|RUNNING|0|"
      "2026-12-02T15:44:58|(null)|N/A|(null)|/tmp/sqo\n";
  EXPECT_EQ(Squeue({"-o", "%all", "-j", "2,7"}, OracleJobs(), kStart + 28), want);
}

TEST_F(SqueueTest, PercentFormatWidthsAndQuirks) {
  std::vector<Job> jobs = OracleJobs();
  jobs.push_back(
      MakeJob(103).Name("reqw").Partition("train").Comment("hello world").Running({"gpu02"}).Build());
  // Oracle: `squeue -j 5,103 -o '%5i|%.5i|%-5i|%i|%3j|%.3j|%-3j|%.20j|x%tY|%%|%20|%.j|%0i|%.0j'`.
  // There is no '-' flag (the item prints literally); "%%" is no escape;
  // cuts keep the leading characters.
  util::Result<SqueueRequest> req = ParseSqueueArgs(
      {"-j", "5,103", "-o", "%5i|%.5i|%-5i|%i|%3j|%.3j|%-3j|%.20j|x%tY|%%|%20|%.j|%0i|%.0j"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->warnings, (std::vector<std::string>{
                               "squeue: error: Invalid job format specification: -",
                               "squeue: error: Invalid job format specification: -",
                               "squeue: error: Invalid job format specification: |",
                               "squeue: error: Invalid job format specification: |"}));
  util::Result<std::string> out = RenderSqueue(*req, View(jobs, kStart));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "JOBID|JOBID|%-5i|JOBID|NAM|NAM|%-3j|                NAME|xSTY|%|%20|NAME|JOBID|NAME\n"
            "5    |    5|%-5i|5|ave|ave|%-3j|averyveryverylongjob|xRY|%|%20|averyveryverylongjobname|5|averyveryverylongjobname\n"
            "103  |  103|%-5i|103|req|req|%-3j|                reqw|xRY|%|%20|reqw|103|reqw\n");
}

TEST_F(SqueueTest, PercentFormatTable) {
  // Oracle: `squeue -j 5 -o "$f"` for each f.
  struct Case {
    std::string format;
    std::string want;
    std::vector<std::string> warnings;
  };
  std::vector<Case> cases = {
      {"%%|", "%|\n%|\n", {"squeue: error: Invalid job format specification: |"}},
      {"%20", "%20\n%20\n", {"squeue: error: Invalid job format specification: "}},
      {"a%%b", "aTRES_PER_NODE\naN/A\n", {}},
      {"%i%", "JOBID\n5\n", {}},
      {"%5.3i", "%5.3i\n%5.3i\n", {"squeue: error: Invalid job format specification: ."}},
      {"%#i", "%#i\n%#i\n", {"squeue: error: Invalid job format specification: #"}},
      {"%1i", "J\n5\n", {}},
      {"%.1T", "S\nR\n", {}},
      {"abc", "abc\nabc\n", {}},
      {"%i\\t%j", "JOBID\\tNAME\n5\\taveryveryverylongjobname\n", {}},
      // NULL strings narrower than six characters print as blanks
      // (`squeue -j 2 -o '%3k|%.3f|%3o|%5E|%3v|%3w|%3W|%3Y|%3b|%3B|%3X|%3K'`).
      {"%3k|%.3f|%3o|%5E|%3v|%3w|%3W|%3Y|%3b|%3B|%3X|%3K",
       "COM|FEA|COM|DEPEN|RES|WCK|LIC|SCH|TRE|EXE|COR|ARR\n   |(nu|   |     |   |   |   |   |N/A|n/a|N/A|N/A\n",
       {}},
  };
  for (const Case& c : cases) {
    util::Result<SqueueRequest> req = ParseSqueueArgs({"-j", "5", "-o", c.format}, {});
    ASSERT_TRUE(req.ok()) << c.format;
    EXPECT_EQ(req->warnings, c.warnings) << c.format;
    std::vector<Job> jobs = OracleJobs();
    if (c.format.find("%3k") != std::string::npos) {
      jobs[4].nodelist.clear();
      jobs[4].batch_host.clear();
      jobs[4].alloc.clear();
      jobs[4].state = JobState::kPending;
    }
    util::Result<std::string> out = RenderSqueue(*req, View(jobs, kStart));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(*out, c.want) << c.format;
  }
}

TEST_F(SqueueTest, PollingFormatsOfWorkflowTools) {
  // Nextflow: squeue --noheader -o '%i %t' -t all; Toil: -h --format '%i %t %M';
  // Snakemake 8: --format=%i|%T --states=all --noheader --name X.
  std::vector<Job> jobs = JobsAt1545();
  EXPECT_EQ(Squeue({"--noheader", "-o", "%i %t", "-t", "all"}, jobs, kSubmit + 22),
            "6 CD\n2 PD\n7 R\n5 R\n1 R\n3 PD\n4 R\n");
  EXPECT_EQ(Squeue({"-h", "--format", "%i %t %M", "-j", "4"}, jobs, kSubmit + 22), "4 R 0:21\n");
  EXPECT_EQ(Squeue({"--format=%i|%T", "--states=all", "--noheader", "--name", "quick"}, jobs,
                   kSubmit + 22),
            "6|COMPLETED\n");
  // --only-job-state (Slurm 24.11+) with an explicit format.
  EXPECT_EQ(Squeue({"--noheader", "-o", "%i %t", "-t", "all", "--only-job-state"}, jobs,
                   kSubmit + 22),
            "6 CD\n2 PD\n7 R\n5 R\n1 R\n3 PD\n4 R\n");
  // Without a format Muster prints id/state pairs.
  EXPECT_EQ(Squeue({"--only-job-state", "-j", "4"}, jobs, kSubmit + 22),
            "             JOBID    STATE\n                 4  RUNNING\n");
}

// --- -O ----------------------------------------------------------------

TEST_F(SqueueTest, LongFormat) {
  std::vector<Job> jobs = OracleJobs();
  // 105: `sbatch -J scr ./script.sh a1 a2`, 103: -w gpu02 --comment 'hello world' -p train,
  // both started at 15:46:45. 103 outranks 4 here only to pin Slurm's tie order.
  Job scr = MakeJob(105).Name("scr").Priority(4419).Running({"cpu01"}).Build();
  scr.start_time = kSubmit + 107;
  Job reqw = MakeJob(103).Name("reqw").Partition("train").Priority(11086).Limit(4 * 3600)
                 .Comment("hello world").Running({"gpu02"}).Build();
  reqw.start_time = kSubmit + 107;
  jobs.push_back(scr);
  jobs.push_back(reqw);
  int64_t now = kSubmit + 107 + 44;
  // Oracle: `squeue -j 4,2,105,103 -O JobID,Name,UserName,State,StateCompact,TimeUsed,
  // TimeLimit,NumNodes,NumCPUs,NodeList,ReasonList,Reason,Partition`.
  std::string want =
      "JOBID               NAME                USER                STATE               ST                  TIME                TIME_LIMIT          NODES               CPUS                NODELIST            NODELIST(REASON)    REASON              PARTITION           \n"
      "2                   held                root                PENDING             PD                  0:00                1:00:00             1                   1                                       (JobHeldUser)       JobHeldUser         short               \n"
      "105                 scr                 root                RUNNING             R                   0:44                1:00:00             1                   1                   cpu01               cpu01               None                short               \n"
      "103                 reqw                root                RUNNING             R                   0:44                4:00:00             1                   1                   gpu02               gpu02               None                train               \n"
      "4                   gpujob              root                RUNNING             R                   2:30                30:00               1                   1                   gpu01               gpu01               None                train               \n";
  EXPECT_EQ(Squeue({"-j", "4,2,105,103", "-O",
                    "JobID,Name,UserName,State,StateCompact,TimeUsed,TimeLimit,NumNodes,NumCPUs,"
                    "NodeList,ReasonList,Reason,Partition"},
                   jobs, now),
            want);
  // Oracle: `squeue -j 5,103 -O JobID:5,Name,UserName:.10,Comment:3,WorkDir,State`.
  EXPECT_EQ(Squeue({"-j", "5,103", "-O", "JobID:5,Name,UserName:.10,Comment:3,WorkDir,State"},
                   jobs, now),
            "JOBIDNAME                      USERCOMWORK_DIR            STATE               \n"
            "5    averyveryverylongjob      root   /tmp/sqo            RUNNING             \n"
            "103  reqw                      roothel/tmp/sqo            RUNNING             \n");
  // Oracle: `squeue -j 5,103 -O JobID:4,Comment:$w,Name:4` for w = 6, 7.
  EXPECT_EQ(Squeue({"-j", "5,103", "-O", "JobID:4,Comment:6,Name:4"}, jobs, now),
            "JOBICOMMENNAME\n5   (null)aver\n103 hello reqw\n");
  // Oracle: `squeue -j 5 -O "JobID:.4,Name:.4,State:3x"`, `-O "JobID:,Name:0,State:."`,
  // `-O "JobID:4:x"`; field names are case-insensitive (`-O jobid,NAME:10,state:.12`).
  EXPECT_EQ(Squeue({"-j", "5", "-O", "JobID:.4,Name:.4,State:3x"}, jobs, now),
            "JOBINAMESTAx\n   5averRUNx\n");
  EXPECT_EQ(Squeue({"-j", "5", "-O", "JobID:,Name:0,State:."}, jobs, now),
            "JOBIDNAMESTATE\n5averyveryverylongjobnameRUNNING\n");
  EXPECT_EQ(Squeue({"-j", "5", "-O", "JobID:4:x"}, jobs, now), "JOBI:x\n5   :x\n");
  EXPECT_EQ(Squeue({"-j", "5,103", "-O", "jobid,NAME:10,state:.12"}, jobs, now),
            "JOBID               NAME             STATE\n"
            "5                   averyveryv     RUNNING\n"
            "103                 reqw           RUNNING\n");
}

TEST_F(SqueueTest, LongFormatMoreFields) {
  // Oracle: `squeue -j 4 -O "$f:40"` for each field name f.
  struct Case {
    std::string field;
    std::string header;
    std::string value;
  };
  std::vector<Case> cases = {
      {"UserID", "UID", "0"},
      {"GroupName", "GROUP", "root"},
      {"GroupID", "GROUP", "0"},
      {"TimeLeft", "TIME_LEFT", "26:21"},
      {"NumTasks", "TASKS", "1"},
      {"Account", "ACCOUNT", "root"},
      {"SubmitTime", "SUBMIT_TIME", "2026-12-02T15:44:58"},
      {"StartTime", "START_TIME", "2026-12-02T15:44:59"},
      {"EndTime", "END_TIME", "2026-12-02T16:14:59"},
      {"EligibleTime", "ELIGIBLE_TIME", "2026-12-02T15:44:58"},
      {"Priority", "PRIORITY", "0.00000258092769"},
      {"PriorityLong", "PRIORITY", "11085"},
      {"Command", "COMMAND", "(null)"},
      {"WorkDir", "WORK_DIR", "/tmp/sqo"},
      {"Comment", "COMMENT", "(null)"},
      {"Gres", "TRES_PER_NODE", "gres:gpu:2"},
      {"tres-per-node", "TRES_PER_NODE", "gres:gpu:2"},
      {"tres-per-job", "TRES_PER_JOB", "N/A"},
      {"tres-alloc", "TRES_ALLOC", "cpu=1,mem=1000M,node=1,billing=1,gres/gp"},
      {"MinMemory", "MIN_MEMORY", "1000M"},
      {"MinCpus", "MIN_CPUS", "1"},
      {"MinTmpDisk", "MIN_TMP_DISK", "0"},
      {"QOS", "QOS", "normal"},
      {"Nice", "NICE", "0"},
      {"Feature", "FEATURES", "(null)"},
      {"ReqNodes", "REQ_NODES", ""},
      {"BatchHost", "EXEC_HOST", "gpu01"},
      {"ArrayJobID", "ARRAY_JOB_ID", "4"},
      {"ArrayTaskID", "ARRAY_TASK_ID", "N/A"},
      {"JobArrayID", "JOBID", "4"},
      {"Dependency", "DEPENDENCY", "(null)"},
      {"Reservation", "RESERVATION", "(null)"},
      {"WCKey", "WCKEY", "(null)"},
      {"STDOUT", "STDOUT", "/tmp/sqo/slurm-4.out"},
      {"STDERR", "STDERR", "/tmp/sqo/slurm-4.out"},
      {"STDIN", "STDIN", "/dev/null"},
      {"OverSubscribe", "OVER_SUBSCRIBE", "OK"},
      {"Contiguous", "CONTIGUOUS", "0"},
      {"cpus-per-task", "CPUS_PER_TASK", "1"},
      {"Requeue", "REQUEUE", "1"},
      {"RestartCnt", "RESTART_COUNT", "0"},
      {"exit_code", "EXIT_CODE", "0"},
      {"Cluster", "CLUSTER", "anchor"},
      {"SchedNodes", "SCHEDNODES", "(null)"},
      {"BatchFlag", "BATCH_FLAG", "1"},
      {"PendingTime", "PENDING_TIME", "1"},
      {"AccrueTime", "ACCRUE_TIME", "2026-12-02T15:44:58"},
      {"Licenses", "LICENSES", "(null)"},
      {"MaxCPUs", "MAX_CPUS", "1"},
      {"MaxNodes", "MAX_NODES", "1"},
      {"MinTime", "TIME_MIN", "0:00"},
      {"SCT", "S:C:T", "*:*:*"},
      {"Sockets", "SOCKETS_PER_NODE", "*"},
      {"Cores", "CORES_PER_SOCKET", "*"},
      {"Threads", "THREADS_PER_CORE", "*"},
      {"DerivedEC", "DERIVED_EC", "0"},
      {"Deadline", "DEADLINE", "N/A"},
      {"NTPerNode", "NTASKS_PER_NODE", "0"},
      {"LastSchedEval", "LAST_SCHED_EVAL", "2026-12-02T15:44:59"},
      {"DelayBoot", "DELAY_BOOT", "0:00"},
      {"Profile", "PROFILE", "NotSet"},
      {"CoreSpec", "CORE_SPEC", "N/A"},
  };
  int64_t now = kStart + 219;  // TIME 3:39
  for (const Case& c : cases) {
    std::string want = FitField(c.header, 40, false) + "\n" + FitField(c.value, 40, false) + "\n";
    EXPECT_EQ(Squeue({"-j", "4", "-O", c.field + ":40"}, OracleJobs(), now), want) << c.field;
  }
  // Oracle: `squeue -t all -j 97,99,98 -O JobID:5,exit_code:10,...`: wait statuses.
  std::vector<Job> ended = {
      MakeJob(97).Running({"cpu01"}).Ended(JobState::kFailed, kStart).Exit(3, 0).Build(),
      MakeJob(99).Running({"cpu01"}).Ended(JobState::kFailed, kStart).Exit(0, 9).Build(),
  };
  EXPECT_EQ(Squeue({"-h", "-t", "all", "-O", "JobID:5,exit_code:10"}, ended, now),
            "97   768       \n99   9         \n");
  // Muster's additive field: why a job waits.
  std::vector<Job> jobs = OracleJobs();
  EXPECT_EQ(Squeue({"-h", "-j", "2", "-O", "JobID:4,Explanation:0"}, jobs, now),
            "2   held by its user (scontrol release to start)\n");
  EXPECT_EQ(Squeue({"-h", "-j", "4", "-O", "JobID:4,Explanation:0"}, jobs, now), "4   \n");
}

TEST_F(SqueueTest, InvalidLongFieldsAreSkippedWithAWarning) {
  // Oracle: `squeue -j 5 -O JobID,ExcNodes,Name` (exit 0) and `-O Bogus`.
  util::Result<SqueueRequest> req = ParseSqueueArgs({"-j", "5", "-O", "JobID,ExcNodes,Name"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->warnings,
            std::vector<std::string>{"squeue: error: Invalid job format specification: ExcNodes"});
  EXPECT_EQ(*RenderSqueue(*req, View(OracleJobs(), kStart)),
            "JOBID               NAME                \n5                   averyveryverylongjob\n");
  EXPECT_EQ(Squeue({"-j", "5", "-O", "Bogus"}, OracleJobs(), kStart), "\n\n");
}

// --- filters -----------------------------------------------------------

TEST_F(SqueueTest, Filters) {
  std::vector<Job> jobs = OracleJobs();
  jobs.push_back(MakeJob(8).Name("alice1").User(1000, "cloudsdk").Priority(5).Running({"gpu03"}).Build());
  auto ids = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"-h", "-o", "%i"});
    return Squeue(args, jobs, kStart + 2);
  };
  EXPECT_EQ(ids({"-u", "root", "-p", "train"}), "3\n4\n");
  EXPECT_EQ(ids({"-u", "0", "-t", "pd"}), "2\n3\n");
  EXPECT_EQ(ids({"--user=1000"}), "8\n");
  EXPECT_EQ(ids({"-u", "cloudsdk"}), "8\n");
  EXPECT_EQ(ids({"--me", "-p", "short", "-t", "R"}), "7\n5\n1\n6\n");
  // Oracle: `squeue --me -u cloudsdk` lists cloudsdk's jobs, `-u cloudsdk --me` root's.
  EXPECT_EQ(ids({"--me", "-u", "cloudsdk"}), "8\n");
  EXPECT_EQ(ids({"-u", "cloudsdk", "--me", "-p", "train"}), "3\n4\n");
  EXPECT_EQ(ids({"-j", "4,2"}), "2\n4\n");
  EXPECT_EQ(ids({"-j5"}), "5\n");
  EXPECT_EQ(ids({"--jobs=5,7"}), "7\n5\n");
  EXPECT_EQ(ids({"-n", "test,quick"}), "1\n6\n");
  EXPECT_EQ(ids({"--name=big"}), "3\n");
  EXPECT_EQ(ids({"-w", "cpu02"}), "7\n");
  EXPECT_EQ(ids({"-w", "gpu[01-03]"}), "8\n4\n");
  EXPECT_EQ(ids({"--nodelist=cpu01", "-S", "i"}), "1\n5\n6\n7\n");
  EXPECT_EQ(ids({"-A", "ROOT", "-p", "train"}), "3\n4\n");
  EXPECT_EQ(ids({"-A", "nosuch"}), "");
  EXPECT_EQ(ids({"-q", "normal", "-n", "big"}), "3\n");
  EXPECT_EQ(ids({"-t", "R,PD", "-S", "-i"}), "8\n7\n6\n5\n4\n3\n2\n1\n");
}

// --- job arrays -----------------------------------------------------------

// An array's pending part: the tasks not started yet, in the array's record.
Job ArrayPart(JobBuilder b, core::JobId array_id, std::vector<int> pending, int throttle = 0) {
  Job j = b.Build();
  j.array_job_id = array_id;
  j.array_pending = std::move(pending);
  j.array_max_running = throttle;
  return j;
}

Job ArrayTask(JobBuilder b, core::JobId array_id, int task, int throttle = 0) {
  Job j = b.Build();
  j.array_job_id = array_id;
  j.array_task_id = task;
  j.array_max_running = throttle;
  return j;
}

std::vector<int> Stride(int first, int last, int step) {
  std::vector<int> out;
  for (int i = first; i <= last; i += step) out.push_back(i);
  return out;
}

TEST_F(SqueueTest, ArrayIdColumns) {
  // sbatch -H --array=0,5,10,20 (14221), --array=0-19%4 (14200), plain -H
  // (14204); squeue -h -o "%i|%A|%F|%K|%18i|" -j 14221,14200,14204.
  std::vector<Job> jobs = {
      ArrayPart(MakeJob(14200).Held(), 14200, Stride(0, 19, 1), 4),
      MakeJob(14204).Held().Build(),
      ArrayPart(MakeJob(14221).Held(), 14221, {0, 5, 10, 20}),
  };
  EXPECT_EQ(Squeue({"-h", "-o", "%i|%A|%F|%K|%18i|", "-S", "-i"}, jobs, kStart),
            "14221_[0,5,10,20]|14221|14221|0,5,10,20|14221_[0,5,10,20] |\n"
            "14204|14204|14204|N/A|14204             |\n"
            "14200_[0-19%4]|14200|14200|0-19%4|14200_[0-19%4]    |\n");
  // squeue -h -j 14200 -O "JobArrayID,ArrayTaskID".
  EXPECT_EQ(Squeue({"-h", "-j", "14200", "-O", "JobArrayID,ArrayTaskID"}, jobs, kStart),
            "14200_[0-19%4]      0-19%4              \n");
}

TEST_F(SqueueTest, LongArrayIdsAreCut) {
  // sbatch -H --array=1-99:2,100 (14301): squeue -h -j 14301 -o "%i|%K|%F"
  // printed %i cut at 31 characters, %K at 60 plus "...".
  std::vector<int> tasks = Stride(1, 99, 2);
  tasks.push_back(100);
  std::vector<Job> jobs = {ArrayPart(MakeJob(14301).Held(), 14301, tasks)};
  EXPECT_EQ(Squeue({"-h", "-o", "%i|%K|%F"}, jobs, kStart),
            "14301_[1,3,5,7,9,11,13,15,17,19|"
            "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43...|14301\n");
  // --array=1-41:2,100 (14300): squeue -h -j 14300 -O "JobID,ArrayJobID,ArrayTaskID"
  // (-O JobID is the raw id; fields 20 wide).
  std::vector<int> fits = Stride(1, 41, 2);
  fits.push_back(100);
  jobs = {ArrayPart(MakeJob(14300).Held(), 14300, fits)};
  EXPECT_EQ(Squeue({"-h", "-O", "JobID,ArrayJobID,ArrayTaskID"}, jobs, kStart),
            "14300               14300               1,3,5,7,9,11,13,15,1\n");
  EXPECT_EQ(Squeue({"-h", "-O", "JobArrayID:70"}, jobs, kStart),
            "14300_[1,3,5,7,9,11,13,15,17,19                                       \n");
}

// sbatch --array=1,3,5-7%2 --wrap='... sleep 45' (14403) a few seconds in:
// tasks 1 (14404) and 3 (14405) running, 5-7 pending on the throttle.
std::vector<Job> ThrottledArray() {
  return {
      ArrayPart(MakeJob(14403).Priority(4419).Pending(PendingReason::kJobArrayTaskLimit), 14403,
                {5, 6, 7}, 2),
      ArrayTask(MakeJob(14404).Priority(4419).Running({"cpu01"}), 14403, 1, 2),
      ArrayTask(MakeJob(14405).Priority(4419).Running({"cpu01"}), 14403, 3, 2),
  };
}

TEST_F(SqueueTest, ArrayTasksAndPendingPart) {
  const std::vector<Job> jobs = ThrottledArray();
  auto rows = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"-h", "-o", "%i|%A|%F|%K|%T|%r"});
    return Squeue(args, jobs, kStart + 4);
  };
  // squeue -j 14403 -o "%i|%A|%F|%K|%T|%r" (-t PD and -t R to fix the order).
  EXPECT_EQ(rows({"-j", "14403", "-t", "PD"}),
            "14403_[5-7%2]|14403|14403|5-7%2|PENDING|JobArrayTaskLimit\n");
  EXPECT_EQ(rows({"-j", "14403", "-t", "R", "-S", "-i"}),
            "14403_3|14405|14403|3|RUNNING|None\n"
            "14403_1|14404|14403|1|RUNNING|None\n");
  // squeue -r -j 14403 ...: one line per pending task.
  EXPECT_EQ(rows({"-r", "-j", "14403", "-t", "PD"}),
            "14403_5|14403|14403|5|PENDING|JobArrayTaskLimit\n"
            "14403_6|14403|14403|6|PENDING|JobArrayTaskLimit\n"
            "14403_7|14403|14403|7|PENDING|JobArrayTaskLimit\n");
  EXPECT_EQ(rows({"--array", "-t", "R", "-S", "-i"}),
            "14403_3|14405|14403|3|RUNNING|None\n"
            "14403_1|14404|14403|1|RUNNING|None\n");
  // squeue -h -j 14403_5 -o "%i|%A" printed "14403_5|14403"; -j 14403_1
  // "14403_1|14404"; -j 14403_x nothing.
  auto ids = [&](std::string id) { return Squeue({"-h", "-o", "%i|%A", "-j", id}, jobs, kStart + 4); };
  EXPECT_EQ(ids("14403_5"), "14403_5|14403\n");
  EXPECT_EQ(ids("14403_1"), "14403_1|14404\n");
  EXPECT_EQ(ids("14404"), "14403_1|14404\n");
  EXPECT_EQ(ids("14403_x"), "");
  EXPECT_EQ(ids("14403_4"), "");
}

TEST_F(SqueueTest, ArrayUnfoldTravelsAsJson) {
  util::Result<SqueueRequest> req = ParseSqueueArgs({"-r"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(req->array_unfold);
  util::Result<SqueueRequest> back = SqueueRequestFromJson(ToJson(*req));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->array_unfold);
  EXPECT_FALSE(ParseSqueueArgs({}, {})->array_unfold);
}

TEST_F(SqueueTest, UnknownUsersWarnAndMatchNothing) {
  // Oracle: `squeue -u nosuchuser` (header only, exit 0) and `-u root,nosuch`.
  // The names travel as typed; the view looks them up and warns.
  util::Result<SqueueRequest> req = ParseSqueueArgs({"-u", "nosuchuser"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(req->warnings.empty());
  std::vector<std::string> warnings;
  EXPECT_EQ(*RenderSqueue(*req, View(OracleJobs(), kStart), &warnings),
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n");
  EXPECT_EQ(warnings, std::vector<std::string>{"squeue: error: Invalid user: nosuchuser\n"});
  req = ParseSqueueArgs({"-u", "root,nosuch", "-h", "-o", "%i", "-j", "1"}, {});
  ASSERT_TRUE(req.ok());
  warnings.clear();
  EXPECT_EQ(*RenderSqueue(*req, View(OracleJobs(), kStart), &warnings), "1\n");
  EXPECT_EQ(warnings, std::vector<std::string>{"squeue: error: Invalid user: nosuch\n"});
  // An unknown uid is as invalid as an unknown name (`squeue -u 12345`).
  req = ParseSqueueArgs({"-u", "4000000000"}, {});
  ASSERT_TRUE(req.ok());
  warnings.clear();
  ASSERT_TRUE(RenderSqueue(*req, View(OracleJobs(), kStart), &warnings).ok());
  EXPECT_EQ(warnings, std::vector<std::string>{"squeue: error: Invalid user: 4000000000\n"});
}

TEST_F(SqueueTest, Sorting) {
  std::vector<Job> jobs = OracleJobs();
  auto ids = [&](const std::string& sort) {
    return Squeue({"-h", "-o", "%i", "-S", sort}, jobs, kStart + 2);
  };
  EXPECT_EQ(ids("i"), "1\n2\n3\n4\n5\n6\n7\n");
  EXPECT_EQ(ids("-i"), "7\n6\n5\n4\n3\n2\n1\n");
  EXPECT_EQ(ids("+i"), "1\n2\n3\n4\n5\n6\n7\n");
  EXPECT_EQ(ids("i,"), "1\n2\n3\n4\n5\n6\n7\n");
  EXPECT_EQ(ids("j"), "5\n3\n4\n2\n6\n1\n7\n");
  EXPECT_EQ(ids("-Q"), "3\n7\n5\n1\n4\n6\n2\n");
  EXPECT_EQ(ids("D,i"), "1\n2\n4\n5\n6\n7\n3\n");
  // Oracle: `squeue -h -o '%i %M' -S M`: pending (0:00) first.
  EXPECT_EQ(Squeue({"-h", "-o", "%i %M", "-S", "M", "-j", "2,1"}, jobs, kStart + 2),
            "2 0:00\n1 0:02\n");
  // Oracle: `squeue -h -o '%i %N' -S N`: jobs without nodes last.
  EXPECT_EQ(Squeue({"-h", "-o", "%i %N", "-S", "N", "-j", "2,7,4,1"}, jobs, kStart + 2),
            "1 cpu01\n7 cpu[01-02]\n4 gpu01\n2 \n");
  // SQUEUE_SORT applies without -S (oracle: SQUEUE_SORT=-i squeue ...).
  EXPECT_EQ(Squeue({"-h", "-o", "%i", "-j", "1,2,3"}, jobs, kStart, {{"SQUEUE_SORT", "-i"}}),
            "3\n2\n1\n");
}

// --- environment and precedence -----------------------------------------

TEST_F(SqueueTest, EnvironmentAndPrecedence) {
  std::vector<Job> jobs = OracleJobs();
  int64_t now = kStart + 2;
  // Oracle: SQUEUE_FORMAT='%i|%j' squeue -j 5; with -o %i the option wins.
  EXPECT_EQ(Squeue({"-j", "5"}, jobs, now, {{"SQUEUE_FORMAT", "%i|%j"}}),
            "JOBID|NAME\n5|averyveryverylongjobname\n");
  EXPECT_EQ(Squeue({"-j", "5", "-o", "%i"}, jobs, now, {{"SQUEUE_FORMAT", "%i|%j"}}), "JOBID\n5\n");
  // SQUEUE_FORMAT2, and SQUEUE_FORMAT over SQUEUE_FORMAT2.
  EXPECT_EQ(Squeue({"-j", "5"}, jobs, now, {{"SQUEUE_FORMAT2", "JobID:4,Name:5"}}),
            "JOBINAME \n5   avery\n");
  EXPECT_EQ(Squeue({"-j", "5"}, jobs, now, {{"SQUEUE_FORMAT2", "JobID:4"}, {"SQUEUE_FORMAT", "%j"}}),
            "NAME\naveryveryverylongjobname\n");
  // Oracle: SQUEUE_FORMAT2=JobID squeue -o '%i|'; SQUEUE_FORMAT='%i|' squeue -O JobID:4.
  EXPECT_EQ(Squeue({"-j", "2", "-o", "%i|"}, jobs, now, {{"SQUEUE_FORMAT2", "JobID"}}),
            "JOBID|\n2|\n");
  EXPECT_EQ(Squeue({"-j", "2", "-O", "JobID:4"}, jobs, now, {{"SQUEUE_FORMAT", "%i|"}}),
            "JOBI\n2   \n");
  // Oracle: SQUEUE_FORMAT='%i|' squeue -l / --start: those formats win.
  EXPECT_EQ(Squeue({"-l", "-h", "-j", "2"}, jobs, now, {{"SQUEUE_FORMAT", "%i|"}}),
            "                 2     short     held     root  PENDING       0:00   1:00:00      1 (JobHeldUser)\n");
  EXPECT_EQ(Squeue({"--start", "-h", "-j", "2"}, jobs, now, {{"SQUEUE_FORMAT", "%i|"}}),
            "                 2     short     held     root PD                 N/A      1 (null)               (JobHeldUser)\n");
  // Oracle: `squeue --start -o '%i|%S' -j2`, `squeue --start -O JobID -j 2` (start wins).
  EXPECT_EQ(Squeue({"--start", "-o", "%i|%S", "-j2"}, jobs, now), "JOBID|START_TIME\n2|N/A\n");
  EXPECT_EQ(Squeue({"--start", "-O", "JobID", "-j", "2", "-h"}, jobs, now),
            "                 2     short     held     root PD                 N/A      1 (null)               (JobHeldUser)\n");
  // Oracle: `squeue -l -O JobID -j 2`: -O format under -l's date line.
  EXPECT_EQ(Squeue({"-l", "-O", "JobID", "-j", "2"}, jobs, kSubmit + 22),
            "Wed Dec 02 15:45:20 2026\nJOBID               \n2                   \n");
  // SQUEUE_STATES (oracle: SQUEUE_STATES=all squeue -n quick -h).
  std::vector<Job> later = JobsAt1545();
  EXPECT_EQ(Squeue({"-n", "quick", "-h"}, later, kSubmit + 22, {{"SQUEUE_STATES", "all"}}),
            "                 6     short    quick     root CD       0:05      1 cpu01\n");
  // Other SQUEUE_* filters; the command line wins.
  EXPECT_EQ(Squeue({"-h", "-o", "%i"}, jobs, now, {{"SQUEUE_PARTITION", "train"}}), "3\n4\n");
  EXPECT_EQ(Squeue({"-h", "-o", "%i", "-p", "short", "-t", "PD"}, jobs, now,
                   {{"SQUEUE_PARTITION", "train"}}),
            "2\n");
  EXPECT_EQ(Squeue({"-h", "-o", "%i"}, jobs, now, {{"SQUEUE_NAMES", "big"}}), "3\n");
}

TEST_F(SqueueTest, Clusters) {
  // Oracle: `squeue -M anchor -j 5`, `-M all`, `-M anchor -h`, `-M anchor -l`.
  std::vector<Job> jobs = JobsAt1545();
  EXPECT_EQ(Squeue({"-M", "anchor", "-j", "1", "-o", "%i"}, jobs, kSubmit + 22),
            "CLUSTER: anchor\nJOBID\n1\n");
  EXPECT_EQ(Squeue({"-M", "all", "-j", "1", "-o", "%i"}, jobs, kSubmit + 22),
            "CLUSTER: anchor\nJOBID\n1\n");
  EXPECT_EQ(Squeue({"--clusters=anchor", "-h", "-j", "1", "-o", "%i"}, jobs, kSubmit + 22), "1\n");
  EXPECT_EQ(Squeue({"-M", "anchor", "-l", "-j", "98,99"}, jobs, kSubmit + 22),
            "Wed Dec 02 15:45:20 2026\nCLUSTER: anchor\n"
            "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n");
  util::Result<SqueueRequest> req = ParseSqueueArgs({"-M", "other"}, {});
  ASSERT_TRUE(req.ok());
  util::Result<std::string> out = RenderSqueue(*req, View(jobs, kSubmit));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "squeue: error: No cluster 'other' known by database.\n"
            "squeue: error: 'other' can't be reached now, or it is an invalid entry for --cluster.  "
            "Use 'sacctmgr list clusters' to see available clusters.");
}

// --- errors ------------------------------------------------------------

TEST_F(SqueueTest, ArgumentErrors) {
  const std::string states =
      "squeue: error: Valid job states include: PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,"
      "FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,"
      "RESIZING,RESV_DEL_HOLD,REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,"
      "STAGE_OUT,STOPPED\n";
  const std::string try_help = "\nTry \"squeue --help\" for more information";
  // Oracle: each `squeue <args>`; all exit 1 with this stderr.
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"-t", "foo"}, {}, "squeue: error: Invalid job state specified: foo\n" + states},
      {{"-t", "pd,foo"}, {}, "squeue: error: Invalid job state specified: foo\n" + states},
      {{}, {{"SQUEUE_STATES", "foo"}}, "squeue: error: Invalid job state specified: foo\n" + states},
      {{"-j", "abc"}, {}, "squeue: error: Invalid job id: abc"},
      {{"-j", "5,abc"}, {}, "squeue: error: Invalid job id: abc"},
      {{"-j", "0"}, {}, "squeue: error: Invalid job id: 0"},
      {{"-j", "-1"}, {}, "squeue: invalid option -- '1'" + try_help},
      {{"-S", "x"}, {}, "squeue: error: Invalid sort specification: x"},
      {{"-S", "i,%"}, {}, "squeue: error: Invalid sort specification: %"},
      {{"-S", "JobID"}, {}, "squeue: error: Invalid sort specification: o"},
      {{"-h"}, {{"SQUEUE_SORT", "x"}}, "squeue: error: Invalid sort specification: x"},
      {{"--bogus"}, {}, "squeue: unrecognized option '--bogus'" + try_help},
      {{"-Z"}, {}, "squeue: invalid option -- 'Z'" + try_help},
      {{"-o"}, {}, "squeue: option requires an argument -- 'o'" + try_help},
      {{"--format"}, {}, "squeue: option '--format' requires an argument" + try_help},
      {{"-u"}, {}, "squeue: option requires an argument -- 'u'" + try_help},
      {{"--st=pd"}, {},
       "squeue: option '--st=pd' is ambiguous; possibilities: '--start' '--steps' '--states'" +
           try_help},
      {{"--sta"}, {}, "squeue: option '--sta' is ambiguous; possibilities: '--start' '--states'" +
                          try_help},
      {{"--noheader=1"}, {}, "squeue: option '--noheader' doesn't allow an argument" + try_help},
      {{"foo"}, {}, "squeue: error: Unrecognized option: foo"},
      {{"-i", "0"}, {}, "squeue: error: --iterate=0\n"},
      {{"-l", "-o", "%i"}, {},
       "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove "
       "one and retry."},
      {{"-o", "%i", "-O", "JobID"}, {},
       "squeue: error: -O (--Format) is incompatible with -o (--format)"},
      {{"-O", "JobID", "-o", "%i"}, {},
       "squeue: error: -o (--format) is incompatible with -O (--Format)"},
      {{"-w", "gpu[01-02"}, {}, "squeue: error: Invalid node name gpu[01-02"},
  };
  for (const Case& c : cases) {
    util::Result<SqueueRequest> req = ParseSqueueArgs(c.args, c.env);
    ASSERT_FALSE(req.ok()) << c.args.size();
    EXPECT_EQ(req.status().message(), c.message);
  }
}

TEST_F(SqueueTest, AcceptedOptions) {
  // Options squeue takes that change nothing in Muster, prefixes of long
  // options (`--form=%i`, `--state=pd`), and bundles (`-hl`).
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"-a"}, {"-r"}, {"--all"}, {"--array"}, {"-v"}, {"--local"}, {"--federation"},
           {"-P"}, {"--noconvert"}, {"--hide"}, {"--form=%i"}, {"--state=pd"}, {"-hl"},
           {"--me"}, {"-i", "5"}, {"--usage"}, {"--help"}, {"-V"}, {"--"}}) {
    util::Result<SqueueRequest> req = ParseSqueueArgs(args, {});
    EXPECT_TRUE(req.ok()) << args[0] << ": " << req.status().message();
  }
  util::Result<SqueueRequest> req = ParseSqueueArgs({"--form=%i", "--state=pd", "-hl"}, {});
  ASSERT_FALSE(req.ok());  // -l with -o
  req = ParseSqueueArgs({"--state=pd", "-hl", "-i", "5"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(req->noheader);
  EXPECT_TRUE(req->long_view);
  EXPECT_EQ(req->states, std::vector<std::string>{"pd"});
  EXPECT_EQ(req->iterate_s, 5);
  req = ParseSqueueArgs({"--help"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(req->help);
}

TEST_F(SqueueTest, RenderErrors) {
  std::vector<Job> jobs = OracleJobs();
  // Oracle: `squeue -j 99999` (also with -t all): exit 1.
  for (auto args : std::vector<std::vector<std::string>>{{"-j", "99999"}, {"-j", "99999", "-t", "all"}}) {
    util::Result<SqueueRequest> req = ParseSqueueArgs(args, {});
    ASSERT_TRUE(req.ok());
    util::Result<std::string> out = RenderSqueue(*req, View(jobs, kStart));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().message(), "slurm_load_jobs error: Invalid job id specified");
  }
  // Oracle: `squeue -j 99999,99998` is fine (header only); `-j 5,99999` lists 5.
  EXPECT_EQ(Squeue({"-j", "99999,99998", "-h"}, jobs, kStart), "");
  EXPECT_EQ(Squeue({"-j", "5,99999", "-h", "-o", "%i"}, jobs, kStart), "5\n");
  // Oracle: `squeue -w nosuch`.
  util::Result<SqueueRequest> req = ParseSqueueArgs({"-w", "nosuch"}, {});
  ASSERT_TRUE(req.ok());
  util::Result<std::string> out = RenderSqueue(*req, View(jobs, kStart));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "squeue: error: Invalid node name nosuch");
}

TEST_F(SqueueTest, SortWarningForB) {
  // Oracle: `squeue -S b`: a warning without "error:", output as usual.
  util::Result<SqueueRequest> req = ParseSqueueArgs({"-S", "b"}, {});
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->warnings, std::vector<std::string>{"squeue: Invalid sort specification: b"});
}

TEST_F(SqueueTest, RequestJsonRoundTrip) {
  util::Result<SqueueRequest> req = ParseSqueueArgs(
      {"-u", "root", "-t", "PD,R", "-j", "1,2", "-p", "short", "-w", "cpu[01-02]", "-n", "a,b",
       "-A", "acct", "-h", "-S", "-i", "-M", "anchor", "-q", "normal", "-R", "resv",
       "--only-job-state", "-O", "JobID:5"},
      {});
  ASSERT_TRUE(req.ok()) << req.status().message();
  nlohmann::json j = ToJson(*req);
  util::Result<SqueueRequest> back = SqueueRequestFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson(*back), j);
  EXPECT_EQ(back->users, std::vector<std::string>{"root"});  // looked up by musterd
  EXPECT_EQ(back->nodes, (std::vector<std::string>{"cpu01", "cpu02"}));
  EXPECT_EQ(back->format_long, "JobID:5");
  EXPECT_TRUE(back->format.empty());
  EXPECT_TRUE(back->noheader && back->only_job_state);
  EXPECT_FALSE(back->me);

  EXPECT_FALSE(SqueueRequestFromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(SqueueRequestFromJson(nlohmann::json{{"users", "root"}}).ok());
  // A default request renders like plain `squeue`.
  util::Result<SqueueRequest> empty = SqueueRequestFromJson(nlohmann::json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*RenderSqueue(*empty, View(OracleJobs(), kStart + 2)),
            Squeue({}, OracleJobs(), kStart + 2));
}

TEST_F(SqueueTest, ManyJobsRenderEveryLine) {
  // 100,000 jobs: the listing is one pass plus one sort. (How long it
  // takes is a benchmark's to say, not a test's.)
  std::vector<Job> jobs;
  jobs.reserve(100000);
  for (core::JobId id = 1; id <= 100000; ++id) {
    if (id % 3 == 0) {
      jobs.push_back(MakeJob(id).Priority(id % 1000).Pending(PendingReason::kPriority).Build());
    } else {
      jobs.push_back(MakeJob(id).Priority(id % 1000).Running({id % 2 ? "cpu01" : "gpu02"}).Build());
    }
  }
  util::Result<SqueueRequest> req = ParseSqueueArgs({}, {});
  ASSERT_TRUE(req.ok());
  util::Result<std::string> out = RenderSqueue(*req, View(jobs, kStart + 10));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(std::count(out->begin(), out->end(), '\n'), 100001);
}

// --- format_util ---------------------------------------------------------

TEST(FormatUtilTest, MemoryUnits) {
  // Oracle: TRES= of jobs with --mem=<v> (`scontrol show job`).
  struct Case {
    int64_t mb;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{{1000, "1000M"},
                                         {2048, "2G"},
                                         {1536, "1.50G"},
                                         {1280, "1280M"},
                                         {2560, "2.50G"},
                                         {1025, "1025M"},
                                         {768, "768M"},
                                         {64000, "62.50G"},
                                         {102400, "100G"},
                                         {1048576, "1T"},
                                         {3145728, "3T"},
                                         {1572864, "1.50T"},
                                         {1048577, "1048577M"},
                                         {0, "0"}}) {
    EXPECT_EQ(FormatMemoryMb(c.mb), c.want) << c.mb;
  }
}

TEST(FormatUtilTest, Fields) {
  EXPECT_EQ(FitField("abc", 0, false), "abc");
  EXPECT_EQ(FitField("abc", 5, false), "abc  ");
  EXPECT_EQ(FitField("abc", 5, true), "  abc");
  EXPECT_EQ(FitField("abcdef", 3, true), "abc");
  EXPECT_EQ(FitField("(null)", 5, false, true), "     ");
  EXPECT_EQ(FitField("(null)", 6, false, true), "(null)");
  EXPECT_EQ(util::FormatIndexRanges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(util::FormatIndexRanges({}), "");

  std::vector<LongField> lf = ParseLongFormat("JobID,Name:10,State:.12x,A:");
  ASSERT_EQ(lf.size(), 4u);
  EXPECT_EQ(lf[0].width, 20);
  EXPECT_EQ(lf[1].width, 10);
  EXPECT_TRUE(lf[2].right);
  EXPECT_EQ(lf[2].suffix, "x");
  EXPECT_EQ(lf[3].width, 0);

  PercentFormat pf = ParsePercentFormat("pre%.18i %-3j%%b", [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
  EXPECT_EQ(pf.prefix, "pre");
  ASSERT_EQ(pf.fields.size(), 3u);
  EXPECT_EQ(pf.fields[0].type, 'i');
  EXPECT_EQ(pf.fields[0].width, 18);
  EXPECT_TRUE(pf.fields[0].right);
  EXPECT_EQ(pf.fields[0].suffix, " ");
  EXPECT_EQ(pf.fields[1].literal, "%-3j");
  EXPECT_EQ(pf.fields[2].type, 'b');
  EXPECT_EQ(pf.invalid, std::vector<std::string>{"-"});
}

}  // namespace
}  // namespace muster::render

#include "sim/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace muster::sim {
namespace {

Trace Parse(std::string_view text, TraceFormat format, const TraceOptions& options = {}) {
  auto trace = ParseTrace(text, "t", format, options);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  return trace.ok() ? *trace : Trace{};
}

std::string ErrorOf(std::string_view text, TraceFormat format, const TraceOptions& options = {}) {
  auto trace = ParseTrace(text, "t", format, options);
  EXPECT_FALSE(trace.ok());
  return trace.ok() ? "" : trace.status().message();
}

int AssumedJobs(const Trace& trace, std::string_view what) {
  for (const auto& a : trace.assumptions) {
    if (a.what.find(what) != std::string::npos) return a.jobs;
  }
  return 0;
}

TEST(TraceTest, SwfFieldsWithTheHeaderSkippedAndTheOriginAtTheFirstSubmission) {
  Trace t = Parse(
      "; Version: 2.2\n"
      ";   MaxNodes: 128\n"
      "1 100 5 3600 16 -1 -1 32 7200 1024 1 7 3 -1 1 -1 -1 -1\n"
      "2 160 -1 50 8 -1 -1 -1 -1 -1 1 8 -1 -1 1 2 -1 -1\n"
      "3 170 -1 0 -1 -1 -1 4 600 -1 5 7 3 -1 1 -1 -1 -1\n",
      TraceFormat::kSwf);
  ASSERT_EQ(t.jobs.size(), 3u);
  const TraceJob& a = t.jobs[0];
  EXPECT_EQ(a.id, "1");
  EXPECT_EQ(a.line, 3);
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.run, 3600);
  EXPECT_EQ(a.cpus, 32);  // requested, not allocated
  EXPECT_EQ(a.time_limit, 7200);
  EXPECT_EQ(a.mem_mb, 32);  // 1024 KB per processor
  EXPECT_EQ(a.user, "user7");
  EXPECT_EQ(a.account, "group3");
  EXPECT_TRUE(a.ran);
  const TraceJob& b = t.jobs[1];
  EXPECT_EQ(b.submit, 60);
  EXPECT_EQ(b.cpus, 8);         // allocated, as nothing was requested
  EXPECT_EQ(b.time_limit, 50);  // the run time
  EXPECT_FALSE(t.jobs[2].ran);  // cancelled before it started
  EXPECT_EQ(t.never_started, 1);
  EXPECT_EQ(AssumedJobs(t, "time limit: the run time"), 1);
  EXPECT_EQ(AssumedJobs(t, "CPUs: the allocated processors"), 1);
  EXPECT_EQ(AssumedJobs(t, "partition: the default"), 1);
}

TEST(TraceTest, SwfErrorsNameTheFileLineAndField) {
  EXPECT_EQ(ErrorOf("; header\n1 0 -1 10 1 -1\n", TraceFormat::kSwf),
            "t:2: an SWF record has 18 fields, this one 6");
  EXPECT_EQ(ErrorOf("1 0 -1 ten 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n", TraceFormat::kSwf),
            "t:1: field 4: 'ten' is not a number");
  EXPECT_EQ(ErrorOf("; only a header\n", TraceFormat::kSwf), "t: no jobs in the trace");
}

TEST(TraceTest, SwfUnlimitedRequestTakesTheTimeLimitOption) {
  TraceOptions options;
  options.time_limit = 3600;
  Trace t =
      Parse("1 0 -1 10 1 -1 -1 1 2147483647 -1 1 1 1 -1 1 -1 -1 -1", TraceFormat::kSwf, options);
  EXPECT_EQ(t.jobs[0].time_limit, 3600);
  EXPECT_EQ(AssumedJobs(t, "time limit: 01:00:00 (--time-limit)"), 1);
}

TEST(TraceTest, BatsimJobsTakeTheirRunTimeFromTheirProfile) {
  Trace t = Parse(R"({"nb_res": 4, "jobs": [
      {"id": 0, "subtime": 57.6, "walltime": 300, "res": 2, "profile": "a"},
      {"id": "w!1", "subtime": 10, "walltime": -1, "res": 1, "profile": "b"}],
    "profiles": {"a": {"type": "delay", "delay": 113.8}, "b": {"type": "x", "runtime": 20}}})",
                  TraceFormat::kBatsim);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "w!1");
  EXPECT_EQ(t.jobs[0].time_limit, 20);  // walltime -1: the run time
  EXPECT_EQ(t.jobs[1].id, "0");
  EXPECT_EQ(t.jobs[1].submit, 48);  // 58 - 10
  EXPECT_EQ(t.jobs[1].run, 114);
  EXPECT_EQ(t.jobs[1].nodes, 2);
  EXPECT_EQ(t.jobs[1].time_limit, 300);
}

TEST(TraceTest, BatsimErrorsNameTheJob) {
  EXPECT_EQ(ErrorOf(R"({"jobs": [{"id": 3, "subtime": 1, "res": 1, "profile": "p"}],
                        "profiles": {}})",
                    TraceFormat::kBatsim),
            "t: job 3 (jobs[0]): profile 'p' is not among \"profiles\"");
  EXPECT_EQ(ErrorOf(R"({"jobs": [{"id": 3, "subtime": 1, "res": 0, "profile": "p"}]})",
                    TraceFormat::kBatsim),
            "t: job 3 (jobs[0]): \"res\" is not a positive whole number");
  EXPECT_EQ(ErrorOf("{nope", TraceFormat::kBatsim), "t: not a JSON document");
}

constexpr char kSacct[] =
    "JobID|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqTRES|User|Account|Partition|State\n"
    "12|2026-11-30T23:59:00|2026-12-01T00:00:00|2026-12-01T01:00:00|01:00:00|02:00:00|8|1|"
    "billing=8,cpu=8,gres/gpu=2,mem=16G,node=1|alice|physics|gpu|COMPLETED\n"
    "12.batch|2026-11-30T23:59:00|2026-12-01T00:00:00|2026-12-01T01:00:00|01:00:00||8|1||||"
    "|COMPLETED\n"
    "13_4|2026-12-01T00:00:30|Unknown|Unknown|00:00:00|1-00:00:00|1|1|billing=1,cpu=1,node=1|bob|"
    "chem|cpu|CANCELLED by 1000\n"
    "14|2026-12-01T00:01:00|2026-12-01T00:02:00|2026-12-01T00:05:00|00:03:00|UNLIMITED|4|2|"
    "cpu=4,gres/gpu:a100=4,node=2|bob|chem|gpu|TIMEOUT\n";

TEST(TraceTest, SacctRowsAreJobsAndStepRowsAreSkipped) {
  Trace t = Parse(kSacct, TraceFormat::kSacct);
  ASSERT_EQ(t.jobs.size(), 3u);
  const TraceJob& a = t.jobs[0];
  EXPECT_EQ(a.id, "12");
  EXPECT_EQ(a.line, 2);
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.run, 3600);
  EXPECT_EQ(a.time_limit, 7200);
  EXPECT_EQ(a.cpus, 8);
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.mem_mb, 16384);
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.account, "physics");
  EXPECT_EQ(a.partition, "gpu");
  EXPECT_FALSE(t.jobs[1].ran);      // cancelled while pending
  EXPECT_EQ(t.jobs[1].submit, 90);  // across midnight
  EXPECT_EQ(t.jobs[1].time_limit, 86400);
  EXPECT_EQ(t.jobs[2].gpus, 4);  // typed GPUs counted
  EXPECT_EQ(t.jobs[2].nodes, 2);
  EXPECT_EQ(t.jobs[2].time_limit, 180);  // UNLIMITED: the run time
}

TEST(TraceTest, SacctErrorsNameTheLineAndColumn) {
  EXPECT_EQ(ErrorOf("JobID|Start\n1|2026-01-01T00:00:00\n", TraceFormat::kSacct).substr(0, 62),
            "t:1: the header of sacct --parsable2 output must name JobID an");
  EXPECT_EQ(ErrorOf("JobID|Submit|Elapsed\n1|2026-13-01T00:00:00|00:01:00\n", TraceFormat::kSacct),
            "t:2: Submit: '2026-13-01T00:00:00' is not a time (YYYY-MM-DDTHH:MM:SS)");
  EXPECT_EQ(ErrorOf("JobID|Submit|Elapsed\n1|2026-01-01T00:00:00\n", TraceFormat::kSacct),
            "t:2: 2 fields where the header has 3");
}

TEST(TraceTest, CsvOfMicrosoftItpIsRecognisedAndItsLastLineNeedsNoNewline) {
  Trace t = Parse(
      "job_id,submission_time,duration,num_gpu\n"
      "a1,1999,600,8\n"
      "b2,2100,60,1",
      TraceFormat::kCsv);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "a1");
  EXPECT_EQ(t.jobs[0].gpus, 8);
  EXPECT_EQ(t.jobs[0].cpus, 8);  // one per GPU
  EXPECT_EQ(t.jobs[1].submit, 101);
  EXPECT_EQ(t.jobs[1].run, 60);
  EXPECT_EQ(AssumedJobs(t, "CPUs: 1 per GPU"), 2);
  EXPECT_EQ(AssumedJobs(t, "user: user1"), 2);
}

TEST(TraceTest, CsvOfAlibabaPodsRunsFromScheduledToDeleted) {
  Trace t = Parse(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,12000,16384,1,1000,,LS,Running,0,12537,10\n"
      "p1,6000,12288,1,460,,LS,Running,427,12902,430\n"
      "p2,11908,47104,1,1000,,BE,Pending,1000,1403,\n",
      TraceFormat::kCsv);
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].run, 12527);
  EXPECT_EQ(t.jobs[0].cpus, 12);
  EXPECT_EQ(t.jobs[0].mem_mb, 16384);
  EXPECT_EQ(t.jobs[1].cpus, 6);
  EXPECT_FALSE(t.jobs[2].ran);
  EXPECT_EQ(AssumedJobs(t, "a fraction of a GPU"), 1);
}

TEST(TraceTest, CsvColumnsMappedByTheOption) {
  TraceOptions options;
  options.columns = {{"submit", "t0"}, {"run", "secs"}, {"cpus", "cores"}, {"user", "who"}};
  options.time_limit_factor = 2;
  Trace t = Parse("who,t0,secs,cores\nann,5,30.4,4\n", TraceFormat::kCsv, options);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].user, "ann");
  EXPECT_EQ(t.jobs[0].run, 30);
  EXPECT_EQ(t.jobs[0].cpus, 4);
  EXPECT_EQ(t.jobs[0].time_limit, 60);
  EXPECT_EQ(AssumedJobs(t, "time limit: the run time x 2"), 1);
}

TEST(TraceTest, CsvErrorsNameTheLineAndColumn) {
  EXPECT_EQ(ErrorOf("a,b\n1,2\n", TraceFormat::kCsv),
            "t:1: the header must give submit and run (or start and end) columns; name them with "
            "--columns submit=COL,run=COL,...");
  TraceOptions options;
  options.columns = {{"submit", "t0"}, {"run", "missing"}};
  EXPECT_EQ(ErrorOf("t0,secs\n1,2\n", TraceFormat::kCsv, options),
            "t:1: no column 'missing' (for run) in the header");
  options.columns = {{"sumbit", "t0"}};
  EXPECT_EQ(ErrorOf("t0,secs\n1,2\n", TraceFormat::kCsv, options).substr(0, 41),
            "--columns: 'sumbit' is not a field (field");
  EXPECT_EQ(ErrorOf("submit,run\n1,2\n3,x\n", TraceFormat::kCsv), "t:3: run: 'x' is not a number");
  EXPECT_EQ(ErrorOf("submit,run\n1,2\n3\n", TraceFormat::kCsv),
            "t:3: 1 fields where the header has 2");
}

TEST(TraceTest, FormatsByNameAndByFileName) {
  EXPECT_EQ(*ParseTraceFormat("sacct"), TraceFormat::kSacct);
  EXPECT_EQ(ParseTraceFormat("gwf").status().message(),
            "--format: 'gwf' is not a trace format (swf, batsim, sacct, csv)");
  EXPECT_EQ(*GuessTraceFormat("x/CEA-Curie-2011-2.1-cln.swf.gz"), TraceFormat::kSwf);
  EXPECT_EQ(*GuessTraceFormat("w.json"), TraceFormat::kBatsim);
  EXPECT_EQ(*GuessTraceFormat("cluster01.csv"), TraceFormat::kCsv);
  EXPECT_FALSE(GuessTraceFormat("dump.txt").ok());
}

// The workload traces beside the checkout (../shared/traces, when this
// machine has them): every job trace reads, each job with a run time and a
// time limit, the jobs in submission order from 0.
TEST(TraceTest, EveryJobTraceOfTheSharedFolderReads) {
  const std::filesystem::path dir = std::filesystem::path(MUSTER_SOURCE_DIR) / "../shared/traces";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is not on this machine";
  int read = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string path = entry.path().string();
    auto format = GuessTraceFormat(path);
    if (!format.ok() || path.find("node_list") != std::string::npos) continue;
    auto trace = ReadTraceFile(path, *format, {});
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    ASSERT_FALSE(trace->jobs.empty()) << path;
    EXPECT_EQ(trace->jobs.front().submit, 0) << path;
    for (size_t i = 0; i < trace->jobs.size(); ++i) {
      const TraceJob& job = trace->jobs[i];
      ASSERT_GE(job.run, 0) << path << ":" << job.line;
      ASSERT_GT(job.time_limit, 0) << path << ":" << job.line;
      ASSERT_GT(job.cpus, 0) << path << ":" << job.line;
      if (i > 0) {
        ASSERT_LE(trace->jobs[i - 1].submit, job.submit) << path << ":" << job.line;
      }
    }
    ++read;
  }
  EXPECT_GE(read, 5);
}

}  // namespace
}  // namespace muster::sim

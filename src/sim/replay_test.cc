#include "sim/replay.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "config/config.h"
#include "sim/report.h"
#include "sim/trace.h"

namespace muster::sim {
namespace {

// Two nodes of four CPUs; `extra` adds keys.
config::Config Cluster(const std::string& extra = "") {
  auto cfg = config::ParseConfig(
      "ClusterName=sim\nSlurmctldHost=localhost\n" + extra +
          "NodeName=n[1-2] CPUs=4 RealMemory=8000\n"
          "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
      "/nonexistent/muster.conf", "", /*read_gres_file=*/false);
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  return std::move(cfg).value();
}

Trace Csv(const std::string& rows) {
  auto trace = ParseTrace("id,submit,run,cpus,time_limit\n" + rows, "t.csv", TraceFormat::kCsv, {});
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  return std::move(trace).value();
}

const JobOutcome& Outcome(const ReplayResult& r, const std::string& id) {
  for (const JobOutcome& j : r.jobs) {
    if (j.id == id) return j;
  }
  ADD_FAILURE() << "no job " << id;
  return r.jobs.front();
}

// A small job passes a wide one that waits for the whole cluster, as
// long as it ends before the wide one can start (backfill), and the wide
// one starts the moment the first ends.
TEST(ReplayTest, BackfillLetsAShortJobPassAWideOne) {
  const config::Config cfg = Cluster();
  auto r = Replay(cfg, Csv("a,0,100,4,200\nwide,0,50,8,200\nsmall,10,10,1,20\n"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Outcome(*r, "a").start, 0);
  EXPECT_EQ(Outcome(*r, "wide").start, 100);
  EXPECT_EQ(Outcome(*r, "wide").end, 150);
  EXPECT_EQ(Outcome(*r, "small").start, 10);
  EXPECT_TRUE(Outcome(*r, "small").backfilled);
  EXPECT_FALSE(Outcome(*r, "wide").backfilled);
  EXPECT_EQ(Outcome(*r, "small").state, "COMPLETED");
  EXPECT_EQ(r->size.cpus, 8);
}

// A small job that would still run when the wide one is due waits its turn.
TEST(ReplayTest, ABackfillCandidateThatWouldDelayTheBlockedJobWaits) {
  const config::Config cfg = Cluster();
  auto r = Replay(cfg, Csv("a,0,100,4,100\nwide,0,50,8,200\nlong,10,500,1,500\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Outcome(*r, "wide").start, 100);
  EXPECT_EQ(Outcome(*r, "long").start, 150);
}

// A job runs for its recorded time unless its time limit is shorter: then
// it ends at the limit, TIMEOUT.
TEST(ReplayTest, TheTimeLimitEndsAJobThatWouldRunLonger) {
  const config::Config cfg = Cluster();
  auto r = Replay(cfg, Csv("late,0,600,1,120\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Outcome(*r, "late").end, 120);
  EXPECT_EQ(Outcome(*r, "late").state, "TIMEOUT");
}

// A job the cluster can never run is refused as sbatch would refuse it,
// counted under Slurm's message with the trace line of the first one.
TEST(ReplayTest, ARefusedSubmissionIsCountedWithItsMessageAndLine) {
  const config::Config cfg = Cluster();
  auto r = Replay(cfg, Csv("ok,0,10,1,60\nhuge,0,10,64,60\nhuge2,5,10,64,60\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Outcome(*r, "huge").state, "FAILED");
  EXPECT_EQ(Outcome(*r, "huge").start, -1);
  ASSERT_EQ(r->refused.size(), 1u);
  EXPECT_EQ(r->refused[0].jobs, 2);
  EXPECT_EQ(r->refused[0].first_line, 3);
  EXPECT_FALSE(r->refused[0].message.empty());
  EXPECT_EQ(Outcome(*r, "ok").state, "COMPLETED");
}

// The same configuration and trace give the same bytes, every time, and
// a different policy (here no backfill) different ones.
TEST(ReplayTest, RunsRepeatByteForByte) {
  std::string rows;
  for (int i = 0; i < 40; ++i) {
    rows += std::to_string(i) + "," + std::to_string(i * 7 % 100) + "," +
            std::to_string(5 + i * 37 % 120) + "," + std::to_string(1 + i * 5 % 8) + ",200\n";
  }
  const Trace trace = Csv(rows);
  const config::Config cfg = Cluster();
  auto first = Replay(cfg, trace);
  auto second = Replay(cfg, trace);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(JobsCsv(first->jobs), JobsCsv(second->jobs));
  const Figures figures = Summarize(first->jobs, first->size);
  EXPECT_EQ(figures.all.started, 40);
  EXPECT_EQ(FormatFigures(figures), FormatFigures(Summarize(second->jobs, second->size)));
  const config::Config fifo = Cluster("SchedulerType=sched/builtin\n");
  auto builtin = Replay(fifo, trace);
  ASSERT_TRUE(builtin.ok());
  EXPECT_NE(JobsCsv(first->jobs), JobsCsv(builtin->jobs));
  EXPECT_EQ(Summarize(builtin->jobs, builtin->size).all.backfilled, 0);
}

// No job is ever given more than the cluster has: at every moment the
// CPUs of the jobs running add up to at most the cluster's.
TEST(ReplayTest, NoMomentHoldsMoreCpusThanTheClusterHas) {
  std::string rows;
  for (int i = 0; i < 60; ++i) {
    rows += std::to_string(i) + "," + std::to_string(i * 13 % 100) + "," +
            std::to_string(5 + i * 29 % 60) + "," + std::to_string(1 + i * 3 % 8) + ",120\n";
  }
  const config::Config cfg = Cluster();
  auto r = Replay(cfg, Csv(rows));
  ASSERT_TRUE(r.ok());
  std::map<int64_t, int> delta;
  for (const JobOutcome& j : r->jobs) {
    ASSERT_GE(j.start, j.submit) << j.id;
    delta[j.start] += j.cpus;
    delta[j.end] -= j.cpus;
  }
  int held = 0;
  for (const auto& [t, d] : delta) {
    held += d;
    EXPECT_LE(held, 8) << "at " << t;
  }
}

// A configuration that enforces associations (as a site's does) refuses
// nothing of the trace: its users are given associations, and told so.
TEST(ReplayTest, EnforcedAssociationsAreMadeForTheTracesUsers) {
  const config::Config cfg = Cluster("AccountingStorageEnforce=associations,limits,qos\n");
  ASSERT_TRUE(cfg.enforce_associations);
  auto r = Replay(cfg, Csv("a,0,10,1,60\nb,5,10,2,60\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->refused.empty());
  EXPECT_EQ(r->associations_added, 1);
  EXPECT_EQ(Outcome(*r, "b").state, "COMPLETED");
}

// A timer's pass that only the time separates from the last one is
// skipped when the cluster says it would decide the same: under every
// policy whose decisions move with the time (bf_window reaching a job,
// bf_max_job_test, priorities that grow with age and fall with usage,
// PreemptExemptTime running out), the outcomes are those of a replay that
// plans at every pass, and many passes are skipped.
//
// The sanitizer tree builds at -O0, where 160 jobs take four minutes: it
// replays 60 (same policies, same assertions). The full workload is the
// one that catches a preemptor weighed before a later start of its pass.
#ifdef MUSTER_SANITIZE
constexpr int kSkipTestJobs = 60;
#else
constexpr int kSkipTestJobs = 160;
#endif
TEST(ReplayTest, SkippingPassesOnlyTheTimeSeparatesChangesNoOutcome) {
  const std::string head = "ClusterName=sim\nSlurmctldHost=localhost\n";
  const std::string nodes = "NodeName=n[1-4] CPUs=4 RealMemory=8000\n";
  const std::string batch = "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE\n";
  const std::vector<std::pair<std::string, std::string>> policies = {
      {"backfill", head + nodes + batch},
      {"window", head + "SchedulerParameters=bf_window=10,bf_resolution=1,bf_max_job_test=3\n" +
                     nodes + batch},
      {"multifactor", head +
                          "PriorityType=priority/multifactor\nPriorityWeightAge=5000\n"
                          "PriorityMaxAge=00:20:00\nPriorityWeightFairshare=10000\n"
                          "PriorityDecayHalfLife=00:10:00\nPriorityWeightJobSize=1000\n" +
                          nodes + batch},
      {"preemption", head +
                         "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
                         "PreemptExemptTime=00:02:00\n" +
                         nodes +
                         "PartitionName=low Nodes=ALL Default=YES MaxTime=INFINITE\n"
                         "PartitionName=high Nodes=ALL PriorityTier=10 MaxTime=INFINITE\n"},
  };
  // Jobs of four users arriving in bursts, most ending well before their
  // limits (so planned starts rarely come due before an end), some wide.
  std::string rows = "id,submit,run,cpus,time_limit,user,partition\n";
  uint32_t x = 12345;
  auto next = [&](uint32_t n) {
    x = x * 1103515245 + 12345;
    return (x >> 8) % n;
  };
  int64_t t = 0;
  for (int i = 0; i < kSkipTestJobs; ++i) {
    t += next(4) == 0 ? 200 + next(600) : next(20);
    const uint32_t limit = 60 + next(1800);
    const uint32_t run = next(5) == 0 ? limit + 10 : 1 + next(limit);
    const uint32_t cpus = next(6) == 0 ? 8 + next(9) : 1 + next(4);
    rows += fmt::format("{},{},{},{},{},u{},{}\n", i, t, run, cpus, limit, next(4),
                        next(3) == 0 ? "high" : "low");
  }
  for (const auto& [name, text] : policies) {
    SCOPED_TRACE(name);
    auto cfg = config::ParseConfig(text, "/nonexistent/muster.conf", "", false);
    ASSERT_TRUE(cfg.ok()) << cfg.status().message();
    std::string trace_rows = rows;
    if (name != "preemption") {
      // One partition: the trace's partition column names none.
      for (const char* p : {",high\n", ",low\n"}) {
        for (size_t at; (at = trace_rows.find(p)) != std::string::npos;) {
          trace_rows.replace(at, std::strlen(p), ",\n");
        }
      }
    }
    auto trace = ParseTrace(trace_rows, "t.csv", TraceFormat::kCsv, {});
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    ReplayOptions every;
    every.skip_quiet_passes = false;
    auto skipping = Replay(*cfg, *trace);
    auto planning = Replay(*cfg, *trace, every);
    ASSERT_TRUE(skipping.ok() && planning.ok());
    EXPECT_EQ(JobsCsv(skipping->jobs), JobsCsv(planning->jobs));
    EXPECT_EQ(planning->skipped_passes, 0);
    EXPECT_GT(skipping->skipped_passes, skipping->passes / 4);
    EXPECT_GE(skipping->passes + skipping->skipped_passes, planning->passes);
    EXPECT_EQ(Summarize(skipping->jobs, skipping->size).all.started, kSkipTestJobs);
  }
}

}  // namespace
}  // namespace muster::sim

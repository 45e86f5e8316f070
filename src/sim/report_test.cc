#include "sim/report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::sim {
namespace {

JobOutcome Job(std::string id, int64_t submit, int64_t start, int64_t end, int cpus, int gpus,
               std::string partition, std::string account, std::string state = "COMPLETED") {
  JobOutcome j;
  j.id = std::move(id);
  j.workload = "w";
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.requested_time = 3600;
  j.cpus = cpus;
  j.gpus = gpus;
  j.partition = std::move(partition);
  j.account = std::move(account);
  j.state = std::move(state);
  j.nodes = "n1";
  return j;
}

std::vector<JobOutcome> Sample() {
  std::vector<JobOutcome> jobs = {
      Job("1", 0, 0, 100, 4, 1, "gpu", "phys"),
      Job("2", 10, 100, 200, 4, 1, "gpu", "chem", "TIMEOUT"),
      Job("3", 20, 25, 30, 2, 0, "cpu", "phys"),
      Job("4", 30, -1, -1, 1, 0, "cpu", "chem", "PENDING"),
  };
  jobs[2].backfilled = true;
  jobs[1].preemptions = 1;
  return jobs;
}

TEST(ReportTest, FiguresByGroupWithNearestRankPercentiles) {
  Figures f = Summarize(Sample(), {8, 2, 2});
  EXPECT_EQ(f.all.jobs, 4);
  EXPECT_EQ(f.all.started, 3);
  // Waits 0, 90, 5: p50 is the 2nd of 3 sorted (5), p90 and max the 3rd.
  EXPECT_EQ(f.all.wait_p50, 5);
  EXPECT_EQ(f.all.wait_p90, 90);
  EXPECT_EQ(f.all.wait_max, 90);
  EXPECT_NEAR(f.all.wait_mean, 95.0 / 3, 1e-9);
  // Bounded slowdowns: 1, (90+100)/100 = 1.9, (5+5)/10 = 1.
  EXPECT_NEAR(f.all.bounded_slowdown, 3.9 / 3, 1e-9);
  EXPECT_EQ(f.all.backfilled, 1);
  EXPECT_EQ(f.all.preempted, 1);
  EXPECT_EQ(f.makespan, 200);
  // CPU-seconds 400 + 400 + 10 of 8 CPUs x 200 s; GPU-seconds 200 of 2 x 200.
  EXPECT_NEAR(f.cpu_utilisation, 810.0 / 1600, 1e-9);
  EXPECT_NEAR(f.gpu_utilisation, 0.5, 1e-9);
  EXPECT_EQ(f.by_partition.at("gpu").jobs, 2);
  EXPECT_EQ(f.by_partition.at("cpu").started, 1);
  EXPECT_EQ(f.by_account.at("chem").wait_max, 90);
}

TEST(ReportTest, JobsCsvHasBatsimsColumnsAndStates) {
  std::string csv = JobsCsv(Sample());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
            "requested_time,success,final_state,starting_time,execution_time,finish_time,"
            "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata");
  EXPECT_NE(csv.find("\n1,w,,0,4,3600,1,COMPLETED_SUCCESSFULLY,0,100,100,0,100,1.000000,n1,,"
                     "COMPLETED\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\n2,w,,10,4,3600,0,COMPLETED_WALLTIME_REACHED,100,100,200,90,190,1.900000,"),
            std::string::npos);
  EXPECT_NE(csv.find("\n4,w,,30,1,3600,0,SUBMITTED,,,,,,,n1,,PENDING\n"), std::string::npos);
}

TEST(ReportTest, ScheduleCsvIsOneLineAndRepeatsByteForByte) {
  std::vector<JobOutcome> jobs = Sample();
  ClusterSize size{8, 2, 2};
  std::string a = ScheduleCsv(jobs, Summarize(jobs, size), size, 0);
  std::string b = ScheduleCsv(jobs, Summarize(jobs, size), size, 0);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 2);
  EXPECT_NE(a.find(",200,"), std::string::npos);  // makespan
  EXPECT_EQ(FormatFigures(Summarize(jobs, size)), FormatFigures(Summarize(jobs, size)));
}

TEST(ReportTest, FormattedFiguresNameEachGroup) {
  std::string text = FormatFigures(Summarize(Sample(), {8, 2, 2}));
  EXPECT_NE(text.find("Jobs 4 (started 3), makespan 200 s, CPU utilisation 50.6%, GPU "
                      "utilisation 50.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nPartition "), std::string::npos);
  EXPECT_NE(text.find("\nchem "), std::string::npos);
}

}  // namespace
}  // namespace muster::sim

// seff is not installed beside the oracle's Slurm 22.05.8; the job values
// are those of job 13188 there (sbatch -J mem --mem=1G -c 2 --wrap='python3
// ... 300 MB, 40 s busy'; sacct: TotalCPU 00:38.902, MaxRSS 322132K,
// Elapsed 00:00:40, ReqMem 1G) and the layout is contrib/seff's.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/render/render.h"

namespace muster::render {
namespace {

store::JobRecord MemJob() {
  store::JobRecord j;
  j.job_id = 13188;
  j.cluster = "anchor";
  j.user = "root";
  j.group = "root";
  j.state = "COMPLETED";
  j.nnodes = 1;
  j.ncpus = 2;
  j.start_time = 1000;
  j.end_time = 1040;
  j.total_cpu_ms = 38902;
  j.req_mem_mb = 1024;
  return j;
}

TEST(SeffTest, CompletedJob) {
  store::StepRecord s;
  s.job_id = 13188;
  s.step_id = "batch";
  s.ntasks = 1;
  s.max_rss_kb = 322132;
  EXPECT_EQ(RenderSeff(MemJob(), {s}, 2000),
            "Job ID: 13188\n"
            "Cluster: anchor\n"
            "User/Group: root/root\n"
            "State: COMPLETED (exit code 0)\n"
            "Nodes: 1\n"
            "Cores per node: 2\n"
            "CPU Utilized: 00:00:38\n"
            "CPU Efficiency: 48.63% of 00:01:20 core-walltime\n"
            "Job Wall-clock time: 00:00:40\n"
            "Memory Utilized: 314.58 MB\n"
            "Memory Efficiency: 30.72% of 1.00 GB\n");
}

TEST(SeffTest, SingleCoreFailedNoSamples) {
  store::JobRecord j = MemJob();
  j.ncpus = 1;
  j.state = "FAILED";
  j.exit_code = 3;
  j.end_time = 1001;
  j.total_cpu_ms = 3;
  j.req_mem_mb = 1000;
  EXPECT_EQ(RenderSeff(j, {}, 2000),
            "Job ID: 13188\n"
            "Cluster: anchor\n"
            "User/Group: root/root\n"
            "State: FAILED (exit code 3)\n"
            "Cores: 1\n"
            "CPU Utilized: 00:00:00\n"
            "CPU Efficiency: 0.30% of 00:00:01 core-walltime\n"
            "Job Wall-clock time: 00:00:01\n"
            "Memory Utilized: 0.00 MB\n"
            "Memory Efficiency: 0.00% of 1000.00 MB\n");
}

TEST(SeffTest, RunningJobWarns) {
  store::JobRecord j = MemJob();
  j.state = "RUNNING";
  j.end_time = 0;
  const std::string out = RenderSeff(j, {}, 1080);
  EXPECT_NE(out.find("Job Wall-clock time: 00:01:20\n"), std::string::npos) << out;
  EXPECT_NE(out.find("WARNING: Efficiency statistics may be misleading for RUNNING jobs.\n"),
            std::string::npos);
}

}  // namespace
}  // namespace muster::render

// Expected text from the oracle's Slurm 22.05.8: job 487, a batch script
// running `srun -n2` (step 0: two tasks on cpu01, each 2920K virtual,
// 1676K and 1628K resident, 90028737 bytes read and 60000001 written).
#include "cli/render/sstat_render.h"

#include <gtest/gtest.h>

namespace muster::render {
namespace {

core::TaskStats Task(int task, int64_t rss_kb) {
  core::TaskStats t;
  t.job_id = 487;
  t.step = "0";
  t.node = "cpu01";
  t.task = task;
  t.pids = {17753 + task};
  t.cpu_ms = 500;
  t.rss_kb = t.rss_peak_kb = rss_kb;
  t.vmem_kb = t.vmem_peak_kb = 2920;
  t.read_bytes = 90028737;
  t.write_bytes = 60000001;
  return t;
}

SstatRow Step0() {
  SstatRow row;
  row.stats = core::SummarizeStep(487, "0", {Task(0, 1676), Task(1, 1628)});
  row.nodelist = "cpu01";
  row.ntasks = 2;
  return row;
}

TEST(SstatRenderTest, DefaultTableIsSlurms) {
  auto table = SstatTable::Make(kSstatDefaultFormat, false, 0);
  ASSERT_TRUE(table.ok());
  const std::string header = table->Header();
  EXPECT_EQ(header.substr(0, header.find('\n')),
            "JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode "
            "MaxRSSTask     AveRSS MaxPages MaxPagesNode   MaxPagesTask   AvePages     MinCPU "
            "MinCPUNode MinCPUTask     AveCPU   NTasks AveCPUFreq ReqCPUFreqMin ReqCPUFreqMax "
            "ReqCPUFreqGov ConsumedEnergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTask  AveDiskRead "
            "MaxDiskWrite MaxDiskWriteNode MaxDiskWriteTask AveDiskWrite TRESUsageInAve "
            "TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode "
            "TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve TRESUsageOutMax TRESUsageOutMaxNode "
            "TRESUsageOutMaxTask TRESUsageOutMin TRESUsageOutMinNode TRESUsageOutMinTask "
            "TRESUsageOutTot ");
  EXPECT_EQ(table->Row(Step0()),
            "487.0             2920K          cpu01              0      2920K      1676K      cpu01 "
            "         0      1652K        0        cpu01              0          0   00:00:00      "
            "cpu01          0   00:00:00        2          0       Unknown       Unknown       "
            "Unknown              0     90028737           cpu01               0     90028737     "
            "60000001            cpu01                0     60000001 cpu=00:00:00,+ cpu=00:00:00,+ "
            "cpu=cpu01,energy=+ cpu=00:00:00,fs/d+ cpu=00:00:00,+ cpu=cpu01,energy=+ "
            "cpu=00:00:00,fs/d+ cpu=00:00:01,+ energy=0,fs/di+ energy=0,fs/di+ energy=cpu01,fs/di+ "
            "          fs/disk=0 energy=0,fs/di+ energy=cpu01,fs/di+           fs/disk=0 "
            "energy=0,fs/di+ \n");
}

TEST(SstatRenderTest, TresStringsAreSlurms) {
  auto table = SstatTable::Make(
      "JobID,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,"
      "TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutAve,TRESUsageOutMax,"
      "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,TRESUsageOutTot,MinCPU,MinCPUNode,"
      "MinCPUTask,AvePages,MaxPages,AveDiskRead,MaxDiskWrite,ConsumedEnergy,AveCPUFreq,ReqCPUFreq",
      false, 2);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->Row(Step0()),
            "487.0|cpu=00:00:00,energy=0,fs/disk=90028737,mem=1652K,pages=0,vmem=2920K|"
            "cpu=00:00:00,energy=0,fs/disk=90028737,mem=1676K,pages=0,vmem=2920K|"
            "cpu=cpu01,energy=cpu01,fs/disk=cpu01,mem=cpu01,pages=cpu01,vmem=cpu01|"
            "cpu=00:00:00,fs/disk=0,mem=0,pages=0,vmem=0|"
            "cpu=00:00:00,energy=0,fs/disk=90028737,mem=1628K,pages=0,vmem=2920K|"
            "cpu=cpu01,energy=cpu01,fs/disk=cpu01,mem=cpu01,pages=cpu01,vmem=cpu01|"
            "cpu=00:00:00,fs/disk=0,mem=1,pages=0,vmem=0|"
            "cpu=00:00:01,energy=0,fs/disk=180057474,mem=3304K,pages=0,vmem=5840K|"
            "energy=0,fs/disk=60000001|energy=0,fs/disk=60000001|energy=cpu01,fs/disk=cpu01|"
            "fs/disk=0|energy=0,fs/disk=60000001|energy=0,fs/disk=120000002|"
            "00:00:00|cpu01|0|0|0|90028737|60000001|0|0|Unknown\n");
}

TEST(SstatRenderTest, NoConvertPrintsBytes) {
  auto table = SstatTable::Make("JobID,MaxRSS,AveVMSize,TRESUsageInMax", true, 2);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->Header(), "JobID|MaxRSS|AveVMSize|TRESUsageInMax\n");
  EXPECT_EQ(table->Row(Step0()),
            "487.0|1716224|2990080|"
            "cpu=00:00:00,energy=0,fs/disk=90028737,mem=1716224,pages=0,vmem=2990080\n");
}

TEST(SstatRenderTest, BatchStepAndWidths) {
  core::TaskStats t = Task(0, 71648);
  t.step = "batch";
  SstatRow row;
  row.stats = core::SummarizeStep(487, "batch", {t});
  row.nodelist = "cpu01";
  row.ntasks = 1;
  auto table = SstatTable::Make("jobid%20,avecpu%-15,maxrss%5,reqcpufreqmin", false, 0);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->Header(),
            "               JobID AveCPU          MaxRS ReqCPUFreqMin \n"
            "-------------------- --------------- ----- ------------- \n");
  EXPECT_EQ(table->Row(row), "           487.batch 00:00:00        7164+             0 \n");
  EXPECT_EQ(table->Row(row).size(), table->Header().find('\n') + 1);
  auto bad = SstatTable::Make("jobid,bogus", false, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Invalid field requested: \"bogus\"");
}

TEST(SstatRenderTest, GpusAreNodeCentric) {
  SstatRow row = Step0();
  row.gpus = {{"cpu01", 60, int64_t{2} << 30}};
  auto table = SstatTable::Make("TRESUsageInAve,TRESUsageInMaxTask", false, 2);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->Row(row),
            "cpu=00:00:00,energy=0,fs/disk=90028737,gres/gpumem=2G,gres/gpuutil=60,mem=1652K,"
            "pages=0,vmem=2920K|cpu=00:00:00,fs/disk=0,gres/gpumem=-1,gres/gpuutil=-1,mem=0,"
            "pages=0,vmem=0\n");
}

TEST(SstatRenderTest, HelpFormatLaysOutFourAField) {
  const std::string text = SstatHelpFormat();
  EXPECT_EQ(text.substr(0, text.find('\n') + 1),
            "AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       \n");
  EXPECT_TRUE(text.ends_with("TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot    \n"));
}

}  // namespace
}  // namespace muster::render

#include "agent/health.h"

#include <gtest/gtest.h>

#include "agent/hardware.h"
#include "agent/job_usage.h"

namespace muster::agent {
namespace {

core::NodeConfig GpuNode() {
  core::NodeConfig n;
  n.name = "gpu01";
  n.gres.push_back({"gpu", "h100", 2, {}, {}});
  return n;
}

core::GpuSample Gpu(int index) {
  core::GpuSample g;
  g.node = "gpu01";
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.model = "NVIDIA H100 80GB HBM3";
  return g;
}

std::vector<std::string> Checks(const std::vector<HealthFailure>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(x.check + ": " + x.detail);
  return out;
}

TEST(Health, HealthyNodePasses) {
  config::HealthConfig cfg;
  cfg.checks = {"gpu_count", "gpu_model", "ecc", "remapped_rows", "xid", "nvml", "mounts"};
  cfg.mounts = {"/"};
  const core::NodeConfig node = GpuNode();
  HealthInputs in{&node, {Gpu(0), Gpu(1)}, 2, "", "/tmp"};
  EXPECT_TRUE(RunBuiltinChecks(cfg, in).empty());
}

TEST(Health, EachCheckNamesWhatItSaw) {
  config::HealthConfig cfg;
  cfg.checks = {"nvml",        "gpu_count", "gpu_model",     "mounts",
                "spool_space", "ecc",       "remapped_rows", "xid"};
  cfg.mounts = {"/nonexistent-mount"};
  cfg.spool_min_free_mb = int64_t{1} << 40;  // more than any disk has
  const core::NodeConfig node = GpuNode();
  core::GpuSample a = Gpu(0);
  a.model = "NVIDIA A100-SXM4-80GB";
  a.ecc_volatile_uncorrected = 3;
  core::GpuSample b = Gpu(1);
  b.remapping_failed = true;
  b.last_xid = 79;
  HealthInputs in{&node, {a, b}, 1, "GPU is lost", "/tmp"};
  std::vector<std::string> got = Checks(RunBuiltinChecks(cfg, in));
  ASSERT_EQ(got.size(), 8u);
  // The free space is this machine's.
  EXPECT_TRUE(got[4].starts_with("spool_space: /tmp has ")) << got[4];
  EXPECT_TRUE(got[4].ends_with(" MiB free, below 1099511627776 MiB")) << got[4];
  got.erase(got.begin() + 4);
  EXPECT_EQ(got,
            (std::vector<std::string>{"nvml: GPU is lost", "gpu_count: 1 GPUs found, 2 configured",
                                      "gpu_model: GPU 0 is NVIDIA A100-SXM4-80GB, configured h100",
                                      "mounts: /nonexistent-mount is not mounted",
                                      "ecc: GPU 0 (GPU-0): 3 uncorrectable ECC errors",
                                      "remapped_rows: GPU 1 (GPU-1): row remapping failed",
                                      "xid: GPU 1 (GPU-1): Xid 79"}));
  // Only the checks configured run; an application's Xid (13) drains nothing.
  cfg.checks = {"xid"};
  b.last_xid = 13;
  in.gpus = {b};
  EXPECT_TRUE(RunBuiltinChecks(cfg, in).empty());
}

TEST(Health, MountPoints) {
  EXPECT_TRUE(IsMountPoint("/"));
  EXPECT_TRUE(IsMountPoint("/proc"));
  EXPECT_FALSE(IsMountPoint("/nonexistent-mount"));
}

TEST(JobUsage, CgroupOfEachController) {
  const std::string v1 =
      "12:pids:/muster/job_7\n5:cpu,cpuacct:/muster/job_7\n4:memory:/muster/job_7\n"
      "0::/system.slice/muster.service\n";
  EXPECT_EQ(CgroupOfController(v1, "memory"), "/muster/job_7");
  EXPECT_EQ(CgroupOfController(v1, "cpuacct"), "/muster/job_7");
  EXPECT_EQ(CgroupOfController(v1, ""), "/system.slice/muster.service");
  EXPECT_EQ(CgroupOfController(v1, "cpuset"), "");
  EXPECT_EQ(CgroupOfController("0::/muster/job_9\n", ""), "/muster/job_9");
}

TEST(Hardware, MismatchesNameBothValuesAndGpusOnlyWhereNvmlAnswered) {
  core::NodeConfig node = GpuNode();
  node.cpus = 64;
  node.sockets = 2;
  node.cores_per_socket = 32;
  node.threads_per_core = 1;
  node.real_memory_mb = 500000;
  DetectedHardware hw;
  hw.cpus = 64;
  hw.sockets = 2;
  hw.cores = 64;
  hw.threads_per_core = 1;
  hw.memory_mb = 515000;
  EXPECT_TRUE(CompareHardware(node, hw).empty());
  hw.cpus = 128;
  hw.threads_per_core = 2;
  hw.memory_mb = 256000;
  EXPECT_EQ(CompareHardware(node, hw),
            (std::vector<std::string>{
                "CPUs: configured 64, detected 128", "ThreadsPerCore: configured 1, detected 2",
                "RealMemory: configured 500000 MB, the OS has 256000 MB: jobs may be given memory "
                "the node does not have (set RealMemory to at most 256000, less what the OS and "
                "daemons need)"}));
  hw = {64, 2, 64, 1, 1, 515000, true, "550.54.15", {}};
  hw.gpus.push_back({0, "GPU-a", "NVIDIA H200", 141LL << 30, "00000000:19:00.0", 0, false, {}});
  EXPECT_EQ(CompareHardware(node, hw),
            (std::vector<std::string>{"Gres gpu: configured 2, NVML finds 1",
                                      "Gres gpu 0: configured type h100, NVML finds NVIDIA H200"}));
  EXPECT_EQ(HardwareSummary(hw),
            "CPUs=64 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 NUMA=1 Memory=515000M "
            "GPUs=1(NVIDIA H200,141G,00000000:19:00.0,NUMA0) Driver=550.54.15");
}

TEST(Hardware, HwlocSeesThisMachine) {
  auto hw = DetectHardware(nullptr);
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_GE(hw->cpus, 1);
  EXPECT_GE(hw->cores, 1);
  EXPECT_GT(hw->memory_mb, 0);
  EXPECT_FALSE(hw->gpus_detected);
}

TEST(Nvml, AbsentLibraryIsNotFound) {
  auto nvml = LoadNvml("libnvidia-ml-does-not-exist.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_NE(nvml.status().message().find("cannot load libnvidia-ml-does-not-exist.so.1"),
            std::string::npos);
}

}  // namespace
}  // namespace muster::agent

#include "core/node_samples.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

NodeSamples TwoGpusOneJob() {
  NodeSamples s;
  s.time = 1000;
  GpuSample g;
  g.node = "gpu01";
  g.uuid = "GPU-1";
  g.model = "NVIDIA H100 80GB HBM3";
  g.emulated = true;
  g.utilization_pct = 87;
  g.memory_total_bytes = 80LL << 30;
  g.memory_used_bytes = 60LL << 30;
  g.power_mw = 650000;
  s.gpus.push_back(g);
  g.index = 1;
  g.uuid = "GPU-2";
  g.utilization_pct = 0;
  g.ecc_volatile_uncorrected = 2;
  s.gpus.push_back(g);
  s.jobs.push_back({7, "gpu01", 1500, 1 << 20, 2 << 20});
  s.jobs.push_back({8, "gpu01", 10, 1, 1});  // ended: no labels
  return s;
}

TEST(NodeSamples, JsonRoundTrip) {
  const NodeSamples s = TwoGpusOneJob();
  auto back = NodeSamplesFromJson(ToJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->time, 1000);
  ASSERT_EQ(back->gpus.size(), 2u);
  EXPECT_EQ(back->gpus[1].ecc_volatile_uncorrected, 2);
  EXPECT_EQ(back->gpus[0].memory_used_bytes, 60LL << 30);
  EXPECT_EQ(back->jobs[0].cpu_ms, 1500);
  EXPECT_FALSE(NodeSamplesFromJson({{"time", "soon"}}).ok());
}

TEST(NodeSamples, SeriesCarryTheHoldingJobsLabelsOnly) {
  const NodeSamples s = TwoGpusOneJob();
  LabelLookup labels;
  labels.gpu_holder = [](const std::string& node, int index) -> std::optional<JobLabels> {
    if (node == "gpu01" && index == 0) return JobLabels{7, "alice", "physics", "train"};
    return std::nullopt;
  };
  labels.job = [](uint32_t id) -> std::optional<JobLabels> {
    if (id == 7) return JobLabels{7, "alice", "physics", "train"};
    return std::nullopt;
  };
  std::string out;
  RenderNodeSamples({&s}, labels, &out);
  EXPECT_NE(
      out.find("muster_gpu_utilization_ratio{node=\"gpu01\",gpu=\"0\",uuid=\"GPU-1\","
               "model=\"NVIDIA H100 80GB HBM3\",emulated=\"true\",hpc_job=\"7\",user=\"alice\","
               "account=\"physics\",partition=\"train\"} 0.87\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("muster_gpu_utilization_ratio{node=\"gpu01\",gpu=\"1\",uuid=\"GPU-2\","
                     "model=\"NVIDIA H100 80GB HBM3\",emulated=\"true\"} 0\n"),
            std::string::npos);
  EXPECT_NE(out.find("type=\"uncorrected\",counter=\"volatile\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("muster_gpu_power_watts{"), std::string::npos);
  EXPECT_NE(out.find("muster_job_cpu_seconds_total{node=\"gpu01\",hpc_job=\"7\",user=\"alice\","
                     "account=\"physics\",partition=\"train\"} 1.5\n"),
            std::string::npos);
  // Job 8 ended: none of its series are left.
  EXPECT_EQ(out.find("hpc_job=\"8\""), std::string::npos);
  // One HELP per family.
  EXPECT_EQ(out.find("# HELP muster_gpu_utilization_ratio"),
            out.rfind("# HELP muster_gpu_utilization_ratio"));
}

TEST(NodeSamples, WatchedFilesystemsAsNodeExportersSeries) {
  NodeSamples s;
  s.filesystems.push_back({"gpu01", "/scratch", "/dev/nvme0n1p1", "xfs", true, 1000 << 20,
                           300 << 20, 250 << 20, 5000, 4000});
  s.filesystems.push_back({"gpu01", "/home", "fs01:/home", "nfs4", false, 0, 0, 0, 0, 0});
  auto back = NodeSamplesFromJson(ToJson(s));
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->filesystems.size(), 2u);
  EXPECT_EQ(back->filesystems[0].avail_bytes, 250 << 20);
  EXPECT_EQ(back->filesystems[1].device, "fs01:/home");
  EXPECT_FALSE(back->filesystems[1].ok);
  // An agent from before filesystems were sampled sends none.
  back = NodeSamplesFromJson({{"time", 1}});
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->filesystems.empty());

  std::string out;
  RenderNodeSamples({&s}, {}, &out);
  const std::string scratch =
      "{node=\"gpu01\",mountpoint=\"/scratch\",device=\"/dev/nvme0n1p1\",fstype=\"xfs\"}";
  for (const std::string& line :
       {std::string("# TYPE muster_node_filesystem_size_bytes gauge\n"),
        "muster_node_filesystem_size_bytes" + scratch + " 1048576000\n",
        "muster_node_filesystem_free_bytes" + scratch + " 314572800\n",
        "muster_node_filesystem_avail_bytes" + scratch + " 262144000\n",
        "muster_node_filesystem_files" + scratch + " 5000\n",
        "muster_node_filesystem_files_free" + scratch + " 4000\n",
        "muster_node_filesystem_device_error" + scratch + " 0\n",
        std::string("muster_node_filesystem_device_error{node=\"gpu01\",mountpoint=\"/home\","
                    "device=\"fs01:/home\",fstype=\"nfs4\"} 1\n")}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << " not in\n" << out;
  }
  // A filesystem that did not answer has no sizes (not zeros, which would
  // read as full).
  EXPECT_EQ(out.find("muster_node_filesystem_avail_bytes{node=\"gpu01\",mountpoint=\"/home\""),
            std::string::npos);
}

}  // namespace
}  // namespace muster::core

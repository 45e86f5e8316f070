// The emulated GPUs' control files (docs/metrics.md): what a job or a test
// writes into a GPU's control directory is what the GPU reports.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agent/gpus.h"

namespace muster::agent {
namespace {

class EmulatedGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/gpus." + std::to_string(::getpid());
    std::filesystem::create_directories(dir_ + "/0");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Set(const char* file, const char* text) { std::ofstream(dir_ + "/0/" + file) << text; }
  core::GpuSample Sample() { return EmulatedGpuSample("c", "gpu01", "h100", 0, dir_); }
  std::string dir_;
};

TEST_F(EmulatedGpuTest, IdleByDefault) {
  const core::GpuSample g = Sample();
  EXPECT_TRUE(g.emulated);
  EXPECT_EQ(g.throttle_reasons, 0x1u);  // GPU idle
  EXPECT_EQ(g.nvlink_errors, 0);
  EXPECT_EQ(g.xid_events, 0);
  Set("utilization", "50");
  EXPECT_EQ(Sample().throttle_reasons, 0u);
}

TEST_F(EmulatedGpuTest, ControlFilesSetThrottleReasonsNvlinkErrorsAndXid) {
  Set("throttle_reasons", "0x48");  // hardware slowdown and thermal, as NVML writes them
  Set("nvlink_errors", "1234");
  Set("xid", "79");
  core::GpuSample g = Sample();
  EXPECT_EQ(g.throttle_reasons, 0x48u);
  EXPECT_EQ(g.nvlink_errors, 1234);
  EXPECT_EQ(g.last_xid, 79);
  EXPECT_EQ(g.xid_events, 1);
  Set("throttle_reasons", "128");  // decimal too: power brake
  EXPECT_EQ(Sample().throttle_reasons, 0x80u);
  // Nonsense keeps the default.
  Set("throttle_reasons", "0xzz");
  Set("nvlink_errors", "-5");
  g = Sample();
  EXPECT_EQ(g.throttle_reasons, 0x1u);
  EXPECT_EQ(g.nvlink_errors, 0);
}

}  // namespace
}  // namespace muster::agent

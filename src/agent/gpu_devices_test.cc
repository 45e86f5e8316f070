#include "agent/gpu_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

namespace muster::agent {
namespace {

namespace fs = std::filesystem;
using stepd::DeviceRule;
using ::testing::ElementsAre;

TEST(MigSlicesTest, ReadsMigProfiles) {
  EXPECT_EQ(MigSlices("1g.10gb"), 1);
  EXPECT_EQ(MigSlices("3g.40gb"), 3);
  EXPECT_EQ(MigSlices("7g.80gb"), 7);
  EXPECT_EQ(MigSlices("1g.10gb+me"), 1);
  for (const char* not_mig :
       {"h100", "", "g.10gb", "8g.80gb", "1g.gb", "1g.10", "1g.10gbx", "a100"}) {
    EXPECT_EQ(MigSlices(not_mig), std::nullopt) << not_mig;
  }
}

constexpr char kProcDevices[] =
    "Character devices:\n  1 mem\n  4 tty\n120 local\n121 other\n136 pts\n195 nvidia-frontend\n"
    "236 nvidia-caps\n\nBlock devices:\n122 somedisk\n";

TEST(FreeCharMajorTest, TakesTheFirstLocalMajorNoDriverHolds) {
  util::Result<uint32_t> m = FreeCharMajor(kProcDevices);
  ASSERT_TRUE(m.ok());
  // 120 and 121 are held; block majors do not count.
  EXPECT_EQ(*m, 122u);
  EXPECT_EQ(*FreeCharMajor("Character devices:\n  1 mem\n"), 120u);
}

TEST(CharMajorOfTest, FindsADriverByName) {
  EXPECT_EQ(CharMajorOf(kProcDevices, "nvidia-caps"), 236u);
  EXPECT_EQ(CharMajorOf(kProcDevices, "nvidia-frontend"), 195u);
  EXPECT_EQ(CharMajorOf(kProcDevices, "somedisk"), std::nullopt);  // a block driver
  EXPECT_EQ(CharMajorOf(kProcDevices, "nvidia"), std::nullopt);
}

TEST(ParseMigMinorsTest, ReadsGpuAndComputeInstances) {
  auto m = ParseMigMinors(
      "config 1\nmonitor 2\ngpu0/gi1/access 3\ngpu0/gi1/ci0/access 4\n"
      "gpu1/gi2/access 30\n");
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m["gpu0/gi1"], 3u);
  EXPECT_EQ(m["gpu0/gi1/ci0"], 4u);
  EXPECT_EQ(m["gpu1/gi2"], 30u);
}

TEST(EmulatedDevicesTest, OneFilePerGpuNumberedByTheNodesSlot) {
  auto d = MakeEmulatedDevices("/x/dev/gpu02", "c", "gpu02", 120, 1, {"h100", "h100"}, false);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[1].index, 1);
  EXPECT_THAT((*d)[1].paths, ElementsAre("/x/dev/gpu02/nvidia1"));
  EXPECT_THAT((*d)[1].numbers, ElementsAre(DeviceRule{'c', 120, 257}));
  EXPECT_EQ((*d)[1].uuid, "");
}

TEST(EmulatedDevicesTest, MigInstancesShareTheirGpuAndHaveCapabilities) {
  // 3 + 3 + 1 slices fill the first GPU; the next 3g needs a second one,
  // and a whole GPU after them a third.
  auto d = MakeEmulatedDevices("/x", "c", "n", 120, 0,
                               {"3g.40gb", "3g.40gb", "1g.10gb", "3g.40gb", "h100"}, false);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->size(), 5u);
  EXPECT_THAT((*d)[0].paths, ElementsAre("/x/nvidia0", "/x/nvidia-caps/nvidia-cap1",
                                         "/x/nvidia-caps/nvidia-cap2"));
  EXPECT_THAT((*d)[2].paths, ElementsAre("/x/nvidia0", "/x/nvidia-caps/nvidia-cap5",
                                         "/x/nvidia-caps/nvidia-cap6"));
  EXPECT_EQ((*d)[3].paths[0], "/x/nvidia1");
  EXPECT_THAT((*d)[4].paths, ElementsAre("/x/nvidia2"));
  EXPECT_TRUE((*d)[0].uuid.starts_with("MIG-")) << (*d)[0].uuid;
  EXPECT_NE((*d)[0].uuid, (*d)[1].uuid);
  EXPECT_EQ((*d)[4].uuid, "");
}

TEST(GpuDevicesTest, DeniesEveryDeviceTheJobWasNotGiven) {
  GpuDevices devices;
  devices.Set("a", *MakeEmulatedDevices("/a", "c", "a", 120, 0, {"h100", "h100", "h100"}, false));
  devices.Set("b", *MakeEmulatedDevices("/b", "c", "b", 120, 1, {"h100"}, false));
  // GPU 1 of a: the rest of a and all of b are refused.
  EXPECT_THAT(
      devices.DeniedFor({{"a", {1}}}),
      ElementsAre(DeviceRule{'c', 120, 0}, DeviceRule{'c', 120, 2}, DeviceRule{'c', 120, 256}));
  // A job without GPUs is refused them all.
  EXPECT_EQ(devices.DeniedFor({}).size(), 4u);
  EXPECT_TRUE(devices.DeniedFor({{"a", {0, 1, 2}}, {"b", {0}}}).empty());
}

TEST(GpuDevicesTest, AMigInstanceKeepsItsGpuFileButNotItsSiblingsCapabilities) {
  GpuDevices devices;
  devices.Set("m",
              *MakeEmulatedDevices("/m", "c", "m", 120, 0, {"1g.10gb", "1g.10gb", "h100"}, false));
  std::vector<DeviceRule> denied = devices.DeniedFor({{"m", {0}}});
  // nvidia0 stays open (both instances are on it); the sibling's two
  // capabilities and the whole GPU are refused.
  EXPECT_THAT(denied, ElementsAre(DeviceRule{'c', 120, 1}, DeviceRule{'c', 120, 130},
                                  DeviceRule{'c', 120, 131}));
  std::vector<std::string> uuids = devices.MigUuids("m");
  ASSERT_EQ(uuids.size(), 3u);
  EXPECT_TRUE(uuids[1].starts_with("MIG-"));
  EXPECT_EQ(uuids[2], "");
  EXPECT_TRUE(devices.MigUuids("none").empty());
}

TEST(NvmlDevicesTest, MapsGpusAndMigInstancesToTheirFiles) {
  std::vector<DetectedGpu> gpus(2);
  gpus[0].index = 0;
  gpus[0].minor = 0;
  gpus[1].index = 1;
  gpus[1].minor = 3;
  gpus[1].mig_enabled = true;
  gpus[1].mig_devices = {{"MIG-aaa", "1g.10gb", 1, 0}, {"MIG-bbb", "1g.10gb", 2, 0}};
  std::vector<std::string> problems;
  std::vector<GresDevice> d =
      NvmlDevices(gpus, "gpu3/gi1/access 12\ngpu3/gi1/ci0/access 13\n", kProcDevices, &problems);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_THAT(d[0].paths, ElementsAre("/dev/nvidia0"));
  EXPECT_THAT(d[1].paths, ElementsAre("/dev/nvidia3", "/dev/nvidia-caps/nvidia-cap12",
                                      "/dev/nvidia-caps/nvidia-cap13"));
  EXPECT_EQ(d[1].uuid, "MIG-aaa");
  if (!fs::exists("/dev/nvidia-caps/nvidia-cap12")) {
    EXPECT_EQ(d[1].numbers[1], (DeviceRule{'c', 236, 12}));
  }
  // The second instance's capabilities are not listed: named, and it
  // keeps its GPU's file.
  EXPECT_THAT(d[2].paths, ElementsAre("/dev/nvidia3"));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("MIG-bbb"), std::string::npos);
}

TEST(DevicesFromFilesTest, TakesTheDevicesGresConfNames) {
  core::NodeConfig node;
  node.name = "g1";
  core::GresSpec g;
  g.name = "gpu";
  g.count = 2;
  g.device_files = {{"/dev/null"}, {"/no/such/nvidia1"}};
  node.gres.push_back(g);
  std::vector<std::string> problems;
  std::vector<GresDevice> d = DevicesFromFiles(node, &problems);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].numbers[0], (DeviceRule{'c', 1, 3}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("/no/such/nvidia1"), std::string::npos);
}

TEST(EmulatedDevicesTest, MakesCharacterDevicesAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod needs root";
  const fs::path dir = fs::temp_directory_path() / ("muster-gpudev-" + std::to_string(::getpid()));
  auto d = MakeEmulatedDevices(dir.string(), "c", "n", 120, 2, {"1g.10gb", "h100"}, true);
  ASSERT_TRUE(d.ok()) << d.status().message();
  struct stat st {};
  ASSERT_EQ(::stat((dir / "nvidia1").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(120, 513));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  EXPECT_TRUE(fs::exists(dir / "nvidiactl"));
  EXPECT_TRUE(fs::exists(dir / "nvidia-caps/nvidia-cap2"));
  // Made again, they are kept.
  ASSERT_TRUE(MakeEmulatedDevices(dir.string(), "c", "n", 120, 2, {"1g.10gb", "h100"}, true).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace muster::agent

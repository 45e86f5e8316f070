#include "stepd/device_filter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

namespace muster::stepd {
namespace {

namespace fs = std::filesystem;

TEST(DeviceRuleTest, RoundTripsThroughItsText) {
  const DeviceRule rule{'c', 195, 3};
  EXPECT_EQ(rule.ToString(), "c 195:3");
  util::Result<DeviceRule> back = ParseDeviceRule(rule.ToString());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, rule);
  util::Result<DeviceRule> block = ParseDeviceRule("b 7:0");
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(block->type, 'b');
}

TEST(DeviceRuleTest, RefusesWhatIsNotARule) {
  for (const char* bad :
       {"", "c", "c 195", "x 1:2", "c 1:", "c :2", "c1:2", "c 1:2 rwm", "c -1:2"}) {
    util::Result<DeviceRule> r = ParseDeviceRule(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("bad device rule"), std::string::npos);
    }
  }
}

TEST(DeviceRuleTest, ReadsTheNumbersOfADeviceFile) {
  util::Result<DeviceRule> null = DeviceOfFile("/dev/null");
  ASSERT_TRUE(null.ok()) << null.status().message();
  EXPECT_EQ(*null, (DeviceRule{'c', 1, 3}));
  EXPECT_EQ(DeviceOfFile("/etc/hostname").status().code(), util::Code::kInvalidArgument);
  EXPECT_EQ(DeviceOfFile("/no/such/device").status().code(), util::Code::kNotFound);
}

// The cgroup v2 hierarchy of this machine: /sys/fs/cgroup itself, or the
// unified one of a hybrid layout. "" when there is none.
std::string V2Root() {
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    if (::access((std::string(root) + "/cgroup.procs").c_str(), W_OK) == 0 &&
        ::access((std::string(root) + "/cgroup.controllers").c_str(), F_OK) == 0) {
      return root;
    }
  }
  return "";
}

// errno of open(path) in a child of the cgroup `cgroup` (0: it opened).
int OpenErrnoInCgroup(const std::string& cgroup, const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int procs = ::open((cgroup + "/cgroup.procs").c_str(), O_WRONLY);
    if (procs < 0 || ::write(procs, "0", 1) != 1) ::_exit(200);
    const int fd = ::open(path.c_str(), O_RDONLY);
    ::_exit(fd >= 0 ? 0 : errno);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The real kernel: a process of the cgroup is refused (EPERM) the device
// the filter lists and reaches the driver of the others: a number no
// driver holds answers ENXIO, /dev/null opens.
TEST(AttachDeviceFilterTest, RefusesTheListedDevicesOnly) {
  const std::string root = V2Root();
  if (::geteuid() != 0 || root.empty()) GTEST_SKIP() << "needs root and a cgroup v2 hierarchy";
  const fs::path dir =
      fs::temp_directory_path() / ("muster-devfilter-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // 120 is kept for local use: no driver of a stock kernel holds it.
  const std::string mine = (dir / "gpu0").string();
  const std::string other = (dir / "gpu1").string();
  ASSERT_EQ(::mknod(mine.c_str(), S_IFCHR | 0666, makedev(120, 0)), 0);
  ASSERT_EQ(::mknod(other.c_str(), S_IFCHR | 0666, makedev(120, 1)), 0);
  const std::string cgroup = root + "/muster-devfilter-test-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(cgroup.c_str(), 0755), 0);
  const int fd = ::open(cgroup.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  const DeviceRule denied[] = {{'c', 120, 1}};
  util::Status st = AttachDeviceFilter(fd, denied);
  ::close(fd);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(OpenErrnoInCgroup(cgroup, other), EPERM);
  EXPECT_EQ(OpenErrnoInCgroup(cgroup, mine), ENXIO);
  EXPECT_EQ(OpenErrnoInCgroup(cgroup, "/dev/null"), 0);
  // Outside the cgroup nothing is refused.
  EXPECT_LT(::open(other.c_str(), O_RDONLY), 0);
  EXPECT_EQ(errno, ENXIO);
  EXPECT_EQ(::rmdir(cgroup.c_str()), 0);
  fs::remove_all(dir);
}

TEST(AttachDeviceFilterTest, FailsOnWhatIsNotACgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "loading a BPF program needs root";
  const int fd = ::open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  const DeviceRule denied[] = {{'c', 120, 1}};
  util::Status st = AttachDeviceFilter(fd, denied);
  ::close(fd);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("device filter"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace muster::stepd

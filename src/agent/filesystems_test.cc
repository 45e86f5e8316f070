#include "agent/filesystems.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>

#include <gtest/gtest.h>

namespace muster::agent {
namespace {

// Two real lines of /proc/self/mountinfo (an optional field on the first,
// none on the second), and a mount point with a space in it.
constexpr char kMountInfo[] =
    "26 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n"
    "24 23 0:22 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683748k\n"
    "90 26 0:50 /export /home/lab\\040data rw master:4 shared:9 - nfs4 fs01:/export rw\n"
    "garbage line\n"
    "91 26 0:51 / /scratch rw - xfs /dev/nvme0n1p1 rw\n"
    "92 26 0:52 / /scratch rw - tmpfs scratchfs rw\n";

TEST(MountInfo, EachMountsPointSourceAndType) {
  const std::vector<MountEntry> m = ParseMountInfo(kMountInfo);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].mountpoint, "/");
  EXPECT_EQ(m[0].device, "/dev/vda");
  EXPECT_EQ(m[0].fstype, "ext4");
  EXPECT_EQ(m[1].mountpoint, "/dev/shm");
  EXPECT_EQ(m[1].fstype, "tmpfs");
  EXPECT_EQ(m[2].mountpoint, "/home/lab data");
  EXPECT_EQ(m[2].device, "fs01:/export");
  EXPECT_EQ(m[2].fstype, "nfs4");
}

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mountinfo_ = ::testing::TempDir() + "/mountinfo." + std::to_string(::getpid());
    std::ofstream(mountinfo_) << kMountInfo;
  }
  void TearDown() override { ::unlink(mountinfo_.c_str()); }
  std::string mountinfo_;
};

TEST_F(WatchTest, MountPointsAreMeasuredPerNode) {
  FilesystemWatch watch({"/", "/scratch", "/nowhere"}, mountinfo_);
  const std::vector<core::FilesystemSample> s = watch.Sample({"gpu01", "gpu02"});
  ASSERT_EQ(s.size(), 6u);  // every path, for each node of the agent
  EXPECT_EQ(s[0].node, "gpu01");
  EXPECT_EQ(s[3].node, "gpu02");
  // "/" as statvfs sees it now.
  struct statvfs fs = {};
  ASSERT_EQ(::statvfs("/", &fs), 0);
  EXPECT_TRUE(s[0].ok);
  EXPECT_EQ(s[0].mountpoint, "/");
  EXPECT_EQ(s[0].device, "/dev/vda");
  EXPECT_EQ(s[0].fstype, "ext4");
  EXPECT_EQ(s[0].size_bytes, static_cast<int64_t>(fs.f_blocks * fs.f_frsize));
  EXPECT_EQ(s[0].files, static_cast<int64_t>(fs.f_files));
  EXPECT_GE(s[0].free_bytes, s[0].avail_bytes);
  EXPECT_GT(s[0].size_bytes, 0);
  // The last mount on a point is the one seen.
  EXPECT_EQ(s[1].device, "scratchfs");
  EXPECT_EQ(s[1].fstype, "tmpfs");
  // Not a mount point: no sizes, no device.
  EXPECT_EQ(s[2].mountpoint, "/nowhere");
  EXPECT_FALSE(s[2].ok);
  EXPECT_EQ(s[2].device, "");
  EXPECT_EQ(s[2].size_bytes, 0);
  EXPECT_EQ(s[5].mountpoint, "/nowhere");
}

TEST_F(WatchTest, ListedMountWhoseStatvfsFailsIsUnknown) {
  // In mountinfo but absent here (the scratch of another machine).
  std::ofstream(mountinfo_, std::ios::app)
      << "93 26 0:53 / /muster-test-absent rw - xfs /dev/x rw\n";
  FilesystemWatch watch({"/muster-test-absent"}, mountinfo_);
  const std::vector<core::FilesystemSample> s = watch.Sample({"n1"});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_FALSE(s[0].ok);
  EXPECT_EQ(s[0].device, "/dev/x");
  EXPECT_EQ(s[0].fstype, "xfs");
}

// A network filesystem whose server is gone: statvfs blocks. The sample
// reports it unknown instead of waiting, and the next samples do not ask
// again (nor wait) until the blocked call has returned.
TEST_F(WatchTest, HungFilesystemIsUnknownAndNotAskedAgainUntilItAnswers) {
  struct Gate {  // shared with the threads, which may outlive the test's frame
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
    std::atomic<int> calls{0};
  };
  auto gate = std::make_shared<Gate>();
  FilesystemWatch::StatFn hung = [gate](const std::string& path) {
    ++gate->calls;
    std::unique_lock lock(gate->mu);
    gate->cv.wait(lock, [&] { return gate->open; });
    return Statvfs(path);
  };
  FilesystemWatch watch({"/", "/scratch"}, mountinfo_, std::chrono::milliseconds(20), hung);
  std::vector<core::FilesystemSample> s = watch.Sample({"n1"});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[0].ok);
  EXPECT_EQ(s[0].device, "/dev/vda");  // what mountinfo says is still known
  for (int i = 0; i < 1000 && gate->calls < 2; ++i) ::usleep(10'000);
  ASSERT_EQ(gate->calls, 2);
  s = watch.Sample({"n1"});
  EXPECT_FALSE(s[0].ok);
  EXPECT_FALSE(s[1].ok);
  ::usleep(50'000);  // room for a wrongly started call to show
  EXPECT_EQ(gate->calls, 2);  // still blocked: not asked again
  {
    std::lock_guard lock(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  // Answered: asked afresh, and measured (the threads may take a moment to
  // finish once let go).
  for (int i = 0; i < 1000 && !s[0].ok; ++i) {
    s = watch.Sample({"n1"});
    if (!s[0].ok) ::usleep(10'000);
  }
  EXPECT_TRUE(s[0].ok);
  EXPECT_GT(s[0].size_bytes, 0);
}

TEST_F(WatchTest, NothingWatchedReadsNothing) {
  FilesystemWatch watch({}, "/nonexistent/mountinfo");
  EXPECT_TRUE(watch.Sample({"n1"}).empty());
}

}  // namespace
}  // namespace muster::agent

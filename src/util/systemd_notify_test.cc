#include "util/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace muster::util {
namespace {

TEST(NotifySystemdTest, SendsTheStateToNotifySocketOnly) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(NotifySystemd("READY=1"));
  const std::string path =
      (std::filesystem::temp_directory_path() / ("notify-" + std::to_string(::getpid()))).string();
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  ::unlink(path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(NotifySystemd("READY=1\nSTATUS=serving"));
  char buf[64] = {};
  EXPECT_EQ(::recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 22);
  EXPECT_EQ(std::string(buf), "READY=1\nSTATUS=serving");
  ::unsetenv("NOTIFY_SOCKET");
  ::close(fd);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace muster::util

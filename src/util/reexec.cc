#include "util/reexec.h"

#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

namespace muster::util {

Status ReexecSelf(char** argv) {
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    return Unavailable(std::string("close_range: ") + std::strerror(errno));
  }
  // By its path, not /proc/self/exe, so the process keeps its name (ps,
  // pid files checked by name); a binary replaced since it started (an
  // upgrade) is the one at that path now.
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return Unavailable(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  std::string path(buf, static_cast<size_t>(n));
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted)) path.resize(path.size() - kDeleted.size());
  ::execv(path.c_str(), argv);
  return Unavailable("cannot restart: exec " + path + ": " + std::strerror(errno));
}

}  // namespace muster::util

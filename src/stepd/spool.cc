#include "stepd/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace muster::stepd {
namespace {

// A spec carries the job's whole environment; Slurm caps that near 2 MiB
// (ARG_MAX), so this bound only stops a runaway file.
constexpr size_t kMaxFileBytes = 64u << 20;

util::Status Errno(const std::string& what, const std::string& name, int err) {
  std::string msg = fmt::format("{} {}: {}", what, name, strerror(err));
  return err == EACCES || err == EPERM ? util::PermissionDenied(msg)
         : err == ENOENT               ? util::NotFound(msg)
                                       : util::Internal(msg);
}

}  // namespace

util::Status WriteFileAtomic(int dir_fd, const std::string& name, std::string_view content) {
  std::string tmp = name + ".tmp";
  if (::unlinkat(dir_fd, tmp.c_str(), 0) != 0 && errno != ENOENT) {
    return Errno("could not remove", tmp, errno);
  }
  // O_EXCL|O_NOFOLLOW: never write through something planted at the tmp name.
  int fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("could not create", tmp, errno);
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Errno("could not write", tmp, err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // No fsync: the rename makes the result atomic against a crash of any
  // process, and a crash of the machine ends the job anyway (musterd then
  // records it as NODE_FAIL). Two fsyncs per job halved job throughput.
  if (::close(fd) != 0) return Errno("could not close", tmp, errno);
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    return Errno("could not rename to", name, errno);
  }
  return util::Status::Ok();
}

util::Result<std::string> ReadFileAt(int dir_fd, const std::string& name) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno("could not open", name, errno);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Errno("could not read", name, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxFileBytes) {
      ::close(fd);
      return util::InvalidArgument(fmt::format("{} is larger than {} bytes", name, kMaxFileBytes));
    }
  }
  ::close(fd);
  return out;
}

}  // namespace muster::stepd

#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace muster::util {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return Internal(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("cannot write", tmp);
  Status st = Status::Ok();
  for (size_t done = 0; done < text.size() && st.ok();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      st = Errno("cannot write", tmp);
    } else {
      done += static_cast<size_t>(n);
    }
  }
  if (st.ok() && ::fdatasync(fd) != 0) st = Errno("cannot sync", tmp);
  ::close(fd);
  if (!st.ok()) return st;
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Errno("cannot rename", tmp);
  const std::string dir =
      path.substr(0, path.rfind('/') == std::string::npos ? 1 : path.rfind('/'));
  int dfd = ::open(path.find('/') == std::string::npos ? "." : dir.c_str(),
                   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace muster::util

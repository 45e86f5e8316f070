#include "agent/file_recycler.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

namespace muster::agent {

FileRecycler::FileRecycler(std::string dir, size_t max_free)
    : dir_(std::move(dir)), free_dir_(dir_ + "/free"), max_free_(max_free) {
  // Old free files are not trusted: who owned them was recorded by an
  // earlier agent's memory only.
  std::error_code ec;
  std::filesystem::remove_all(free_dir_, ec);
  std::filesystem::create_directories(free_dir_, ec);
}

void FileRecycler::Reuse(const std::string& name, uint32_t owner) {
  auto it = free_.find(owner);
  if (it == free_.end() || it->second.empty()) return;
  const std::string from = free_dir_ + "/" + it->second.back();
  it->second.pop_back();
  --free_count_;
  // RENAME_NOREPLACE: never over a file already there (a stale one is the
  // caller's to remove first).
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, (dir_ + "/" + name).c_str(), RENAME_NOREPLACE) != 0) {
    ::unlink(from.c_str());
  }
}

void FileRecycler::Recycle(const std::string& name) {
  const std::string path = dir_ + "/" + name;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (free_count_ >= max_free_ || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::unlink(path.c_str());
    return;
  }
  const std::string free_name = std::to_string(next_name_++);
  if (::rename(path.c_str(), (free_dir_ + "/" + free_name).c_str()) != 0) {
    ::unlink(path.c_str());
    return;
  }
  free_[st.st_uid].push_back(free_name);
  ++free_count_;
}

bool OverwriteFile(const std::string& path, const std::string& data, unsigned mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return false;
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      errno = err;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(data.size())) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return false;
  }
  return ::close(fd) == 0;
}

}  // namespace muster::agent

// The spool files of finished jobs, kept for the next jobs so that a job
// costs no inode creation or deletion: on ext4 without a journal, creating
// a file while many were deleted in the last minutes is slow (the inode
// allocator steps over every recently freed inode), which made the two
// files per job the largest cost of a trivial job after its fork (about
// 0.25 ms each at 250 jobs/s). A file is reused only for a job of the user
// who owns it, since a process of that user may still hold it open, and
// only while no other name links to it. Owned by the Agent; not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace muster::agent {

class FileRecycler {
 public:
  // Keeps the free files in <dir>/free (made here), emptied of whatever an
  // earlier agent left there. At most `max_free` are kept.
  explicit FileRecycler(std::string dir, size_t max_free = 1024);

  // Moves a free file owned by `owner` to <dir>/<name> when there is one
  // (replacing nothing: <name> must not exist). The caller then opens
  // <name> without O_EXCL and writes it over its old content.
  void Reuse(const std::string& name, uint32_t owner);

  // Moves <dir>/<name> to the free files under its owner, or removes it
  // (a link elsewhere, not a regular file, or the pool is full).
  void Recycle(const std::string& name);

  size_t free_count() const { return free_count_; }

 private:
  std::string dir_;
  std::string free_dir_;
  size_t max_free_;
  std::map<uint32_t, std::vector<std::string>> free_;  // by owner: names in free_dir_; lookups only
  size_t free_count_ = 0;
  uint64_t next_name_ = 0;
};

// Writes `data` as the whole content of `path` (created with `mode` when
// missing, never through a symlink) without first truncating it to zero:
// ext4 starts writeback at close for a file truncated to zero and
// rewritten (auto_da_alloc). Returns false with errno set on failure.
bool OverwriteFile(const std::string& path, const std::string& data, unsigned mode);

}  // namespace muster::agent

// Where the controller keeps each pending job's script and environment:
// append-only segment files in StateSaveLocation/payload, so a submission
// costs one write(2) instead of creating files, and a pending job costs the
// controller a few bytes of index rather than its script and environment.
// A segment is deleted once none of its records is live. Owned by the
// Controller; single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "util/status.h"

namespace muster::ctld {

class PayloadStore {
 public:
  PayloadStore() = default;
  ~PayloadStore();
  PayloadStore(const PayloadStore&) = delete;
  PayloadStore& operator=(const PayloadStore&) = delete;

  // Opens `dir`, indexing the records of the jobs in `live` and deleting
  // segments that hold none of them.
  util::Status Open(const std::string& dir, const std::set<uint32_t>& live);
  util::Status Append(uint32_t job_id, const std::string& data);
  util::Result<std::string> Read(uint32_t job_id) const;
  // The job no longer needs its record (started, cancelled).
  void Release(uint32_t job_id);

  // Makes every appended record durable (before a journal snapshot).
  util::Status Sync();

  static constexpr int64_t kSegmentBytes = 32 << 20;

 private:
  struct Location {
    uint32_t segment = 0;
    int64_t offset = 0;  // of the data, after the header
    uint32_t length = 0;
  };
  std::string SegmentPath(uint32_t segment) const;
  util::Status StartSegment(uint32_t segment);
  void DropSegmentIfDead(uint32_t segment);

  std::string dir_;
  uint32_t active_ = 0;
  int active_fd_ = -1;
  int64_t active_size_ = 0;
  std::unordered_map<uint32_t, Location> index_;
  std::map<uint32_t, int64_t> live_per_segment_;
  mutable std::map<uint32_t, int> read_fds_;
};

}  // namespace muster::ctld

#include "ctld/payload_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "util/checksum.h"
#include "util/log.h"

namespace muster::ctld {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kMagic = 0x4d505931;  // "MPY1"

struct Header {
  uint32_t magic;
  uint32_t job_id;
  uint32_t length;
  uint32_t checksum;  // FNV-1a of the data
};

util::Status Errno(const std::string& what, const std::string& path) {
  return util::Internal(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

PayloadStore::~PayloadStore() {
  if (active_fd_ >= 0) ::close(active_fd_);
  for (auto& [seg, fd] : read_fds_) ::close(fd);
}

std::string PayloadStore::SegmentPath(uint32_t segment) const {
  return dir_ + "/seg-" + std::to_string(segment) + ".dat";
}

util::Status PayloadStore::Open(const std::string& dir, const std::set<uint32_t>& live) {
  dir_ = dir;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return util::Internal("cannot create " + dir_ + ": " + ec.message());
  std::vector<uint32_t> segments;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename();
    if (name.rfind("seg-", 0) != 0) continue;
    segments.push_back(static_cast<uint32_t>(std::strtoul(name.c_str() + 4, nullptr, 10)));
  }
  std::sort(segments.begin(), segments.end());
  for (uint32_t seg : segments) {
    std::string path = SegmentPath(seg);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Errno("cannot open", path);
    int64_t off = 0;
    for (;;) {
      Header h;
      ssize_t n = ::pread(fd, &h, sizeof(h), off);
      if (n == 0) break;
      if (n != static_cast<ssize_t>(sizeof(h)) || h.magic != kMagic) {
        // A torn tail from a crash mid-append: the submission was never
        // acknowledged, so dropping it loses nothing.
        util::LogWarn("{}: ignoring a torn record at offset {}", path, off);
        break;
      }
      if (live.count(h.job_id)) {
        std::string data(h.length, '\0');
        if (::pread(fd, data.data(), h.length, off + static_cast<int64_t>(sizeof(h))) ==
                static_cast<ssize_t>(h.length) &&
            util::Fnv1a32(data.data(), data.size()) == h.checksum) {
          auto old = index_.find(h.job_id);
          if (old != index_.end()) live_per_segment_[old->second.segment]--;
          index_[h.job_id] = {seg, off + static_cast<int64_t>(sizeof(h)), h.length};
          live_per_segment_[seg]++;
        }
      }
      off += static_cast<int64_t>(sizeof(h)) + h.length;
    }
    ::close(fd);
    active_ = std::max(active_, seg + 1);
  }
  for (uint32_t seg : segments) DropSegmentIfDead(seg);
  return StartSegment(active_);
}

util::Status PayloadStore::StartSegment(uint32_t segment) {
  if (active_fd_ >= 0) {
    // A finished segment is synced once: later snapshots sync only the
    // active one.
    if (::fdatasync(active_fd_) != 0) return Errno("cannot sync", SegmentPath(active_));
    ::close(active_fd_);
  }
  active_ = segment;
  std::string path = SegmentPath(segment);
  active_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (active_fd_ < 0) return Errno("cannot open", path);
  active_size_ = ::lseek(active_fd_, 0, SEEK_END);
  return util::Status::Ok();
}

util::Status PayloadStore::Append(uint32_t job_id, const std::string& data) {
  if (active_size_ >= kSegmentBytes) {
    uint32_t old = active_;
    MUSTER_RETURN_IF_ERROR(StartSegment(active_ + 1));
    DropSegmentIfDead(old);
  }
  Header h{kMagic, job_id, static_cast<uint32_t>(data.size()), util::Fnv1a32(data.data(), data.size())};
  std::string record(reinterpret_cast<const char*>(&h), sizeof(h));
  record += data;
  const char* p = record.data();
  size_t left = record.size();
  while (left > 0) {
    ssize_t n = ::write(active_fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot append to", SegmentPath(active_));
    p += n;
    left -= static_cast<size_t>(n);
  }
  index_[job_id] = {active_, active_size_ + static_cast<int64_t>(sizeof(h)), h.length};
  live_per_segment_[active_]++;
  active_size_ += static_cast<int64_t>(record.size());
  return util::Status::Ok();
}

util::Status PayloadStore::Sync() {
  if (active_fd_ >= 0 && ::fdatasync(active_fd_) != 0) return Errno("cannot sync", SegmentPath(active_));
  return util::Status::Ok();
}

util::Result<std::string> PayloadStore::Read(uint32_t job_id) const {
  auto it = index_.find(job_id);
  if (it == index_.end()) return util::NotFound("no script stored for job " + std::to_string(job_id));
  const Location& loc = it->second;
  auto fd_it = read_fds_.find(loc.segment);
  if (fd_it == read_fds_.end()) {
    int fd = ::open(SegmentPath(loc.segment).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Errno("cannot open", SegmentPath(loc.segment));
    fd_it = read_fds_.emplace(loc.segment, fd).first;
  }
  std::string data(loc.length, '\0');
  if (::pread(fd_it->second, data.data(), loc.length, loc.offset) != static_cast<ssize_t>(loc.length)) {
    return Errno("cannot read", SegmentPath(loc.segment));
  }
  return data;
}

void PayloadStore::Release(uint32_t job_id) {
  auto it = index_.find(job_id);
  if (it == index_.end()) return;
  uint32_t seg = it->second.segment;
  index_.erase(it);
  live_per_segment_[seg]--;
  DropSegmentIfDead(seg);
}

void PayloadStore::DropSegmentIfDead(uint32_t segment) {
  if (segment == active_) return;
  auto it = live_per_segment_.find(segment);
  if (it != live_per_segment_.end() && it->second > 0) return;
  live_per_segment_.erase(segment);
  auto fd = read_fds_.find(segment);
  if (fd != read_fds_.end()) {
    ::close(fd->second);
    read_fds_.erase(fd);
  }
  ::unlink(SegmentPath(segment).c_str());
}

}  // namespace muster::ctld

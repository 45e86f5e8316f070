#include "ctld/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "util/atomic_file.h"
#include "util/checksum.h"
#include "util/log.h"

namespace muster::ctld {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kHeader = 16;
constexpr uint32_t kMaxRecord = 256u << 20;
// The journal is extended with zeros this much at a time, so appends land
// in blocks that already exist and fdatasync writes no inode (no size
// change): a commit's sync is one data write. Zeros after the last record
// are where the next one goes, not damage.
constexpr off_t kPreallocate = 4 << 20;

// Whether everything from `off` on is zero (preallocated, never written).
bool ZeroFrom(const std::string& data, size_t off) {
  return std::all_of(data.begin() + static_cast<std::ptrdiff_t>(off), data.end(),
                     [](char c) { return c == 0; });
}

// A whole, checksummed record starts at `off`.
bool ValidRecordAt(const std::string& data, size_t off) {
  if (data.size() - off < kHeader) return false;
  uint32_t len = 0, sum = 0;
  std::memcpy(&len, data.data() + off, 4);
  std::memcpy(&sum, data.data() + off + 4, 4);
  return len <= kMaxRecord && data.size() - off - kHeader >= len &&
         util::Fnv1a32(data.data() + off + kHeader, len) == sum;
}

util::Status Errno(const std::string& what, const std::string& path) {
  return util::Internal(what + " " + path + ": " + std::strerror(errno));
}

util::Status PwriteAll(int fd, const char* p, size_t n, off_t off, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Errno("cannot write", path);
    p += w;
    off += w;
    n -= static_cast<size_t>(w);
  }
  return util::Status::Ok();
}

}  // namespace

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

util::Status Journal::Open(const std::string& dir, json* snapshot, std::vector<json>* records,
                           std::vector<uint64_t>* seqs) {
  dir_ = dir;
  *snapshot = nullptr;
  uint64_t snap_seq = 0;
  std::string snap_path = dir_ + "/snapshot.json";
  {
    std::ifstream in(snap_path, std::ios::binary);
    if (in) {
      std::string text((std::istreambuf_iterator<char>(in)), {});
      json doc = core::ParseIntegerJson(text);
      if (doc.is_discarded() || !doc.is_object() || !doc.contains("state")) {
        return util::Internal(snap_path + " is corrupt; refusing to start without it (move it away "
                              "only if losing the queue is acceptable)");
      }
      snap_seq = doc.value("seq", uint64_t{0});
      *snapshot = std::move(doc["state"]);
    }
  }
  seq_ = snap_seq;
  snapshot_seq_ = snap_seq;
  std::string path = dir_ + "/journal.log";
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) data.assign((std::istreambuf_iterator<char>(in)), {});
  }
  size_t off = 0;
  size_t good_end = 0;
  while (off < data.size()) {
    if (ZeroFrom(data, off)) break;
    if (!ValidRecordAt(data, off)) {
      // Only the tail may be torn by a crash mid-write: a valid record
      // anywhere after the bad one means real damage.
      for (size_t p = off + 1; p + kHeader <= data.size(); ++p) {
        if (ValidRecordAt(data, p)) {
          return util::Internal(path + ": corrupt record at offset " + std::to_string(off) +
                                " followed by valid records; stopping rather than losing jobs "
                                "(inspect or restore the file)");
        }
      }
      util::LogWarn("{}: dropping a torn last record at offset {} ({} bytes)", path, off,
                    data.size() - off);
      break;
    }
    uint32_t len = 0;
    uint64_t seq = 0;
    std::memcpy(&len, data.data() + off, 4);
    std::memcpy(&seq, data.data() + off + 8, 8);
    if (seq > snap_seq) {
      json rec = core::ParseIntegerJson(std::string_view(data.data() + off + kHeader, len));
      if (rec.is_discarded()) {
        return util::Internal(path + ": unreadable record at offset " + std::to_string(off));
      }
      records->push_back(std::move(rec));
      if (seqs != nullptr) seqs->push_back(seq);
      seq_ = seq;
      ++since_snapshot_;
    }
    off += kHeader + len;
    good_end = off;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) return Errno("cannot open", path);
  if (::ftruncate(fd_, static_cast<off_t>(good_end)) != 0) return Errno("cannot truncate", path);
  end_ = static_cast<off_t>(good_end);
  allocated_ = end_;
  return util::Status::Ok();
}

uint64_t Journal::Append(const json& record) {
  std::string payload = record.dump(-1, ' ', false, json::error_handler_t::replace);
  uint32_t len = static_cast<uint32_t>(payload.size());
  uint32_t sum = util::Fnv1a32(payload.data(), payload.size());
  uint64_t seq = ++seq_;
  char header[kHeader];
  std::memcpy(header, &len, 4);
  std::memcpy(header + 4, &sum, 4);
  std::memcpy(header + 8, &seq, 8);
  buffer_.append(header, kHeader);
  buffer_ += payload;
  ++since_snapshot_;
  return seq;
}

util::Status Journal::Flush(const std::vector<int>& extra_fds) {
  MUSTER_RETURN_IF_ERROR(Write());
  return Sync(extra_fds);
}

util::Status Journal::Write() {
  if (buffer_.empty()) return util::Status::Ok();
  const std::string path = dir_ + "/journal.log";
  const off_t need = end_ + static_cast<off_t>(buffer_.size());
  if (need > allocated_) {
    // Real zeros, not fallocate(2): unwritten extents would need their
    // metadata changed at the first write into them.
    const off_t target = (need / kPreallocate + 1) * kPreallocate;
    const std::string zeros(static_cast<size_t>(target - allocated_), '\0');
    MUSTER_RETURN_IF_ERROR(PwriteAll(fd_, zeros.data(), zeros.size(), allocated_, path));
    allocated_ = target;
  }
  MUSTER_RETURN_IF_ERROR(PwriteAll(fd_, buffer_.data(), buffer_.size(), end_, path));
  end_ = need;
  buffer_.clear();
  ++flushes_;
  return util::Status::Ok();
}

util::Status Journal::Sync(const std::vector<int>& extra_fds) const {
  // The payload first: a record must never be durable before what it names.
  for (int fd : extra_fds) {
    // EBADF: the payload segment was rotated meanwhile, and rotation syncs
    // a segment before closing it.
    if (fd >= 0 && ::fdatasync(fd) != 0 && errno != EBADF) return Errno("cannot sync", "payload store");
  }
  if (::fdatasync(fd_) != 0) return Errno("cannot sync", dir_ + "/journal.log");
  return util::Status::Ok();
}

util::Status Journal::WriteSnapshot(const std::string& state_json) {
  std::string path = dir_ + "/snapshot.json";
  std::string text = "{\"seq\":" + std::to_string(seq_) + ",\"state\":" + state_json + "}";
  MUSTER_RETURN_IF_ERROR(util::WriteFileAtomically(path, text));
  // Everything up to seq_ is in the snapshot: the journal starts over.
  snapshot_seq_ = seq_;
  if (::ftruncate(fd_, 0) != 0) return Errno("cannot truncate", dir_ + "/journal.log");
  end_ = allocated_ = 0;
  since_snapshot_ = 0;
  return util::Status::Ok();
}

}  // namespace muster::ctld

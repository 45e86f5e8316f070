// The controller's write-ahead journal: every state change musterd
// acknowledges is a record here, on disk (fdatasync) before the reply
// leaves. Group commit comes from the event loop: changes made while
// handling one batch of ready events are appended to a buffer and flushed
// with one fdatasync; the replies and agent acks wait for that flush.
//
// Files in the state directory: `snapshot.json` (the whole state, with the
// sequence number of the last record it contains) and `journal.log`
// (records after it). A snapshot is written atomically and then the journal
// is truncated, which bounds replay time.
//
// The file is extended with zeros ahead of the records (so a commit's
// fdatasync changes no inode); zeros after the last record mark the end.
//
// Record framing: u32 length, u32 FNV-1a checksum of the
// payload, u64 sequence number, then the JSON payload. At recovery a torn
// or corrupt *last* record is dropped with a warning (it was never
// acknowledged); a bad record followed by good ones stops the daemon with a
// message naming the file and offset. Single-threaded (the event loop).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::ctld {

class Journal {
 public:
  Journal() = default;
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Reads snapshot.json (if any) and the journal records after it. `snapshot`
  // gets the snapshot's "state" value (null when none); `records` the
  // payloads to replay, in order, and `seqs` (when given) their sequence
  // numbers. Then opens the journal for appending.
  util::Status Open(const std::string& dir, nlohmann::json* snapshot,
                    std::vector<nlohmann::json>* records, std::vector<uint64_t>* seqs = nullptr);

  // Buffers one record and returns its sequence number; it is durable after
  // the next Flush().
  uint64_t Append(const nlohmann::json& record);
  bool HasPending() const { return !buffer_.empty(); }
  // Writes the buffer and fdatasyncs; `extra_fds` (e.g. the payload store)
  // are synced first, so what records refer to is on disk before them.
  util::Status Flush(const std::vector<int>& extra_fds);
  // The two halves of Flush, for a caller that syncs on another thread:
  // Write() on the loop, then Sync() (thread-safe, touches no state but fd).
  util::Status Write();
  util::Status Sync(const std::vector<int>& extra_fds) const;
  int fd() const { return fd_; }

  // Writes `state_json` (one JSON value, serialised by the caller so a big
  // table is never held as a json tree) as the new snapshot, atomically and
  // synced, then truncates the journal. Call only when nothing is buffered.
  util::Status WriteSnapshot(const std::string& state_json);

  uint64_t records_since_snapshot() const { return since_snapshot_; }
  uint64_t flushes() const { return flushes_; }
  uint64_t records() const { return seq_; }
  // The sequence number of the last record the snapshot read by Open()
  // holds (0 = no snapshot); the last one written after WriteSnapshot().
  uint64_t snapshot_seq() const { return snapshot_seq_; }

 private:
  std::string dir_;
  int fd_ = -1;
  off_t end_ = 0;        // where the next record goes
  off_t allocated_ = 0;  // the file's size: zeros from end_ on
  uint64_t seq_ = 0;
  uint64_t snapshot_seq_ = 0;
  uint64_t since_snapshot_ = 0;
  uint64_t flushes_ = 0;
  std::string buffer_;
};

}  // namespace muster::ctld

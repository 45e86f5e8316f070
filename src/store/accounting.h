// AccountingStore: the job/step accounting database behind sacct, sreport
// and seff. An embedded SQLite file (WAL mode, synchronous=NORMAL) in the
// controller's StateSaveLocation, schema versioned by PRAGMA user_version.
//
// Ownership and threads: musterd owns one instance. Upsert/UpsertStep never
// block on the disk: they append to an in-memory queue that a private writer
// thread drains, many records per transaction. When the database cannot be
// opened or a transaction fails, the batch is appended to the spool file
// (one JSON object per line) and replayed, in order, before the next batch
// once the database works again; records are never dropped. All public
// methods are thread-safe. Query uses its own read connection (WAL lets it
// run beside the writer) and sees everything written by the last Flush().
//
// Usage:
//   store::AccountingStore acct({.db_path = dir + "/accounting.db",
//                                .spool_path = dir + "/accounting.spool"});
//   acct.Upsert(job_record);       // at submit, start, end (any change)
//
// Runs: one row per (job id, JobRecord::restarts). A record updates its
// run's row; a record of a later run than the latest stored first closes
// the earlier runs still open as REQUEUED (and their open steps as
// CANCELLED, signal 15), ending at the new run's submit time (the
// controller resets it at the requeue, as Slurm does), or at the record's
// Origin time when it has none. A record of a run older than the latest
// stored is ignored (that run is closed).
//   acct.UpsertStep(step_record);  // at step start and end
//   auto r = acct.Query(query);    // Result<QueryResult>
//   acct.Flush();                  // optional; the destructor writes or spools the rest
//
// Catching up after a crash: records queued but not yet written when the
// process dies are lost here, so each job record carries the Origin of the
// change it reflects: the controller journal's sequence number. The store
// keeps the highest one written (in the same transaction as the records, or
// in the spool with them), and the controller's recovery hands it again
// every journalled change after AppliedSeq(): Upserts are idempotent.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>

#include <nlohmann/json.hpp>

#include "store/records.h"
#include "util/clock.h"
#include "util/status.h"

struct sqlite3;

namespace muster::store {

// The schema version this build writes (PRAGMA user_version).
inline constexpr int kAccountingSchemaVersion = 7;


struct AccountingOptions {
  std::string db_path;     // e.g. StateSaveLocation + "/accounting.db"
  std::string spool_path;  // e.g. StateSaveLocation + "/accounting.spool"
  int max_batch = 4096;    // records per transaction, at most
  // Stamps each Upsert (the end of a requeued run); nullptr = the real clock.
  // Not owned; must outlive the store.
  const util::Clock* clock = nullptr;
};

class AccountingStore {
 public:
  // Starts the writer thread and tries to open the database; a database that
  // cannot be opened is not an error (records spool until it can).
  explicit AccountingStore(AccountingOptions options);
  // Writes (or spools) everything still queued and stops the writer.
  ~AccountingStore();
  AccountingStore(const AccountingStore&) = delete;
  AccountingStore& operator=(const AccountingStore&) = delete;

  // Insert or replace by (job id, run) / (job id, run, step id); see the
  // header comment for runs. Never blocks on I/O.
  void Upsert(const JobRecord& job, Origin origin = {});
  void UpsertStep(const StepRecord& step, Origin origin = {});

  // Blocks until every record queued before the call is in the database
  // (Ok) or in the spool (Unavailable, with the database's error). Retries
  // the database (and replays the spool) first. While neither the database
  // nor the spool is writable the records stay queued and Flush waits.
  util::Status Flush();
  // Flush, waiting at most `timeout`: false when records are still queued
  // then (the database and the spool are both unwritable).
  bool FlushWithin(std::chrono::milliseconds timeout);

  // The highest Origin::seq of the records written so far: every record
  // with a sequence number up to it is in the database or the spool. Blocks
  // like Flush() (which replays the spool first). 0 when the database
  // cannot be read; a caller then re-sends everything it has.
  uint64_t AppliedSeq();

  // Records matching `q`, in sacct's order. Reads the database only: call
  // Flush() first to see records still queued.
  util::Result<QueryResult> Query(const AccountingQuery& q) const;

  // The accounts, users and associations sacctmgr keeps (a
  // core::AccountTable as JSON): replaced whole, synchronously, on disk
  // when it returns; "" from LoadAccounts when none was ever saved.
  // Unavailable when the database cannot be opened or written.
  util::Status SaveAccounts(const std::string& doc);
  util::Result<std::string> LoadAccounts() const;

  // Whether the last write reached the database.
  bool database_ok() const;

  // Record <-> JSON, the spool's line format.
  static nlohmann::json ToJson(const JobRecord& r);
  static nlohmann::json ToJson(const StepRecord& r);
  static JobRecord JobFromJson(const nlohmann::json& j);
  static StepRecord StepFromJson(const nlohmann::json& j);

 private:
  // A job record and when Upsert got it (Unix seconds).
  struct QueuedJob {
    JobRecord job;
    int64_t queued_at = 0;
    uint64_t seq = 0;
  };
  struct QueuedStep {
    StepRecord step;
    uint64_t seq = 0;
  };
  using Item = std::variant<QueuedJob, QueuedStep>;
  void WriterLoop();
  // Writer thread only.
  util::Status EnsureOpen();
  util::Status WriteBatch(const std::deque<Item>& batch);
  util::Status ReplaySpool();
  // Appends the batch to the spool and syncs it; false when it cannot.
  [[nodiscard]] bool SpoolBatch(const std::deque<Item>& batch);
  void CloseWriter();
  // Opens the read connection if needed; read_mu_ must be held.
  util::Status OpenReader() const;

  const AccountingOptions options_;
  util::RealClock real_clock_;
  const util::Clock* clock_;  // options_.clock or &real_clock_
  sqlite3* writer_db_ = nullptr;  // writer thread only
  struct WriterStatements;
  std::unique_ptr<WriterStatements> stmts_;  // writer thread only; with writer_db_

  mutable std::mutex mu_;
  std::condition_variable cv_;       // work queued / stop
  std::condition_variable idle_cv_;  // a batch finished
  std::deque<Item> queue_;           // guarded by mu_
  uint64_t enqueued_ = 0;            // guarded by mu_
  uint64_t done_ = 0;                // guarded by mu_: records written or spooled
  uint64_t flush_requests_ = 0;      // guarded by mu_
  uint64_t flushes_served_ = 0;      // guarded by mu_
  bool stop_ = false;                // guarded by mu_
  bool db_ok_ = false;               // guarded by mu_
  std::string last_error_;           // guarded by mu_

  mutable std::mutex read_mu_;
  mutable sqlite3* reader_db_ = nullptr;  // guarded by read_mu_

  std::thread writer_;
};

}  // namespace muster::store

#include "store/accounting.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace muster::store {
namespace {

// Migration i brings a database from user_version i to i+1. Never edit a
// shipped entry: append a new one.
const char* const kMigrations[] = {
    // 0 -> 1: the tables.
    "CREATE TABLE jobs ("
    " job_id INTEGER PRIMARY KEY, array_job_id INTEGER NOT NULL DEFAULT 0,"
    " array_task_id INTEGER NOT NULL DEFAULT -1, name TEXT NOT NULL DEFAULT '',"
    " user TEXT NOT NULL DEFAULT '', uid INTEGER NOT NULL DEFAULT 0,"
    " gid INTEGER NOT NULL DEFAULT 0, grp TEXT NOT NULL DEFAULT '',"
    " account TEXT NOT NULL DEFAULT '', partition TEXT NOT NULL DEFAULT '',"
    " qos TEXT NOT NULL DEFAULT '', cluster TEXT NOT NULL DEFAULT '',"
    " submit_time INTEGER NOT NULL DEFAULT 0, eligible_time INTEGER NOT NULL DEFAULT 0,"
    " start_time INTEGER NOT NULL DEFAULT 0, end_time INTEGER NOT NULL DEFAULT 0,"
    " time_limit_min INTEGER NOT NULL DEFAULT -1, state TEXT NOT NULL DEFAULT '',"
    " exit_code INTEGER NOT NULL DEFAULT 0, exit_signal INTEGER NOT NULL DEFAULT 0,"
    " derived_exit_code INTEGER NOT NULL DEFAULT 0,"
    " derived_exit_signal INTEGER NOT NULL DEFAULT 0,"
    " req_tres TEXT NOT NULL DEFAULT '', alloc_tres TEXT NOT NULL DEFAULT '',"
    " node_list TEXT NOT NULL DEFAULT '', nnodes INTEGER NOT NULL DEFAULT 0,"
    " ncpus INTEGER NOT NULL DEFAULT 0, req_mem_mb INTEGER NOT NULL DEFAULT 0,"
    " req_mem_per_cpu INTEGER NOT NULL DEFAULT 0, work_dir TEXT NOT NULL DEFAULT '',"
    " comment TEXT NOT NULL DEFAULT '', max_rss_kb INTEGER NOT NULL DEFAULT -1,"
    " total_cpu_ms INTEGER NOT NULL DEFAULT 0, reason TEXT NOT NULL DEFAULT '',"
    " restarts INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE steps ("
    " job_id INTEGER NOT NULL, step_id TEXT NOT NULL, name TEXT NOT NULL DEFAULT '',"
    " state TEXT NOT NULL DEFAULT '', exit_code INTEGER NOT NULL DEFAULT 0,"
    " exit_signal INTEGER NOT NULL DEFAULT 0, start_time INTEGER NOT NULL DEFAULT 0,"
    " end_time INTEGER NOT NULL DEFAULT 0, node_list TEXT NOT NULL DEFAULT '',"
    " nnodes INTEGER NOT NULL DEFAULT 0, ntasks INTEGER NOT NULL DEFAULT 0,"
    " ncpus INTEGER NOT NULL DEFAULT 0, alloc_tres TEXT NOT NULL DEFAULT '',"
    " max_rss_kb INTEGER NOT NULL DEFAULT -1, total_cpu_ms INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (job_id, step_id)) WITHOUT ROWID;",
    // 1 -> 2: indexes for sacct -u (user + time) and for time windows.
    "CREATE INDEX jobs_uid_time ON jobs (uid, end_time, eligible_time);"
    "CREATE INDEX jobs_end ON jobs (end_time);"
    "CREATE INDEX jobs_eligible ON jobs (eligible_time);"
    "CREATE INDEX jobs_array ON jobs (array_job_id);",
    // 2 -> 3: one job row per run (job_id, restarts), steps keyed by run
    // too, and an array's pending tasks. SQLite cannot change a primary key,
    // so both tables are copied; existing steps belong to their job's run.
    "CREATE TABLE jobs_v3 ("
    " job_id INTEGER NOT NULL, array_job_id INTEGER NOT NULL DEFAULT 0,"
    " array_task_id INTEGER NOT NULL DEFAULT -1, name TEXT NOT NULL DEFAULT '',"
    " user TEXT NOT NULL DEFAULT '', uid INTEGER NOT NULL DEFAULT 0,"
    " gid INTEGER NOT NULL DEFAULT 0, grp TEXT NOT NULL DEFAULT '',"
    " account TEXT NOT NULL DEFAULT '', partition TEXT NOT NULL DEFAULT '',"
    " qos TEXT NOT NULL DEFAULT '', cluster TEXT NOT NULL DEFAULT '',"
    " submit_time INTEGER NOT NULL DEFAULT 0, eligible_time INTEGER NOT NULL DEFAULT 0,"
    " start_time INTEGER NOT NULL DEFAULT 0, end_time INTEGER NOT NULL DEFAULT 0,"
    " time_limit_min INTEGER NOT NULL DEFAULT -1, state TEXT NOT NULL DEFAULT '',"
    " exit_code INTEGER NOT NULL DEFAULT 0, exit_signal INTEGER NOT NULL DEFAULT 0,"
    " derived_exit_code INTEGER NOT NULL DEFAULT 0,"
    " derived_exit_signal INTEGER NOT NULL DEFAULT 0,"
    " req_tres TEXT NOT NULL DEFAULT '', alloc_tres TEXT NOT NULL DEFAULT '',"
    " node_list TEXT NOT NULL DEFAULT '', nnodes INTEGER NOT NULL DEFAULT 0,"
    " ncpus INTEGER NOT NULL DEFAULT 0, req_mem_mb INTEGER NOT NULL DEFAULT 0,"
    " req_mem_per_cpu INTEGER NOT NULL DEFAULT 0, work_dir TEXT NOT NULL DEFAULT '',"
    " comment TEXT NOT NULL DEFAULT '', max_rss_kb INTEGER NOT NULL DEFAULT -1,"
    " total_cpu_ms INTEGER NOT NULL DEFAULT 0, reason TEXT NOT NULL DEFAULT '',"
    " restarts INTEGER NOT NULL DEFAULT 0, array_pending TEXT NOT NULL DEFAULT '',"
    " array_max_running INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (job_id, restarts));"
    "INSERT INTO jobs_v3 SELECT *, '', 0 FROM jobs;"
    "CREATE TABLE steps_v3 ("
    " job_id INTEGER NOT NULL, run INTEGER NOT NULL DEFAULT 0, step_id TEXT NOT NULL,"
    " name TEXT NOT NULL DEFAULT '',"
    " state TEXT NOT NULL DEFAULT '', exit_code INTEGER NOT NULL DEFAULT 0,"
    " exit_signal INTEGER NOT NULL DEFAULT 0, start_time INTEGER NOT NULL DEFAULT 0,"
    " end_time INTEGER NOT NULL DEFAULT 0, node_list TEXT NOT NULL DEFAULT '',"
    " nnodes INTEGER NOT NULL DEFAULT 0, ntasks INTEGER NOT NULL DEFAULT 0,"
    " ncpus INTEGER NOT NULL DEFAULT 0, alloc_tres TEXT NOT NULL DEFAULT '',"
    " max_rss_kb INTEGER NOT NULL DEFAULT -1, total_cpu_ms INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (job_id, run, step_id)) WITHOUT ROWID;"
    "INSERT INTO steps_v3 SELECT s.job_id,"
    " COALESCE((SELECT j.restarts FROM jobs j WHERE j.job_id = s.job_id), 0), s.step_id,"
    " s.name, s.state, s.exit_code, s.exit_signal, s.start_time, s.end_time, s.node_list,"
    " s.nnodes, s.ntasks, s.ncpus, s.alloc_tres, s.max_rss_kb, s.total_cpu_ms FROM steps s;"
    "DROP TABLE steps;"
    "DROP TABLE jobs;"
    "ALTER TABLE jobs_v3 RENAME TO jobs;"
    "ALTER TABLE steps_v3 RENAME TO steps;"
    "CREATE INDEX jobs_uid_time ON jobs (uid, end_time, eligible_time);"
    "CREATE INDEX jobs_end ON jobs (end_time);"
    "CREATE INDEX jobs_eligible ON jobs (eligible_time);"
    "CREATE INDEX jobs_array ON jobs (array_job_id);",
    // 3 -> 4: the highest controller journal sequence number written
    // (Origin::seq), so recovery knows which changes to hand over again.
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO meta VALUES ('applied_seq', 0);",
    // 4 -> 5: accounts, users and associations (sacctmgr), one document
    // (core::AccountTable::ToJson) replaced whole at each change.
    "CREATE TABLE accounts (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL);",
    // 5 -> 6: the job's GPU utilisation and memory, on its batch step.
    "ALTER TABLE steps ADD COLUMN gpu_util_pct INTEGER NOT NULL DEFAULT -1;"
    "ALTER TABLE steps ADD COLUMN gpu_mem_max_bytes INTEGER NOT NULL DEFAULT -1;",
    // 6 -> 7: heterogeneous jobs: each component's first id and offset;
    // where sattach reaches a running srun step.
    "ALTER TABLE jobs ADD COLUMN het_job_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN het_job_offset INTEGER NOT NULL DEFAULT -1;"
    "ALTER TABLE steps ADD COLUMN attach TEXT NOT NULL DEFAULT '';",
};
static_assert(std::size(kMigrations) == kAccountingSchemaVersion);

constexpr const char* kJobCols =
    "job_id, array_job_id, array_task_id, name, user, uid, gid, grp, account, partition,"
    " qos, cluster, submit_time, eligible_time, start_time, end_time, time_limit_min,"
    " state, exit_code, exit_signal, derived_exit_code, derived_exit_signal, req_tres,"
    " alloc_tres, node_list, nnodes, ncpus, req_mem_mb, req_mem_per_cpu, work_dir,"
    " comment, max_rss_kb, total_cpu_ms, reason, restarts, array_pending, array_max_running,"
    " het_job_id, het_job_offset";
constexpr int kJobColCount = 39;
constexpr const char* kStepCols =
    "job_id, run, step_id, name, state, exit_code, exit_signal, start_time, end_time,"
    " node_list, nnodes, ntasks, ncpus, alloc_tres, max_rss_kb, total_cpu_ms, gpu_util_pct,"
    " gpu_mem_max_bytes, attach";
constexpr int kStepColCount = 19;

std::string Placeholders(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? ",?" : "?";
  return s;
}

std::string Err(sqlite3* db, std::string_view what) {
  return std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

util::Status Exec(sqlite3* db, const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "unknown error";
    sqlite3_free(msg);
    return util::Unavailable(std::string("accounting database: ") + m);
  }
  return util::Status::Ok();
}

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return s_ != nullptr; }
  sqlite3_stmt* get() { return s_; }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void Bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  int64_t Int(int c) { return sqlite3_column_int64(s_, c); }
  std::string Text(int c) {
    const unsigned char* t = sqlite3_column_text(s_, c);
    return t ? std::string(reinterpret_cast<const char*>(t),
                           static_cast<size_t>(sqlite3_column_bytes(s_, c)))
             : std::string();
  }

 private:
  sqlite3_stmt* s_ = nullptr;
};

void BindJob(Stmt& s, const JobRecord& r) {
  int i = 1;
  s.Bind(i++, r.job_id);
  s.Bind(i++, r.array_job_id);
  s.Bind(i++, r.array_task_id);
  s.Bind(i++, r.name);
  s.Bind(i++, r.user);
  s.Bind(i++, static_cast<int64_t>(r.uid));
  s.Bind(i++, static_cast<int64_t>(r.gid));
  s.Bind(i++, r.group);
  s.Bind(i++, r.account);
  s.Bind(i++, r.partition);
  s.Bind(i++, r.qos);
  s.Bind(i++, r.cluster);
  s.Bind(i++, r.submit_time);
  s.Bind(i++, r.eligible_time);
  s.Bind(i++, r.start_time);
  s.Bind(i++, r.end_time);
  s.Bind(i++, r.time_limit_min);
  s.Bind(i++, r.state);
  s.Bind(i++, r.exit_code);
  s.Bind(i++, r.exit_signal);
  s.Bind(i++, r.derived_exit_code);
  s.Bind(i++, r.derived_exit_signal);
  s.Bind(i++, r.req_tres);
  s.Bind(i++, r.alloc_tres);
  s.Bind(i++, r.node_list);
  s.Bind(i++, r.nnodes);
  s.Bind(i++, r.ncpus);
  s.Bind(i++, r.req_mem_mb);
  s.Bind(i++, r.req_mem_per_cpu ? 1 : 0);
  s.Bind(i++, r.work_dir);
  s.Bind(i++, r.comment);
  s.Bind(i++, r.max_rss_kb);
  s.Bind(i++, r.total_cpu_ms);
  s.Bind(i++, r.reason);
  s.Bind(i++, r.restarts);
  s.Bind(i++, r.array_pending);
  s.Bind(i++, r.array_max_running);
  s.Bind(i++, r.het_job_id);
  s.Bind(i++, r.het_job_offset);
}

JobRecord ReadJob(Stmt& s) {
  JobRecord r;
  int c = 0;
  r.job_id = s.Int(c++);
  r.array_job_id = s.Int(c++);
  r.array_task_id = s.Int(c++);
  r.name = s.Text(c++);
  r.user = s.Text(c++);
  r.uid = static_cast<uint32_t>(s.Int(c++));
  r.gid = static_cast<uint32_t>(s.Int(c++));
  r.group = s.Text(c++);
  r.account = s.Text(c++);
  r.partition = s.Text(c++);
  r.qos = s.Text(c++);
  r.cluster = s.Text(c++);
  r.submit_time = s.Int(c++);
  r.eligible_time = s.Int(c++);
  r.start_time = s.Int(c++);
  r.end_time = s.Int(c++);
  r.time_limit_min = s.Int(c++);
  r.state = s.Text(c++);
  r.exit_code = static_cast<int>(s.Int(c++));
  r.exit_signal = static_cast<int>(s.Int(c++));
  r.derived_exit_code = static_cast<int>(s.Int(c++));
  r.derived_exit_signal = static_cast<int>(s.Int(c++));
  r.req_tres = s.Text(c++);
  r.alloc_tres = s.Text(c++);
  r.node_list = s.Text(c++);
  r.nnodes = static_cast<int>(s.Int(c++));
  r.ncpus = static_cast<int>(s.Int(c++));
  r.req_mem_mb = s.Int(c++);
  r.req_mem_per_cpu = s.Int(c++) != 0;
  r.work_dir = s.Text(c++);
  r.comment = s.Text(c++);
  r.max_rss_kb = s.Int(c++);
  r.total_cpu_ms = s.Int(c++);
  r.reason = s.Text(c++);
  r.restarts = static_cast<int>(s.Int(c++));
  r.array_pending = s.Text(c++);
  r.array_max_running = static_cast<int>(s.Int(c++));
  r.het_job_id = s.Int(c++);
  r.het_job_offset = static_cast<int>(s.Int(c++));
  return r;
}

void BindStep(Stmt& s, const StepRecord& r) {
  int i = 1;
  s.Bind(i++, r.job_id);
  s.Bind(i++, r.run);
  s.Bind(i++, r.step_id);
  s.Bind(i++, r.name);
  s.Bind(i++, r.state);
  s.Bind(i++, r.exit_code);
  s.Bind(i++, r.exit_signal);
  s.Bind(i++, r.start_time);
  s.Bind(i++, r.end_time);
  s.Bind(i++, r.node_list);
  s.Bind(i++, r.nnodes);
  s.Bind(i++, r.ntasks);
  s.Bind(i++, r.ncpus);
  s.Bind(i++, r.alloc_tres);
  s.Bind(i++, r.max_rss_kb);
  s.Bind(i++, r.total_cpu_ms);
  s.Bind(i++, r.gpu_util_pct);
  s.Bind(i++, r.gpu_mem_max_bytes);
  s.Bind(i++, r.attach);
}

StepRecord ReadStep(Stmt& s) {
  StepRecord r;
  int c = 0;
  r.job_id = s.Int(c++);
  r.run = static_cast<int>(s.Int(c++));
  r.step_id = s.Text(c++);
  r.name = s.Text(c++);
  r.state = s.Text(c++);
  r.exit_code = static_cast<int>(s.Int(c++));
  r.exit_signal = static_cast<int>(s.Int(c++));
  r.start_time = s.Int(c++);
  r.end_time = s.Int(c++);
  r.node_list = s.Text(c++);
  r.nnodes = static_cast<int>(s.Int(c++));
  r.ntasks = static_cast<int>(s.Int(c++));
  r.ncpus = static_cast<int>(s.Int(c++));
  r.alloc_tres = s.Text(c++);
  r.max_rss_kb = s.Int(c++);
  r.total_cpu_ms = s.Int(c++);
  r.gpu_util_pct = static_cast<int>(s.Int(c++));
  r.gpu_mem_max_bytes = s.Int(c++);
  r.attach = s.Text(c++);
  return r;
}

// Opens `path`, sets WAL and synchronous=NORMAL, and migrates the schema.
util::Result<sqlite3*> OpenDb(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    util::Status st = util::Unavailable(Err(db, "cannot open accounting database " + path));
    sqlite3_close(db);
    return st;
  }
  sqlite3_busy_timeout(db, 5000);
  auto fail = [&](util::Status st) -> util::Result<sqlite3*> {
    sqlite3_close(db);
    return st;
  };
  if (auto st = Exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !st.ok())
    return fail(st);
  int version = 0;
  {
    Stmt s(db, "PRAGMA user_version");
    if (!s.ok() || sqlite3_step(s.get()) != SQLITE_ROW)
      return fail(util::Unavailable(Err(db, "accounting database")));
    version = static_cast<int>(s.Int(0));
  }
  if (version > kAccountingSchemaVersion) {
    return fail(util::FailedPrecondition(
        "accounting database " + path + " has schema version " + std::to_string(version) +
        ", newer than this build's " + std::to_string(kAccountingSchemaVersion)));
  }
  for (int v = version; v < kAccountingSchemaVersion; ++v) {
    std::string sql = std::string("BEGIN; ") + kMigrations[v] +
                      " PRAGMA user_version=" + std::to_string(v + 1) + "; COMMIT;";
    if (auto st = Exec(db, sql.c_str()); !st.ok()) {
      (void)Exec(db, "ROLLBACK");
      return fail(st);
    }
  }
  return db;
}

}  // namespace

// The writer's statements, prepared once per connection: preparing them for
// every batch cost more than the writes themselves (batches are small when
// the controller is not busy).
struct AccountingStore::WriterStatements {
  explicit WriterStatements(sqlite3* db)
      : job(db, std::string("INSERT INTO jobs (") + kJobCols + ") VALUES (" +
                    Placeholders(kJobColCount) +
                    ") ON CONFLICT (job_id, restarts) DO UPDATE SET " + JobUpdateList()),
        latest(db, "SELECT MAX(restarts) FROM jobs WHERE job_id = ?"),
        close_runs(db,
                   "UPDATE jobs SET state = ?4, end_time = ?1"
                   " WHERE job_id = ?2 AND restarts < ?3 AND end_time = 0"),
        // A requeue's SIGTERM ended its steps (0:15); a failed node's
        // reported nothing (exit code -1).
        close_steps(db,
                    "UPDATE steps SET state = 'CANCELLED', exit_code = ?4, exit_signal = ?5,"
                    " end_time = ?1 WHERE job_id = ?2 AND run < ?3 AND end_time = 0"),
        step_run(db,
                 "SELECT COALESCE((SELECT MAX(restarts) FROM jobs WHERE job_id = ?1"
                 " AND start_time > 0 AND start_time <= ?2),"
                 " (SELECT MAX(restarts) FROM jobs WHERE job_id = ?1), 0)"),
        step(db, std::string("INSERT OR REPLACE INTO steps (") + kStepCols + ") VALUES (" +
                     Placeholders(kStepColCount) + ")"),
        // A job that ended ends its steps still open: their own end reports
        // may have been lost with a controller crash, and Slurm cancels the
        // steps of an ending job.
        end_steps(db,
                  "UPDATE steps SET state = 'CANCELLED', exit_signal = 15, end_time = ?"
                  " WHERE job_id = ? AND run = ? AND end_time = 0 AND step_id != 'batch'"),
        applied(db, "UPDATE meta SET value = MAX(value, ?) WHERE key = 'applied_seq'") {}

  bool ok() const {
    return job.ok() && latest.ok() && close_runs.ok() && close_steps.ok() && step_run.ok() &&
           step.ok() && end_steps.ok() && applied.ok();
  }

  // "name = excluded.name, ..." for every column but the key: a run's row
  // is updated in place.
  static std::string JobUpdateList() {
    std::string update;
    std::string_view cols = kJobCols;
    size_t pos = 0;
    while (pos < cols.size()) {
      size_t comma = cols.find(',', pos);
      if (comma == std::string_view::npos) comma = cols.size();
      std::string_view c = cols.substr(pos, comma - pos);
      while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
      pos = comma + 1;
      if (c == "job_id" || c == "restarts") continue;
      if (!update.empty()) update += ", ";
      update += std::string(c) + " = excluded." + std::string(c);
    }
    return update;
  }

  Stmt job, latest, close_runs, close_steps, step_run, step, end_steps, applied;
};

AccountingStore::AccountingStore(AccountingOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &real_clock_) {
  writer_ = std::thread([this] { WriterLoop(); });
}

AccountingStore::~AccountingStore() {
  // The writer drains the whole queue (to the database or the spool) before
  // it returns; no Flush() here, which could wait forever on a dead disk.
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
  CloseWriter();
  std::lock_guard<std::mutex> l(read_mu_);
  sqlite3_close(reader_db_);
}

void AccountingStore::Upsert(const JobRecord& job, Origin origin) {
  const int64_t at = origin.time != 0 ? origin.time : clock_->Now();
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.emplace_back(QueuedJob{job, at, origin.seq});
    ++enqueued_;
  }
  cv_.notify_one();
}

void AccountingStore::UpsertStep(const StepRecord& step, Origin origin) {
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.emplace_back(QueuedStep{step, origin.seq});
    ++enqueued_;
  }
  cv_.notify_one();
}

util::Status AccountingStore::Flush() {
  std::unique_lock<std::mutex> l(mu_);
  const uint64_t target = enqueued_;
  const uint64_t request = ++flush_requests_;
  cv_.notify_one();
  idle_cv_.wait(l, [&] { return done_ >= target && flushes_served_ >= request; });
  if (db_ok_) return util::Status::Ok();
  return util::Unavailable("accounting records spooled: " + last_error_);
}

bool AccountingStore::FlushWithin(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> l(mu_);
  const uint64_t target = enqueued_;
  const uint64_t request = ++flush_requests_;
  cv_.notify_one();
  return idle_cv_.wait_for(l, timeout,
                           [&] { return done_ >= target && flushes_served_ >= request; });
}

uint64_t AccountingStore::AppliedSeq() {
  if (!Flush().ok()) return 0;
  std::lock_guard<std::mutex> l(read_mu_);
  if (!OpenReader().ok()) return 0;
  Stmt s(reader_db_, "SELECT value FROM meta WHERE key = 'applied_seq'");
  if (!s.ok() || sqlite3_step(s.get()) != SQLITE_ROW) return 0;
  return static_cast<uint64_t>(s.Int(0));
}

util::Status AccountingStore::OpenReader() const {
  if (reader_db_ != nullptr) return util::Status::Ok();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(options_.db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    util::Status st = util::Unavailable(Err(db, "cannot open accounting database"));
    sqlite3_close(db);
    return st;
  }
  sqlite3_busy_timeout(db, 5000);
  reader_db_ = db;
  return util::Status::Ok();
}

bool AccountingStore::database_ok() const {
  std::lock_guard<std::mutex> l(mu_);
  return db_ok_;
}

void AccountingStore::WriterLoop() {
  using Clock = std::chrono::steady_clock;
  // After a failure the database is retried at most once a second, except
  // when a Flush asks for it, so a dead disk does not cost a open per record.
  Clock::time_point retry_at{};
  std::deque<Item> batch;
  for (;;) {
    uint64_t request = 0;
    bool forced = false;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] {
        return stop_ || !queue_.empty() || flush_requests_ > flushes_served_;
      });
      if (stop_ && queue_.empty() && flush_requests_ == flushes_served_) return;
      const size_t n = std::min<size_t>(queue_.size(), static_cast<size_t>(options_.max_batch));
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      request = flush_requests_;
      forced = request > flushes_served_;
    }
    util::Status st = util::Status::Ok();
    if (writer_db_ == nullptr && !forced && Clock::now() < retry_at) {
      st = util::Unavailable("accounting database unavailable, retrying later");
    } else {
      st = EnsureOpen();
      if (st.ok()) st = ReplaySpool();
      if (st.ok() && !batch.empty()) st = WriteBatch(batch);
    }
    bool kept = false;
    if (!st.ok()) {
      if (!batch.empty() && !SpoolBatch(batch)) {
        // Neither the database nor the spool takes the records: keep them
        // queued, in order, and wait a second (or for shutdown) before
        // trying again. Only a shutdown in this state loses them, loudly.
        std::unique_lock<std::mutex> l(mu_);
        if (stop_) {
          std::fprintf(stderr,
                       "musterd: error: accounting database and spool %s unwritable at "
                       "shutdown: %zu records lost\n",
                       options_.spool_path.c_str(), batch.size());
        } else {
          std::fprintf(stderr,
                       "musterd: error: accounting spool %s is not writable; %zu records "
                       "kept in memory\n",
                       options_.spool_path.c_str(), batch.size());
          for (auto it = batch.rbegin(); it != batch.rend(); ++it) queue_.push_front(std::move(*it));
          kept = true;
          cv_.wait_for(l, std::chrono::seconds(1), [&] { return stop_; });
        }
      }
      if (writer_db_ != nullptr) CloseWriter();
      retry_at = Clock::now() + std::chrono::seconds(1);
    }
    const size_t written = kept ? 0 : batch.size();
    batch.clear();
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ += written;
      db_ok_ = st.ok();
      if (!st.ok()) last_error_ = st.message();
      if (queue_.empty()) flushes_served_ = std::max(flushes_served_, request);
    }
    idle_cv_.notify_all();
  }
}

util::Status AccountingStore::EnsureOpen() {
  if (writer_db_ != nullptr) return util::Status::Ok();
  auto db = OpenDb(options_.db_path);
  if (!db.ok()) return db.status();
  writer_db_ = *db;
  stmts_ = std::make_unique<WriterStatements>(writer_db_);
  if (!stmts_->ok()) {
    util::Status st = util::Unavailable(Err(writer_db_, "accounting database prepare"));
    CloseWriter();
    return st;
  }
  return util::Status::Ok();
}

void AccountingStore::CloseWriter() {
  stmts_.reset();  // finalized before the connection closes
  sqlite3_close(writer_db_);
  writer_db_ = nullptr;
}

namespace {

// Runs `s` to completion; false on an error. `row` receives column 0 of a
// result row (NULL reads as -1).
bool RunStmt(Stmt& s, int64_t* row = nullptr) {
  int rc = sqlite3_step(s.get());
  if (rc == SQLITE_ROW && row != nullptr)
    *row = sqlite3_column_type(s.get(), 0) == SQLITE_NULL ? -1 : s.Int(0);
  while (rc == SQLITE_ROW) rc = sqlite3_step(s.get());
  sqlite3_reset(s.get());
  return rc == SQLITE_DONE;
}

}  // namespace

util::Status AccountingStore::WriteBatch(const std::deque<Item>& batch) {
  MUSTER_RETURN_IF_ERROR(Exec(writer_db_, "BEGIN IMMEDIATE"));
  auto abort = [&](std::string what) {
    util::Status st = util::Unavailable(Err(writer_db_, what));
    (void)Exec(writer_db_, "ROLLBACK");
    return st;
  };
  WriterStatements& w = *stmts_;
  uint64_t max_seq = 0;
  for (const Item& item : batch) {
    if (const auto* q = std::get_if<QueuedJob>(&item)) {
      max_seq = std::max(max_seq, q->seq);
      const JobRecord& r = q->job;
      int64_t stored = -1;
      w.latest.Bind(1, r.job_id);
      if (!RunStmt(w.latest, &stored)) return abort("accounting database read");
      if (r.restarts < stored) continue;  // that run was closed by a later one
      if (stored >= 0 && r.restarts > stored) {
        // Requeued: the earlier runs end when this one was submitted (the
        // controller resets a requeued job's submit time, as Slurm).
        const int64_t requeued_at = r.submit_time > 0 ? r.submit_time : q->queued_at;
        const bool node_fail = r.prior_run_state == "NODE_FAIL";
        for (Stmt* c : {&w.close_runs, &w.close_steps}) {
          c->Bind(1, requeued_at);
          c->Bind(2, r.job_id);
          c->Bind(3, r.restarts);
        }
        w.close_runs.Bind(4, std::string(node_fail ? "NODE_FAIL" : "REQUEUED"));
        w.close_steps.Bind(4, node_fail ? -1 : 0);
        w.close_steps.Bind(5, node_fail ? 0 : 15);
        for (Stmt* c : {&w.close_runs, &w.close_steps}) {
          if (!RunStmt(*c)) return abort("accounting database write");
        }
      }
      BindJob(w.job, r);
      if (!RunStmt(w.job)) return abort("accounting database write");
      if (r.end_time > 0 && r.start_time > 0) {
        w.end_steps.Bind(1, r.end_time);
        w.end_steps.Bind(2, r.job_id);
        w.end_steps.Bind(3, r.restarts);
        if (!RunStmt(w.end_steps)) return abort("accounting database write");
      }
    } else {
      const auto& queued = std::get<QueuedStep>(item);
      max_seq = std::max(max_seq, queued.seq);
      StepRecord st = queued.step;
      if (st.run < 0) {
        int64_t r = 0;
        w.step_run.Bind(1, st.job_id);
        w.step_run.Bind(2, st.start_time);
        if (!RunStmt(w.step_run, &r)) return abort("accounting database read");
        st.run = static_cast<int>(std::max<int64_t>(r, 0));
      }
      BindStep(w.step, st);
      if (!RunStmt(w.step)) return abort("accounting database write");
    }
  }
  if (max_seq > 0) {
    w.applied.Bind(1, static_cast<int64_t>(max_seq));
    if (!RunStmt(w.applied)) return abort("accounting database write");
  }
  if (sqlite3_exec(writer_db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    return abort("accounting database commit");
  return util::Status::Ok();
}

util::Status AccountingStore::ReplaySpool() {
  std::ifstream in(options_.spool_path);
  if (!in) return util::Status::Ok();
  std::deque<Item> items;
  std::string line;
  while (std::getline(in, line)) {
    // A torn last line (crash while spooling) fails to parse and is skipped;
    // every complete line was written with its newline.
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    try {
      const uint64_t seq = j.value("seq", uint64_t{0});
      if (j.value("kind", "") == "step") {
        items.emplace_back(QueuedStep{StepFromJson(j), seq});
      } else {
        items.emplace_back(QueuedJob{JobFromJson(j), j.value("queued_at", int64_t{0}), seq});
      }
    } catch (const nlohmann::json::exception&) {
      // A line this build did not write (wrong types): not a record.
    }
  }
  in.close();
  if (!items.empty()) MUSTER_RETURN_IF_ERROR(WriteBatch(items));
  // Upserts are idempotent: a crash before this unlink replays them again.
  ::unlink(options_.spool_path.c_str());
  return util::Status::Ok();
}

bool AccountingStore::SpoolBatch(const std::deque<Item>& batch) {
  std::string text;
  for (const Item& item : batch) {
    nlohmann::json j;
    if (const auto* q = std::get_if<QueuedJob>(&item)) {
      j = ToJson(q->job);
      j["queued_at"] = q->queued_at;
      j["seq"] = q->seq;
    } else {
      const auto& queued = std::get<QueuedStep>(item);
      j = ToJson(queued.step);
      j["seq"] = queued.seq;
    }
    text += j.dump();
    text += '\n';
  }
  const int fd = ::open(options_.spool_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                        0600);
  bool ok = fd >= 0;
  // A failed append is cut back to where it began, so that no torn line
  // sits in the middle of the spool (the batch is written again later).
  const off_t begin = ok ? ::lseek(fd, 0, SEEK_END) : 0;
  size_t off = 0;
  while (ok && off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) ok = false;
    else off += static_cast<size_t>(n);
  }
  if (fd >= 0) {
    if (ok && ::fdatasync(fd) != 0) ok = false;
    if (!ok && begin >= 0) (void)::ftruncate(fd, begin);
    ::close(fd);
  }
  return ok;
}

util::Status AccountingStore::SaveAccounts(const std::string& doc) {
  auto opened = OpenDb(options_.db_path);
  if (!opened.ok()) return opened.status();
  sqlite3* db = *opened;
  // On disk before the change is acknowledged, WAL or not.
  util::Status st = Exec(db, "PRAGMA synchronous=FULL; BEGIN IMMEDIATE;");
  if (st.ok()) {
    Stmt put(db, "INSERT INTO accounts (id, doc) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc");
    if (!put.ok()) {
      st = util::Unavailable(Err(db, "accounting database"));
    } else {
      put.Bind(1, doc);
      if (sqlite3_step(put.get()) != SQLITE_DONE) st = util::Unavailable(Err(db, "accounting database"));
    }
  }
  st = st.ok() ? Exec(db, "COMMIT") : st;
  if (!st.ok()) (void)Exec(db, "ROLLBACK");
  sqlite3_close(db);
  return st;
}

util::Result<std::string> AccountingStore::LoadAccounts() const {
  auto opened = OpenDb(options_.db_path);
  if (!opened.ok()) return opened.status();
  sqlite3* db = *opened;
  std::string doc;
  util::Status st = util::Status::Ok();
  {
    Stmt get(db, "SELECT doc FROM accounts WHERE id = 1");
    if (!get.ok()) {
      st = util::Unavailable(Err(db, "accounting database"));
    } else if (sqlite3_step(get.get()) == SQLITE_ROW) {
      doc = get.Text(0);
    }
  }
  sqlite3_close(db);
  if (!st.ok()) return st;
  return doc;
}

util::Result<QueryResult> AccountingStore::Query(const AccountingQuery& q) const {
  std::lock_guard<std::mutex> l(read_mu_);
  MUSTER_RETURN_IF_ERROR(OpenReader());
  std::string where = " WHERE 1";
  std::vector<std::function<void(Stmt&, int&)>> binds;
  auto in_list = [&](const char* col, auto values) {
    if (values.empty()) return;
    where += std::string(" AND ") + col + " IN (" + Placeholders(static_cast<int>(values.size())) + ")";
    binds.push_back([values](Stmt& s, int& i) {
      for (const auto& v : values) s.Bind(i++, v);
    });
  };
  if (!q.job_ids.empty()) {
    // sacct -j N also names the tasks of array job N, and the components
    // of heterogeneous job N.
    const std::string ph = Placeholders(static_cast<int>(q.job_ids.size()));
    where += " AND (j.job_id IN (" + ph + ") OR j.array_job_id IN (" + ph +
             ") OR j.het_job_id IN (" + ph + "))";
    auto ids = q.job_ids;
    binds.push_back([ids](Stmt& s, int& i) {
      for (int pass = 0; pass < 3; ++pass)
        for (int64_t v : ids) s.Bind(i++, v);
    });
  }
  std::vector<int64_t> uids(q.uids.begin(), q.uids.end());
  in_list("j.uid", uids);
  in_list("j.account", q.accounts);
  in_list("j.partition", q.partitions);
  in_list("j.name", q.names);
  if (q.window_start > 0) {
    where += " AND (j.end_time >= ? OR j.end_time = 0)";
    const int64_t v = q.window_start;
    binds.push_back([v](Stmt& s, int& i) { s.Bind(i++, v); });
  }
  if (q.window_end > 0) {
    where += " AND j.eligible_time < ? AND j.eligible_time > 0";
    const int64_t v = q.window_end;
    binds.push_back([v](Stmt& s, int& i) { s.Bind(i++, v); });
  }
  if (!q.duplicates) {
    where += " AND j.restarts = (SELECT MAX(x.restarts) FROM jobs x WHERE x.job_id = j.job_id)";
  }
  // JobRecordLess (records.h), in SQL.
  std::string job_sql = std::string("SELECT ") + kJobCols + " FROM jobs j" + where +
                        " ORDER BY CASE WHEN j.array_job_id > 0 THEN j.array_job_id"
                        " ELSE j.job_id END, CASE WHEN j.array_task_id >= 0 THEN"
                        " j.array_task_id ELSE 1099511627776 END, j.job_id, j.restarts";
  if (q.limit > 0) job_sql += " LIMIT " + std::to_string(q.limit);
  QueryResult out;
  {
    Stmt s(reader_db_, job_sql);
    if (!s.ok()) return util::Unavailable(Err(reader_db_, "accounting query"));
    int i = 1;
    for (auto& b : binds) b(s, i);
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) out.jobs.push_back(ReadJob(s));
    if (rc != SQLITE_DONE) return util::Unavailable(Err(reader_db_, "accounting query"));
  }
  if (!q.include_steps || out.jobs.empty()) return out;
  std::string step_cols;
  {
    std::string_view cols = kStepCols;
    size_t pos = 0;
    while (pos < cols.size()) {
      size_t comma = cols.find(',', pos);
      if (comma == std::string_view::npos) comma = cols.size();
      std::string_view c = cols.substr(pos, comma - pos);
      while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
      if (!step_cols.empty()) step_cols += ", ";
      step_cols += "s.";
      step_cols += c;
      pos = comma + 1;
    }
  }
  std::string step_sql = "SELECT " + step_cols +
                         " FROM steps s JOIN jobs j ON s.job_id = j.job_id AND s.run = j.restarts";
  if (q.limit > 0) {
    step_sql += " WHERE s.job_id BETWEEN ? AND ?";
  } else {
    step_sql += where;
  }
  {
    Stmt s(reader_db_, step_sql);
    if (!s.ok()) return util::Unavailable(Err(reader_db_, "accounting query"));
    int i = 1;
    if (q.limit > 0) {
      auto [lo, hi] = std::minmax_element(
          out.jobs.begin(), out.jobs.end(),
          [](const JobRecord& a, const JobRecord& b) { return a.job_id < b.job_id; });
      s.Bind(i++, lo->job_id);
      s.Bind(i++, hi->job_id);
    } else {
      for (auto& b : binds) b(s, i);
    }
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) out.steps.push_back(ReadStep(s));
    if (rc != SQLITE_DONE) return util::Unavailable(Err(reader_db_, "accounting query"));
  }
  if (q.limit > 0) {
    // The id range may hold runs the filters excluded: keep only the steps
    // of the runs returned.
    std::vector<std::pair<int64_t, int>> runs;
    for (const auto& j : out.jobs) runs.emplace_back(j.job_id, j.restarts);
    std::sort(runs.begin(), runs.end());
    std::erase_if(out.steps, [&](const StepRecord& st) {
      return !std::binary_search(runs.begin(), runs.end(), std::pair(st.job_id, st.run));
    });
  }
  std::sort(out.steps.begin(), out.steps.end(), [](const StepRecord& a, const StepRecord& b) {
    if (a.job_id != b.job_id) return a.job_id < b.job_id;
    if (a.run != b.run) return a.run < b.run;
    return StepSortRank(a.step_id) < StepSortRank(b.step_id);
  });
  return out;
}

nlohmann::json AccountingStore::ToJson(const JobRecord& r) {
  return {{"kind", "job"}, {"job_id", r.job_id}, {"array_job_id", r.array_job_id},
          {"array_task_id", r.array_task_id}, {"name", r.name}, {"user", r.user},
          {"uid", r.uid}, {"gid", r.gid}, {"group", r.group}, {"account", r.account},
          {"partition", r.partition}, {"qos", r.qos}, {"cluster", r.cluster},
          {"submit_time", r.submit_time}, {"eligible_time", r.eligible_time},
          {"start_time", r.start_time}, {"end_time", r.end_time},
          {"time_limit_min", r.time_limit_min}, {"state", r.state},
          {"exit_code", r.exit_code}, {"exit_signal", r.exit_signal},
          {"derived_exit_code", r.derived_exit_code},
          {"derived_exit_signal", r.derived_exit_signal}, {"req_tres", r.req_tres},
          {"alloc_tres", r.alloc_tres}, {"node_list", r.node_list}, {"nnodes", r.nnodes},
          {"ncpus", r.ncpus}, {"req_mem_mb", r.req_mem_mb},
          {"req_mem_per_cpu", r.req_mem_per_cpu}, {"work_dir", r.work_dir},
          {"comment", r.comment}, {"max_rss_kb", r.max_rss_kb},
          {"total_cpu_ms", r.total_cpu_ms}, {"reason", r.reason}, {"restarts", r.restarts},
          {"array_pending", r.array_pending}, {"array_max_running", r.array_max_running},
          {"het_job_id", r.het_job_id}, {"het_job_offset", r.het_job_offset},
          {"prior_run_state", r.prior_run_state}};
}

nlohmann::json AccountingStore::ToJson(const StepRecord& r) {
  return {{"kind", "step"}, {"job_id", r.job_id}, {"run", r.run}, {"step_id", r.step_id},
          {"name", r.name}, {"state", r.state}, {"exit_code", r.exit_code},
          {"exit_signal", r.exit_signal}, {"start_time", r.start_time},
          {"end_time", r.end_time}, {"node_list", r.node_list}, {"nnodes", r.nnodes},
          {"ntasks", r.ntasks}, {"ncpus", r.ncpus}, {"alloc_tres", r.alloc_tres},
          {"max_rss_kb", r.max_rss_kb}, {"total_cpu_ms", r.total_cpu_ms},
          {"gpu_util_pct", r.gpu_util_pct}, {"gpu_mem_max_bytes", r.gpu_mem_max_bytes},
          {"attach", r.attach}};
}

// Missing keys keep the defaults, so spools from older builds still load.
JobRecord AccountingStore::JobFromJson(const nlohmann::json& j) {
  JobRecord r;
  auto get = [&](const char* k, auto& field) {
    auto it = j.find(k);
    if (it != j.end() && !it->is_null()) {
      try {
        it->get_to(field);
      } catch (const nlohmann::json::exception&) {
      }
    }
  };
  get("job_id", r.job_id); get("array_job_id", r.array_job_id);
  get("array_task_id", r.array_task_id); get("name", r.name); get("user", r.user);
  get("uid", r.uid); get("gid", r.gid); get("group", r.group); get("account", r.account);
  get("partition", r.partition); get("qos", r.qos); get("cluster", r.cluster);
  get("submit_time", r.submit_time); get("eligible_time", r.eligible_time);
  get("start_time", r.start_time); get("end_time", r.end_time);
  get("time_limit_min", r.time_limit_min); get("state", r.state);
  get("exit_code", r.exit_code); get("exit_signal", r.exit_signal);
  get("derived_exit_code", r.derived_exit_code);
  get("derived_exit_signal", r.derived_exit_signal); get("req_tres", r.req_tres);
  get("alloc_tres", r.alloc_tres); get("node_list", r.node_list); get("nnodes", r.nnodes);
  get("ncpus", r.ncpus); get("req_mem_mb", r.req_mem_mb);
  get("req_mem_per_cpu", r.req_mem_per_cpu); get("work_dir", r.work_dir);
  get("comment", r.comment); get("max_rss_kb", r.max_rss_kb);
  get("total_cpu_ms", r.total_cpu_ms); get("reason", r.reason); get("restarts", r.restarts);
  get("array_pending", r.array_pending); get("array_max_running", r.array_max_running);
  get("het_job_id", r.het_job_id); get("het_job_offset", r.het_job_offset);
  get("prior_run_state", r.prior_run_state);
  return r;
}

StepRecord AccountingStore::StepFromJson(const nlohmann::json& j) {
  StepRecord r;
  auto get = [&](const char* k, auto& field) {
    auto it = j.find(k);
    if (it != j.end() && !it->is_null()) {
      try {
        it->get_to(field);
      } catch (const nlohmann::json::exception&) {
      }
    }
  };
  get("job_id", r.job_id); get("run", r.run); get("step_id", r.step_id); get("name", r.name);
  get("state", r.state); get("exit_code", r.exit_code); get("exit_signal", r.exit_signal);
  get("start_time", r.start_time); get("end_time", r.end_time);
  get("node_list", r.node_list); get("nnodes", r.nnodes); get("ntasks", r.ntasks);
  get("ncpus", r.ncpus); get("alloc_tres", r.alloc_tres); get("max_rss_kb", r.max_rss_kb);
  get("total_cpu_ms", r.total_cpu_ms); get("gpu_util_pct", r.gpu_util_pct);
  get("gpu_mem_max_bytes", r.gpu_mem_max_bytes);
  get("attach", r.attach);
  return r;
}

}  // namespace muster::store

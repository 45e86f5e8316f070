#include "store/accounting.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/clock.h"

namespace muster::store {
namespace {

namespace fs = std::filesystem;

class AccountingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/muster_acct_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  AccountingOptions Options(const std::string& sub = "") const {
    std::string d = sub.empty() ? dir_ : dir_ + "/" + sub;
    return {.db_path = d + "/accounting.db", .spool_path = dir_ + "/accounting.spool"};
  }
  std::string dir_;
};

JobRecord MakeJob(int64_t id, uint32_t uid = 1000, int64_t t = 1000) {
  JobRecord r;
  r.job_id = id;
  r.name = "job" + std::to_string(id);
  r.user = "u" + std::to_string(uid);
  r.uid = uid;
  r.account = "acct";
  r.partition = "short";
  r.submit_time = t;
  r.eligible_time = t;
  r.start_time = t + 1;
  r.end_time = t + 61;
  r.state = "COMPLETED";
  r.req_tres = "billing=1,cpu=1,mem=1000M,node=1";
  r.alloc_tres = r.req_tres;
  r.max_rss_kb = 2048;
  return r;
}

StepRecord MakeStep(int64_t id, std::string step) {
  StepRecord s;
  s.job_id = id;
  s.step_id = std::move(step);
  s.name = s.step_id == "batch" ? "batch" : "sleep";
  s.state = "COMPLETED";
  return s;
}

int UserVersion(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
  int v = -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

TEST_F(AccountingTest, AccountsAreStoredWholeAndReadBack) {
  {
    AccountingStore store(Options());
    auto empty = store.LoadAccounts();
    ASSERT_TRUE(empty.ok()) << empty.status().message();
    EXPECT_EQ(*empty, "");
    ASSERT_TRUE(store.SaveAccounts(R"({"accounts":[1]})").ok());
    ASSERT_TRUE(store.SaveAccounts(R"({"accounts":[2]})").ok());
  }
  AccountingStore again(Options());
  auto doc = again.LoadAccounts();
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(*doc, R"({"accounts":[2]})");
  EXPECT_EQ(UserVersion(Options().db_path), kAccountingSchemaVersion);
}

TEST_F(AccountingTest, UpsertQueryRoundTrip) {
  AccountingStore store(Options());
  JobRecord j = MakeJob(7);
  j.state = "CANCELLED by 1000";
  j.exit_signal = 15;
  j.comment = "rule_a";
  j.work_dir = "/home/u";
  j.array_task_id = 3;
  j.array_job_id = 5;
  store.Upsert(j);
  store.UpsertStep(MakeStep(7, "1"));
  store.UpsertStep(MakeStep(7, "0"));
  store.UpsertStep(MakeStep(7, "extern"));
  store.UpsertStep(MakeStep(7, "batch"));
  ASSERT_TRUE(store.Flush().ok());
  j.max_rss_kb = 4096;  // a later update replaces the row
  store.Upsert(j);
  ASSERT_TRUE(store.Flush().ok());

  auto r = store.Query({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(AccountingStore::ToJson(r->jobs[0]), AccountingStore::ToJson(j));
  ASSERT_EQ(r->steps.size(), 4u);
  EXPECT_EQ(r->steps[0].step_id, "batch");
  EXPECT_EQ(r->steps[1].step_id, "extern");
  EXPECT_EQ(r->steps[2].step_id, "0");
  EXPECT_EQ(r->steps[3].step_id, "1");

  AccountingQuery by_array;
  by_array.job_ids = {5};
  EXPECT_EQ(store.Query(by_array)->jobs.size(), 1u);
  EXPECT_TRUE(store.database_ok());
  EXPECT_EQ(UserVersion(Options().db_path), kAccountingSchemaVersion);
}

TEST_F(AccountingTest, MigratesFromVersionZero) {
  {
    // A version-0 file: exists, holds no schema.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Options().db_path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE unrelated (x INTEGER)", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  EXPECT_EQ(UserVersion(Options().db_path), 0);
  AccountingStore store(Options());
  store.Upsert(MakeJob(1));
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_EQ(UserVersion(Options().db_path), kAccountingSchemaVersion);
  EXPECT_EQ(store.Query({})->jobs.size(), 1u);
}

TEST_F(AccountingTest, SpoolsWhileUnwritableThenReplays) {
  // The database's directory is absent, so it cannot be opened (this also
  // holds for root, who ignores permission bits).
  AccountingOptions opt = Options("missing");
  {
    AccountingStore store(opt);
    for (int i = 1; i <= 10; ++i) store.Upsert(MakeJob(i));
    store.UpsertStep(MakeStep(3, "batch"));
    EXPECT_FALSE(store.Flush().ok());
    EXPECT_FALSE(store.database_ok());
    EXPECT_TRUE(fs::exists(opt.spool_path));
    std::ifstream in(opt.spool_path);
    int lines = 0;
    for (std::string l; std::getline(in, l);) ++lines;
    EXPECT_EQ(lines, 11);
    // The directory appears: the next flush opens the DB and replays.
    fs::create_directory(dir_ + "/missing");
    store.Upsert(MakeJob(11));
    EXPECT_TRUE(store.Flush().ok());
    EXPECT_FALSE(fs::exists(opt.spool_path));
    auto r = store.Query({});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->jobs.size(), 11u);
    EXPECT_EQ(r->steps.size(), 1u);
  }
}

TEST_F(AccountingTest, ShutdownSpoolsWhatIsQueued) {
  AccountingOptions opt = Options("missing");
  {
    AccountingStore store(opt);
    for (int i = 1; i <= 5; ++i) store.Upsert(MakeJob(i));
  }  // no Flush: the destructor drains the queue
  std::ifstream in(opt.spool_path);
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, 5);
  fs::create_directory(dir_ + "/missing");
  AccountingStore again(opt);
  ASSERT_TRUE(again.Flush().ok());
  EXPECT_EQ(again.Query({})->jobs.size(), 5u);
}

TEST_F(AccountingTest, SpoolReplayedByNextStartAndTornLineSkipped) {
  AccountingOptions opt = Options();
  {
    std::ofstream out(opt.spool_path);
    out << AccountingStore::ToJson(MakeJob(42)).dump() << "\n" << "{\"kind\":\"job\",\"job_";
  }
  AccountingStore store(opt);
  ASSERT_TRUE(store.Flush().ok());
  auto r = store.Query({});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->jobs[0].job_id, 42);
  EXPECT_FALSE(fs::exists(opt.spool_path));
}

TEST_F(AccountingTest, ManyWritesBatchAndAllArrive) {
  AccountingOptions opt = Options();
  opt.max_batch = 500;
  AccountingStore store(opt);
  for (int i = 1; i <= 20000; ++i) {
    store.Upsert(MakeJob(i, 1000 + i % 7));
    if (i % 3 == 0) store.UpsertStep(MakeStep(i, "batch"));
  }
  ASSERT_TRUE(store.Flush().ok());
  auto r = store.Query({});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs.size(), 20000u);
  EXPECT_EQ(r->steps.size(), 6666u);
  for (size_t i = 1; i < r->jobs.size(); ++i) ASSERT_LT(r->jobs[i - 1].job_id, r->jobs[i].job_id);
}

TEST_F(AccountingTest, QueriesByUserAndTimeRangeOver100kRows) {
  AccountingStore store(Options());
  constexpr int kJobs = 100000;
  for (int i = 1; i <= kJobs; ++i) store.Upsert(MakeJob(i, 1000 + i % 100, 1000000 + i * 10));
  ASSERT_TRUE(store.Flush().ok());

  AccountingQuery by_user;
  by_user.uids = {1042};
  auto r = store.Query(by_user);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs.size(), 1000u);
  for (const auto& j : r->jobs) ASSERT_EQ(j.uid, 1042u);

  // Jobs run [t+1, t+61] with t = 1e6 + 10 i: a window [S, E] catches those
  // with end >= S and eligible <= E.
  AccountingQuery window;
  window.window_start = 1000000 + 50000 * 10;
  window.window_end = 1000000 + 50100 * 10;
  r = store.Query(window);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->jobs.empty());
  EXPECT_EQ(r->jobs.front().job_id, 49994);  // end = t+61 >= S
  EXPECT_EQ(r->jobs.back().job_id, 50099);  // eligible < E
  EXPECT_EQ(r->jobs.size(), 106u);

  window.uids = {1000};
  window.limit = 1;
  r = store.Query(window);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->jobs[0].job_id, 50000);
}

// One row per run. Shaped after the oracle (Slurm 22.05): sbatch --wrap
// 'sleep 100' (14504); scontrol requeue 14504 while it ran; then
// sacct -D -j 14504 showed the first run REQUEUED, Start 19:02:33, End
// 19:02:35 (the requeue), its batch step CANCELLED 0:15 ending then, and the
// second run with Submit 19:02:35; sacct -j 14504 only the second run.
TEST_F(AccountingTest, RequeuedRunsKeepTheirOwnRows) {
  util::FakeClock clock(5000);
  AccountingOptions opt = Options();
  opt.clock = &clock;
  AccountingStore store(opt);
  JobRecord run0 = MakeJob(14504, 0, 4000);  // submitted 4000, started 4001
  run0.end_time = 0;
  run0.state = "RUNNING";
  store.Upsert(run0);
  StepRecord batch0 = MakeStep(14504, "batch");
  batch0.run = 0;
  batch0.state = "RUNNING";
  batch0.start_time = 4001;
  store.UpsertStep(batch0);
  StepRecord srun0 = MakeStep(14504, "0");  // run unknown: the run started by then
  srun0.state = "RUNNING";
  srun0.start_time = 4002;
  store.UpsertStep(srun0);

  clock.Set(5003);  // requeued: the controller records the job PENDING again
  JobRecord run1 = run0;
  run1.restarts = 1;
  run1.submit_time = 5003;  // reset at the requeue, as Slurm
  run1.state = "PENDING";
  run1.start_time = 0;
  run1.reason = "BeginTime";
  store.Upsert(run1);
  ASSERT_TRUE(store.Flush().ok());

  auto latest = store.Query({});
  ASSERT_TRUE(latest.ok()) << latest.status().message();
  ASSERT_EQ(latest->jobs.size(), 1u);
  EXPECT_EQ(latest->jobs[0].restarts, 1);
  EXPECT_EQ(latest->jobs[0].state, "PENDING");
  EXPECT_EQ(latest->jobs[0].submit_time, 5003);  // the requeue time
  EXPECT_TRUE(latest->steps.empty());

  AccountingQuery all;
  all.duplicates = true;
  auto r = store.Query(all);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].restarts, 0);
  EXPECT_EQ(r->jobs[0].state, "REQUEUED");
  EXPECT_EQ(r->jobs[0].submit_time, 4000);
  EXPECT_EQ(r->jobs[0].start_time, 4001);
  EXPECT_EQ(r->jobs[0].end_time, 5003);
  EXPECT_EQ(r->jobs[1].restarts, 1);
  ASSERT_EQ(r->steps.size(), 2u);
  for (const StepRecord& st : r->steps) {
    EXPECT_EQ(st.run, 0) << st.step_id;
    EXPECT_EQ(st.state, "CANCELLED") << st.step_id;
    EXPECT_EQ(st.exit_signal, 15) << st.step_id;
    EXPECT_EQ(st.end_time, 5003) << st.step_id;
  }

  // The second run starts and ends; its submit time stays the requeue's.
  clock.Set(5125);
  run1.state = "RUNNING";
  run1.start_time = 5124;
  run1.reason = "None";
  store.Upsert(run1);
  StepRecord batch1 = batch0;
  batch1.run = 1;
  batch1.start_time = 5124;
  store.UpsertStep(batch1);
  StepRecord srun1 = srun0;  // run unknown again: now the second run's
  srun1.start_time = 5130;
  store.UpsertStep(srun1);
  run1.state = "COMPLETED";
  run1.end_time = 5200;
  store.Upsert(run1);
  store.Upsert(run0);  // a stale record of the closed run changes nothing
  ASSERT_TRUE(store.Flush().ok());
  r = store.Query(all);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].state, "REQUEUED");
  EXPECT_EQ(r->jobs[0].end_time, 5003);
  EXPECT_EQ(r->jobs[1].state, "COMPLETED");
  EXPECT_EQ(r->jobs[1].submit_time, 5003);
  EXPECT_EQ(r->jobs[1].start_time, 5124);
  ASSERT_EQ(r->steps.size(), 4u);
  EXPECT_EQ(r->steps[2].run, 1);
  EXPECT_EQ(r->steps[2].step_id, "batch");
  EXPECT_EQ(r->steps[2].state, "RUNNING");
  EXPECT_EQ(r->steps[3].run, 1);
  EXPECT_EQ(r->steps[3].step_id, "0");
  latest = store.Query({});
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->jobs.size(), 1u);
  EXPECT_EQ(latest->jobs[0].state, "COMPLETED");
  EXPECT_EQ(latest->steps.size(), 2u);

  // The spool keeps the requeue time: a rerun recorded while the database
  // was away still ends the run before at its submit time.
  {
    AccountingOptions away = Options("missing");
    away.clock = &clock;
    AccountingStore spooled(away);
    clock.Set(7000);
    store::JobRecord a = MakeJob(1, 0, 6000);
    a.end_time = 0;
    a.state = "RUNNING";
    spooled.Upsert(a);
    clock.Set(7010);
    a.restarts = 1;
    a.state = "PENDING";
    a.submit_time = 7010;
    spooled.Upsert(a);
    EXPECT_FALSE(spooled.Flush().ok());
    fs::create_directory(dir_ + "/missing");
    clock.Set(9999);
    ASSERT_TRUE(spooled.Flush().ok());
    auto s = spooled.Query(all);
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s->jobs.size(), 2u);
    EXPECT_EQ(s->jobs[0].end_time, 7010);
    EXPECT_EQ(s->jobs[1].submit_time, 7010);
  }
}

// Array records, shaped after sbatch --array=1,3,5-7%2 (14491) on the oracle
// while tasks 1 and 3 ran as raw ids 14493 and 14494: sacct -j 14491 listed
// 14491_1, 14491_3, then 14491_[5-7%2] (raw 14491); sacct -j 14494 the task.

// A run requeued by its node's failure (the oracle: scontrol update
// NodeName=cpu02 State=DOWN under job 16): sacct -D shows it NODE_FAIL 0:0
// and its batch step CANCELLED with an empty ExitCode.
TEST_F(AccountingTest, ARunEndedByANodeFailureIsClosedNodeFail) {
  util::FakeClock clock(5000);
  AccountingOptions opt = Options();
  opt.clock = &clock;
  AccountingStore store(opt);
  JobRecord run0 = MakeJob(16, 0, 4000);
  run0.end_time = 0;
  run0.state = "RUNNING";
  store.Upsert(run0);
  StepRecord batch0 = MakeStep(16, "batch");
  batch0.run = 0;
  batch0.state = "RUNNING";
  batch0.start_time = 4001;
  store.UpsertStep(batch0);
  JobRecord run1 = run0;
  run1.restarts = 1;
  run1.submit_time = 5003;
  run1.state = "PENDING";
  run1.start_time = 0;
  run1.prior_run_state = "NODE_FAIL";
  store.Upsert(run1);
  ASSERT_TRUE(store.Flush().ok());
  AccountingQuery all;
  all.duplicates = true;
  auto r = store.Query(all);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].state, "NODE_FAIL");
  EXPECT_EQ(r->jobs[0].end_time, 5003);
  EXPECT_EQ(r->jobs[1].state, "PENDING");
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].state, "CANCELLED");
  EXPECT_EQ(r->steps[0].exit_code, -1);
  EXPECT_EQ(r->steps[0].exit_signal, 0);
  EXPECT_EQ(r->steps[0].end_time, 5003);
  // The spool keeps how the run before ended.
  EXPECT_EQ(AccountingStore::JobFromJson(AccountingStore::ToJson(run1)).prior_run_state,
            "NODE_FAIL");
}
TEST_F(AccountingTest, ArrayRecordsInSacctOrder) {
  AccountingStore store(Options());
  JobRecord pending = MakeJob(14491);
  pending.array_job_id = 14491;
  pending.array_pending = "5-7";
  pending.array_max_running = 2;
  pending.state = "PENDING";
  store.Upsert(pending);
  for (auto [raw, task] : {std::pair(14494, 3), std::pair(14493, 1)}) {
    JobRecord t = MakeJob(raw);
    t.array_job_id = 14491;
    t.array_task_id = task;
    t.array_max_running = 2;
    store.Upsert(t);
    store.UpsertStep(MakeStep(raw, "batch"));
  }
  store.Upsert(MakeJob(14490));
  store.Upsert(MakeJob(14492));
  ASSERT_TRUE(store.Flush().ok());

  auto r = store.Query({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<int64_t> order;
  for (const auto& j : r->jobs) order.push_back(j.job_id);
  EXPECT_EQ(order, (std::vector<int64_t>{14490, 14493, 14494, 14491, 14492}));
  EXPECT_EQ(r->jobs[3].array_pending, "5-7");
  EXPECT_EQ(r->jobs[3].array_max_running, 2);
  EXPECT_EQ(r->jobs[3].array_task_id, -1);

  AccountingQuery array;
  array.job_ids = {14491};
  r = store.Query(array);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs.size(), 3u);
  EXPECT_EQ(r->steps.size(), 2u);
  AccountingQuery task;
  task.job_ids = {14494};
  r = store.Query(task);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->jobs[0].array_task_id, 3);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].job_id, 14494);
}

// A version-2 file (one row per job id) moves to one row per run; its steps
// become steps of their job's run.
TEST_F(AccountingTest, MigratesFromVersionTwo) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Options().db_path.c_str(), &db), SQLITE_OK);
    // Schema version 2, as migrations 0 -> 1 -> 2 left it (abridged defaults).
    const char* v2 =
        "CREATE TABLE jobs (job_id INTEGER PRIMARY KEY, array_job_id INTEGER NOT NULL DEFAULT 0,"
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
        "CREATE TABLE steps (job_id INTEGER NOT NULL, step_id TEXT NOT NULL,"
        " name TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT '',"
        " exit_code INTEGER NOT NULL DEFAULT 0, exit_signal INTEGER NOT NULL DEFAULT 0,"
        " start_time INTEGER NOT NULL DEFAULT 0, end_time INTEGER NOT NULL DEFAULT 0,"
        " node_list TEXT NOT NULL DEFAULT '', nnodes INTEGER NOT NULL DEFAULT 0,"
        " ntasks INTEGER NOT NULL DEFAULT 0, ncpus INTEGER NOT NULL DEFAULT 0,"
        " alloc_tres TEXT NOT NULL DEFAULT '', max_rss_kb INTEGER NOT NULL DEFAULT -1,"
        " total_cpu_ms INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (job_id, step_id)) WITHOUT ROWID;"
        "CREATE INDEX jobs_uid_time ON jobs (uid, end_time, eligible_time);"
        "CREATE INDEX jobs_end ON jobs (end_time);"
        "CREATE INDEX jobs_eligible ON jobs (eligible_time);"
        "CREATE INDEX jobs_array ON jobs (array_job_id);"
        "INSERT INTO jobs (job_id, name, state, restarts, end_time) VALUES (7, 'old', 'COMPLETED', 2, 99);"
        "INSERT INTO jobs (job_id, name, state) VALUES (8, 'new', 'RUNNING');"
        "INSERT INTO steps (job_id, step_id, state) VALUES (7, 'batch', 'COMPLETED');"
        "PRAGMA user_version=2;";
    ASSERT_EQ(sqlite3_exec(db, v2, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  AccountingStore store(Options());
  JobRecord eight = MakeJob(8);
  eight.restarts = 1;  // job 8 was requeued after the upgrade
  store.Upsert(eight);
  ASSERT_TRUE(store.Flush().ok());
  EXPECT_EQ(UserVersion(Options().db_path), kAccountingSchemaVersion);
  AccountingQuery all;
  all.duplicates = true;
  auto r = store.Query(all);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 3u);
  EXPECT_EQ(r->jobs[0].name, "old");
  EXPECT_EQ(r->jobs[0].restarts, 2);
  EXPECT_EQ(r->jobs[1].state, "REQUEUED");
  EXPECT_EQ(r->jobs[2].restarts, 1);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].run, 2);
}

TEST_F(AccountingTest, RefusesNewerSchema) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Options().db_path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  AccountingStore store(Options());
  store.Upsert(MakeJob(1));
  util::Status st = store.Flush();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("schema version 99"), std::string::npos) << st.message();
  EXPECT_TRUE(fs::exists(Options().spool_path));
}

TEST_F(AccountingTest, AppliedSeqIsTheHighestWrittenAndSurvivesRestarts) {
  AccountingOptions opt = Options();
  {
    AccountingStore store(opt);
    EXPECT_EQ(store.AppliedSeq(), 0u);
    store.Upsert(MakeJob(1), {.seq = 7});
    store.UpsertStep(MakeStep(1, "batch"), {.seq = 7});
    store.Upsert(MakeJob(2), {.seq = 9});
    store.UpsertStep(MakeStep(2, "0"));  // srun steps are not journalled
    EXPECT_EQ(store.AppliedSeq(), 9u);
  }
  AccountingStore again(opt);
  EXPECT_EQ(again.AppliedSeq(), 9u);
  // Never goes back: a re-sent older change leaves it where it is.
  again.Upsert(MakeJob(1), {.seq = 3});
  EXPECT_EQ(again.AppliedSeq(), 9u);
}

TEST_F(AccountingTest, SpooledRecordsKeepTheirSeq) {
  AccountingOptions opt = Options("missing");
  {
    AccountingStore store(opt);
    store.Upsert(MakeJob(5), {.seq = 41});
    EXPECT_FALSE(store.Flush().ok());
    // The database cannot be read: the caller must re-send everything.
    EXPECT_EQ(store.AppliedSeq(), 0u);
  }
  fs::create_directory(dir_ + "/missing");
  AccountingStore again(opt);
  EXPECT_EQ(again.AppliedSeq(), 41u);
  EXPECT_EQ(again.Query({})->jobs.size(), 1u);
}

TEST_F(AccountingTest, ResentRequeueClosesTheEarlierRunAtTheRequeue) {
  AccountingStore store(Options());
  JobRecord first = MakeJob(3);
  first.state = "RUNNING";
  first.end_time = 0;
  JobRecord second = MakeJob(3);
  second.restarts = 1;
  second.submit_time = 1500;
  second.state = "PENDING";
  second.start_time = second.end_time = 0;
  // As recovery re-sends them, long after they happened: the new run's
  // submit time closes the old one, not the time of the Upsert.
  for (int pass = 0; pass < 2; ++pass) {
    store.Upsert(first, {.seq = 1});
    store.Upsert(second, {.seq = 2});
  }
  ASSERT_TRUE(store.Flush().ok());
  AccountingQuery all;
  all.duplicates = true;
  auto r = store.Query(all);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].state, "REQUEUED");
  EXPECT_EQ(r->jobs[0].end_time, 1500);
  EXPECT_EQ(r->jobs[1].submit_time, 1500);
}

TEST_F(AccountingTest, AJobThatEndedEndsItsOpenSteps) {
  AccountingStore store(Options());
  JobRecord job = MakeJob(4);
  job.state = "RUNNING";
  job.end_time = 0;
  store.Upsert(job);
  StepRecord step = MakeStep(4, "0");
  step.run = 0;
  step.state = "RUNNING";
  step.start_time = job.start_time;
  store.UpsertStep(step);
  // The step's own end was lost (a controller crash); the job's end is not.
  job.state = "COMPLETED";
  job.end_time = 1061;
  store.Upsert(job);
  ASSERT_TRUE(store.Flush().ok());
  auto r = store.Query({});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].state, "CANCELLED");
  EXPECT_EQ(r->steps[0].end_time, 1061);
}

}  // namespace
}  // namespace muster::store

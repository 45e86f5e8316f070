#include "store/accounting.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace muster::store

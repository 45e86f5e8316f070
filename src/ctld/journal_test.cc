#include "ctld/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace muster::ctld {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("journal-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<json> Reopen(json* snapshot = nullptr, util::Status* status = nullptr) {
    Journal j;
    json snap;
    std::vector<json> records;
    util::Status st = j.Open(dir_, &snap, &records);
    if (status) *status = st;
    if (snapshot) *snapshot = snap;
    return records;
  }
  fs::path dir_;
};

TEST_F(JournalTest, RecordsSurviveReopenOnlyAfterFlush) {
  {
    Journal j;
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(j.Open(dir_, &snap, &records).ok());
    EXPECT_TRUE(snap.is_null());
    j.Append({{"op", "job"}, {"id", 1}});
    j.Append({{"op", "job"}, {"id", 2}});
    ASSERT_TRUE(j.Flush({}).ok());
    j.Append({{"op", "job"}, {"id", 3}});  // never flushed: never acknowledged
  }
  auto records = Reopen();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["id"], 2);
}

TEST_F(JournalTest, SnapshotTruncatesAndReplaysOnlyLaterRecords) {
  {
    Journal j;
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(j.Open(dir_, &snap, &records).ok());
    j.Append({{"n", 1}});
    ASSERT_TRUE(j.Flush({}).ok());
    ASSERT_TRUE(j.WriteSnapshot(R"({"jobs":[1]})").ok());
    j.Append({{"n", 2}});
    ASSERT_TRUE(j.Flush({}).ok());
  }
  json snap;
  auto records = Reopen(&snap);
  EXPECT_EQ(snap["jobs"][0], 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["n"], 2);
}

TEST_F(JournalTest, TornTailIsDroppedAndLaterAppendsWork) {
  {
    Journal j;
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(j.Open(dir_, &snap, &records).ok());
    j.Append({{"n", 1}});
    j.Append({{"n", 2}});
    ASSERT_TRUE(j.Flush({}).ok());
  }
  auto size = fs::file_size(dir_ / "journal.log");
  fs::resize_file(dir_ / "journal.log", size - 3);  // a crash in the middle of the last write
  {
    Journal j;
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(j.Open(dir_, &snap, &records).ok());
    ASSERT_EQ(records.size(), 1u);
    j.Append({{"n", 3}});
    ASSERT_TRUE(j.Flush({}).ok());
  }
  auto records = Reopen();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["n"], 3);
}

TEST_F(JournalTest, CorruptionBeforeValidRecordsStopsStartup) {
  {
    Journal j;
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(j.Open(dir_, &snap, &records).ok());
    for (int i = 0; i < 3; ++i) j.Append({{"n", i}, {"pad", "xxxxxxxxxxxxxxxx"}});
    ASSERT_TRUE(j.Flush({}).ok());
  }
  {
    std::fstream f(dir_ / "journal.log", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);  // inside the first record's payload
    f.put('#');
  }
  util::Status st;
  Reopen(nullptr, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("corrupt record at offset 0"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace muster::ctld

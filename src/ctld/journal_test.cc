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
  // Where the records end: the journal runs ahead of them with zeros.
  size_t RecordsEnd() const {
    std::ifstream in(dir_ / "journal.log", std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), {});
    return data.find_last_not_of('\0') + 1;
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
  // A crash in the middle of the last write: its end (and the zeros ahead
  // of the records) never reached the disk.
  fs::resize_file(dir_ / "journal.log", RecordsEnd() - 3);
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

TEST_F(JournalTest, PreallocatedZerosAreTheEndNotDamage) {
  {
    Journal j;
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(j.Open(dir_, &snap, &records).ok());
    j.Append({{"n", 1}});
    ASSERT_TRUE(j.Flush({}).ok());
    // The file runs ahead of its records, so a commit changes no size.
    EXPECT_GE(fs::file_size(dir_ / "journal.log"), 4u << 20);
    j.Append({{"n", 2}});
    ASSERT_TRUE(j.Flush({}).ok());
  }
  util::Status st;
  auto records = Reopen(nullptr, &st);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["n"], 2);
  {
    // A record torn inside the preallocated space is dropped like any torn tail.
    std::vector<json> again;
    Journal j;
    json snap;
    ASSERT_TRUE(j.Open(dir_, &snap, &again).ok());
    j.Append({{"n", 3}});
    ASSERT_TRUE(j.Flush({}).ok());
  }
  std::string data;
  {
    std::ifstream in(dir_ / "journal.log", std::ios::binary);
    data.assign((std::istreambuf_iterator<char>(in)), {});
  }
  const size_t last = data.find("{\"n\":3}");
  ASSERT_NE(last, std::string::npos);
  {
    std::fstream out(dir_ / "journal.log", std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(static_cast<std::streamoff>(last + 3));
    out.write("\0\0\0\0", 4);  // the record's end never reached the disk
  }
  records = Reopen(nullptr, &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(records.size(), 2u);
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

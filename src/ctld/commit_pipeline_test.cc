#include "ctld/commit_pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace muster::ctld {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class CommitPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("commit-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    json snap;
    std::vector<json> records;
    ASSERT_TRUE(journal_.Open(dir_, &snap, &records).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // How many records are in the journal file now (each is framed JSON
  // with an "id"; a reader opening the journal would trim its tail).
  size_t OnDisk() const {
    std::ifstream in(dir_ / "journal.log", std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), {});
    size_t n = 0;
    for (size_t at = data.find("\"id\""); at != std::string::npos; at = data.find("\"id\"", at + 1))
      ++n;
    return n;
  }
  // Runs the loop until `done` (the sync thread posts its completion).
  template <typename Done>
  void RunUntil(Done done) {
    for (int i = 0; i < 2000 && !done(); ++i) {
      io_.poll();
      io_.restart();
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  fs::path dir_;
  boost::asio::io_context io_;
  Journal journal_;
};

// Changes marked while the loop handles ready events share one write; what
// waits for them runs only once they are on disk, durable callbacks first.
TEST_F(CommitPipelineTest, MarksOfOneRoundShareOneCommitAndRepliesWaitForItsSync) {
  std::vector<int> marked;
  int writes = 0;
  std::vector<std::string> ran;
  size_t seen_on_disk = 0;
  CommitPipeline commit(
      io_, journal_,
      [&](Journal& journal) -> CommitPipeline::Callbacks {
        ++writes;
        for (int id : marked) journal.Append({{"id", id}});
        marked.clear();
        return {[&] {
          ran.push_back("durable");
          seen_on_disk = OnDisk();
        }};
      },
      nullptr);
  for (int id : {1, 2, 3}) {
    marked.push_back(id);
    commit.Request();
    commit.AfterCommit([&, id] { ran.push_back("reply " + std::to_string(id)); });
  }
  EXPECT_TRUE(ran.empty());  // nothing is acknowledged before the commit
  RunUntil([&] { return ran.size() == 4; });
  EXPECT_EQ(writes, 1);
  const std::vector<std::string> want = {"durable", "reply 1", "reply 2", "reply 3"};
  EXPECT_EQ(ran, want);
  EXPECT_EQ(seen_on_disk, 3u);
  EXPECT_EQ(commit.written(), 1u);
  EXPECT_EQ(commit.synced(), 1u);
  // Nothing pending: at once.
  bool now = false;
  commit.AfterCommit([&] { now = true; });
  EXPECT_TRUE(now);
}

// CommitNow writes, waits for the sync and runs what waited, without the
// loop (shutdown); the quiet hook runs once nothing is in flight.
TEST_F(CommitPipelineTest, CommitNowIsDurableWithoutTheLoop) {
  std::vector<int> marked = {7};
  int quiet = 0;
  CommitPipeline commit(
      io_, journal_,
      [&](Journal& journal) -> CommitPipeline::Callbacks {
        for (int id : marked) journal.Append({{"id", id}});
        marked.clear();
        return {};
      },
      [&] { ++quiet; });
  commit.Request();
  bool replied = false;
  commit.AfterCommit([&] { replied = true; });
  ASSERT_TRUE(commit.CommitNow().ok());
  EXPECT_TRUE(replied);
  EXPECT_EQ(quiet, 1);
  EXPECT_EQ(OnDisk(), 1u);
}

}  // namespace
}  // namespace muster::ctld

#include "ctld/payload_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace muster::ctld {
namespace {

namespace fs = std::filesystem;

class PayloadStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("payload-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t Segments() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename().string().rfind("seg-", 0) == 0;
    return n;
  }
  fs::path dir_;
};

TEST_F(PayloadStoreTest, AppendReadRelease) {
  PayloadStore s;
  ASSERT_TRUE(s.Open(dir_, {}).ok());
  ASSERT_TRUE(s.Append(1, "script one").ok());
  ASSERT_TRUE(s.Append(2, std::string(100000, 'x')).ok());
  EXPECT_EQ(*s.Read(1), "script one");
  EXPECT_EQ(s.Read(2)->size(), 100000u);
  s.Release(1);
  EXPECT_FALSE(s.Read(1).ok());
}

TEST_F(PayloadStoreTest, ReopenKeepsOnlyLiveRecordsAndDropsDeadSegments) {
  {
    PayloadStore s;
    ASSERT_TRUE(s.Open(dir_, {}).ok());
    ASSERT_TRUE(s.Append(1, "a").ok());
    ASSERT_TRUE(s.Append(2, "b").ok());
  }
  {
    PayloadStore s;
    ASSERT_TRUE(s.Open(dir_, {2}).ok());
    EXPECT_FALSE(s.Read(1).ok());
    EXPECT_EQ(*s.Read(2), "b");
    s.Release(2);
  }
  PayloadStore s;
  ASSERT_TRUE(s.Open(dir_, {}).ok());
  EXPECT_EQ(Segments(), 1u) << "only the new active segment remains";
}

TEST_F(PayloadStoreTest, TornTailIsIgnored) {
  {
    PayloadStore s;
    ASSERT_TRUE(s.Open(dir_, {}).ok());
    ASSERT_TRUE(s.Append(7, "whole").ok());
  }
  std::ofstream(dir_ / "seg-0.dat", std::ios::app) << "partial-junk";
  PayloadStore s;
  ASSERT_TRUE(s.Open(dir_, {7}).ok());
  EXPECT_EQ(*s.Read(7), "whole");
}

}  // namespace
}  // namespace muster::ctld

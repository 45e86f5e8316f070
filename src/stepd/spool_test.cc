#include "stepd/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace muster::stepd {
namespace {

namespace fs = std::filesystem;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "muster-spool-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_fd_, 0);
  }
  void TearDown() override {
    ::close(dir_fd_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string dir_;
  int dir_fd_ = -1;
};

TEST_F(SpoolTest, WriteReplacesAtomicallyAndReadsBack) {
  ASSERT_TRUE(WriteFileAtomic(dir_fd_, "result.json", "one").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_fd_, "result.json", "two\n").ok());
  EXPECT_EQ(Slurp(dir_ + "/result.json"), "two\n");
  EXPECT_FALSE(fs::exists(dir_ + "/result.json.tmp"));
  util::Result<std::string> back = ReadFileAt(dir_fd_, "result.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "two\n");
}

TEST_F(SpoolTest, NeverWritesThroughAPlantedSymlink) {
  std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir_ + "/result.json.tmp");
  ASSERT_TRUE(WriteFileAtomic(dir_fd_, "result.json", "new").ok());
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_EQ(Slurp(dir_ + "/result.json"), "new");
}

TEST_F(SpoolTest, ReadRefusesSymlinksAndMissingFiles) {
  std::ofstream(dir_ + "/real") << "x";
  fs::create_symlink(dir_ + "/real", dir_ + "/spec.json");
  EXPECT_FALSE(ReadFileAt(dir_fd_, "spec.json").ok());
  util::Result<std::string> missing = ReadFileAt(dir_fd_, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), util::Code::kNotFound);
}

}  // namespace
}  // namespace muster::stepd

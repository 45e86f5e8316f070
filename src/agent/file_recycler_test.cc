#include "agent/file_recycler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace muster::agent {
namespace {

namespace fs = std::filesystem;

class FileRecyclerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "muster-recycler-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  ino_t Inode(const std::string& name) const {
    struct stat st;
    return ::lstat(Path(name).c_str(), &st) == 0 ? st.st_ino : 0;
  }
  std::string Slurp(const std::string& name) const {
    std::ifstream in(Path(name));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string dir_;
  const uint32_t me_ = ::geteuid();
};

TEST_F(FileRecyclerTest, AFinishedJobsFileServesTheNextJobOfItsOwner) {
  FileRecycler files(dir_);
  ASSERT_TRUE(OverwriteFile(Path("job1.script"), "a long first script\n", 0700));
  const ino_t inode = Inode("job1.script");
  files.Recycle("job1.script");
  EXPECT_FALSE(fs::exists(Path("job1.script")));
  EXPECT_EQ(files.free_count(), 1u);

  files.Reuse("job2.script", me_ + 1);  // another user's job gets none of it
  EXPECT_FALSE(fs::exists(Path("job2.script")));
  files.Reuse("job2.script", me_);
  EXPECT_EQ(Inode("job2.script"), inode);
  EXPECT_EQ(files.free_count(), 0u);
  ASSERT_TRUE(OverwriteFile(Path("job2.script"), "short\n", 0700));
  EXPECT_EQ(Slurp("job2.script"), "short\n");

  files.Reuse("job3.script", me_);  // nothing free: the caller creates it
  EXPECT_FALSE(fs::exists(Path("job3.script")));
}

TEST_F(FileRecyclerTest, LinkedElsewhereOrOverTheBoundIsRemoved) {
  FileRecycler files(dir_, /*max_free=*/1);
  ASSERT_TRUE(OverwriteFile(Path("job1.script"), "x", 0700));
  fs::create_hard_link(Path("job1.script"), Path("kept-by-someone"));
  files.Recycle("job1.script");
  EXPECT_FALSE(fs::exists(Path("job1.script")));
  EXPECT_EQ(files.free_count(), 0u);
  EXPECT_EQ(Slurp("kept-by-someone"), "x");

  ASSERT_TRUE(OverwriteFile(Path("job2.state"), "1\n", 0600));
  ASSERT_TRUE(OverwriteFile(Path("job3.state"), "2\n", 0600));
  files.Recycle("job2.state");
  files.Recycle("job3.state");
  EXPECT_EQ(files.free_count(), 1u);
  EXPECT_FALSE(fs::exists(Path("job3.state")));
  EXPECT_EQ(std::distance(fs::directory_iterator(Path("free")), fs::directory_iterator()), 1);
}

TEST_F(FileRecyclerTest, ReuseNeverReplacesAFileAndStartsEmpty) {
  {
    FileRecycler files(dir_);
    ASSERT_TRUE(OverwriteFile(Path("job1.state"), "old\n", 0600));
    files.Recycle("job1.state");
    ASSERT_TRUE(OverwriteFile(Path("job2.state"), "stale\n", 0600));
    files.Reuse("job2.state", me_);
    EXPECT_EQ(Slurp("job2.state"), "stale\n");
  }
  // What an earlier agent left free is not trusted.
  ASSERT_TRUE(OverwriteFile(Path("free/77"), "leftover", 0600));
  FileRecycler files(dir_);
  EXPECT_EQ(files.free_count(), 0u);
  EXPECT_FALSE(fs::exists(Path("free/77")));
}

TEST_F(FileRecyclerTest, OverwriteNeverFollowsASymlink) {
  ASSERT_TRUE(OverwriteFile(Path("victim"), "precious", 0600));
  fs::create_symlink(Path("victim"), Path("job1.script"));
  EXPECT_FALSE(OverwriteFile(Path("job1.script"), "evil", 0700));
  EXPECT_EQ(Slurp("victim"), "precious");
}

}  // namespace
}  // namespace muster::agent

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

StepResult Completed(uint32_t job_id) {
  StepResult r;
  r.job_id = job_id;
  r.state = "COMPLETED";
  r.start_time = 100;
  r.end_time = 101;
  return r;
}

TEST(SpoolNames, FilesAreNamedAfterTheJob) {
  EXPECT_EQ(ScriptFileName(12), "job12.script");
  EXPECT_EQ(StateFileName(12), "job12.state");
  EXPECT_EQ(SpecFileName(12), "job12.spec");
  EXPECT_EQ(JobOfStateFile("job12.state"), 12u);
  EXPECT_EQ(JobOfStateFile("job4294967295.state"), 4294967295u);
  for (const char* other : {"job12.script", "job.state", "jobx.state", "job12.state.tmp", "12.state",
                            "job4294967296.state", "job-1.state"}) {
    EXPECT_EQ(JobOfStateFile(other), std::nullopt) << other;
  }
}

TEST(StepStateParse, PidThenResultLine) {
  EXPECT_EQ(ParseStepState("").pid, 0);
  EXPECT_EQ(ParseStepState("123").pid, 0);  // the pid line is not complete yet
  StepState running = ParseStepState("123\n");
  EXPECT_EQ(running.pid, 123);
  EXPECT_FALSE(running.result);
  std::string line = ResultLine(Completed(7));
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  StepState ended = ParseStepState("123\n" + line);
  EXPECT_EQ(ended.pid, 123);
  ASSERT_TRUE(ended.result);
  EXPECT_EQ(ended.result->job_id, 7u);
  EXPECT_EQ(ended.result->state, "COMPLETED");
  EXPECT_EQ(ended.result->end_time, 101);
}

TEST(StepStateParse, TornResultIsNoResultAndAnAppendedVerdictWins) {
  std::string line = ResultLine(Completed(7));
  std::string torn = "123\n" + line.substr(0, line.size() / 2);
  EXPECT_FALSE(ParseStepState(torn).result);
  EXPECT_FALSE(ParseStepState("123\n" + line.substr(0, line.size() - 1)).result);  // no newline yet
  StepResult lost = Completed(7);
  lost.state = "NODE_FAIL";
  StepState s = ParseStepState(torn + "\n" + ResultLine(lost));
  ASSERT_TRUE(s.result);
  EXPECT_EQ(s.result->state, "NODE_FAIL");
  EXPECT_EQ(s.pid, 123);
  // The agent's verdict for a step that never wrote its pid.
  s = ParseStepState("\n" + ResultLine(lost));
  EXPECT_EQ(s.pid, 0);
  ASSERT_TRUE(s.result);
  EXPECT_EQ(s.result->state, "NODE_FAIL");
  EXPECT_FALSE(ParseStepState("abc\n{}\nnot json\n").result);
}

TEST(StepStateParse, ARecycledFilesResultIsNotTheNewJobs) {
  // Job 7's file, recycled for job 9 whose step died before writing to it.
  const std::string recycled = "123\n" + ResultLine(Completed(7));
  EXPECT_TRUE(ParseStepState(recycled).result);
  EXPECT_FALSE(ParseStepStateOf(9, recycled).result);
  ASSERT_TRUE(ParseStepStateOf(7, recycled).result);
  // The agent's verdict for job 9 appended after the old lines.
  StepResult lost = Completed(9);
  lost.state = "NODE_FAIL";
  StepState s = ParseStepStateOf(9, recycled + "\n" + ResultLine(lost));
  ASSERT_TRUE(s.result);
  EXPECT_EQ(s.result->job_id, 9u);
  EXPECT_EQ(s.result->state, "NODE_FAIL");
}

TEST_F(SpoolTest, AppendCreatesThenAppendsAndReadsBack) {
  ASSERT_TRUE(AppendFileAt(dir_fd_, "job1.state", "1\n").ok());
  ASSERT_TRUE(AppendFileAt(dir_fd_, "job1.state", "two\n").ok());
  EXPECT_EQ(Slurp(dir_ + "/job1.state"), "1\ntwo\n");
  util::Result<std::string> back = ReadFileAt(dir_fd_, "job1.state");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "1\ntwo\n");
}

TEST_F(SpoolTest, NeverAppendsThroughAPlantedSymlink) {
  std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir_ + "/job1.state");
  EXPECT_FALSE(AppendFileAt(dir_fd_, "job1.state", "new\n").ok());
  EXPECT_EQ(Slurp(victim), "precious");
}

TEST_F(SpoolTest, ReadRefusesSymlinksAndMissingFiles) {
  std::ofstream(dir_ + "/real") << "x";
  fs::create_symlink(dir_ + "/real", dir_ + "/job1.spec");
  EXPECT_FALSE(ReadFileAt(dir_fd_, "job1.spec").ok());
  util::Result<std::string> missing = ReadFileAt(dir_fd_, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), util::Code::kNotFound);
}

}  // namespace
}  // namespace muster::stepd

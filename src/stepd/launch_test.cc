// LaunchBatchShell against the real kernel: the shell starts inside the
// cgroup it is given (v2 by clone3(CLONE_INTO_CGROUP), v1 by writing "0"
// into a tasks file), and what went wrong in the child is known as soon as
// the launch returns. The cgroup tests need root and the hierarchy mounted
// (skipped otherwise).
#include "stepd/launch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace muster::stepd {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The mount point of the first filesystem of `type` (/proc/self/mountinfo
// field 5 is the mount point; the type follows " - ").
std::string MountOf(const std::string& type) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, type.size() + 1, type + " ") != 0) continue;
    std::istringstream fields(line);
    std::string f, mount;
    for (int i = 0; i < 5 && fields >> f; ++i) mount = f;
    return mount;
  }
  return "";
}

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "muster-launch-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const fs::path& cg : cgroups_) ::rmdir(cg.c_str());
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A plan running `body` as a /bin/sh script, stdout to dir_/out.
  LaunchPlan Plan(const std::string& body) {
    StepSpec spec;
    spec.job_id = 1;
    spec.uid = ::geteuid();
    spec.gid = ::getegid();
    spec.work_dir = dir_.string();
    spec.script_path = (dir_ / "script").string();
    spec.std_out = (dir_ / "out").string();
    spec.env = {"PATH=/usr/bin:/bin"};
    std::ofstream(spec.script_path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(spec.script_path.c_str(), 0700);
    util::Result<LaunchPlan> plan = MakeLaunchPlan(spec, ::geteuid(), {});
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    // Stay root: only the cgroup placement is under test here.
    plan->set_identity = false;
    return *plan;
  }

  // A fresh cgroup directory under `hierarchy`, removed at the end.
  fs::path MakeCgroup(const std::string& hierarchy) {
    fs::path cg = fs::path(hierarchy) / ("muster-launch-test-" + std::to_string(::getpid()));
    if (::mkdir(cg.c_str(), 0755) != 0) return {};
    cgroups_.push_back(cg);
    return cg;
  }

  static int Wait(pid_t pid) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return status;
  }

  fs::path dir_;
  std::vector<fs::path> cgroups_;
};

TEST_F(LaunchTest, ShellRunsWithItsOwnPidAndGroup) {
  util::Result<LaunchedShell> shell = LaunchBatchShell(Plan("echo $SLURM_TASK_PID $$ $(ps -o pgid= -p $$)"));
  ASSERT_TRUE(shell.ok()) << shell.status().message();
  EXPECT_EQ(shell->error, "");
  EXPECT_EQ(shell->cgroup_error, "");
  int status = Wait(shell->pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::istringstream out(ReadFile(dir_ / "out"));
  pid_t task_pid = 0, shell_pid = 0, pgid = 0;
  out >> task_pid >> shell_pid >> pgid;
  EXPECT_EQ(task_pid, shell->pid);
  EXPECT_EQ(shell_pid, shell->pid);
  EXPECT_EQ(pgid, shell->pid);
}

TEST_F(LaunchTest, SetupErrorIsKnownWhenTheLaunchReturns) {
  LaunchPlan plan = Plan("true");
  plan.std_out = (dir_ / "missing" / "out").string();
  util::Result<LaunchedShell> shell = LaunchBatchShell(plan);
  ASSERT_TRUE(shell.ok()) << shell.status().message();
  // Before the child is reaped: the launch waited for its exec or exit.
  EXPECT_EQ(shell->error, "could not open output file " + plan.std_out + ": No such file or directory");
  int status = Wait(shell->pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

TEST_F(LaunchTest, FailedCgroupJoinIsReportedAndTheShellRunsOn) {
  CgroupJoin join;
  // Read-only: the child's write of "0" fails.
  join.self_fds.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  util::Result<LaunchedShell> shell = LaunchBatchShell(Plan("echo ran"), &join);
  ASSERT_TRUE(shell.ok()) << shell.status().message();
  EXPECT_EQ(shell->cgroup_error, "writing to its tasks file: Bad file descriptor");
  EXPECT_EQ(shell->error, "");
  int status = Wait(shell->pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(ReadFile(dir_ / "out"), "ran\n");
}

TEST_F(LaunchTest, V2ShellStartsInsideTheCgroup) {
  const std::string mount = MountOf("cgroup2");
  if (::geteuid() != 0 || mount.empty()) GTEST_SKIP() << "needs root and a cgroup2 mount";
  fs::path cg = MakeCgroup(mount);
  if (cg.empty()) GTEST_SKIP() << "cannot make a cgroup under " << mount;
  CgroupJoin join;
  join.clone_into_fd = ::open(cg.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(join.clone_into_fd, 0);
  util::Result<LaunchedShell> shell = LaunchBatchShell(Plan("cat /proc/self/cgroup"), &join);
  ASSERT_TRUE(shell.ok()) << shell.status().message();
  EXPECT_EQ(shell->cgroup_error, "");
  EXPECT_EQ(Wait(shell->pid), 0);
  const std::string want = "0::/" + fs::relative(cg, mount).string() + "\n";
  EXPECT_NE(ReadFile(dir_ / "out").find(want), std::string::npos) << ReadFile(dir_ / "out");
}

TEST_F(LaunchTest, V1ShellJoinsThroughTheTasksFile) {
  const std::string memory = "/sys/fs/cgroup/memory";
  struct stat st;
  if (::geteuid() != 0 || ::stat((memory + "/tasks").c_str(), &st) != 0) {
    GTEST_SKIP() << "needs root and a v1 memory hierarchy";
  }
  fs::path cg = MakeCgroup(memory);
  ASSERT_FALSE(cg.empty());
  CgroupJoin join;
  join.self_fds.push_back(::open((cg / "tasks").c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_GE(join.self_fds[0], 0);
  util::Result<LaunchedShell> shell = LaunchBatchShell(Plan("cat /proc/self/cgroup"), &join);
  ASSERT_TRUE(shell.ok()) << shell.status().message();
  EXPECT_EQ(shell->cgroup_error, "");
  EXPECT_EQ(Wait(shell->pid), 0);
  const std::string want = ":memory:/" + cg.filename().string() + "\n";
  EXPECT_NE(ReadFile(dir_ / "out").find(want), std::string::npos) << ReadFile(dir_ / "out");
}

}  // namespace
}  // namespace muster::stepd

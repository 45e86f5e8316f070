// Both cgroup implementations against fake trees in a temp dir: the files
// the kernel would have are written by the test, and what the code writes
// is read back. Runs anywhere, as any user.
#include "stepd/cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <chrono>
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

void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A job directory made beforehand to stand for the control files the kernel
// creates with it: old, so creation takes it over instead of treating it
// as another step's that is just starting.
void WriteKernelFile(const fs::path& path, const std::string& content) {
  WriteFile(path, content);
  fs::last_write_time(path.parent_path(), fs::file_time_type::clock::now() - std::chrono::minutes(5));
}

class FakeCgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "muster-cgroup-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // A cgroup v2 root as the kernel shows it, with `controllers` available.
  void MakeV2(const std::string& controllers) {
    WriteFile(root_ / "cgroup.controllers", controllers + "\n");
    WriteFile(root_ / "cgroup.subtree_control", "");
  }

  // cgroup v1 hierarchies: memory with memsw, cpuacct, cpuset with CPUs 0-7.
  void MakeV1() {
    WriteFile(root_ / "memory/cgroup.procs", "1\n");
    WriteFile(root_ / "memory/memory.limit_in_bytes", "9223372036854771712\n");
    WriteFile(root_ / "cpuacct/cgroup.procs", "1\n");
    WriteFile(root_ / "cpuset/cpuset.cpus", "0-7\n");
    WriteFile(root_ / "cpuset/cpuset.mems", "0-1\n");
  }

  std::unique_ptr<JobCgroup> Create(uint32_t job_id, const CgroupLimits& limits) {
    util::Result<std::unique_ptr<JobCgroup>> cg = CreateJobCgroup(root_.string(), job_id, limits);
    EXPECT_TRUE(cg.ok()) << cg.status().message();
    return cg.ok() ? std::move(*cg) : nullptr;
  }

  fs::path root_;
};

TEST_F(FakeCgroupTree, DetectsTheVersion) {
  EXPECT_EQ(DetectCgroupVersion(root_.string()), CgroupVersion::kNone);
  EXPECT_FALSE(CreateJobCgroup(root_.string(), 1, {}).ok());
  MakeV1();
  EXPECT_EQ(DetectCgroupVersion(root_.string()), CgroupVersion::kV1);
  MakeV2("cpuset cpu io memory pids");
  EXPECT_EQ(DetectCgroupVersion(root_.string()), CgroupVersion::kV2);
}

TEST_F(FakeCgroupTree, V2CreatesTheJobWithItsLimits) {
  MakeV2("cpuset cpu io memory pids");
  std::unique_ptr<JobCgroup> cg = Create(7, {.mem_limit_bytes = 100u << 20, .cpuset = "0-3"});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(cg->Version(), "v2");
  fs::path job = root_ / "muster/job_7";
  EXPECT_EQ(ReadFile(root_ / "cgroup.subtree_control"), "+memory +cpuset");
  EXPECT_EQ(ReadFile(root_ / "muster/cgroup.subtree_control"), "+memory +cpuset");
  EXPECT_EQ(ReadFile(job / "memory.max"), "104857600\n");
  EXPECT_EQ(ReadFile(job / "cpuset.cpus"), "0-3\n");

  // A new process is started inside the job's directory (clone3).
  CgroupJoin join;
  ASSERT_TRUE(cg->OpenJoin(&join).ok());
  EXPECT_TRUE(join.self_fds.empty());
  struct stat by_fd {}, by_path {};
  ASSERT_EQ(::fstat(join.clone_into_fd, &by_fd), 0);
  ASSERT_EQ(::stat(job.c_str(), &by_path), 0);
  EXPECT_EQ(by_fd.st_ino, by_path.st_ino);
  WriteFile(job / "cgroup.procs", "1234\n1240\n");
  EXPECT_EQ(cg->Processes(), (std::vector<pid_t>{1234, 1240}));
}

TEST_F(FakeCgroupTree, V2LeavesEnabledControllersAndUnsetLimitsAlone) {
  MakeV2("cpu memory");
  WriteFile(root_ / "cgroup.subtree_control", "cpu memory\n");
  std::unique_ptr<JobCgroup> cg = Create(8, {});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(ReadFile(root_ / "cgroup.subtree_control"), "cpu memory\n");
  EXPECT_FALSE(fs::exists(root_ / "muster/job_8/memory.max"));
  EXPECT_FALSE(fs::exists(root_ / "muster/job_8/cpuset.cpus"));
}

TEST_F(FakeCgroupTree, V2WithoutTheMemoryControllerIsUnusable) {
  MakeV2("cpu io pids");
  util::Result<std::unique_ptr<JobCgroup>> cg = CreateJobCgroup(root_.string(), 9, {});
  ASSERT_FALSE(cg.ok());
  EXPECT_NE(cg.status().message().find("memory controller"), std::string::npos) << cg.status().message();
  MakeV2("memory");
  EXPECT_FALSE(CreateJobCgroup(root_.string(), 9, {.cpuset = "1"}).ok());  // cpuset asked, not there
}

TEST_F(FakeCgroupTree, V2DisablesSwapWhereTheKernelHasIt) {
  MakeV2("memory");
  WriteKernelFile(root_ / "muster/job_3/memory.swap.max", "max\n");  // as the kernel creates it
  std::unique_ptr<JobCgroup> cg = Create(3, {.mem_limit_bytes = 1 << 20});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(ReadFile(root_ / "muster/job_3/memory.swap.max"), "0\n");
}

TEST_F(FakeCgroupTree, V2ReadsPeakCpuAndOomKills) {
  MakeV2("memory");
  std::unique_ptr<JobCgroup> cg = Create(5, {.mem_limit_bytes = 1 << 30});
  ASSERT_NE(cg, nullptr);
  fs::path job = root_ / "muster/job_5";
  WriteFile(job / "memory.peak", "52428800\n");
  WriteFile(job / "memory.current", "4096\n");
  WriteFile(job / "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n");
  WriteFile(job / "memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 0\noom_group_kill 0\n");
  EXPECT_FALSE(cg->NeedsSampling());
  CgroupUsage u = cg->Usage();
  EXPECT_EQ(u.peak_bytes, 52428800u);
  EXPECT_EQ(u.cpu_ns, 1'500'000'000u);
  EXPECT_FALSE(u.oom_killed);  // hit the limit, reclaimed, nobody killed
  WriteFile(job / "memory.events", "low 0\nhigh 0\nmax 40\noom 2\noom_kill 1\noom_group_kill 0\n");
  EXPECT_TRUE(cg->Usage().oom_killed);
}

TEST_F(FakeCgroupTree, V2SamplesTheCurrentUsageWithoutMemoryPeak) {
  MakeV2("memory");
  std::unique_ptr<JobCgroup> cg = Create(6, {});
  ASSERT_NE(cg, nullptr);
  fs::path job = root_ / "muster/job_6";
  EXPECT_TRUE(cg->NeedsSampling());
  WriteFile(job / "memory.current", "3000000\n");
  cg->Sample();
  WriteFile(job / "memory.current", "1000\n");
  cg->Sample();
  EXPECT_EQ(cg->Usage().peak_bytes, 3000000u);
  WriteFile(job / "memory.current", "5000000\n");  // read once more at the end
  EXPECT_EQ(cg->Usage().peak_bytes, 5000000u);
}

TEST_F(FakeCgroupTree, V2KillUsesCgroupKillWhenPresent) {
  MakeV2("memory");
  std::unique_ptr<JobCgroup> cg = Create(4, {});
  ASSERT_NE(cg, nullptr);
  EXPECT_FALSE(cg->KillAll());
  WriteFile(root_ / "muster/job_4/cgroup.kill", "");
  EXPECT_TRUE(cg->KillAll());
  EXPECT_EQ(ReadFile(root_ / "muster/job_4/cgroup.kill"), "1");
}

TEST_F(FakeCgroupTree, V2ALiveCgroupOfTheSameJobIsNotShared) {
  MakeV2("memory");
  WriteFile(root_ / "muster/job_21/cgroup.procs", "555\n");  // another node's step
  std::unique_ptr<JobCgroup> cg = Create(21, {.mem_limit_bytes = 1 << 20});
  ASSERT_NE(cg, nullptr);
  fs::path mine = root_ / ("muster/job_21_" + std::to_string(::getpid()));
  EXPECT_EQ(ReadFile(mine / "memory.max"), "1048576\n");
  EXPECT_FALSE(fs::exists(root_ / "muster/job_21/memory.max"));
  ASSERT_TRUE(cg->Remove(kCgroupRemoveTries).ok());
  EXPECT_FALSE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(root_ / "muster/job_21"));
}

TEST_F(FakeCgroupTree, AStepJustStartingKeepsItsCgroupAndAnOldEmptyOneIsTaken) {
  MakeV2("memory");
  // Another cluster's step of job 23 has made its directory but not yet
  // moved in: the name is not shared, and its directory is not removed.
  fs::create_directories(root_ / "muster/job_23");
  std::unique_ptr<JobCgroup> cg = Create(23, {.mem_limit_bytes = 1 << 20});
  ASSERT_NE(cg, nullptr);
  EXPECT_TRUE(fs::exists(root_ / ("muster/job_23_" + std::to_string(::getpid())) / "memory.max"));
  EXPECT_TRUE(fs::is_directory(root_ / "muster/job_23"));
  // A crashed step's leftover (empty, old) is removed and the name taken.
  fs::create_directories(root_ / "muster/job_24");
  fs::last_write_time(root_ / "muster/job_24", fs::file_time_type::clock::now() - std::chrono::minutes(5));
  std::unique_ptr<JobCgroup> next = Create(24, {.mem_limit_bytes = 1 << 20});
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(ReadFile(root_ / "muster/job_24/memory.max"), "1048576\n");
}

TEST_F(FakeCgroupTree, V1ALiveCgroupOfTheSameJobIsNotShared) {
  MakeV1();
  WriteFile(root_ / "memory/muster/job_22/cgroup.procs", "556\n");
  std::unique_ptr<JobCgroup> cg = Create(22, {});
  ASSERT_NE(cg, nullptr);
  std::string name = "muster/job_22_" + std::to_string(::getpid());
  EXPECT_TRUE(fs::is_directory(root_ / "memory" / name));
  EXPECT_TRUE(fs::is_directory(root_ / "cpuacct" / name));
}

TEST_F(FakeCgroupTree, V2RemoveDeletesOnlyTheJob) {
  MakeV2("memory");
  std::unique_ptr<JobCgroup> cg = Create(2, {.mem_limit_bytes = 1 << 20});
  ASSERT_NE(cg, nullptr);
  ASSERT_TRUE(cg->Remove(kCgroupRemoveTries).ok());
  EXPECT_FALSE(fs::exists(root_ / "muster/job_2"));
  EXPECT_TRUE(fs::exists(root_ / "muster"));  // shared by the other jobs
}

TEST_F(FakeCgroupTree, V1CreatesTheJobInEachHierarchy) {
  MakeV1();
  WriteKernelFile(root_ / "memory/muster/job_11/memory.memsw.limit_in_bytes", "9223372036854771712\n");
  std::unique_ptr<JobCgroup> cg = Create(11, {.mem_limit_bytes = 256u << 20, .cpuset = "2-3"});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(cg->Version(), "v1");
  EXPECT_EQ(ReadFile(root_ / "memory/muster/job_11/memory.limit_in_bytes"), "268435456\n");
  EXPECT_EQ(ReadFile(root_ / "memory/muster/job_11/memory.memsw.limit_in_bytes"), "268435456\n");
  EXPECT_TRUE(fs::is_directory(root_ / "cpuacct/muster/job_11"));
  // muster/ inherits the root's CPUs and memory nodes; the job gets its CPUs.
  EXPECT_EQ(ReadFile(root_ / "cpuset/muster/cpuset.cpus"), "0-7\n");
  EXPECT_EQ(ReadFile(root_ / "cpuset/muster/cpuset.mems"), "0-1\n");
  EXPECT_EQ(ReadFile(root_ / "cpuset/muster/job_11/cpuset.cpus"), "2-3\n");
  EXPECT_EQ(ReadFile(root_ / "cpuset/muster/job_11/cpuset.mems"), "0-1\n");

  // A new process writes "0" into each hierarchy's tasks file.
  for (const char* h : {"memory", "cpuacct", "cpuset"}) WriteFile(root_ / h / "muster/job_11/tasks", "");
  CgroupJoin join;
  ASSERT_TRUE(cg->OpenJoin(&join).ok());
  EXPECT_EQ(join.clone_into_fd, -1);
  ASSERT_EQ(join.self_fds.size(), 3u);
  for (int fd : join.self_fds) ASSERT_EQ(::write(fd, "0", 1), 1);
  for (const char* h : {"memory", "cpuacct", "cpuset"}) {
    EXPECT_EQ(ReadFile(root_ / h / "muster/job_11/tasks"), "0") << h;
  }
  WriteFile(root_ / "memory/muster/job_11/cgroup.procs", "4321\n");
  EXPECT_EQ(cg->Processes(), std::vector<pid_t>{4321});
}

TEST_F(FakeCgroupTree, V1WithoutACpusetDoesNotConfine) {
  MakeV1();
  std::unique_ptr<JobCgroup> cg = Create(12, {.mem_limit_bytes = 1 << 20});
  ASSERT_NE(cg, nullptr);
  EXPECT_FALSE(fs::exists(root_ / "cpuset/muster"));
  EXPECT_FALSE(fs::exists(root_ / "memory/muster/job_12/memory.memsw.limit_in_bytes"));
}

TEST_F(FakeCgroupTree, V1RefusesDevicesInTheDevicesHierarchy) {
  MakeV1();
  WriteFile(root_ / "devices/devices.list", "a *:* rwm\n");
  std::unique_ptr<JobCgroup> cg =
      Create(13, {.mem_limit_bytes = 1 << 20, .denied_devices = {{'c', 195, 1}, {'c', 195, 2}}});
  ASSERT_NE(cg, nullptr);
  // One rule per write, as the kernel takes them.
  EXPECT_EQ(ReadFile(root_ / "devices/muster/job_13/devices.deny"), "c 195:1 rwm\nc 195:2 rwm\n");
  // The job's processes join the devices hierarchy too.
  for (const char* h : {"memory", "cpuacct", "devices"}) WriteFile(root_ / h / "muster/job_13/tasks", "");
  CgroupJoin join;
  ASSERT_TRUE(cg->OpenJoin(&join).ok());
  EXPECT_EQ(join.self_fds.size(), 3u);
  ASSERT_TRUE(cg->Remove(1).ok());
  EXPECT_FALSE(fs::exists(root_ / "devices/muster/job_13"));
}

TEST_F(FakeCgroupTree, V1WithoutADevicesHierarchyCannotRefuseDevices) {
  MakeV1();
  util::Result<std::unique_ptr<JobCgroup>> cg =
      CreateJobCgroup(root_.string(), 14, {.denied_devices = {{'c', 195, 1}}});
  ASSERT_FALSE(cg.ok());
  EXPECT_NE(cg.status().message().find("devices"), std::string::npos) << cg.status().message();
  // Nothing is left behind.
  EXPECT_FALSE(fs::exists(root_ / "memory/muster/job_14"));
}

TEST_F(FakeCgroupTree, V2WithoutAKernelCgroupCannotAttachTheDeviceFilter) {
  MakeV2("memory");
  util::Result<std::unique_ptr<JobCgroup>> cg =
      CreateJobCgroup(root_.string(), 15, {.denied_devices = {{'c', 195, 1}}});
  ASSERT_FALSE(cg.ok());
  EXPECT_NE(cg.status().message().find("device filter"), std::string::npos) << cg.status().message();
  EXPECT_FALSE(fs::exists(root_ / "muster/job_15"));
}

TEST_F(FakeCgroupTree, V1ReadsPeakCpuAndOomKills) {
  MakeV1();
  std::unique_ptr<JobCgroup> cg = Create(13, {.mem_limit_bytes = 100u << 20});
  ASSERT_NE(cg, nullptr);
  fs::path mem = root_ / "memory/muster/job_13";
  WriteFile(mem / "memory.max_usage_in_bytes", "104857600\n");
  WriteFile(root_ / "cpuacct/muster/job_13/cpuacct.usage", "987654321\n");
  WriteFile(mem / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  WriteFile(mem / "memory.failcnt", "30\n");
  CgroupUsage u = cg->Usage();
  EXPECT_EQ(u.peak_bytes, 104857600u);
  EXPECT_EQ(u.cpu_ns, 987654321u);
  EXPECT_FALSE(u.oom_killed);  // the oom_kill counter wins over failcnt
  WriteFile(mem / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  EXPECT_TRUE(cg->Usage().oom_killed);
  // Kernels before 4.13 have no oom_kill line: the limit having been hit counts.
  WriteFile(mem / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
  EXPECT_TRUE(cg->Usage().oom_killed);
  WriteFile(mem / "memory.failcnt", "0\n");
  EXPECT_FALSE(cg->Usage().oom_killed);
}

TEST_F(FakeCgroupTree, V1RemoveDeletesEveryHierarchysJob) {
  MakeV1();
  std::unique_ptr<JobCgroup> cg = Create(14, {.cpuset = "0"});
  ASSERT_NE(cg, nullptr);
  ASSERT_TRUE(cg->Remove(kCgroupRemoveTries).ok());
  for (const char* h : {"memory", "cpuacct", "cpuset"}) {
    EXPECT_FALSE(fs::exists(root_ / h / "muster/job_14")) << h;
    EXPECT_TRUE(fs::exists(root_ / h / "muster")) << h;
  }
}

TEST_F(FakeCgroupTree, V1WithoutCpuacctStillWorks) {
  WriteFile(root_ / "memory/cgroup.procs", "1\n");
  std::unique_ptr<JobCgroup> cg = Create(15, {});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(cg->Usage().cpu_ns, 0u);  // the caller falls back to rusage
}

TEST_F(FakeCgroupTree, ReadOnlyTreeIsUnusable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes through permission bits";
  MakeV1();
  ::chmod((root_ / "memory").c_str(), 0555);
  EXPECT_FALSE(CreateJobCgroup(root_.string(), 16, {}).ok());
  ::chmod((root_ / "memory").c_str(), 0755);
}

TEST_F(FakeCgroupTree, SignalCgroupHitsListedLiveMembersOnly) {
  MakeV2("memory");
  std::unique_ptr<JobCgroup> cg = Create(17, {});
  ASSERT_NE(cg, nullptr);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    _exit(0);
  }
  // 0x7ffffffe is above any pid_max: listed but not a process.
  WriteFile(root_ / "muster/job_17/cgroup.procs", std::to_string(child) + "\n2147483646\n");
  const int sig = SIGKILL;
  EXPECT_EQ(SignalCgroup(*cg, std::span<const int>(&sig, 1)), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(KeyedValueTest, FindsWholeKeysOnly) {
  const std::string text = "oom 3\noom_kill 2\noom_group_kill 0\nbad x\n";
  EXPECT_EQ(KeyedValue(text, "oom"), 3);
  EXPECT_EQ(KeyedValue(text, "oom_kill"), 2);
  EXPECT_EQ(KeyedValue(text, "oom_group_kill"), 0);
  EXPECT_EQ(KeyedValue(text, "kill"), -1);
  EXPECT_EQ(KeyedValue(text, "bad"), -1);
  EXPECT_EQ(KeyedValue("", "oom"), -1);
}

}  // namespace
}  // namespace muster::stepd

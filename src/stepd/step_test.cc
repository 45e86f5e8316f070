// End-to-end tests of the real muster-step binary: each test writes a spec
// into a temp spool dir, spawns <build>/bin/muster-step on it, waits, and
// checks the state file's result and what the script left behind (the
// agent forks the same supervisor, stepd::RunStep). As root the job runs
// as an unprivileged user (uid 1000 if it exists, else nobody) and the
// identity assertions are made; as anyone else the job runs as the caller.
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stepd/spool.h"
#include "stepd/step.h"

extern char** environ;

namespace muster::stepd {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool IsRoot() { return ::geteuid() == 0; }

struct JobUser {
  uid_t uid;
  gid_t gid;
};

JobUser TestUser() {
  if (!IsRoot()) return {::getuid(), ::getgid()};
  if (struct passwd* pw = ::getpwuid(1000)) return {pw->pw_uid, pw->pw_gid};
  return {65534, 65534};
}

std::string StepBinary() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "muster-step";
  return (fs::path(std::string(buf, static_cast<size_t>(n))).parent_path() / "muster-step").string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Polls for a file the script writes; the only way to know it reached a point.
bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && st.st_size > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::string MakeTempDir(const char* prefix, uid_t owner, gid_t group) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
  char* dir = ::mkdtemp(tmpl.data());
  if (dir == nullptr) return "";
  ::chmod(dir, 0755);
  if (IsRoot() && ::chown(dir, owner, group) != 0) return "";
  return dir;
}

class StepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    user_ = TestUser();
    // The spool dir stays root's (the user only traverses it to exec the
    // script); the work dir is the user's, as a job's would be.
    spool_ = MakeTempDir("muster-step-spool-", ::geteuid(), ::getegid());
    work_ = MakeTempDir("muster-step-work-", user_.uid, user_.gid);
    ASSERT_FALSE(spool_.empty());
    ASSERT_FALSE(work_.empty());
    // Unique per test process: ctest runs cases in parallel, and a job's
    // cgroup is named after its id.
    spec_.job_id = 100000 + static_cast<uint32_t>(::getpid() % 100000);
    spec_.uid = user_.uid;
    spec_.gid = user_.gid;
    spec_.groups = {user_.gid};
    spec_.work_dir = work_;
    spec_.std_out = "slurm-42.out";
    spec_.env = {"PATH=/usr/bin:/bin", "HOME=" + work_};
    spec_.kill_wait_s = 1;
  }

  void TearDown() override {
    if (HasFailure()) std::cerr << "muster-step log:\n" << ReadFile(spool_ + "/step.log");
    std::error_code ec;
    fs::remove_all(spool_, ec);
    fs::remove_all(work_, ec);
  }

  // Installs the batch script (bash, like most batch scripts).
  void Script(const std::string& body, mode_t mode = 0700) {
    spec_.script_path = spool_ + "/script";
    WriteFile(spec_.script_path, "#!/bin/bash\n" + body + "\n");
    ASSERT_EQ(::chmod(spec_.script_path.c_str(), mode), 0);
    if (IsRoot()) {
      ASSERT_EQ(::chown(spec_.script_path.c_str(), user_.uid, user_.gid), 0);
    }
  }

  // A file in the work dir, owned by the job's user.
  void UserFile(const std::string& name, const std::string& content) {
    std::string path = work_ + "/" + name;
    WriteFile(path, content);
    if (IsRoot()) {
      ASSERT_EQ(::chown(path.c_str(), user_.uid, user_.gid), 0);
    }
  }

  std::string Work(const std::string& name) const { return work_ + "/" + name; }

  std::string Spool(const std::string& name) const { return spool_ + "/" + name; }
  std::string JobArg() const { return std::to_string(spec_.job_id); }

  pid_t Start() {
    WriteFile(Spool(SpecFileName(spec_.job_id)), ToJson(spec_).dump());
    return Spawn({StepBinary(), spool_, JobArg()});
  }

  pid_t Spawn(const std::vector<std::string>& args) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    std::string log = spool_ + "/step.log";
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    EXPECT_EQ(rc, 0) << "cannot spawn " << argv[0];
    return rc == 0 ? pid : -1;
  }

  // Waits for muster-step; expects exit 0 and a result in the state file.
  StepResult Wait(pid_t pid) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
    std::string text = ReadFile(Spool(StateFileName(spec_.job_id)));
    StepState state = ParseStepState(text);
    EXPECT_EQ(state.pid, pid) << text;
    EXPECT_TRUE(state.result.has_value()) << "no result in the state file: " << text;
    return state.result.value_or(StepResult{});
  }

  StepResult Run() { return Wait(Start()); }

  JobUser user_{};
  std::string spool_;
  std::string work_;
  StepSpec spec_;
};

TEST_F(StepTest, CompletedScriptWritesOutputAsTheUser) {
  spec_.env.push_back("SLURM_UMASK=0027");
  Script("echo hello; id -u; id -g; echo oops >&2");
  pid_t pid = Start();
  StepResult r = Wait(pid);
  EXPECT_EQ(r.job_id, spec_.job_id);
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.exit_signal, 0);
  EXPECT_EQ(r.detail, "");
  EXPECT_GT(r.start_time, 0);
  EXPECT_LE(r.start_time, r.end_time);
  EXPECT_EQ(ReadFile(Spool(StateFileName(spec_.job_id))).substr(0, 1 + std::to_string(pid).size()),
            std::to_string(pid) + "\n");
  // stderr empty: both streams share the one file, in order.
  EXPECT_EQ(ReadFile(Work("slurm-42.out")),
            "hello\n" + std::to_string(user_.uid) + "\n" + std::to_string(user_.gid) + "\noops\n");
  struct stat st;
  ASSERT_EQ(::stat(Work("slurm-42.out").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // 0644 under the user's umask 027
}

TEST_F(StepTest, SupplementaryGroupsAreSetAsRoot) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to change groups";
  spec_.groups = {user_.gid, 4242};
  Script("id -G");
  StepResult r = Run();
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("slurm-42.out")), std::to_string(user_.gid) + " 4242\n");
}

TEST_F(StepTest, ExitStatusMapsToState) {
  struct Case {
    const char* body;
    const char* state;
    int exit_code;
    int exit_signal;
  };
  const Case cases[] = {
      {"exit 0", "COMPLETED", 0, 0},
      {"exit 3", "FAILED", 3, 0},
      {"kill -9 $$", "FAILED", 0, 9},
      {"kill -USR2 $$", "FAILED", 0, SIGUSR2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    Script(c.body);
    StepResult r = Run();
    EXPECT_EQ(r.state, c.state);
    EXPECT_EQ(r.exit_code, c.exit_code);
    EXPECT_EQ(r.exit_signal, c.exit_signal);
  }
}

TEST_F(StepTest, SeparateErrorFile) {
  spec_.std_err = Work("err.txt");  // absolute works as well as relative
  Script("echo out; echo err >&2");
  EXPECT_EQ(Run().state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("slurm-42.out")), "out\n");
  EXPECT_EQ(ReadFile(Work("err.txt")), "err\n");
}

TEST_F(StepTest, OpenModeAppendOrTruncate) {
  for (bool append : {false, true}) {
    SCOPED_TRACE(append ? "append" : "truncate");
    UserFile("slurm-42.out", "old\n");
    spec_.open_append = append;
    Script("echo new");
    EXPECT_EQ(Run().state, "COMPLETED");
    EXPECT_EQ(ReadFile(Work("slurm-42.out")), append ? "old\nnew\n" : "new\n");
  }
}

TEST_F(StepTest, UnopenableOutputFileFailsTheJob) {
  // A directory the user cannot write: root's, or the user's own made read-only.
  ASSERT_EQ(::mkdir(Work("ro").c_str(), 0555), 0);
  struct Case {
    std::string path;
    std::string error;
  };
  const Case cases[] = {
      {"/nonexistent-muster-dir/x.out", "No such file or directory"},
      {Work("ro/x.out"), "Permission denied"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    if (!IsRoot() && c.error == "Permission denied" && ::access(Work("ro").c_str(), W_OK) == 0) {
      continue;  // a capability lets us write anyway
    }
    spec_.std_out = c.path;
    Script("echo should-not-run > " + Work("ran"));
    StepResult r = Run();
    EXPECT_EQ(r.state, "FAILED");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.detail, "could not open output file " + c.path + ": " + c.error);
    EXPECT_FALSE(Exists(Work("ran")));
  }
}

TEST_F(StepTest, MissingWorkDirFallsBackToTmp) {
  spec_.work_dir = "/nonexistent-muster-wd";
  spec_.std_out = Work("out.txt");
  Script("pwd");
  EXPECT_EQ(Run().state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("out.txt")),
            "muster-step: error: couldn't chdir to `/nonexistent-muster-wd': No such file or "
            "directory: going to /tmp instead\n/tmp\n");
}

TEST_F(StepTest, EnvironmentIsPassedExactly) {
  spec_.env = {"PATH=/usr/bin:/bin", "A=1", "SPACES=x y=z", "EMPTY=", "SLURM_JOB_ID=42"};
  // /proc/<pid>/environ is exactly what execve received, plus the shell's
  // own SLURM_TASK_PID as Slurm sets it; env -0 also shows what bash adds
  // on top (PWD, SHLVL, _).
  Script("cat /proc/$$/environ > environ.dump; env -0 > env.dump; echo -n $$ > pid.dump");
  EXPECT_EQ(Run().state, "COMPLETED");
  std::string expected;
  for (const std::string& kv : spec_.env) expected += kv + '\0';
  expected += "SLURM_TASK_PID=" + ReadFile(Work("pid.dump")) + '\0';
  EXPECT_EQ(ReadFile(Work("environ.dump")), expected);
  std::string dumped = ReadFile(Work("env.dump"));
  for (const std::string& kv : spec_.env) {
    EXPECT_NE(dumped.find(kv + '\0'), std::string::npos) << kv;
  }
}

TEST_F(StepTest, ArgvIsPassed) {
  spec_.argv = {"a b", "", "c'd", "--flag"};
  Script("printf '[%s]\\n' \"$0\" \"$@\"");
  EXPECT_EQ(Run().state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("slurm-42.out")), "[" + spec_.script_path + "]\n[a b]\n[]\n[c'd]\n[--flag]\n");
}

TEST_F(StepTest, StdinFromFileOrDevNull) {
  UserFile("in.txt", "input data\n");
  spec_.std_in = "in.txt";
  Script("cat; echo end");
  EXPECT_EQ(Run().state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("slurm-42.out")), "input data\nend\n");

  spec_.std_in = "";
  EXPECT_EQ(Run().state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("slurm-42.out")), "end\n");
}

TEST_F(StepTest, UnexecutableScriptFailsWithDetail) {
  Script("echo hi", 0600);
  StepResult r = Run();
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.detail, "could not execute batch script " + spec_.script_path + ": Permission denied");
  EXPECT_EQ(ReadFile(Work("slurm-42.out")), "muster-step: error: " + r.detail + "\n");
}

TEST_F(StepTest, TimeLimitEscalatesToSigkill) {
  spec_.time_limit_s = 1;
  spec_.kill_wait_s = 1;
  Script("trap '' TERM; sleep 100");
  auto begin = Clock::now();
  StepResult r = Run();
  double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  EXPECT_EQ(r.state, "TIMEOUT");
  EXPECT_EQ(r.exit_signal, SIGKILL);
  EXPECT_GE(elapsed, 1.9);  // limit + kill wait
  EXPECT_LT(elapsed, 4.0);
}

TEST_F(StepTest, TimeLimitSigtermEndsACooperativeScript) {
  spec_.time_limit_s = 1;
  spec_.kill_wait_s = 10;
  Script("sleep 100");
  auto begin = Clock::now();
  StepResult r = Run();
  double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  EXPECT_EQ(r.state, "TIMEOUT");
  EXPECT_EQ(r.exit_signal, SIGTERM);
  EXPECT_LT(elapsed, 3.0);  // no waiting out kill_wait_s
}

TEST_F(StepTest, WarningSignalReachesTheBatchShellBeforeTheLimit) {
  spec_.time_limit_s = 2;
  spec_.warn_signal = SIGUSR2;
  spec_.warn_time_s = 1;
  spec_.warn_batch_only = true;
  Script("trap 'echo warned > marker; exit 0' USR2; while :; do sleep 0.02; done");
  auto begin = Clock::now();
  StepResult r = Run();
  double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("marker")), "warned\n");
  EXPECT_GE(elapsed, 0.9);
  EXPECT_LT(elapsed, 1.9);
}

// Without B: the warning goes to the job's steps, never to the batch shell
// (whose default action for most signals would end the job).
TEST_F(StepTest, WarningSignalWithoutBatchReachesTheStepsOnly) {
  spec_.time_limit_s = 3;
  spec_.warn_signal = SIGUSR2;
  spec_.warn_time_s = 2;
  Script(
      "trap 'echo shell > shell.marker' USR2\n"
      "SLURM_STEP_ID=0 sh -c 'trap \"echo step > marker; exit 0\" USR2; while :; do sleep 0.02; done'\n"
      "sleep 0.2\n"
      "exit 0");
  StepResult r = Run();
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("marker")), "step\n");
  EXPECT_FALSE(Exists(Work("shell.marker")));
}

TEST_F(StepTest, DetachedDescendantsAreKilledWhenTheScriptExits) {
  Script(
      "setsid sleep 1000 & echo $! > setsid.pid\n"
      "nohup sleep 1000 >/dev/null 2>&1 & echo $! > nohup.pid\n"
      // Double fork: the subshell exits at once, orphaning sleep, which
      // reparents to muster-step (the subreaper) instead of init.
      "( setsid sh -c 'echo $$ > orphan.pid; exec sleep 1000' & )\n"
      "while [ ! -s orphan.pid ]; do sleep 0.01; done\n"
      "exit 0");
  StepResult r = Run();
  EXPECT_EQ(r.state, "COMPLETED");
  for (const char* name : {"setsid.pid", "nohup.pid", "orphan.pid"}) {
    SCOPED_TRACE(name);
    std::string text = ReadFile(Work(name));
    ASSERT_FALSE(text.empty());
    pid_t pid = std::atoi(text.c_str());
    ASSERT_GT(pid, 0);
    EXPECT_EQ(::kill(pid, 0), -1);
    EXPECT_EQ(errno, ESRCH);
  }
}

TEST_F(StepTest, SigtermCancelsTheJob) {
  Script("echo up > ready; sleep 100");
  pid_t pid = Start();
  ASSERT_TRUE(WaitForFile(Work("ready")));
  EXPECT_EQ(::getsid(pid), pid);  // detached into its own session
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  StepResult r = Wait(pid);
  EXPECT_EQ(r.state, "CANCELLED");
  EXPECT_EQ(r.exit_signal, SIGTERM);
}

// slurmstepd's line for a stop, as the oracle writes it into the job's
// stderr: "slurmstepd-cpu01: error: *** JOB 12 ON cpu01 CANCELLED AT
// 2026-12-07T11:41:19 DUE TO JOB REQUEUE ***".
TEST_F(StepTest, AStopIsAnnouncedInTheJobsStderr) {
  spec_.env.push_back("SLURMD_NODENAME=cpu01");
  spec_.std_err = "err.txt";
  const std::regex line(
      "slurmstepd-cpu01: error: \\*\\*\\* JOB " + JobArg() +
      " ON cpu01 CANCELLED AT \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(.*) \\*\\*\\*\n");
  struct Case {
    int cause;  // the SIGTERM's sigqueue value; -1: a plain kill
    const char* why;
  };
  for (const Case& c : {Case{-1, ""}, Case{static_cast<int>(StopCause::kRequeue), " DUE TO JOB REQUEUE"},
                        Case{static_cast<int>(StopCause::kNodeFailure),
                             " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"},
                        Case{static_cast<int>(StopCause::kPreemption), " DUE TO PREEMPTION"}}) {
    SCOPED_TRACE(c.why);
    fs::remove(Work("ready"));
    Script("echo up > ready; echo out; sleep 100");
    pid_t pid = Start();
    ASSERT_TRUE(WaitForFile(Work("ready")));
    if (c.cause < 0) {
      ASSERT_EQ(::kill(pid, SIGTERM), 0);
    } else {
      union sigval v {};
      v.sival_int = c.cause;
      ASSERT_EQ(::sigqueue(pid, SIGTERM, v), 0);
    }
    EXPECT_EQ(Wait(pid).state, "CANCELLED");
    std::smatch m;
    const std::string err = ReadFile(Work("err.txt"));
    ASSERT_TRUE(std::regex_match(err, m, line)) << err;
    EXPECT_EQ(m[1].str(), c.why);
    EXPECT_EQ(ReadFile(Work("slurm-42.out")), "out\n");
  }
  // The time limit says so too; a script that ends by itself says nothing.
  spec_.time_limit_s = 1;
  Script("sleep 100");
  EXPECT_EQ(Run().state, "TIMEOUT");
  std::smatch m;
  const std::string err = ReadFile(Work("err.txt"));
  ASSERT_TRUE(std::regex_match(err, m, line)) << err;
  EXPECT_EQ(m[1].str(), " DUE TO TIME LIMIT");
  Script("echo done >&2");
  EXPECT_EQ(Run().state, "COMPLETED");
  EXPECT_EQ(ReadFile(Work("err.txt")), "done\n");
}

TEST_F(StepTest, CancelEscalatesToSigkillAfterKillWait) {
  spec_.kill_wait_s = 1;
  Script("trap '' TERM; echo up > ready; sleep 100");
  pid_t pid = Start();
  ASSERT_TRUE(WaitForFile(Work("ready")));
  auto begin = Clock::now();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  StepResult r = Wait(pid);
  double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  EXPECT_EQ(r.state, "CANCELLED");
  EXPECT_EQ(r.exit_signal, SIGKILL);
  EXPECT_GE(elapsed, 0.9);
  EXPECT_LT(elapsed, 3.0);
}

// sigqueue(SIGUSR1, EncodeSignal(sig, target)): as Slurm, the steps (srun's
// tasks, marked by SLURM_STEP_ID) by default, the batch shell alone, or
// every job process.
TEST_F(StepTest, SigqueueDeliversSignals) {
  struct Case {
    SignalTarget target;
    const char* name;
    bool shell, step, child;
  };
  const Case cases[] = {
      {SignalTarget::kSteps, "steps", false, true, false},
      {SignalTarget::kBatch, "batch shell only", true, false, false},
      {SignalTarget::kAll, "every process", true, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::error_code ec;
    for (const char* f :
         {"ready", "step.ready", "child.ready", "marker", "step.marker", "child.marker"}) {
      fs::remove(Work(f), ec);
    }
    // The script's test that every process the signal is for has shown it.
    std::string expected = "true";
    if (c.shell) expected += " && [ -s marker ]";
    if (c.step) expected += " && [ -s step.marker ]";
    if (c.child) expected += " && [ -s child.marker ]";
    Script(
        "trap 'echo shell >> marker' USR2\n"
        "SLURM_STEP_ID=0 sh -c 'trap \"echo step >> step.marker; exit 0\" USR2; echo up > step.ready;"
        " while :; do sleep 0.01; done' &\n"
        "sh -c 'trap \"echo child >> child.marker; exit 0\" USR2; echo up > child.ready;"
        " while :; do sleep 0.01; done' &\n"
        "while [ ! -s step.ready ] || [ ! -s child.ready ]; do sleep 0.01; done\n"
        "echo up > ready\n"
        // Every process the signal is for shows it (up to 10 s: a loaded
        // machine under a sanitizer build once took over a second), then
        // the others get 0.2 s to show they were not signalled.
        "for i in $(seq 1000); do\n"
        "  " + expected + " && break; sleep 0.01\n"
        "done\n"
        "sleep 0.2\n"
        "exit 0");
    pid_t pid = Start();
    ASSERT_TRUE(WaitForFile(Work("ready")));
    union sigval v;
    v.sival_int = EncodeSignal(SIGUSR2, c.target);
    ASSERT_EQ(::sigqueue(pid, SIGUSR1, v), 0);
    StepResult r = Wait(pid);
    EXPECT_EQ(r.state, "COMPLETED");
    EXPECT_EQ(Exists(Work("marker")), c.shell);
    EXPECT_EQ(Exists(Work("step.marker")), c.step);
    EXPECT_EQ(Exists(Work("child.marker")), c.child);
  }
}

TEST_F(StepTest, PlainSigusr1IsIgnored) {
  Script("echo up > ready; while [ ! -e done ]; do sleep 0.01; done");
  pid_t pid = Start();
  ASSERT_TRUE(WaitForFile(Work("ready")));
  ASSERT_EQ(::kill(pid, SIGUSR1), 0);  // no value: not a delivery request
  UserFile("done", "");
  EXPECT_EQ(Wait(pid).state, "COMPLETED");
}

TEST_F(StepTest, InvalidSpecStillWritesAResult) {
  const std::string spec_file = Spool(SpecFileName(spec_.job_id));
  WriteFile(spec_file, "{not json");
  StepResult r = Wait(Spawn({StepBinary(), spool_, JobArg()}));
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.job_id, spec_.job_id);
  EXPECT_NE(r.detail.find(SpecFileName(spec_.job_id)), std::string::npos) << r.detail;

  WriteFile(spec_file, R"({"job_id": 5, "uid": -1})");
  r = Wait(Spawn({StepBinary(), spool_, JobArg()}));
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_NE(r.detail.find("\"uid\""), std::string::npos) << r.detail;

  // A spec for another job is not this one's.
  WriteFile(spec_file, ToJson(StepSpec{.job_id = spec_.job_id + 1}).dump());
  r = Wait(Spawn({StepBinary(), spool_, JobArg()}));
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_NE(r.detail.find("names job"), std::string::npos) << r.detail;
}

TEST_F(StepTest, OtherUidWithoutRootFails) {
  if (IsRoot()) GTEST_SKIP() << "root may run jobs as anyone";
  spec_.uid = spec_.uid + 1;
  Script("echo hi > " + Work("ran"));
  StepResult r = Run();
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_NE(r.detail.find("cannot start a job as uid"), std::string::npos) << r.detail;
  EXPECT_FALSE(Exists(Work("ran")));
}

TEST_F(StepTest, ExitStatusOfMusterStepItself) {
  int status = 0;
  pid_t pid = Spawn({StepBinary()});
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 2);  // usage
  pid = Spawn({StepBinary(), spool_, "x"});
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 2);  // usage: not a job id
  pid = Spawn({StepBinary(), "/nonexistent-muster-spool", "7"});
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 1);  // nowhere to write a result
}

// ---- Real cgroups (root on a machine with a writable memory controller) ----

// Why the real-cgroup tests cannot run here, or "" when they can.
std::string CgroupSkipReason() {
  if (!IsRoot()) return "cgroup tests need root";
  const std::string root = "/sys/fs/cgroup";
  std::string probe = Exists(root + "/cgroup.controllers") ? root + "/muster-probe"
                                                           : root + "/memory/muster-probe";
  if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) return "no writable memory cgroup controller";
  ::rmdir(probe.c_str());
  return "";
}

TEST_F(StepTest, JobOverItsMemoryLimitEndsOutOfMemory) {
  if (std::string why = CgroupSkipReason(); !why.empty()) GTEST_SKIP() << why;
  spec_.mem_limit_mb = 100;
  spec_.job_id = 4201;
  Script("python3 -c 'b = bytearray(300 * 1024 * 1024); import time; time.sleep(1)'");
  StepResult r = Run();
  EXPECT_TRUE(r.cgroup);
  EXPECT_TRUE(r.oom_killed);
  EXPECT_EQ(r.state, "OUT_OF_MEMORY");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.exit_signal, 125);
  EXPECT_NE(r.detail.find("memory limit of 100 MiB exceeded"), std::string::npos) << r.detail;
  // Near the limit: the process's RSS also counts shared library pages
  // charged to other cgroups, so it may pass the limit by a few MiB.
  EXPECT_GT(r.max_rss_kb, 80u * 1024);
  EXPECT_LE(r.max_rss_kb, 116u * 1024);
  EXPECT_FALSE(Exists("/sys/fs/cgroup/memory/muster/job_4201"));
  EXPECT_FALSE(Exists("/sys/fs/cgroup/muster/job_4201"));
}

TEST_F(StepTest, JobWithinItsLimitReportsMemoryAndCpu) {
  if (std::string why = CgroupSkipReason(); !why.empty()) GTEST_SKIP() << why;
  spec_.mem_limit_mb = 200;
  spec_.job_id = 4202;
  Script("python3 -c 'b = bytearray(50 * 1024 * 1024)'\n"
         "timeout 1 sh -c 'while :; do :; done'; cat /proc/self/cgroup > cgroups; exit 0");
  StepResult r = Run();
  EXPECT_TRUE(r.cgroup);
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_FALSE(r.oom_killed);
  EXPECT_GT(r.max_rss_kb, 50u * 1024);
  EXPECT_LT(r.max_rss_kb, 200u * 1024);
  // A second of spinning, at least 300 ms of it on a CPU even on a busy host.
  EXPECT_GE(r.total_cpu_ms, 300u);
  EXPECT_LT(r.total_cpu_ms, 5000u);
  // The job ran in its cgroup, which is gone afterwards.
  EXPECT_NE(ReadFile(Work("cgroups")).find("/muster/job_4202"), std::string::npos) << ReadFile(Work("cgroups"));
  EXPECT_FALSE(Exists("/sys/fs/cgroup/memory/muster/job_4202"));
  EXPECT_FALSE(Exists("/sys/fs/cgroup/muster/job_4202"));
}

TEST_F(StepTest, CancelKillsEveryProcessOfACgroupJob) {
  if (std::string why = CgroupSkipReason(); !why.empty()) GTEST_SKIP() << why;
  spec_.job_id = 4203;
  // The background sleeper is in the cgroup and the tree; it must be gone.
  Script("sleep 30 & echo $! > sleeper; echo up > ready; wait");
  pid_t pid = Start();
  ASSERT_TRUE(WaitForFile(Work("ready")));
  ASSERT_TRUE(WaitForFile(Work("sleeper")));
  pid_t sleeper = std::atoi(ReadFile(Work("sleeper")).c_str());
  ASSERT_GT(sleeper, 0);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  StepResult r = Wait(pid);
  EXPECT_EQ(r.state, "CANCELLED");
  EXPECT_TRUE(r.cgroup);
  EXPECT_NE(::kill(sleeper, 0), 0);
}

TEST_F(StepTest, WithoutCgroupsUsageComesFromRusage) {
  if (IsRoot()) GTEST_SKIP() << "as root the job gets a cgroup";
  Script("timeout 1 sh -c 'while :; do :; done'; exit 0");
  StepResult r = Run();
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_FALSE(r.cgroup);
  EXPECT_GT(r.max_rss_kb, 100u);
  EXPECT_GE(r.total_cpu_ms, 300u);
}

}  // namespace
}  // namespace muster::stepd

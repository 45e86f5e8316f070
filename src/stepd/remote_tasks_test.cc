#include "stepd/remote_tasks.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

namespace muster::stepd {
namespace {

RemoteStepSpec Spec(int port) {
  RemoteStepSpec s;
  s.job_id = 424207;  // no other test's job: the launcher joins a job cgroup of its id
  s.step_id = 2;
  s.node = "node01";
  s.uid = ::geteuid();
  s.gid = ::getegid();
  s.work_dir = "/";
  s.argv = {"sh", "-c", "echo out $SLURM_PROCID; echo err >&2; exit $((SLURM_PROCID * 3))"};
  s.tasks = {{0, {"PATH=/usr/bin:/bin", "SLURM_PROCID=0"}},
             {1, {"PATH=/usr/bin:/bin", "SLURM_PROCID=1"}}};
  s.io_host = "127.0.0.1";
  s.io_port = port;
  s.token = "0123abcd";
  return s;
}

TEST(RemoteTasksTest, JsonRoundTripsAndRefusesWhatIsMissing) {
  RemoteStepSpec s = Spec(4242);
  auto back = RemoteStepSpecFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->node, "node01");
  EXPECT_EQ(back->tasks.size(), 2u);
  EXPECT_EQ(back->tasks[1].env[1], "SLURM_PROCID=1");
  EXPECT_EQ(back->io_port, 4242);
  nlohmann::json j = ToJson(s);
  j.erase("token");
  EXPECT_FALSE(RemoteStepSpecFromJson(j).ok());
  j = ToJson(s);
  j["argv"] = nlohmann::json::array();
  EXPECT_EQ(RemoteStepSpecFromJson(j).status().message(), "a step launch without a command");
}

TEST(RemoteTasksTest, TaskIoRoundTripsAndRefusesABadStdin) {
  RemoteStepSpec s = Spec(4242);
  s.io = {3, true, 40, 120};
  auto back = RemoteStepSpecFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->io.stdin_rank, 3);
  EXPECT_TRUE(back->io.pty);
  EXPECT_EQ(back->io.cols, 120);
  nlohmann::json j = ToJson(s);
  j["io"]["stdin"] = "some";
  EXPECT_EQ(RemoteStepSpecFromJson(j).status().message(),
            "bad step launch: stdin is \"some\", not \"all\", \"none\" or a task rank");
  // A launch without "io" (an older srun): stdin to all, no terminal.
  j.erase("io");
  back = RemoteStepSpecFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->io.stdin_rank, TaskIo::kAllTasks);
  EXPECT_FALSE(back->io.pty);
}

// Runs a launcher for `spec` against a listening socket, as srun is,
// sends it `to_launcher` and returns all it streamed back.
std::string RunAgainstSrun(RemoteStepSpec spec, const std::string& to_launcher) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::listen(listener, 4), 0);
  EXPECT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  spec.io_port = ntohs(addr.sin_port);
  pid_t launcher = ::fork();
  if (launcher == 0) ::_exit(RunRemoteTasks(spec));
  int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_GE(conn, 0);
  EXPECT_EQ(::send(conn, to_launcher.data(), to_launcher.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(to_launcher.size()));
  std::string stream;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(conn, buf, sizeof(buf), 0)) > 0) stream.append(buf, static_cast<size_t>(n));
  int status = 0;
  EXPECT_EQ(::waitpid(launcher, &status, 0), launcher);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(conn);
  ::close(listener);
  return stream;
}

// Task `rank`'s stdout, put together from its "O" frames in `stream`.
std::string Output(const std::string& stream, int rank) {
  std::string out;
  const std::string head = "O " + std::to_string(rank) + " ";
  for (size_t at = 0; (at = stream.find(head, at)) != std::string::npos;) {
    if (at > 0 && stream[at - 1] != '\n') {
      ++at;
      continue;
    }
    const size_t nl = stream.find('\n', at);
    const size_t n = std::stoul(stream.substr(at + head.size(), nl - at - head.size()));
    out += stream.substr(nl + 1, n);
    at = nl + 1 + n;
  }
  return out;
}

// Srun's stdin reaches the tasks that take it, in pieces, and its end
// ends their input.
TEST(RemoteTasksTest, StdinFramesReachTheTasksThatTakeIt) {
  RemoteStepSpec spec = Spec(0);
  spec.argv = {"sh", "-c", "echo $SLURM_PROCID $(cat)"};
  spec.io.stdin_rank = 1;
  const std::string stream = RunAgainstSrun(spec, "I 3\nhel" "I 3\nlo\n" "I 0\n");
  EXPECT_EQ(Output(stream, 0), "0\n") << stream;
  EXPECT_EQ(Output(stream, 1), "1 hello\n") << stream;
}

// With --pty task 0 runs on a terminal of the given size; the others'
// output is discarded.
TEST(RemoteTasksTest, PtyGivesTaskZeroATerminal) {
  RemoteStepSpec spec = Spec(0);
  spec.argv = {"sh", "-c", "stty size; test -t 0 && echo tty $SLURM_PROCID"};
  spec.io = {TaskIo::kAllTasks, true, 33, 111};
  const std::string stream = RunAgainstSrun(spec, "");
  EXPECT_EQ(Output(stream, 0), "33 111\r\ntty 0\r\n");  // a terminal's line ends
  EXPECT_EQ(stream.find("O 1 "), std::string::npos) << stream;
  EXPECT_NE(stream.find("X 1 1 0 "), std::string::npos) << stream;  // stdin not a terminal
}

// A launcher run against a listening socket, as srun is: the stream holds
// the token, each task's output and how each ended.
TEST(RemoteTasksTest, StreamsOutputAndExitsToSrun) {
  RemoteStepSpec spec = Spec(0);
  spec.tasks.push_back({2, {"PATH=/nonexistent"}});
  const std::string stream = RunAgainstSrun(spec, "");
  EXPECT_EQ(stream.rfind("HELLO 0123abcd node01\n", 0), 0u) << stream;
  EXPECT_NE(stream.find("O 0 6\nout 0\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("O 1 6\nout 1\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("E 1 4\nerr\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("X 0 0 0 "), std::string::npos) << stream;
  EXPECT_NE(stream.find("X 1 3 0 "), std::string::npos) << stream;
  // Task 2's PATH has no sh: it could not start.
  EXPECT_NE(stream.find("node01: task 2: Unable to exec command 'sh': No such file or directory"),
            std::string::npos)
      << stream;
  // Each task's output comes before its end.
  EXPECT_LT(stream.find("O 1 6\n"), stream.find("X 1 3 0 "));
  // Each end carries the task's peak memory (KiB) and CPU time (ms).
  long rss = 0, cpu = -1;
  ASSERT_EQ(std::sscanf(stream.c_str() + stream.find("X 1 3 0 "), "X 1 3 0 %ld %ld", &rss, &cpu), 2);
  EXPECT_GT(rss, 0);
  EXPECT_GE(cpu, 0);
}

}  // namespace
}  // namespace muster::stepd

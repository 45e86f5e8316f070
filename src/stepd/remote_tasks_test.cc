#include "stepd/remote_tasks.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace muster::stepd {
namespace {

RemoteStepSpec Spec(int port) {
  RemoteStepSpec s;
  s.job_id = 7;
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

// A launcher run against a listening socket, as srun is: the stream holds
// the token, each task's output and how each ended.
TEST(RemoteTasksTest, StreamsOutputAndExitsToSrun) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  RemoteStepSpec spec = Spec(ntohs(addr.sin_port));
  spec.tasks.push_back({2, {"PATH=/nonexistent"}});
  pid_t launcher = ::fork();
  if (launcher == 0) ::_exit(RunRemoteTasks(spec));
  int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(conn, 0);
  std::string stream;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(conn, buf, sizeof(buf), 0)) > 0) stream.append(buf, static_cast<size_t>(n));
  int status = 0;
  ASSERT_EQ(::waitpid(launcher, &status, 0), launcher);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(conn);
  ::close(listener);
  EXPECT_EQ(stream.rfind("HELLO 0123abcd node01\n", 0), 0u) << stream;
  EXPECT_NE(stream.find("O 0 6\nout 0\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("O 1 6\nout 1\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("E 1 4\nerr\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("X 0 0 0\n"), std::string::npos) << stream;
  EXPECT_NE(stream.find("X 1 3 0\n"), std::string::npos) << stream;
  // Task 2's PATH has no sh: it could not start.
  EXPECT_NE(stream.find("node01: task 2: Unable to exec command 'sh': No such file or directory"),
            std::string::npos)
      << stream;
  // Each task's output comes before its end.
  EXPECT_LT(stream.find("O 1 6\n"), stream.find("X 1 3 0\n"));
}

}  // namespace
}  // namespace muster::stepd

#include "stepd/proctree.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

extern char** environ;

namespace muster::stepd {
namespace {

TEST(ProcStatTest, Parses) {
  struct Case {
    const char* text;
    bool ok;
    pid_t pid;
    pid_t ppid;
    char state;
  };
  const Case cases[] = {
      {"123 (bash) S 1 123 123 0 -1 4194560 ...", true, 123, 1, 'S'},
      {"77 (a) (b) c) Z 5 77 ...", true, 77, 5, 'Z'},  // ')' and spaces in comm
      {"9 () R 8", true, 9, 8, 'R'},
      {"9 (x) R", false, 0, 0, 0},
      {"x (sh) S 1 2", false, 0, 0, 0},
      {"12 sh S 1", false, 0, 0, 0},
      {"", false, 0, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ProcStat st;
    ASSERT_EQ(ParseProcStat(c.text, &st), c.ok);
    if (!c.ok) continue;
    EXPECT_EQ(st.pid, c.pid);
    EXPECT_EQ(st.ppid, c.ppid);
    EXPECT_EQ(st.state, c.state);
  }
}

TEST(DescendantsTest, WalksParentLinksBreadthFirst) {
  const std::vector<ProcStat> procs = {
      {1, 0, 'S'},   {10, 1, 'S'},  // root and its parent chain
      {20, 10, 'S'}, {21, 10, 'S'}, {30, 20, 'S'}, {31, 21, 'Z'}, {40, 30, 'R'},
      {50, 1, 'S'},  {51, 50, 'S'},  // another tree
  };
  EXPECT_EQ(DescendantsIn(10, procs), (std::vector<pid_t>{20, 21, 30, 40}));  // zombie 31 left out
  EXPECT_EQ(DescendantsIn(40, procs), std::vector<pid_t>{});
  EXPECT_EQ(DescendantsIn(99, procs), std::vector<pid_t>{});
}

TEST(DescendantsTest, FindsAndKillsLiveChildren) {
  const char* argv[] = {"/bin/sh", "-c", "sleep 30 & sleep 30 & wait", nullptr};
  pid_t sh = -1;
  ASSERT_EQ(::posix_spawn(&sh, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  std::vector<pid_t> tree;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((tree = Descendants(::getpid())).size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(tree.size(), 3u);
  EXPECT_EQ(tree[0], sh);  // parents first
  EXPECT_EQ(SignalDescendants(::getpid(), SIGKILL), 3);
  int status = 0;
  ASSERT_EQ(::waitpid(sh, &status, 0), sh);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

}  // namespace
}  // namespace muster::stepd

#include "stepd/proctree.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
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
    uint64_t start_time;
  };
  // Fields 5..21 of a real line, then starttime (22) and more.
  const std::string mid = " 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ";
  const std::string cases_text[] = {
      "123 (bash) S 1" + mid + "555 8000 9 ...\n",
      "77 (a) (b) c) Z 5" + mid + "6 7",  // ')' and spaces in comm
      "9 () R 8" + mid + "18446744073709551615",
      "9 (x) R 8" + mid,                      // no starttime
      "9 (x) R 8" + mid + "-4",               // bad starttime
      "9 (x) R",
      "x (sh) S 1" + mid + "1",
      "12 sh S 1" + mid + "1",
      "",
  };
  const Case cases[] = {
      {cases_text[0].c_str(), true, 123, 1, 'S', 555},
      {cases_text[1].c_str(), true, 77, 5, 'Z', 6},
      {cases_text[2].c_str(), true, 9, 8, 'R', 18446744073709551615ull},
      {cases_text[3].c_str(), false, 0, 0, 0, 0},
      {cases_text[4].c_str(), false, 0, 0, 0, 0},
      {cases_text[5].c_str(), false, 0, 0, 0, 0},
      {cases_text[6].c_str(), false, 0, 0, 0, 0},
      {cases_text[7].c_str(), false, 0, 0, 0, 0},
      {cases_text[8].c_str(), false, 0, 0, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ProcStat st;
    ASSERT_EQ(ParseProcStat(c.text, &st), c.ok);
    if (!c.ok) continue;
    EXPECT_EQ(st.pid, c.pid);
    EXPECT_EQ(st.ppid, c.ppid);
    EXPECT_EQ(st.state, c.state);
    EXPECT_EQ(st.start_time, c.start_time);
  }
}

TEST(DescendantsTest, WalksParentLinksBreadthFirst) {
  const std::vector<ProcStat> procs = {
      {1, 0, 'S'},   {10, 1, 'S'},  // root and its parent chain
      {40, 30, 'R'}, {20, 10, 'S'}, {21, 10, 'S'}, {30, 20, 'S'}, {31, 21, 'Z'},
      {50, 1, 'S'},  {51, 50, 'S'},  // another tree
  };
  auto pids = [&](pid_t root) {
    std::vector<pid_t> out;
    for (const ProcStat& p : DescendantsIn(root, procs)) out.push_back(p.pid);
    return out;
  };
  EXPECT_EQ(pids(10), (std::vector<pid_t>{20, 21, 30, 40}));  // zombie 31 left out
  EXPECT_EQ(pids(40), std::vector<pid_t>{});
  EXPECT_EQ(pids(99), std::vector<pid_t>{});
}

// Polls for up to 5 s until `done` holds; returns whether it did.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(DescendantsTest, FindsAndKillsLiveChildren) {
  const char* argv[] = {"/bin/sh", "-c", "sleep 30 & sleep 30 & wait", nullptr};
  pid_t sh = -1;
  ASSERT_EQ(::posix_spawn(&sh, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  std::vector<pid_t> tree;
  Eventually([&] { return (tree = Descendants(::getpid())).size() >= 3; });
  ASSERT_EQ(tree.size(), 3u);
  EXPECT_EQ(tree[0], sh);  // parents first
  EXPECT_EQ(SignalDescendants(::getpid(), SIGKILL), 3);
  int status = 0;
  ASSERT_EQ(::waitpid(sh, &status, 0), sh);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

// The step marker: srun's tasks carry SLURM_STEP_ID and whatever they start
// inherits it; a process without it is never picked, even with a similar name.
TEST(DescendantsTest, SelectPicksStepProcessesOnly) {
  const char* argv[] = {"/bin/sh", "-c",
                        "SLURM_STEP_ID=0 sleep 30 & SLURM_STEP_IDX=1 sleep 30 & sleep 30 & wait",
                        nullptr};
  pid_t sh = -1;
  ASSERT_EQ(::posix_spawn(&sh, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  std::vector<pid_t> tree;
  Eventually([&] { return (tree = Descendants(::getpid())).size() >= 4; });
  ASSERT_EQ(tree.size(), 4u);
  // The sleeps may still be execing: wait until one shows the variable.
  Eventually([&] { return std::any_of(tree.begin(), tree.end(), InJobStep); });
  EXPECT_FALSE(InJobStep(sh));
  EXPECT_EQ(std::count_if(tree.begin(), tree.end(), InJobStep), 1);
  const int probe = 0;  // signal 0: checks delivery, changes nothing
  EXPECT_EQ(SignalDescendants(::getpid(), std::span<const int>(&probe, 1), nullptr, InJobStep), 1);
  const int kill = SIGKILL;
  EXPECT_EQ(SignalDescendants(::getpid(), std::span<const int>(&kill, 1), nullptr, InJobStep), 1);
  // Until the killed sleep is a zombie it still shows in the tree.
  Eventually([&] { return (tree = Descendants(::getpid())).size() <= 3; });
  ASSERT_EQ(tree.size(), 3u);
  EXPECT_FALSE(std::any_of(tree.begin(), tree.end(), InJobStep));
  EXPECT_EQ(SignalDescendants(::getpid(), SIGKILL), 3);
  int status = 0;
  ASSERT_EQ(::waitpid(sh, &status, 0), sh);
  EXPECT_FALSE(InJobStep(::getpid()));
}

}  // namespace
}  // namespace muster::stepd

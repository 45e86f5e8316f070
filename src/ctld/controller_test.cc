#include "ctld/controller.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "api/line_conn.h"
#include "config/config.h"
#include "sched/refusal.h"
#include "util/clock.h"

namespace muster::ctld {
namespace {

namespace fs = std::filesystem;

class ControllerRecoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("controller-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  config::Config Cluster() const {
    const std::string text = "ClusterName=t\nStateSaveLocation=" + dir_.string() +
                             "\nSlurmdSpoolDir=" + dir_.string() +
                             "/spool\n"
                             "NodeName=n[1-2] CPUs=4 RealMemory=4000 State=UNKNOWN\n"
                             "PartitionName=p Nodes=n[1-2] Default=YES State=UP\n";
    auto cfg = config::ParseConfig(text, (dir_ / "muster.conf").string(), "", false);
    EXPECT_TRUE(cfg.ok()) << cfg.status().message();
    return *cfg;
  }

  // An agent connection over a socketpair: the controller holds fds[0],
  // the test writes the agent's lines to fds[1].
  static void ConnectAgent(boost::asio::io_context& io, Controller& ctl, int fds[2]) {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    api::LineConn::Socket socket(io);
    socket.assign(boost::asio::local::stream_protocol(), fds[0]);
    ctl.AcceptAgent(std::make_shared<api::LineConn>(std::move(socket)));
  }

  static const core::Node& NodeNamed(const Controller& ctl, const std::string& name) {
    const auto& nodes = ctl.nodes();
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const core::Node& n) { return n.config.name == name; });
    EXPECT_NE(it, nodes.end()) << name;
    return *it;
  }

  fs::path dir_;
  util::FakeClock clock_{1'800'000'000};
};

// The snapshot's node states are read back (a drained node stays drained
// with its reason); run under AddressSanitizer this also checks the loop
// over them reads live memory.
TEST_F(ControllerRecoverTest, SnapshotKeepsANodesDrainAndReason) {
  {
    boost::asio::io_context io;
    Controller ctl(io, Cluster(), clock_);
    ASSERT_TRUE(ctl.Recover().ok());
    Caller admin;
    admin.admin = true;
    ASSERT_TRUE(ctl.UpdateNodes("n2", "DRAIN", "bad fan", admin).ok());
    ASSERT_TRUE(ctl.Save().ok());
  }
  ASSERT_TRUE(fs::exists(dir_ / "snapshot.json"));  // what is read back is the snapshot
  boost::asio::io_context io;
  Controller ctl(io, Cluster(), clock_);
  util::Status st = ctl.Recover();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(NodeNamed(ctl, "n2").drain);
  EXPECT_EQ(NodeNamed(ctl, "n2").reason, "bad fan");
  EXPECT_FALSE(NodeNamed(ctl, "n1").drain);
}

// An agent connection is outside input: lines of any shape are logged and
// skipped, a malformed register changes nothing, and the connection keeps
// being read.
TEST_F(ControllerRecoverTest, MalformedAgentMessagesAreSkipped) {
  boost::asio::io_context io;
  Controller ctl(io, Cluster(), clock_);
  ASSERT_TRUE(ctl.Recover().ok());
  int fds[2];
  ConnectAgent(io, ctl, fds);
  auto send_and_run = [&](const std::string& lines) {
    ASSERT_EQ(::write(fds[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
    for (int i = 0; i < 50; ++i) {
      io.poll();
      io.restart();
      ::usleep(1000);
    }
  };
  send_and_run(
      "[1,2]\n\"text\"\n{\"type\":5}\n"
      "{\"type\":\"register\",\"host\":\"h\",\"nodes\":[\"n1\"],\"running\":[\"x\"]}\n");
  EXPECT_FALSE(NodeNamed(ctl, "n1").registered);  // the bad register changed nothing
  send_and_run("{\"type\":\"register\",\"host\":\"h\",\"nodes\":[\"n1\"]}\n");
  EXPECT_TRUE(NodeNamed(ctl, "n1").registered);
  EXPECT_FALSE(NodeNamed(ctl, "n2").registered);
  ::close(fds[1]);
}

// An allocation (salloc) has no step on any node: it runs until its client
// completes it, and the controller itself ends it at its time limit, in
// the controller's time.
TEST_F(ControllerRecoverTest, AllocationEndsAtItsTimeLimit) {
  boost::asio::io_context io;
  Controller ctl(io, Cluster(), clock_);
  ASSERT_TRUE(ctl.Recover().ok());
  int fds[2];
  ConnectAgent(io, ctl, fds);
  const std::string reg = "{\"type\":\"register\",\"host\":\"h\",\"nodes\":[\"n1\",\"n2\"]}\n";
  ASSERT_EQ(::write(fds[1], reg.data(), reg.size()), static_cast<ssize_t>(reg.size()));
  // Up to `ms` of the loop (housekeeping runs each second).
  auto run_until = [&](auto done, int ms = 3000) {
    for (int i = 0; i < ms && !done(); ++i) {
      io.poll();
      io.restart();
      ::usleep(1000);
    }
  };
  run_until([&] { return NodeNamed(ctl, "n2").registered; });
  core::JobRequest req;
  req.interactive = true;
  req.name = "interactive";
  req.min_nodes = 1;
  req.time_limit_s = 60;
  req.work_dir = "/";
  sched::SubmitRefusal why;
  auto id = ctl.Submit(req, Caller{0, 0, true}, &why);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto state = [&] { return ctl.jobs().Find(*id)->state; };
  run_until([&] { return state() == core::JobState::kRunning; });
  ASSERT_EQ(state(), core::JobState::kRunning);
  clock_.Advance(59);
  run_until([] { return false; }, 1200);  // a housekeeping round: not yet
  EXPECT_EQ(state(), core::JobState::kRunning);
  clock_.Advance(1);
  run_until([&] { return state() != core::JobState::kRunning; });
  EXPECT_EQ(state(), core::JobState::kTimeout);
  ::close(fds[1]);
}

}  // namespace
}  // namespace muster::ctld

#include "ctld/controller.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
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

  config::Config Cluster(const std::string& extra = "") const {
    // SlurmdTimeout=0 unless a test sets one: the fake agent never answers
    // musterd's pings, and simulated hours would have it given up on.
    const std::string text = "ClusterName=t\nSlurmdTimeout=0\nStateSaveLocation=" + dir_.string() +
                             "\nSlurmdSpoolDir=" + dir_.string() +
                             "/spool\n"
                             "NodeName=n[1-2] CPUs=4 RealMemory=4000 State=UNKNOWN\n"
                             "PartitionName=p Nodes=n[1-2] Default=YES State=UP\n" +
                             extra;
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
  util::SimulatedTimeSystem time_{1'800'000'000};
};

// The snapshot's node states are read back (a drained node stays drained
// with its reason); run under AddressSanitizer this also checks the loop
// over them reads live memory.
TEST_F(ControllerRecoverTest, SnapshotKeepsANodesDrainAndReason) {
  {
    boost::asio::io_context io;
    Controller ctl(io, Cluster(), time_);
    ASSERT_TRUE(ctl.Recover().ok());
    Caller admin;
    admin.admin = true;
    ASSERT_TRUE(ctl.UpdateNodes("n2", "DRAIN", "bad fan", admin).ok());
    ASSERT_TRUE(ctl.Save().ok());
  }
  ASSERT_TRUE(fs::exists(dir_ / "snapshot.json"));  // what is read back is the snapshot
  boost::asio::io_context io;
  Controller ctl(io, Cluster(), time_);
  util::Status st = ctl.Recover();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(NodeNamed(ctl, "n2").drain);
  EXPECT_EQ(NodeNamed(ctl, "n2").reason, "bad fan");
  EXPECT_FALSE(NodeNamed(ctl, "n1").drain);
}

// Who took each node out of service is kept with its reason, read back,
// and exported per node for alerts (an operator's drain is maintenance).
TEST_F(ControllerRecoverTest, NodeStateSeriesSayWhoTookANodeOut) {
  const std::string drained_in_conf = "NodeName=n3 CPUs=4 RealMemory=4000 State=DRAIN\n";
  {
    boost::asio::io_context io;
    Controller ctl(io, Cluster(drained_in_conf), time_);
    ASSERT_TRUE(ctl.Recover().ok());
    EXPECT_EQ(NodeNamed(ctl, "n3").reason_source, core::ReasonSource::kConfig);
    Caller admin;
    admin.admin = true;
    ASSERT_TRUE(ctl.UpdateNodes("n2", "DRAIN", "maintenance: new PSU", admin).ok());
    EXPECT_EQ(NodeNamed(ctl, "n2").reason_source, core::ReasonSource::kOperator);
    const std::string metrics = ctl.MetricsText();
    EXPECT_NE(metrics.find("# TYPE muster_node_state gauge\n"), std::string::npos);
    // Not registered: sinfo's "*".
    EXPECT_NE(metrics.find("muster_node_state{node=\"n2\",state=\"drained*\",by=\"operator\"} 1\n"),
              std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("muster_node_state{node=\"n3\",state=\"drained*\",by=\"config\"} 1\n"),
              std::string::npos);
    EXPECT_NE(metrics.find("muster_node_state{node=\"n1\",state=\"unknown*\"} 1\n"),
              std::string::npos);
    // Resumed: in service, nobody's.
    ASSERT_TRUE(ctl.UpdateNodes("n3", "RESUME", "", admin).ok());
    EXPECT_EQ(NodeNamed(ctl, "n3").reason_source, core::ReasonSource::kNone);
    ASSERT_TRUE(ctl.Save().ok());
  }
  {
    boost::asio::io_context io;
    Controller ctl(io, Cluster(drained_in_conf), time_);
    ASSERT_TRUE(ctl.Recover().ok());
    EXPECT_EQ(NodeNamed(ctl, "n2").reason_source, core::ReasonSource::kOperator);
    ASSERT_TRUE(ctl.Save().ok());
  }
  // A snapshot from before the source was kept: a reason not health's is
  // taken for an operator's.
  std::string snapshot;
  {
    std::ifstream in(dir_ / "snapshot.json");
    snapshot.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = snapshot.find("\"reason_source\":\"operator\"");
  ASSERT_NE(at, std::string::npos) << snapshot;
  snapshot.replace(at, std::string("\"reason_source\":\"operator\"").size(), "\"x\":0");
  std::ofstream(dir_ / "snapshot.json", std::ios::trunc) << snapshot;
  boost::asio::io_context io;
  Controller ctl(io, Cluster(drained_in_conf), time_);
  ASSERT_TRUE(ctl.Recover().ok());
  EXPECT_TRUE(NodeNamed(ctl, "n2").drain);
  EXPECT_EQ(NodeNamed(ctl, "n2").reason_source, core::ReasonSource::kOperator);
}

// An agent connection is outside input: lines of any shape are logged and
// skipped, a malformed register changes nothing, and the connection keeps
// being read.
TEST_F(ControllerRecoverTest, MalformedAgentMessagesAreSkipped) {
  boost::asio::io_context io;
  Controller ctl(io, Cluster(), time_);
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

// A controller with one agent holding both nodes, driven in simulated
// time: the loop runs only for the agent's socket and posted work.
class SimulatedController : public ControllerRecoverTest {
 protected:
  void Start(const std::string& extra = "") {
    ctl_ = std::make_unique<Controller>(io_, Cluster(extra), time_);
    ASSERT_TRUE(ctl_->Recover().ok());
    ConnectAgent(io_, *ctl_, fds_);
    const std::string reg = "{\"type\":\"register\",\"host\":\"h\",\"nodes\":[\"n1\",\"n2\"]}\n";
    ASSERT_EQ(::write(fds_[1], reg.data(), reg.size()), static_cast<ssize_t>(reg.size()));
    RunUntil([&] { return NodeNamed(*ctl_, "n2").registered; });
  }
  void TearDown() override {
    if (fds_[1] >= 0) ::close(fds_[1]);
    ctl_.reset();
    ControllerRecoverTest::TearDown();
  }
  // Runs the loop's ready work; with `done`, until it holds (socket I/O
  // may take a moment, up to about a second).
  template <typename Done>
  void RunUntil(Done done) {
    for (int i = 0; i < 1000 && !done(); ++i) {
      io_.poll();
      io_.restart();
      ::usleep(1000);
    }
  }
  void RunReady() {
    for (int i = 0; i < 5; ++i) {
      io_.poll();
      io_.restart();
    }
  }
  // An allocation (salloc's job): of one node, or of whole nodes.
  struct Allocation {
    int64_t time_limit_s = 3600;
    int64_t begin_time = 0;
    std::string partition;
    int whole_nodes = 0;
    std::string reservation;
  };
  core::JobId SubmitAllocation(const Allocation& a) {
    core::JobRequest req;
    req.interactive = true;
    req.name = "interactive";
    req.work_dir = "/";
    req.partition = a.partition;
    req.reservation = a.reservation;
    req.time_limit_s = a.time_limit_s;
    req.begin_time = a.begin_time;
    req.min_nodes = 1;
    if (a.whole_nodes > 0) {
      req.min_nodes = req.max_nodes = a.whole_nodes;
      req.exclusive = true;
    }
    sched::SubmitRefusal why;
    auto id = ctl_->Submit(req, Caller{0, 0, true}, &why);
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (!id.ok()) return 0;
    // Until the pass has seen it (a pass may be held off a moment after
    // the one before).
    RunUntil([&] {
      const core::Job* job = ctl_->jobs().Find(*id);
      return job->state != core::JobState::kPending || job->reason != core::PendingReason::kNone;
    });
    return *id;
  }
  // The pending job is still pending `seconds` - 1 from now and running
  // `seconds` from now.
  void ExpectStartsIn(core::JobId id, int64_t seconds) {
    time_.Advance(seconds - 1);
    RunReady();
    EXPECT_EQ(StateOf(id), core::JobState::kPending);
    time_.Advance(1);
    RunUntil([&] { return StateOf(id) == core::JobState::kRunning; });
    EXPECT_EQ(StateOf(id), core::JobState::kRunning);
  }
  core::JobState StateOf(core::JobId id) const { return ctl_->jobs().Find(id)->state; }

  boost::asio::io_context io_;
  std::unique_ptr<Controller> ctl_;
  int fds_[2] = {-1, -1};
};

// An allocation (salloc) has no step on any node: it runs until its client
// completes it, and the controller itself ends it at its time limit, at
// that moment of the controller's time.
TEST_F(SimulatedController, AllocationEndsAtItsTimeLimit) {
  Start();
  const core::JobId id = SubmitAllocation({});
  ASSERT_EQ(StateOf(id), core::JobState::kRunning);
  time_.Advance(3599);
  RunReady();
  EXPECT_EQ(StateOf(id), core::JobState::kRunning);
  time_.Advance(1);
  RunReady();
  EXPECT_EQ(StateOf(id), core::JobState::kTimeout);
}

// Housekeeping is not a tick: with one allocation running and nothing
// waiting, the controller's next timer is a real moment minutes away (the
// usage charge of PriorityCalcPeriod, then the time limit), not the next
// second.
TEST_F(SimulatedController, HousekeepingSleepsUntilSomethingIsDue) {
  Start("PriorityCalcPeriod=10\n");  // minutes
  const int64_t t0 = time_.Now();
  SubmitAllocation({});
  ASSERT_TRUE(time_.NextDue().has_value());
  EXPECT_EQ(*time_.NextDue(), t0 + 600);
  time_.Advance(600);
  RunReady();
  EXPECT_EQ(*time_.NextDue(), t0 + 1200);
}

// A finished job leaves the table MinJobAge after its end, not before.
TEST_F(SimulatedController, FinishedJobIsPurgedAfterMinJobAge) {
  Start("MinJobAge=600\n");
  const core::JobId id = SubmitAllocation({});
  ASSERT_EQ(StateOf(id), core::JobState::kRunning);
  ASSERT_TRUE(ctl_->CompleteAllocation(id, 0, Caller{0, 0, true}).ok());
  RunReady();
  ASSERT_EQ(StateOf(id), core::JobState::kCompleted);
  time_.Advance(599);
  RunReady();
  EXPECT_NE(ctl_->jobs().Find(id), nullptr);
  time_.Advance(1);
  RunReady();
  EXPECT_EQ(ctl_->jobs().Find(id), nullptr);
}

// A job held back by its begin time starts at that moment: housekeeping
// wakes for it (under sched/builtin no periodic pass would find it).
TEST_F(SimulatedController, JobStartsWhenItsBeginTimeComes) {
  Start("SchedulerType=sched/builtin\n");
  const core::JobId id =
      SubmitAllocation({.time_limit_s = 60, .begin_time = time_.Now() + 7200});
  EXPECT_EQ(ctl_->jobs().Find(id)->reason, core::PendingReason::kBeginTime);
  ExpectStartsIn(id, 7200);
}

// A job preempted with its partition's GraceTime keeps running (told
// SIGTERM) for exactly that long, then ends PREEMPTED, and the job that
// preempted it starts.
TEST_F(SimulatedController, PreemptedJobEndsWhenItsGraceTimeIsOver) {
  Start(
      "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n"
      "PartitionName=low Nodes=n[1-2] PriorityTier=1 GraceTime=300 State=UP\n"
      "PartitionName=high Nodes=n[1-2] PriorityTier=10 State=UP\n");
  const core::JobId low = SubmitAllocation({.partition = "low", .whole_nodes = 2});
  ASSERT_EQ(StateOf(low), core::JobState::kRunning);
  const core::JobId high = SubmitAllocation({.partition = "high", .whole_nodes = 1});
  RunReady();
  ASSERT_EQ(ctl_->jobs().Find(low)->preempted_by, high);
  time_.Advance(299);
  RunReady();
  EXPECT_EQ(StateOf(low), core::JobState::kRunning);
  EXPECT_EQ(StateOf(high), core::JobState::kPending);
  time_.Advance(1);
  RunUntil([&] { return StateOf(high) == core::JobState::kRunning; });
  EXPECT_EQ(StateOf(low), core::JobState::kPreempted);
  EXPECT_EQ(StateOf(high), core::JobState::kRunning);
}

// A job of a reservation that begins in an hour waits for it and starts at
// that moment (under sched/builtin nothing else would run a pass then);
// the reservation goes when it ends.
TEST_F(SimulatedController, ReservationsJobStartsWhenItBegins) {
  Start("SchedulerType=sched/builtin\n");
  const int64_t t0 = time_.Now();
  auto made = ctl_->ChangeReservation({{"op", "create"},
                                       {"name", "maint"},
                                       {"users", "root"},
                                       {"nodes", "n1"},
                                       {"start", t0 + 3600},
                                       {"duration", 600}},
                                      Caller{0, 0, true});
  ASSERT_TRUE(made.ok()) << made.status().message();
  const core::JobId id = SubmitAllocation({.time_limit_s = 60, .reservation = "maint"});
  EXPECT_EQ(ctl_->jobs().Find(id)->reason, core::PendingReason::kReservation);
  ExpectStartsIn(id, 3600);
  EXPECT_EQ(ctl_->jobs().Find(id)->nodelist, "n1");
  EXPECT_EQ(ctl_->ReservationsReport()["reservations"].size(), 1u);
  time_.Advance(600);
  RunReady();
  EXPECT_EQ(ctl_->ReservationsReport()["reservations"].size(), 0u);
}

// An agent that says nothing through two pings (SlurmdTimeout/3 apart) is
// taken for a cut link: its connection is closed and its nodes are not
// responding; any line of its counts as alive.
TEST_F(SimulatedController, ASilentAgentIsGivenUpAfterTwoPings) {
  Start("SlurmdTimeout=30\n");
  time_.Advance(15);
  const std::string pong = "{\"type\":\"pong\"}\n";
  ASSERT_EQ(::write(fds_[1], pong.data(), pong.size()), static_cast<ssize_t>(pong.size()));
  for (int i = 0; i < 50; ++i) {
    RunReady();
    ::usleep(1000);
  }
  time_.Advance(15);  // pings at +20 and +30: heard at +15, within two
  RunReady();
  EXPECT_TRUE(NodeNamed(*ctl_, "n1").registered);
  time_.Advance(10);  // +40: silent since +15
  RunUntil([&] { return !NodeNamed(*ctl_, "n1").registered; });
  EXPECT_FALSE(NodeNamed(*ctl_, "n1").registered);
  EXPECT_FALSE(NodeNamed(*ctl_, "n1").down);  // not before SlurmdTimeout
}

// An agent gone for SlurmdTimeout takes its nodes DOWN ("Not responding"),
// one that is back in time does not.
TEST_F(SimulatedController, NodesGoDownAfterSlurmdTimeoutWithoutTheirAgent) {
  Start("SlurmdTimeout=120\n");
  ::close(fds_[1]);
  fds_[1] = -1;
  RunUntil([&] { return !NodeNamed(*ctl_, "n1").registered; });
  time_.Advance(119);
  RunReady();
  EXPECT_FALSE(NodeNamed(*ctl_, "n1").down);
  time_.Advance(1);
  RunReady();
  EXPECT_TRUE(NodeNamed(*ctl_, "n1").down);
  EXPECT_EQ(NodeNamed(*ctl_, "n1").reason, "Not responding");
  EXPECT_EQ(NodeNamed(*ctl_, "n1").reason_source, core::ReasonSource::kNotResponding);
  EXPECT_NE(ctl_->MetricsText().find(
                "muster_node_state{node=\"n1\",state=\"down*\",by=\"not_responding\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace muster::ctld

#include "ctld/agent_registry.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

namespace muster::ctld {
namespace {

class AgentRegistryTest : public ::testing::Test {
 protected:
  // A connection that is only an identity here (never started or written).
  AgentRegistry::Conn NewConn() {
    return std::make_shared<api::LineConn>(api::LineConn::Socket(io_));
  }

  boost::asio::io_context io_;
  util::SimulatedTimeSystem time_{1'000'000};
  std::vector<std::pair<std::string, std::vector<std::string>>> timed_out_;
  AgentRegistry agents_{time_, 120, [this](const std::string& host, const auto& nodes) {
                          timed_out_.emplace_back(host, nodes);
                        }};
};

// Each node leads to its agent's connection; registering again replaces
// what the host held.
TEST_F(AgentRegistryTest, NodesLeadToTheirAgent) {
  const auto a = NewConn(), b = NewConn(), a2 = NewConn();
  agents_.Register("ha", a, {"n1", "n2"});
  agents_.Register("hb", b, {"n3"});
  EXPECT_EQ(agents_.ConnOf("n2"), a);
  EXPECT_EQ(agents_.ConnOf("n3"), b);
  EXPECT_EQ(agents_.ConnOf("n9"), nullptr);
  EXPECT_TRUE(agents_.Holds(a, "n1"));
  EXPECT_FALSE(agents_.Holds(b, "n1"));
  agents_.Register("ha", a2, {"n1"});  // restarted, now without n2
  EXPECT_EQ(agents_.ConnOf("n1"), a2);
  EXPECT_EQ(agents_.ConnOf("n2"), nullptr);
  EXPECT_FALSE(agents_.Holds(a, "n1"));
  EXPECT_EQ(agents_.agents().size(), 2u);
}

// An agent gone for the timeout is given up on once; one back in time is not.
TEST_F(AgentRegistryTest, TimeoutAfterTheAgentGoesUnlessItComesBack) {
  const auto a = NewConn(), b = NewConn();
  agents_.Register("ha", a, {"n1"});
  agents_.Register("hb", b, {"n2", "n3"});
  EXPECT_FALSE(agents_.Closed(NewConn()).has_value());  // no agent's connection
  const auto gone = agents_.Closed(b);
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->first, "hb");
  EXPECT_EQ(agents_.ConnOf("n2"), nullptr);
  EXPECT_TRUE(agents_.Away("hb"));
  ASSERT_TRUE(agents_.Closed(a).has_value());
  time_.Advance(60);
  agents_.Register("ha", NewConn(), {"n1"});  // back in time
  EXPECT_FALSE(agents_.Away("ha"));
  time_.Advance(59);
  EXPECT_TRUE(timed_out_.empty());
  time_.Advance(1);
  ASSERT_EQ(timed_out_.size(), 1u);
  EXPECT_EQ(timed_out_[0].first, "hb");
  EXPECT_EQ(timed_out_[0].second, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_FALSE(agents_.Away("hb"));
  time_.Advance(3600);
  EXPECT_EQ(timed_out_.size(), 1u);
}

}  // namespace
}  // namespace muster::ctld

#include "ctld/node_prologs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace muster::ctld {
namespace {

using Answer = NodePrologs::Answer;
using ::testing::ElementsAre;
using ::testing::Pair;

TEST(NodePrologsTest, TheJobStartsWhenEveryNodeHasAnswered) {
  NodePrologs p;
  p.Start(7, 0, {"n1", "n2"});
  EXPECT_TRUE(p.Waits(7, 0, "n2"));
  EXPECT_EQ(p.Succeeded(7, 0, "n1"), Answer::kWaiting);
  // An answer twice, or from a node not asked, counts once.
  EXPECT_EQ(p.Succeeded(7, 0, "n1"), Answer::kStale);
  EXPECT_EQ(p.Succeeded(7, 0, "n9"), Answer::kStale);
  EXPECT_EQ(p.Succeeded(7, 0, "n2"), Answer::kAllDone);
  EXPECT_TRUE(p.empty());
}

TEST(NodePrologsTest, AnOldRunsAnswersAreStale) {
  NodePrologs p;
  p.Start(7, 0, {"n1"});
  p.Start(7, 1, {"n1", "n2"});  // requeued and started again
  EXPECT_EQ(p.Succeeded(7, 0, "n1"), Answer::kStale);
  EXPECT_FALSE(p.Waits(7, 0, "n1"));
  EXPECT_TRUE(p.Waits(7, 1, "n1"));
  p.Forget(7);
  EXPECT_EQ(p.Succeeded(7, 1, "n1"), Answer::kStale);
}

TEST(NodePrologsTest, FindsWhatWaitsOnTheNodesOfAnAgent) {
  NodePrologs p;
  p.Start(1, 0, {"a", "b"});
  p.Start(2, 0, {"c"});
  p.Start(3, 0, {});  // nothing to wait for
  EXPECT_THAT(p.PendingOn({"b", "c"}),
              ElementsAre(Pair(1, ElementsAre("b")), Pair(2, ElementsAre("c"))));
  EXPECT_TRUE(p.PendingOn({"z"}).empty());
}

}  // namespace
}  // namespace muster::ctld

#include "core/partition.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

TEST(PartitionStateTest, NamesRoundTripAndAnyCaseParses) {
  for (PartitionState s : {PartitionState::kUp, PartitionState::kDown, PartitionState::kDrain,
                           PartitionState::kInactive}) {
    EXPECT_EQ(ParsePartitionState(PartitionStateName(s)), s);
  }
  EXPECT_EQ(PartitionStateName(PartitionState::kInactive), "INACTIVE");
  EXPECT_EQ(ParsePartitionState("drain"), PartitionState::kDrain);
  EXPECT_EQ(ParsePartitionState("Up"), PartitionState::kUp);
  EXPECT_FALSE(ParsePartitionState("IDLE"));
  EXPECT_FALSE(ParsePartitionState(""));
}

}  // namespace
}  // namespace muster::core

#include "util/signals.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace muster::util {
namespace {

TEST(ParseSignal, NamesAndNumbers) {
  EXPECT_EQ(ParseSignal("USR1"), SIGUSR1);
  EXPECT_EQ(ParseSignal("sigterm"), SIGTERM);
  EXPECT_EQ(ParseSignal("SIGKILL"), SIGKILL);
  EXPECT_EQ(ParseSignal("12"), 12);
  EXPECT_EQ(ParseSignal("0"), std::nullopt);
  EXPECT_EQ(ParseSignal("65"), std::nullopt);
  EXPECT_EQ(ParseSignal("BOGUS"), std::nullopt);
  EXPECT_EQ(ParseSignal(""), std::nullopt);
}

// Slurm's scancel takes any positive number (-s 99 reaches the controller)
// and refuses 0 and unknown names with "Unknown job signal: X".
TEST(ParseSignalArgument, NamesAndAnyPositiveNumber) {
  EXPECT_EQ(ParseSignalArgument("usr1"), SIGUSR1);
  EXPECT_EQ(ParseSignalArgument("64"), 64);
  EXPECT_EQ(ParseSignalArgument("65"), 65);
  EXPECT_EQ(ParseSignalArgument("99"), 99);
  EXPECT_EQ(ParseSignalArgument("0"), std::nullopt);
  EXPECT_EQ(ParseSignalArgument("SIGFOO"), std::nullopt);
  EXPECT_EQ(ParseSignalArgument("99999999999"), std::nullopt);
  EXPECT_EQ(ParseSignalArgument(""), std::nullopt);
}

}  // namespace
}  // namespace muster::util

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

}  // namespace
}  // namespace muster::util

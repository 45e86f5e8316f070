#include "util/clock.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace muster::util {
namespace {

// Advance fires what comes due in time order, each at its moment, with
// what a callback arms on the way; a disarmed or destroyed timer never fires.
TEST(SimulatedTimeSystem, FiresDueTimersInOrderAtTheirMoments) {
  SimulatedTimeSystem time(1000);
  std::vector<std::pair<char, int64_t>> fired;
  std::unique_ptr<Timer> a, b, c, gone;
  a = time.MakeTimer([&] {
    fired.emplace_back('a', time.Now());
    a->ArmAt(time.Now() + 5);  // again, on the way
  });
  b = time.MakeTimer([&] { fired.emplace_back('b', time.Now()); });
  c = time.MakeTimer([&] { fired.emplace_back('c', time.Now()); });
  gone = time.MakeTimer([&] { fired.emplace_back('x', time.Now()); });
  a->ArmAt(1003);
  b->ArmAt(1001);
  c->ArmAt(1001);
  c->Disarm();
  gone->ArmAt(1002);
  gone.reset();
  EXPECT_EQ(time.NextDue(), 1001);
  EXPECT_EQ(b->armed(), 1001);
  time.Advance(10);
  EXPECT_EQ(time.Now(), 1010);
  const std::vector<std::pair<char, int64_t>> want = {{'b', 1001}, {'a', 1003}, {'a', 1008}};
  EXPECT_EQ(fired, want);
  EXPECT_EQ(a->armed(), 1013);
  EXPECT_FALSE(b->armed().has_value());
}

// A callback may destroy its own timer.
TEST(SimulatedTimeSystem, ACallbackMayDestroyItsTimer) {
  SimulatedTimeSystem time(0);
  std::unique_ptr<Timer> t;
  int runs = 0;
  t = time.MakeTimer([&, n = std::make_shared<int>(7)] {
    t.reset();
    runs += *n;
  });
  t->ArmAt(1);
  time.Advance(1);
  EXPECT_EQ(runs, 7);
  EXPECT_FALSE(time.NextDue().has_value());
}

}  // namespace
}  // namespace muster::util

#include "ctld/loop_time.h"

#include <gtest/gtest.h>

#include <memory>

#include <boost/asio/io_context.hpp>

namespace muster::ctld {
namespace {

// A timer armed for a moment already come fires on the loop; arming again
// replaces the moment (the earlier wait never fires), and a disarmed or
// destroyed timer never fires.
TEST(LoopTimeSystem, TimersFireOnTheLoopOnceTheirMomentHasCome) {
  boost::asio::io_context io;
  LoopTimeSystem time(io);
  int fired = 0, never = 0;
  std::unique_ptr<util::Timer> now = time.MakeTimer([&] { ++fired; });
  std::unique_ptr<util::Timer> later = time.MakeTimer([&] { ++never; });
  std::unique_ptr<util::Timer> gone = time.MakeTimer([&] { ++never; });
  now->ArmAt(time.Now() + 3600);
  now->ArmAt(time.Now() - 1);  // replaces the hour
  later->ArmAt(time.Now() + 3600);
  later->Disarm();
  gone->ArmAt(time.Now() - 1);
  gone.reset();
  EXPECT_EQ(fired, 0);  // only on the loop
  for (int i = 0; i < 100 && fired == 0; ++i) {
    io.poll();
    io.restart();
  }
  io.poll();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(never, 0);
  EXPECT_FALSE(now->armed().has_value());
  EXPECT_FALSE(later->armed().has_value());
}

// A callback may destroy its own timer, and may arm it again.
TEST(LoopTimeSystem, ACallbackMayDestroyOrRearmItsTimer) {
  boost::asio::io_context io;
  LoopTimeSystem time(io);
  int runs = 0;
  std::unique_ptr<util::Timer> again;
  again = time.MakeTimer([&] {
    if (++runs < 3) again->ArmAt(time.Now() - 1);
  });
  std::unique_ptr<util::Timer> self;
  bool destroyed = false;
  self = time.MakeTimer([&] {
    self.reset();
    destroyed = true;
  });
  again->ArmAt(time.Now() - 1);
  self->ArmAt(time.Now() - 1);
  for (int i = 0; i < 100 && (runs < 3 || !destroyed); ++i) {
    io.poll();
    io.restart();
  }
  EXPECT_EQ(runs, 3);
  EXPECT_TRUE(destroyed);
  EXPECT_EQ(self, nullptr);
}

}  // namespace
}  // namespace muster::ctld

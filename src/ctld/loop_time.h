// Wall-clock time for musterd's event loop: Now() is the OS clock, and a
// timer's callback runs on the loop (boost::asio::system_timer) once that
// clock reaches its moment. Tests use util::SimulatedTimeSystem instead.
#pragma once

#include <boost/asio/io_context.hpp>

#include "util/clock.h"

namespace muster::ctld {

class LoopTimeSystem final : public util::TimeSystem {
 public:
  explicit LoopTimeSystem(boost::asio::io_context& io) : io_(io) {}
  int64_t Now() const override { return clock_.Now(); }
  std::unique_ptr<util::Timer> MakeTimer(std::function<void()> fire) override;

 private:
  boost::asio::io_context& io_;
  util::RealClock clock_;
};

}  // namespace muster::ctld

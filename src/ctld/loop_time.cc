#include "ctld/loop_time.h"

#include <boost/asio/system_timer.hpp>
#include <chrono>

namespace muster::ctld {

namespace {

class LoopTimer final : public util::Timer {
 public:
  LoopTimer(boost::asio::io_context& io, std::function<void()> fire)
      : timer_(io), state_(std::make_shared<State>(State{std::move(fire)})) {}
  ~LoopTimer() override { Disarm(); }

  void ArmAt(int64_t when) override {
    // A wait that completed but whose handler has not run yet cannot be
    // cancelled: each handler checks it is still the latest arming.
    const uint64_t generation = ++state_->generation;
    armed_ = when;
    timer_.expires_at(std::chrono::system_clock::time_point(std::chrono::seconds(when)));
    timer_.async_wait([state = state_, generation, this](boost::system::error_code ec) {
      if (ec || state->generation != generation) return;
      armed_.reset();
      state->fire();
    });
  }
  void Disarm() override {
    ++state_->generation;
    armed_.reset();
    timer_.cancel();
  }
  std::optional<int64_t> armed() const override { return armed_; }

 private:
  struct State {
    std::function<void()> fire;
    uint64_t generation = 0;
  };
  boost::asio::system_timer timer_;
  // Shared with pending handlers, which may run after this timer is gone.
  std::shared_ptr<State> state_;
  std::optional<int64_t> armed_;
};

}  // namespace

std::unique_ptr<util::Timer> LoopTimeSystem::MakeTimer(std::function<void()> fire) {
  return std::make_unique<LoopTimer>(io_, std::move(fire));
}

}  // namespace muster::ctld

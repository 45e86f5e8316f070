#include "util/clock.h"

#include <algorithm>
#include <ctime>

namespace muster::util {

int64_t RealClock::Now() const { return static_cast<int64_t>(::time(nullptr)); }

class SimulatedTimeSystem::SimTimer final : public Timer {
 public:
  SimTimer(SimulatedTimeSystem& system, std::function<void()> fire)
      : system_(&system), fire_(std::move(fire)) {}
  ~SimTimer() override { Disarm(); }

  void ArmAt(int64_t when) override {
    Disarm();
    key_ = {when, system_->next_seq_++};
    system_->armed_.insert({*key_, this});
  }
  void Disarm() override {
    if (key_) system_->armed_.erase({*key_, this});
    key_.reset();
  }
  std::optional<int64_t> armed() const override {
    return key_ ? std::optional<int64_t>(key_->first) : std::nullopt;
  }

 private:
  friend class SimulatedTimeSystem;
  SimulatedTimeSystem* system_;
  std::function<void()> fire_;
  std::optional<std::pair<int64_t, uint64_t>> key_;
};

std::unique_ptr<Timer> SimulatedTimeSystem::MakeTimer(std::function<void()> fire) {
  return std::make_unique<SimTimer>(*this, std::move(fire));
}

void SimulatedTimeSystem::Advance(int64_t seconds) {
  const int64_t target = now_ + std::max<int64_t>(seconds, 0);
  while (!armed_.empty() && armed_.begin()->first.first <= target) {
    SimTimer* timer = armed_.begin()->second;
    now_ = std::max(now_, armed_.begin()->first.first);
    timer->Disarm();
    // A copy: the callback may destroy its own timer.
    std::function<void()> fire = timer->fire_;
    fire();
  }
  now_ = target;
}

std::optional<int64_t> SimulatedTimeSystem::NextDue() const {
  if (armed_.empty()) return std::nullopt;
  return armed_.begin()->first.first;
}

}  // namespace muster::util

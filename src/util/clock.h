// The injected time source. Only RealClock and the event loop's time system
// (ctld/loop_time.h) read the OS clock; the scheduler core takes "now" as an
// argument and never calls a clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <utility>

namespace muster::util {

// How long something took, for the figures Muster reports (sdiag, the
// scheduling pass's time): the monotonic clock, never a decision's input.
class Stopwatch {
 public:
  Stopwatch() : began_(std::chrono::steady_clock::now()) {}
  int64_t ElapsedMicros() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now() - began_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point began_;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual int64_t Now() const = 0;
};

class RealClock final : public Clock {
 public:
  int64_t Now() const override;
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now) : now_(now) {}
  int64_t Now() const override { return now_; }
  void Advance(int64_t seconds) { now_ += seconds; }
  void Set(int64_t now) { now_ = now; }

 private:
  int64_t now_;
};

// A one-shot timer of a TimeSystem: once the moment it is armed for has
// come, its callback runs on the loop that owns it. Arming again replaces
// that moment; destroying it disarms it.
class Timer {
 public:
  virtual ~Timer() = default;
  // `when` in epoch seconds; a moment already past fires as soon as it can.
  virtual void ArmAt(int64_t when) = 0;
  virtual void Disarm() = 0;
  // The moment it is armed for, if it is.
  virtual std::optional<int64_t> armed() const = 0;
};

// A clock with timers, as a daemon's event loop sees time.
class TimeSystem : public Clock {
 public:
  virtual std::unique_ptr<Timer> MakeTimer(std::function<void()> fire) = 0;
};

// Time that moves only when a test says so: Advance runs every timer that
// comes due on the way, in time order (ties in arming order), each with
// Now() at its moment. Fairshare decay, grace times and reservation
// windows of hours are tested in milliseconds. It must outlive its timers.
class SimulatedTimeSystem final : public TimeSystem {
 public:
  explicit SimulatedTimeSystem(int64_t now) : now_(now) {}
  int64_t Now() const override { return now_; }
  std::unique_ptr<Timer> MakeTimer(std::function<void()> fire) override;
  // Moves time forward `seconds` (>= 0), firing what comes due, including
  // what those callbacks arm on the way.
  void Advance(int64_t seconds);
  // The moment of the earliest armed timer, if any.
  std::optional<int64_t> NextDue() const;

 private:
  class SimTimer;
  friend class SimTimer;
  int64_t now_;
  uint64_t next_seq_ = 0;
  // (when, arming order) of each armed timer.
  std::set<std::pair<std::pair<int64_t, uint64_t>, SimTimer*>> armed_;
};

}  // namespace muster::util

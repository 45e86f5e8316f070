// The injected time source. Only RealClock reads the OS clock; the
// scheduler core takes "now" as an argument and never calls a clock.
#pragma once

#include <cstdint>

namespace muster::util {

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

}  // namespace muster::util

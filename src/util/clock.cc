#include "util/clock.h"

#include <ctime>

namespace muster::util {

int64_t RealClock::Now() const { return static_cast<int64_t>(::time(nullptr)); }

}  // namespace muster::util

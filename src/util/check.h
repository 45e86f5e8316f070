// MUSTER_CHECK: an invariant that always holds, checked in every build. A
// broken one stops the process at once with the condition and where it is
// (restart recovery makes that safe); it is never for input from outside,
// which gets a Status.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace muster::util {

[[noreturn]] inline void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, condition);
  std::abort();
}

}  // namespace muster::util

#define MUSTER_CHECK(condition) \
  ((condition) ? (void)0 : ::muster::util::CheckFailed(#condition, __FILE__, __LINE__))

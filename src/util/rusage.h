// Figures of a process's struct rusage, as sacct reports them.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace muster::util {

// User plus system CPU time, in milliseconds.
inline int64_t CpuMillis(const rusage& ru) {
  return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000 +
         (static_cast<int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) / 1000;
}

}  // namespace muster::util

#include "util/log.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>

namespace muster::util {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};

// The process name is set once at start-up but may be read from any thread.
std::mutex& NameMutex() {
  static std::mutex mu;
  return mu;
}
std::string& Name() {
  static std::string name = "muster";
  return name;
}

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warning";
    case LogLevel::kError: return "error";
  }
  return "info";
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(level, std::memory_order_relaxed); }

void SetLogName(std::string_view name) {
  std::lock_guard<std::mutex> lock(NameMutex());
  Name() = std::string(name);
}

void LogLine(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < static_cast<int>(g_level.load(std::memory_order_relaxed))) return;
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  ::localtime_r(&ts.tv_sec, &tm);
  std::string name;
  {
    std::lock_guard<std::mutex> lock(NameMutex());
    name = Name();
  }
  std::string line = fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d} {} {}: {}",
                                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                 tm.tm_min, tm.tm_sec, static_cast<int>(ts.tv_nsec / 1000000),
                                 name, LevelName(level), message);
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  // One write(2) per line so concurrent lines never interleave; only a
  // short write (rare, e.g. a full pipe) continues with the remainder.
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace muster::util

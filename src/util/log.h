// Minimal leveled logging to stderr (daemons redirect stderr to their log
// file). Thread-safe: each line is written with one write(2).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace muster::util {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

void SetLogLevel(LogLevel level);
void SetLogName(std::string_view name);
void LogLine(LogLevel level, std::string_view message);

template <typename... Args>
void LogInfo(fmt::format_string<Args...> f, Args&&... args) {
  LogLine(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void LogWarn(fmt::format_string<Args...> f, Args&&... args) {
  LogLine(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void LogError(fmt::format_string<Args...> f, Args&&... args) {
  LogLine(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void LogDebug(fmt::format_string<Args...> f, Args&&... args) {
  LogLine(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace muster::util

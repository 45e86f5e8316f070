#include "util/slurm_time.h"

#include <time.h>

#include <fmt/format.h>

#include <vector>

#include "util/strings.h"

namespace muster::util {
namespace {

Status BadTime(std::string_view text) {
  return InvalidArgument("Invalid time specification '" + std::string(text) + "'");
}

// Splits "a:b:c" into numbers; false on an empty or non-numeric field.
bool ParseFields(std::string_view text, std::vector<int64_t>* out) {
  size_t start = 0;
  while (true) {
    size_t pos = text.find(':', start);
    std::string_view field = text.substr(
        start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    Result<int64_t> v = ParseInt(field);
    if (!v.ok() || *v > 1000000000) return false;
    out->push_back(*v);
    if (pos == std::string_view::npos) return true;
    start = pos + 1;
  }
}

// The longest limit: a million days, whatever form writes it (fields are
// not range-checked, so "2-99999999" is hours past it), so every limit
// reads back from the form scontrol prints.
constexpr int64_t kMaxLimitSeconds = int64_t{1000000} * 86400;

Result<int64_t> Bounded(std::string_view text, int64_t seconds) {
  if (seconds > kMaxLimitSeconds) return BadTime(text);
  return seconds;
}

}  // namespace

Result<int64_t> ParseTimeLimitSeconds(std::string_view text) {
  std::string_view t = Trim(text);
  if (t == "-1" || EqualsIgnoreCase(t, "UNLIMITED") || EqualsIgnoreCase(t, "INFINITE")) {
    return kUnlimited;
  }
  if (t.empty()) return BadTime(text);
  // Like Slurm, fields are not range-checked: "1:90" is 150 seconds.
  size_t dash = t.find('-');
  std::vector<int64_t> f;
  if (dash != std::string_view::npos) {
    Result<int64_t> days = ParseInt(t.substr(0, dash));
    if (!days.ok() || *days > 1000000) return BadTime(text);
    if (!ParseFields(t.substr(dash + 1), &f) || f.size() > 3) return BadTime(text);
    // D-HH, D-HH:MM, D-HH:MM:SS
    int64_t secs = *days * 86400 + f[0] * 3600;
    if (f.size() > 1) secs += f[1] * 60;
    if (f.size() > 2) secs += f[2];
    return Bounded(text, secs);
  }
  if (!ParseFields(t, &f) || f.size() > 3) return BadTime(text);
  switch (f.size()) {
    case 1: return Bounded(text, f[0] * 60);                        // MM
    case 2: return Bounded(text, f[0] * 60 + f[1]);                 // MM:SS
    default: return Bounded(text, f[0] * 3600 + f[1] * 60 + f[2]);  // HH:MM:SS
  }
}

std::string FormatDuration(int64_t seconds) {
  if (seconds == kUnlimited) return "UNLIMITED";
  if (seconds < 0) return "INVALID";
  int64_t days = seconds / 86400;
  int64_t hours = seconds / 3600 % 24;
  int64_t minutes = seconds / 60 % 60;
  int64_t secs = seconds % 60;
  if (days > 0) return fmt::format("{}-{:02d}:{:02d}:{:02d}", days, hours, minutes, secs);
  if (hours > 0) return fmt::format("{}:{:02d}:{:02d}", hours, minutes, secs);
  return fmt::format("{}:{:02d}", minutes, secs);
}

std::string FormatDurationLong(int64_t seconds) {
  if (seconds == kUnlimited) return "UNLIMITED";
  if (seconds < 0) return "INVALID";
  int64_t days = seconds / 86400;
  int64_t hours = seconds / 3600 % 24;
  int64_t minutes = seconds / 60 % 60;
  int64_t secs = seconds % 60;
  if (days > 0) return fmt::format("{}-{:02d}:{:02d}:{:02d}", days, hours, minutes, secs);
  return fmt::format("{:02d}:{:02d}:{:02d}", hours, minutes, secs);
}

std::string FormatTimestamp(int64_t unix_seconds) {
  if (unix_seconds == 0) return "Unknown";
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm;
  if (::localtime_r(&t, &tm) == nullptr) return "Unknown";
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

Result<int64_t> ParseNowOffset(std::string_view text) {
  const std::string lower = ToLower(text);
  auto bad = [&] { return BadTime(text); };
  if (!StartsWith(lower, "now")) return bad();
  std::string_view rest = std::string_view(lower).substr(3);
  if (rest.empty()) return int64_t{0};
  const int sign = rest[0] == '+' ? 1 : rest[0] == '-' ? -1 : 0;
  if (sign == 0) return bad();
  rest.remove_prefix(1);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0) return bad();
  const Result<int64_t> count = ParseInt(rest.substr(0, digits));
  std::string_view unit = rest.substr(digits);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit.size() > 1 && unit.back() == 's') unit.remove_suffix(1);
  int64_t unit_s = 0;
  if (unit.empty() || unit == "second") unit_s = 1;
  else if (unit == "minute") unit_s = 60;
  else if (unit == "hour") unit_s = 3600;
  else if (unit == "day") unit_s = 86400;
  else if (unit == "week") unit_s = 7 * 86400;
  else return bad();
  // Further than a century is a typo, and would overflow.
  constexpr int64_t kMaxOffsetS = int64_t{100} * 366 * 86400;
  if (!count.ok() || *count > kMaxOffsetS / unit_s) return bad();
  return sign * *count * unit_s;
}

}  // namespace muster::util

#include "util/strings.h"

#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace muster::util {

std::vector<std::string> Split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    std::string_view part =
        s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    if (!skip_empty || !part.empty()) out.emplace_back(part);
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  size_t e = s.size();
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

Result<int64_t> ParseInt(std::string_view s) {
  if (s.empty()) return InvalidArgument("empty number");
  int64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return InvalidArgument("invalid number '" + std::string(s) + "'");
    int digit = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return InvalidArgument("number out of range '" + std::string(s) + "'");
    }
    value = value * 10 + digit;
  }
  return value;
}

Result<int64_t> ParseSignedInt(std::string_view s) {
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  Result<int64_t> n = ParseInt(s);
  if (!n.ok()) return n;
  return negative ? -*n : *n;
}

Result<int64_t> ParseMemoryMb(std::string_view s) {
  // Slurm skips leading blanks (strtol) but rejects anything trailing other
  // than one unit letter, optionally followed by 'B' ("4GB" is accepted).
  std::string_view t = s;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  auto bad = [&] { return InvalidArgument("Invalid memory specification '" + std::string(s) + "'"); };
  if (digits == 0) return bad();
  Result<int64_t> number = ParseInt(t.substr(0, digits));
  if (!number.ok()) return bad();
  std::string_view suffix = t.substr(digits);
  if (suffix.size() == 2 && (suffix[1] == 'b' || suffix[1] == 'B')) suffix.remove_suffix(1);
  int64_t n = *number;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (suffix.empty()) return n;
  if (suffix.size() != 1) return bad();
  switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
    case 'K':
      return n / 1024 + (n % 1024 != 0 ? 1 : 0);
    case 'M':
      return n;
    case 'G':
      if (n > kMax / 1024) return bad();
      return n * 1024;
    case 'T':
      if (n > kMax / (1024 * 1024)) return bad();
      return n * 1024 * 1024;
    default:
      return bad();
  }
}

std::string FormatMemoryMb(int64_t mb) {
  if (mb <= 0) return "0";
  static constexpr char kUnits[] = {'M', 'G', 'T', 'P', 'E'};
  double v = static_cast<double>(mb);
  size_t unit = 0;
  while (v >= 1024 && std::fmod(v, 512) == 0 && unit + 1 < sizeof(kUnits)) {
    v /= 1024;
    ++unit;
  }
  if (v == std::floor(v)) return fmt::format("{:.0f}{}", v, kUnits[unit]);
  return fmt::format("{:.2f}{}", v, kUnits[unit]);
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(parts[i]);
  }
  return out;
}

std::string JoinInts(const std::vector<int>& values, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += sep;
    out += std::to_string(values[i]);
  }
  return out;
}

std::string FormatIndexRanges(const std::vector<int>& sorted) {
  std::string out;
  size_t i = 0;
  while (i < sorted.size()) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatIndexRangesWithSteps(const std::vector<int>& sorted) {
  std::string out;
  size_t i = 0;
  while (i < sorted.size()) {
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    // A run of at least three with one step (two when the step is 1).
    size_t j = i;
    if (i + 1 < sorted.size()) {
      const int64_t step = int64_t{sorted[i + 1]} - sorted[i];
      while (j + 1 < sorted.size() && int64_t{sorted[j + 1]} - sorted[j] == step) ++j;
      if (j - i + 1 >= 3 || (step == 1 && j > i)) {
        out += "-" + std::to_string(sorted[j]);
        if (step != 1) out += ":" + std::to_string(step);
      } else {
        j = i;
      }
    }
    i = j + 1;
  }
  return out;
}

Result<std::vector<int>> ParseIndexRanges(std::string_view text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (const std::string& part : Split(text, ',', false)) {
    const size_t dash = part.find('-');
    const size_t colon = part.find(':');
    if (colon != std::string::npos && (dash == std::string::npos || colon < dash)) {
      return InvalidArgument("invalid index range '" + part + "'");
    }
    auto lo = ParseInt(part.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : ParseInt(part.substr(dash + 1, colon - dash - 1));
    auto step = colon == std::string::npos ? Result<int64_t>(1) : ParseInt(part.substr(colon + 1));
    if (!lo.ok() || !hi.ok() || !step.ok() || *lo < 0 || *hi < *lo || *hi > INT32_MAX ||
        *step < 1) {
      return InvalidArgument("invalid index range '" + part + "'");
    }
    const int64_t count = (*hi - *lo) / *step + 1;
    if (count > kMaxIndices - static_cast<int64_t>(out.size())) {
      return InvalidArgument("more than " + std::to_string(kMaxIndices) + " indices in '" +
                             std::string(text.substr(0, 64)) + "'");
    }
    for (int64_t k = 0; k < count; ++k) out.push_back(static_cast<int>(*lo + k * *step));
  }
  return out;
}

}  // namespace muster::util

#include "util/hostlist.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <tuple>

namespace muster::util {
namespace {

// Slurm refuses a single range of more than 64Ki hosts; the total bound
// keeps a product of several bracket groups from exhausting memory.
constexpr int64_t kMaxHostsPerRange = 65536;
constexpr size_t kMaxHostsTotal = 1 << 20;
// Longest digit run treated as a number (fits int64_t).
constexpr size_t kMaxDigits = 18;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

Status Invalid(std::string_view expr, std::string_view why) {
  return InvalidArgument(fmt::format("Invalid hostlist: {} ({})", expr, why));
}

std::string Padded(int64_t n, size_t width) { return fmt::format("{:0{}d}", n, width); }

// Parses a digit string; false if empty, not all digits or too long.
bool ParseNumber(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > kMaxDigits) return false;
  int64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Expands the inside of one bracket group, "01-04,7", into its values,
// each zero-padded to the width of its range's lower bound.
Status ExpandGroup(std::string_view expr, std::string_view inner,
                   std::vector<std::string>* values) {
  size_t start = 0;
  while (true) {
    size_t comma = inner.find(',', start);
    std::string_view range = inner.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t dash = range.find('-');
    std::string_view lo_text = range.substr(0, dash);
    std::string_view hi_text =
        dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    int64_t lo = 0;
    int64_t hi = 0;
    if (!ParseNumber(lo_text, &lo) || !ParseNumber(hi_text, &hi)) {
      return Invalid(expr, fmt::format("invalid range '{}'", range));
    }
    if (hi < lo) return Invalid(expr, fmt::format("invalid range '{}'", range));
    if (hi - lo >= kMaxHostsPerRange) {
      return Invalid(expr, fmt::format("too many hosts in range '{}'", range));
    }
    for (int64_t n = lo; n <= hi; ++n) values->push_back(Padded(n, lo_text.size()));
    if (comma == std::string_view::npos) return Status::Ok();
    start = comma + 1;
  }
}

// Expands one comma-free, blank-free token such as "rack[1-2]-node[01-04]".
Status ExpandToken(std::string_view expr, std::string_view token,
                   std::vector<std::string>* out) {
  std::vector<std::string> literals;  // literal text before each group
  std::vector<std::vector<std::string>> groups;
  size_t pos = 0;
  while (pos < token.size()) {
    size_t open = token.find('[', pos);
    size_t close = token.find(']', pos);
    if (open == std::string_view::npos) {
      if (close != std::string_view::npos) return Invalid(expr, "unbalanced ']'");
      break;
    }
    if (close < open) return Invalid(expr, "unbalanced ']'");
    if (close == std::string_view::npos) return Invalid(expr, "unbalanced '['");
    std::string_view inner = token.substr(open + 1, close - open - 1);
    if (inner.find('[') != std::string_view::npos) return Invalid(expr, "nested '['");
    literals.emplace_back(token.substr(pos, open - pos));
    groups.emplace_back();
    MUSTER_RETURN_IF_ERROR(ExpandGroup(expr, inner, &groups.back()));
    pos = close + 1;
  }
  if (groups.empty()) {
    out->emplace_back(token);
    return Status::Ok();
  }
  // Slurm accepts text between bracket groups but not after the last one:
  // "rack[1-2]-node[01-02]" is valid, "rack[1-2]-node" is not.
  if (pos != token.size()) {
    return Invalid(expr, fmt::format("text '{}' after the last ']'", token.substr(pos)));
  }
  size_t total = 1;
  for (const auto& g : groups) {
    total *= g.size();
    if (total > kMaxHostsTotal) return Invalid(expr, "too many hosts");
  }
  if (out->size() + total > kMaxHostsTotal) return Invalid(expr, "too many hosts");

  // Nesting order, outermost first. With two groups the first is outermost
  // ("a[1-2]b[3-4]" -> a1b3 a1b4 a2b3 a2b4). With more, Slurm varies the
  // last group fastest, then the first, second, ... so the second-to-last is
  // outermost; we reproduce that order exactly.
  const int k = static_cast<int>(groups.size());
  std::vector<int> order;
  for (int g = k - 2; g >= 0; --g) order.push_back(g);
  order.push_back(k - 1);

  std::vector<size_t> idx(groups.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    std::string name;
    for (size_t g = 0; g < groups.size(); ++g) {
      name += literals[g];
      name += groups[g][idx[g]];
    }
    out->push_back(std::move(name));
    // Advance the odometer, innermost (order.back()) first.
    for (int i = k - 1; i >= 0; --i) {
      int g = order[i];
      if (++idx[g] < groups[g].size()) break;
      idx[g] = 0;
    }
  }
  return Status::Ok();
}

// A host name split at its last run of digits, for compression.
struct HostKey {
  std::string prefix;
  bool has_number = false;
  size_t width = 0;     // digits as written
  int64_t number = 0;
  bool padded = false;  // written with a leading zero ("08", "00")

  auto Tie() const { return std::tie(prefix, has_number, width, number); }
  bool operator<(const HostKey& o) const { return Tie() < o.Tie(); }
  bool operator==(const HostKey& o) const { return Tie() == o.Tie(); }
};

HostKey MakeKey(const std::string& host) {
  HostKey key;
  size_t end = host.size();
  size_t start = end;
  while (start > 0 && IsDigit(host[start - 1])) --start;
  int64_t n = 0;
  if (start == end || !ParseNumber(std::string_view(host).substr(start), &n)) {
    key.prefix = host;
    return key;
  }
  key.prefix = host.substr(0, start);
  key.has_number = true;
  key.width = end - start;
  key.number = n;
  key.padded = key.width > 1 && host[start] == '0';
  return key;
}

struct Range {
  int64_t lo;
  int64_t hi;
  size_t width;
  bool padded;
};

std::string FormatRange(const Range& r) {
  size_t w = r.padded ? r.width : 1;
  if (r.lo == r.hi) return Padded(r.lo, w);
  return Padded(r.lo, w) + "-" + Padded(r.hi, w);
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view expr) {
  std::vector<std::string> out;
  // Split at commas outside brackets and at blanks (Slurm treats blanks as
  // separators too: "a b" is two hosts).
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= expr.size(); ++i) {
    char c = i < expr.size() ? expr[i] : ',';
    if (c == '[') {
      if (depth > 0) return Invalid(expr, "nested '['");
      ++depth;
    } else if (c == ']') {
      if (depth == 0) return Invalid(expr, "unbalanced ']'");
      --depth;
    } else if (IsSpace(c) && depth > 0) {
      return Invalid(expr, "blank inside brackets");
    } else if ((c == ',' && depth == 0) || (IsSpace(c) && depth == 0)) {
      std::string_view token = expr.substr(start, i - start);
      if (!token.empty()) MUSTER_RETURN_IF_ERROR(ExpandToken(expr, token, &out));
      start = i + 1;
    }
  }
  if (depth != 0) return Invalid(expr, "unbalanced '['");
  return out;
}

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  // Sort by prefix, names without a number first, then by digit width and
  // number: this is the order of `scontrol show hostlistsorted` ("n[1-2,01]",
  // "n[9-10,010]"). Unlike scontrol, duplicates are dropped.
  std::vector<HostKey> keys;
  keys.reserve(hosts.size());
  for (const std::string& h : hosts) {
    if (!h.empty()) keys.push_back(MakeKey(h));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  std::string out;
  size_t i = 0;
  while (i < keys.size()) {
    if (!out.empty()) out += ',';
    const HostKey& first = keys[i];
    if (!first.has_number) {
      out += first.prefix;
      ++i;
      continue;
    }
    // All numbered hosts of this prefix form one bracket group.
    std::vector<Range> ranges;
    size_t j = i;
    for (; j < keys.size() && keys[j].has_number && keys[j].prefix == first.prefix; ++j) {
      const HostKey& k = keys[j];
      if (!ranges.empty()) {
        Range& r = ranges.back();
        // Numbers fold into a range when consecutive and written alike: a
        // zero-padded range keeps its width ("08-10"), an unpadded one takes
        // unpadded numbers of any width ("9-10").
        bool alike = r.padded ? k.width == r.width : !k.padded;
        if (k.number == r.hi + 1 && alike) {
          r.hi = k.number;
          continue;
        }
      }
      ranges.push_back(Range{k.number, k.number, k.width, k.padded});
    }
    if (j - i == 1) {
      out += first.prefix + Padded(first.number, first.width);
    } else {
      out += first.prefix + "[";
      for (size_t r = 0; r < ranges.size(); ++r) {
        if (r > 0) out += ',';
        out += FormatRange(ranges[r]);
      }
      out += "]";
    }
    i = j;
  }
  return out;
}

std::string CompressCounts(const std::vector<int>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j - i > 1) out += fmt::format("(x{})", j - i);
    i = j;
  }
  return out;
}

}  // namespace muster::util

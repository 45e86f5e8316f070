#include "core/gres.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>
#include <map>

#include "util/strings.h"

namespace muster::core {
namespace {

using util::InvalidArgument;
using util::Result;
using util::Status;

// Parses a GRES count: digits with an optional K/M/G/T suffix (powers of
// 1024), as Slurm accepts in Gres= and --gres. False when not a count, so
// that "gpu:h100" and MIG types such as "1g.10gb" read as types.
bool ParseCount(std::string_view s, int64_t* out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  int64_t mult = 1;
  switch (s.back()) {
    case 'k': case 'K': mult = int64_t{1} << 10; break;
    case 'm': case 'M': mult = int64_t{1} << 20; break;
    case 'g': case 'G': mult = int64_t{1} << 30; break;
    case 't': case 'T': mult = int64_t{1} << 40; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  Result<int64_t> n = util::ParseInt(s);
  if (!n.ok() || *n > std::numeric_limits<int64_t>::max() / mult) return false;
  *out = *n * mult;
  return true;
}

// Splits at commas outside parentheses ("gpu:2(S:0,1),nic:1").
std::vector<std::string_view> SplitTop(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (i == text.size() || (c == ',' && depth == 0)) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

// GRES names and types: a letter or digit, then letters, digits, '_', '.'
// or '-' (so "-1" is not taken for a type).
bool ValidWord(std::string_view s) {
  if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

// name[:type][:count] with every field non-empty.
struct Fields {
  std::string name;
  std::string type;
  int64_t count = 1;
};

bool ParseFields(std::string_view token, Fields* out) {
  std::vector<std::string> f = util::Split(token, ':', /*skip_empty=*/false);
  if (f.empty() || f.size() > 3) return false;
  for (const std::string& s : f) {
    if (s.empty()) return false;
  }
  if (!ValidWord(f[0])) return false;
  out->name = f[0];
  if (f.size() == 1) return true;
  int64_t count = 0;
  if (f.size() == 3) {
    if (!ValidWord(f[1])) return false;
    out->type = f[1];
    if (!ParseCount(f[2], &count)) return false;
    out->count = count;
    return true;
  }
  // Two fields: "gpu:8" (count) or "gpu:h100" (type, count 1).
  if (ParseCount(f[1], &count)) {
    out->count = count;
  } else if (f[1][0] >= '0' && f[1][0] <= '9' && f[1].find('.') == std::string::npos) {
    return false;  // "gpu:2x": a malformed count, not a type
  } else if (ValidWord(f[1])) {
    out->type = f[1];
  } else {
    return false;
  }
  return true;
}

Status BadGres(std::string_view token) {
  return InvalidArgument(
      fmt::format("Invalid generic resource (gres) specification: {}", token));
}

// Slurm refuses one GRES name given both with and without a type.
Status CheckTyping(const std::vector<std::pair<std::string, bool>>& name_typed) {
  std::map<std::string, bool> seen;
  for (const auto& [name, typed] : name_typed) {
    auto [it, inserted] = seen.emplace(name, typed);
    if (!inserted && it->second != typed) {
      return InvalidArgument(fmt::format(
          "Invalid GRES specification (with and without type identification): {}", name));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<GresSpec>> ParseNodeGres(std::string_view text) {
  std::vector<GresSpec> out;
  std::string_view t = util::Trim(text);
  if (t.empty() || t == "(null)") return out;
  for (std::string_view token : SplitTop(t)) {
    std::string_view spec = util::Trim(token);
    // Drop a socket/core binding suffix such as "(S:0-1)".
    size_t paren = spec.find('(');
    if (paren != std::string_view::npos) {
      if (spec.back() != ')') return BadGres(token);
      spec = spec.substr(0, paren);
    }
    Fields f;
    if (!ParseFields(spec, &f)) return BadGres(token);
    GresSpec g;
    g.name = f.name;
    g.type = f.type;
    g.count = f.count;
    out.push_back(std::move(g));
  }
  return out;
}

std::string FormatGres(const std::vector<GresSpec>& gres) {
  if (gres.empty()) return "(null)";
  std::string out;
  for (const GresSpec& g : gres) {
    if (!out.empty()) out += ',';
    out += g.name;
    if (!g.type.empty()) out += ":" + g.type;
    out += ":" + std::to_string(g.count);
  }
  return out;
}

Result<std::vector<GresRequest>> ParseGresRequest(std::string_view text) {
  std::vector<GresRequest> out;
  std::string_view t = util::Trim(text);
  if (t.empty()) return out;
  std::vector<std::pair<std::string, bool>> typing;
  for (std::string_view token : SplitTop(t)) {
    Fields f;
    if (token.find_first_of("() \t") != std::string_view::npos || !ParseFields(token, &f)) {
      return BadGres(token);
    }
    typing.emplace_back(f.name, !f.type.empty());
    out.push_back(GresRequest{f.name, f.type, f.count, false});
  }
  MUSTER_RETURN_IF_ERROR(CheckTyping(typing));
  return out;
}

Result<GresRequest> ParseGpuCount(std::string_view text, bool per_job) {
  std::string_view t = util::Trim(text);
  // "[type:]count", or a bare type meaning one GPU, as Slurm accepts.
  Fields f;
  std::string spec = "gpu:" + std::string(t);
  if (t.empty() || t.find_first_of("(), \t") != std::string_view::npos ||
      !ParseFields(spec, &f)) {
    return BadGres(text);
  }
  return GresRequest{"gpu", f.type, f.count, per_job};
}

std::string FormatGresRequest(const std::vector<GresRequest>& req) {
  std::string out;
  for (const GresRequest& r : req) {
    if (!out.empty()) out += ',';
    out += r.name;
    if (!r.type.empty()) out += ":" + r.type;
    out += ":" + std::to_string(r.count);
  }
  return out;
}

}  // namespace muster::core

#include "core/array.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::core {
namespace {

constexpr std::string_view kInvalidArraySpec = "Invalid job array specification";
// Slurm formats the task set into a 64-byte buffer and marks the cut.
constexpr size_t kMaxTaskStrLen = 63;
constexpr size_t kTaskStrCut = 60;
// A uniform stride is folded to "first-last:step" from this many ids on.
constexpr size_t kMinStrideFold = 7;

// A number read the way C's strtol reads it, which is what Slurm's
// leniencies come from: leading blanks and a sign are allowed, no digits
// reads as 0 and consumes nothing. Saturates instead of overflowing.
struct Number {
  int64_t value = 0;
  size_t end = 0;  // index just past what was read
};

Number ReadNumber(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  size_t digits_start = i;
  int64_t value = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    // Saturates at INT64_MAX: every bound it is checked against is smaller.
    const int digit = s[i] - '0';
    value = value > (INT64_MAX - digit) / 10 ? INT64_MAX : value * 10 + digit;
    ++i;
  }
  if (i == digits_start) return {0, pos};
  return {negative ? -value : value, i};
}

// One "N", "N-M" or "N-M:S" term; it may end at '%' (the throttle follows).
util::Status ParseTerm(std::string_view term, int max_array_size, ArraySpec& spec,
                       bool& step_seen, std::vector<int>& tasks) {
  util::Status invalid = util::InvalidArgument(std::string(kInvalidArraySpec));
  Number first = ReadNumber(term, 0);
  int64_t last = first.value;
  int64_t step = 1;
  size_t pos = first.end;
  if (pos < term.size() && term[pos] == '-') {
    Number n = ReadNumber(term, pos + 1);
    last = n.value;
    pos = n.end;
    if (pos < term.size() && term[pos] == ':') {
      Number s = ReadNumber(term, pos + 1);
      step = s.value;
      pos = s.end;
      if (step <= 0) return invalid;
      if (!step_seen) spec.step = static_cast<int>(std::min<int64_t>(step, INT_MAX));
      step_seen = true;
    }
  }
  if (pos < term.size() && term[pos] != '%') return invalid;
  if (first.value < 0 || last < first.value || last >= max_array_size) return invalid;
  for (int64_t i = first.value; i <= last; i += step) {
    tasks.push_back(static_cast<int>(i));
    if (last - i < step) break;  // i + step would pass last, or INT64_MAX
  }
  return util::Status::Ok();
}

// Slurm's MaxArraySize is at most 4000001, so no task index is larger; the
// bound keeps a typo or a hostile id ("1_[0-2147483647]") from expanding
// into gigabytes on the controller's loop.
constexpr int64_t kMaxTaskIndex = 4'000'000;

// Comma-separated N, N-M or N-M:S inside "123_[...]".
util::Status ParseTaskList(std::string_view list, std::vector<int>& tasks) {
  util::Status invalid = util::InvalidArgument("bad task list");
  for (const std::string& term : util::Split(list, ',', /*skip_empty=*/false)) {
    std::string_view t = term;
    size_t dash = t.find('-');
    size_t colon = t.find(':');
    util::Result<int64_t> first = util::ParseInt(t.substr(0, std::min(dash, colon)));
    if (!first.ok() || *first < 0) return invalid;
    int64_t last = *first;
    int64_t step = 1;
    if (dash != std::string_view::npos) {
      if (colon != std::string_view::npos && colon < dash) return invalid;
      std::string_view rest = t.substr(dash + 1);
      size_t c = rest.find(':');
      util::Result<int64_t> l = util::ParseInt(rest.substr(0, c));
      if (!l.ok()) return invalid;
      last = *l;
      if (c != std::string_view::npos) {
        util::Result<int64_t> s = util::ParseInt(rest.substr(c + 1));
        if (!s.ok() || *s <= 0) return invalid;
        step = *s;
      }
    } else if (colon != std::string_view::npos) {
      return invalid;
    }
    if (last < *first || last > kMaxTaskIndex) return invalid;
    if (static_cast<int64_t>(tasks.size()) + (last - *first) / step >= kMaxTaskIndex) return invalid;
    for (int64_t i = *first; i <= last; i += step) tasks.push_back(static_cast<int>(i));
  }
  return util::Status::Ok();
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

util::Result<ArraySpec> ParseArraySpec(std::string_view text, int max_array_size) {
  std::string cleaned;
  for (char c : text) {
    if (c != '[' && c != ']') cleaned += c;
  }
  if (cleaned.empty()) return util::InvalidArgument(std::string(kInvalidArraySpec));
  ArraySpec spec;
  // The throttle is whatever number follows the first '%'; the terms are
  // still split on commas over the whole text ("5%2,7" is 5 and 7, %2).
  if (size_t pct = cleaned.find('%'); pct != std::string::npos) {
    int64_t throttle = ReadNumber(cleaned, pct + 1).value;
    spec.max_running = throttle > 0 ? static_cast<int>(std::min<int64_t>(throttle, INT_MAX)) : 0;
  }
  std::vector<int> tasks;
  bool step_seen = false;
  for (const std::string& term : util::Split(cleaned, ',')) {
    MUSTER_RETURN_IF_ERROR(ParseTerm(term, max_array_size, spec, step_seen, tasks));
  }
  if (tasks.empty()) return util::InvalidArgument(std::string(kInvalidArraySpec));
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  spec.tasks = std::move(tasks);
  return spec;
}

std::string FormatArrayTasks(const std::vector<int>& sorted, int max_running) {
  std::string out;
  bool uniform = sorted.size() >= kMinStrideFold && sorted[1] - sorted[0] > 1;
  for (size_t i = 2; uniform && i < sorted.size(); ++i) {
    uniform = sorted[i] - sorted[i - 1] == sorted[1] - sorted[0];
  }
  if (uniform) {
    out = fmt::format("{}-{}:{}", sorted.front(), sorted.back(), sorted[1] - sorted[0]);
  } else {
    out = util::FormatIndexRanges(sorted);
  }
  if (out.size() > kMaxTaskStrLen) {
    out.resize(kTaskStrCut);
    out += "...";
  }
  if (max_running > 0) out += fmt::format("%{}", max_running);
  return out;
}

ArrayStats StatsOf(const ArraySpec& spec) {
  ArrayStats stats;
  if (spec.tasks.empty()) return stats;
  stats.count = static_cast<int>(spec.tasks.size());
  stats.min = spec.tasks.front();
  stats.max = spec.tasks.back();
  stats.step = spec.step;
  return stats;
}

util::Result<JobIdSpec> ParseJobIdSpec(std::string_view text) {
  util::Status invalid = util::InvalidArgument(fmt::format("Invalid job id {}", text));
  if (const size_t plus = text.find('+'); plus != std::string_view::npos) {
    const std::string_view offset = text.substr(plus + 1);
    if (!AllDigits(offset) || offset.empty() || offset.size() > 9) return invalid;
    util::Result<JobIdSpec> spec = ParseJobIdSpec(text.substr(0, plus));
    if (!spec.ok() || !spec->tasks.empty()) return invalid;
    spec->het_offset = std::stoi(std::string(offset));
    return spec;
  }
  size_t underscore = text.find('_');
  std::string_view id_text = text.substr(0, underscore);
  if (!AllDigits(id_text) || id_text.size() > 10) return invalid;
  uint64_t id = std::stoull(std::string(id_text));
  if (id == 0 || id > UINT32_MAX) return invalid;
  JobIdSpec spec;
  spec.id = static_cast<JobId>(id);
  if (underscore == std::string_view::npos) return spec;
  std::string_view task_text = text.substr(underscore + 1);
  // scancel takes "123_" and "123_*" for the whole array.
  if (task_text.empty() || task_text == "*") return spec;
  if (AllDigits(task_text)) {
    if (task_text.size() > 9) return invalid;
    spec.tasks.push_back(std::stoi(std::string(task_text)));
    return spec;
  }
  if (task_text.size() < 3 || task_text.front() != '[' || task_text.back() != ']') return invalid;
  if (!ParseTaskList(task_text.substr(1, task_text.size() - 2), spec.tasks).ok()) return invalid;
  std::sort(spec.tasks.begin(), spec.tasks.end());
  spec.tasks.erase(std::unique(spec.tasks.begin(), spec.tasks.end()), spec.tasks.end());
  return spec;
}

std::vector<std::string> SplitJobIdList(std::string_view text) {
  std::vector<std::string> ids;
  std::string cur;
  int depth = 0;
  for (char ch : text) {
    depth += ch == '[' ? 1 : ch == ']' ? -1 : 0;
    if (ch == ',' && depth == 0) {
      if (!cur.empty()) ids.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) ids.push_back(std::move(cur));
  return ids;
}

bool JobIdSpecMatches(const JobIdSpec& spec, const Job& job) {
  if (spec.het_offset >= 0) return job.het_job_id == spec.id && job.het_job_offset == spec.het_offset;
  if (spec.tasks.empty()) {
    return job.id == spec.id || job.array_job_id == spec.id || job.het_job_id == spec.id;
  }
  if (job.array_job_id != spec.id) return false;
  auto named = [&](int task) {
    return std::binary_search(spec.tasks.begin(), spec.tasks.end(), task);
  };
  if (!job.IsArrayPendingPart()) return named(job.array_task_id);
  return std::any_of(job.array_pending.begin(), job.array_pending.end(), named);
}

std::string DisplayJobId(const Job& job) {
  if (job.het_job_id != 0) return fmt::format("{}+{}", job.het_job_id, job.het_job_offset);
  if (job.array_job_id == 0) return std::to_string(job.id);
  if (!job.IsArrayPendingPart()) return fmt::format("{}_{}", job.array_job_id, job.array_task_id);
  return fmt::format("{}_[{}]", job.array_job_id,
                     FormatArrayTasks(job.array_pending, job.array_max_running));
}

std::string HetJobIdSet(const Job& job) {
  if (!job.IsHetComponent()) return "";
  if (job.het_job_size <= 1) return std::to_string(job.het_job_id);
  return fmt::format("{}-{}", job.het_job_id, job.het_job_id + job.het_job_size - 1);
}

std::string_view DefaultStdOutPattern(const Job& job) {
  return job.array_job_id != 0 ? "slurm-%A_%a.out" : "slurm-%j.out";
}

}  // namespace muster::core

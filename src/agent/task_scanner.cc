#include "agent/task_scanner.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <utility>

#include "stepd/spool.h"
#include "util/strings.h"

namespace muster::agent {
namespace {

int64_t NumberOr0(std::string_view text) {
  util::Result<int64_t> v = util::ParseInt(text);
  return v.ok() ? *v : 0;
}

// The value of "key: value" in /proc/<pid>/io's lines, or 0.
int64_t IoValue(std::string_view io, std::string_view key) {
  for (const std::string& line : util::Split(std::string(io), '\n')) {
    const size_t colon = line.find(':');
    if (colon != std::string::npos && line.compare(0, colon, key) == 0)
      return NumberOr0(util::Trim(line.substr(colon + 1)));
  }
  return 0;
}

}  // namespace

std::optional<TaskIdentity> TaskIdentityFromEnviron(std::string_view environ) {
  TaskIdentity id;
  bool has_job = false, has_step = false;
  size_t start = 0;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string_view::npos) end = environ.size();
    const std::string_view entry = environ.substr(start, end - start);
    start = end + 1;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name == "SLURM_JOB_ID") {
      const util::Result<int64_t> v = util::ParseInt(value);
      if (!v.ok() || *v <= 0 || *v > UINT32_MAX) return std::nullopt;
      id.job_id = static_cast<uint32_t>(*v);
      has_job = true;
    } else if (name == "SLURM_STEP_ID") {
      id.step = std::string(value);
      has_step = true;
    } else if (name == "SLURM_PROCID") {
      id.task = static_cast<int>(NumberOr0(value));
    } else if (name == "SLURMD_NODENAME") {
      id.node = std::string(value);
    }
  }
  if (!has_job || id.node.empty()) return std::nullopt;
  if (!has_step) {
    id.step = core::kBatchStep;
    id.task = 0;
  }
  return id;
}

bool ParseProcFigures(std::string_view stat, std::string_view io, ProcFigures* out) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 > stat.size()) return false;
  // The fields after "pid (comm) ", from field 3 (state) on (proc(5)).
  std::istringstream in{std::string(stat.substr(close + 2))};
  const std::vector<std::string> f{std::istream_iterator<std::string>(in), {}};
  constexpr size_t kFirst = 3;
  auto field = [&](size_t n) { return NumberOr0(f[n - kFirst]); };
  if (f.size() < 24 - kFirst + 1) return false;
  ProcFigures p;
  p.major_faults = field(12);
  p.cpu_ticks = field(14) + field(15) + field(16) + field(17);
  p.vsize_bytes = field(23);
  p.rss_pages = field(24);
  p.read_bytes = IoValue(io, "rchar");
  p.write_bytes = IoValue(io, "wchar");
  *out = p;
  return true;
}

TaskScanner::TaskScanner(std::string proc_root, std::set<std::string> nodes)
    : proc_root_(std::move(proc_root)),
      nodes_(std::move(nodes)),
      tick_hz_(::sysconf(_SC_CLK_TCK)),
      page_kb_(::sysconf(_SC_PAGESIZE) / 1024) {}

std::vector<core::TaskStats> TaskScanner::Scan() {
  std::map<Key, core::TaskStats> tasks;
  DIR* dir = ::opendir(proc_root_.c_str());
  if (dir == nullptr) return {};
  while (struct dirent* e = ::readdir(dir)) {
    const util::Result<int64_t> pid = util::ParseInt(e->d_name);
    if (!pid.ok() || *pid <= 0) continue;
    const std::string base = proc_root_ + "/" + e->d_name;
    // Unreadable (another user's, to an agent that is not root) or gone:
    // not a task of ours.
    const std::optional<TaskIdentity> id = TaskIdentityFromEnviron(stepd::ReadFileOrEmpty(base + "/environ"));
    if (!id || !nodes_.contains(id->node)) continue;
    struct stat owner;
    if (::stat(base.c_str(), &owner) != 0) continue;
    ProcFigures p;
    if (!ParseProcFigures(stepd::ReadFileOrEmpty(base + "/stat"), stepd::ReadFileOrEmpty(base + "/io"), &p)) continue;
    core::TaskStats& t = tasks[Key{id->job_id, id->step, id->node, id->task, owner.st_uid}];
    t.uid = owner.st_uid;
    t.job_id = id->job_id;
    t.step = id->step;
    t.node = id->node;
    t.task = id->task;
    t.pids.push_back(static_cast<int>(*pid));
    t.cpu_ms += tick_hz_ > 0 ? p.cpu_ticks * 1000 / tick_hz_ : 0;
    t.rss_kb += p.rss_pages * page_kb_;
    t.vmem_kb += p.vsize_bytes / 1024;
    t.pages += p.major_faults;
    t.read_bytes += p.read_bytes;
    t.write_bytes += p.write_bytes;
  }
  ::closedir(dir);
  std::map<Key, Peaks> peaks;
  std::vector<core::TaskStats> out;
  out.reserve(tasks.size());
  for (auto& [key, t] : tasks) {
    Peaks& p = peaks[key];
    if (auto it = peaks_.find(key); it != peaks_.end()) p = it->second;
    p.rss_kb = std::max(p.rss_kb, t.rss_kb);
    p.vmem_kb = std::max(p.vmem_kb, t.vmem_kb);
    t.rss_peak_kb = p.rss_kb;
    t.vmem_peak_kb = p.vmem_kb;
    std::sort(t.pids.begin(), t.pids.end());
    out.push_back(std::move(t));
  }
  peaks_ = std::move(peaks);
  return out;
}

}  // namespace muster::agent

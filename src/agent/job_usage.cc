#include "agent/job_usage.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "stepd/proctree.h"
#include "stepd/spool.h"
#include "util/strings.h"

namespace muster::agent {

namespace {

int64_t ReadNumber(const std::string& path) {
  util::Result<int64_t> v = util::ParseInt(util::Trim(stepd::ReadFileOrEmpty(path)));
  return v.ok() ? *v : -1;
}

// The value of `key` in "key value" lines, or -1.
int64_t Keyed(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string k;
  int64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return -1;
}

// A job's cgroup is Muster's (under muster/), not the agent's own.
bool IsJobCgroup(const std::string& rel) { return rel.find("/muster/") != std::string::npos; }

}  // namespace

std::string CgroupOfController(std::string_view proc_cgroup, std::string_view controller) {
  for (const std::string& line : util::Split(std::string(proc_cgroup), '\n')) {
    // id:controllers:path; v2's line is "0::path".
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const bool match = controller.empty()
                           ? controllers.empty()
                           : !controllers.empty() &&
                                 std::ranges::count(util::Split(controllers, ','), controller) > 0;
    if (match) return line.substr(b + 1);
  }
  return "";
}

core::JobUsageSample JobUsageReader::Read(uint32_t job_id, const std::string& node,
                                          pid_t supervisor) {
  core::JobUsageSample u;
  u.job_id = job_id;
  u.node = node;
  std::vector<pid_t> pids = stepd::Descendants(supervisor);
  if (pids.empty()) return u;
  const std::string cgroups = stepd::ReadFileOrEmpty(fmt::format("/proc/{}/cgroup", pids.front()));
  const std::string v2 = CgroupOfController(cgroups, "");
  const std::string memory = CgroupOfController(cgroups, "memory");
  if (IsJobCgroup(v2)) {
    const std::string dir = root_ + v2;
    u.memory_bytes = ReadNumber(dir + "/memory.current");
    int64_t& seen = peaks_[job_id];
    seen = std::max({seen, ReadNumber(dir + "/memory.peak"), u.memory_bytes});
    u.memory_peak_bytes = seen;
    u.cpu_ms = std::max<int64_t>(Keyed(stepd::ReadFileOrEmpty(dir + "/cpu.stat"), "usage_usec"), 0) / 1000;
    return u;
  }
  const bool memory_cgroup = IsJobCgroup(memory);
  if (memory_cgroup) {
    const std::string dir = root_ + "/memory" + memory;
    u.memory_bytes = ReadNumber(dir + "/memory.usage_in_bytes");
    u.memory_peak_bytes = ReadNumber(dir + "/memory.max_usage_in_bytes");
    const std::string cpu = CgroupOfController(cgroups, "cpuacct");
    for (const char* hierarchy : {"/cpuacct", "/cpu,cpuacct"}) {
      const int64_t ns =
          IsJobCgroup(cpu) ? ReadNumber(root_ + hierarchy + cpu + "/cpuacct.usage") : -1;
      if (ns < 0) continue;
      u.cpu_ms = ns / 1000000;
      return u;
    }
  }
  // No cgroup of its own: the sum over its processes.
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  int64_t cpu_ticks = 0, rss_pages = 0;
  auto number = [](const std::string& field) {
    util::Result<int64_t> v = util::ParseInt(field);
    return v.ok() ? *v : 0;
  };
  for (pid_t pid : pids) {
    const std::string stat = stepd::ReadFileOrEmpty(fmt::format("/proc/{}/stat", pid));
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    // After "pid (comm)": state is field 3; utime 14, stime 15, rss 24.
    std::istringstream in(stat.substr(close + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(in), {}};
    if (f.size() < 22) continue;
    cpu_ticks += number(f[11]) + number(f[12]);
    rss_pages += number(f[21]);
  }
  u.cpu_ms = ticks > 0 ? cpu_ticks * 1000 / ticks : 0;
  if (memory_cgroup) return u;  // a memory cgroup without cpuacct
  u.memory_bytes = rss_pages * page;
  int64_t& seen = peaks_[job_id];
  seen = std::max(seen, u.memory_bytes);
  u.memory_peak_bytes = seen;
  return u;
}

}  // namespace muster::agent

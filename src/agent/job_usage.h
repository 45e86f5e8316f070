// A running job's CPU time and memory on this host, for the agent's
// samples: from the job's cgroup where it has one (v2: cpu.stat,
// memory.current, memory.peak; v1: cpuacct.usage, memory.usage_in_bytes,
// memory.max_usage_in_bytes), else summed over its processes in /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/node_samples.h"

namespace muster::agent {

// The cgroup of `controller` ("memory", "cpuacct"; "" for the v2 unified
// hierarchy) in the text of /proc/<pid>/cgroup ("4:memory:/muster/job_7"),
// or "" when the text names none.
std::string CgroupOfController(std::string_view proc_cgroup, std::string_view controller);

class JobUsageReader {
 public:
  // `cgroup_root`: normally /sys/fs/cgroup.
  explicit JobUsageReader(std::string cgroup_root) : root_(std::move(cgroup_root)) {}
  // Job `job_id`'s usage now, its batch step supervised by `supervisor`.
  core::JobUsageSample Read(uint32_t job_id, const std::string& node, pid_t supervisor);
  // Forgets an ended job's peak.
  void Forget(uint32_t job_id) { peaks_.erase(job_id); }

 private:
  std::string root_;
  std::map<uint32_t, int64_t> peaks_;  // jobs without a cgroup: the highest sum seen
};

}  // namespace muster::agent

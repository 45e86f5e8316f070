// A job's cgroup: memory hard limit, optional cpuset, process tracking and
// the peak memory / CPU time / OOM kills read back at the end. Two
// implementations behind one interface, chosen by DetectCgroupVersion():
//   v2  unified hierarchy (<root>/cgroup.controllers exists): one directory
//       <root>/muster/job_<id> (job_<id>_<pid of muster-step> where another
//       step of the same job id on this host has that one); memory.max,
//       memory.peak (or memory.current sampled), memory.events, cpu.stat,
//       cpuset.cpus, cgroup.kill; refused devices through an attached
//       device filter program.
//   v1  one hierarchy per controller (<root>/memory, <root>/cpuacct,
//       <root>/cpuset, <root>/devices): <root>/<controller>/muster/job_<id>
//       in each one used; memory.limit_in_bytes (+ memsw),
//       memory.max_usage_in_bytes, memory.oom_control / memory.failcnt,
//       cpuacct.usage, cpuset.*, devices.deny.
// `root` is a parameter (normally /sys/fs/cgroup) so the tests can run both
// implementations against a fake tree in a temp dir. A JobCgroup is owned by
// the Supervisor of one job; not thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "stepd/device_filter.h"
#include "util/status.h"

namespace muster::stepd {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

struct CgroupLimits {
  uint64_t mem_limit_bytes = 0;  // 0 = no limit
  std::string cpuset;            // e.g. "0-3"; "" = not confined
  // Devices the job may not open (ConstrainDevices, stepd/device_filter.h):
  // v1 devices.deny rules, v2 a device filter program; empty: none refused.
  std::vector<DeviceRule> denied_devices;
};

struct CgroupUsage {
  uint64_t peak_bytes = 0;  // highest memory use seen by the cgroup
  uint64_t cpu_ns = 0;      // user + system CPU of all its processes
  bool oom_killed = false;  // the kernel's OOM killer acted in it
};

// Open descriptors through which a process joins a job's cgroup as it
// starts, instead of being moved there by pid from outside: such a move
// takes the kernel's global lock on every process's cgroups, whose RCU
// grace period kept the batch shell waiting 8-15 ms before its first line.
//   clone_into_fd  v2: the job's directory, for clone3(CLONE_INTO_CGROUP):
//                  the process is created inside the cgroup.
//   self_fds       v1: each hierarchy's `tasks` file, into which the new
//                  process (single-threaded, before exec) writes "0": the
//                  writer's own thread, which the kernel moves without
//                  that lock.
// Owns the descriptors (close-on-exec). Move-only.
struct CgroupJoin {
  int clone_into_fd = -1;
  std::vector<int> self_fds;

  CgroupJoin() = default;
  CgroupJoin(CgroupJoin&& o) noexcept;
  CgroupJoin& operator=(CgroupJoin&& o) noexcept;
  ~CgroupJoin() { Close(); }
  void Close();
};

class JobCgroup {
 public:
  virtual ~JobCgroup() = default;

  virtual std::string_view Version() const = 0;  // "v1" or "v2"
  // Opens what a new process needs to start in the cgroup (every
  // hierarchy in v1); see CgroupJoin.
  [[nodiscard]] virtual util::Status OpenJoin(CgroupJoin* out) const = 0;
  // The pids the cgroup holds now (empty once all are gone).
  virtual std::vector<pid_t> Processes() const = 0;
  // True when the peak must be sampled (v2 kernels before memory.peak):
  // the caller then calls Sample() now and then while the job runs.
  virtual bool NeedsSampling() const { return false; }
  virtual void Sample() {}
  virtual CgroupUsage Usage() const = 0;
  // SIGKILLs every member at once where the kernel can (v2 cgroup.kill);
  // returns false where it cannot, and the caller signals the members.
  virtual bool KillAll() { return false; }
  // Removes the job's directories, trying each up to `tries` times 10 ms
  // apart while the kernel answers EBUSY: processes are still in it, or
  // still leaving it.
  [[nodiscard]] virtual util::Status Remove(int tries) = 0;
};

// Remove's tries when processes may still be leaving: half a second.
constexpr int kCgroupRemoveTries = 50;

enum class CgroupVersion { kNone, kV1, kV2 };

// Which hierarchy is mounted at `root`.
CgroupVersion DetectCgroupVersion(const std::string& root);

// Detects the hierarchy under `root`, creates the job's cgroup and applies
// `limits`. Fails (and leaves nothing behind) when cgroups are unusable: not
// root, read-only, no memory controller, a limit that cannot be written.
// `name` replaces job_<id> as the directory's name (an srun step's tasks on
// a host without the job's batch step: job_<id>_step_<s>_<node>), so that
// only the batch step's cgroup is ever the job's own (see
// OpenExistingJobCgroup).
util::Result<std::unique_ptr<JobCgroup>> CreateJobCgroup(const std::string& root, uint32_t job_id,
                                                         const CgroupLimits& limits,
                                                         const std::string& name = {});

// What a process needs to join job `job_id`'s cgroup that already exists on
// this host (the batch step's, when it runs here): NotFound when there is
// none.
util::Result<CgroupJoin> OpenExistingJobCgroup(const std::string& root, uint32_t job_id);

// Moves the calling process into the cgroup of `join` (writes "0" to each
// v1 tasks file, or to the v2 directory's cgroup.procs): for a child between
// fork and exec, system calls only. Returns 0 or the errno.
int JoinSelf(const CgroupJoin& join);

// Sends each of `signals` to every process in `cg`, rescanning for ones
// forked meanwhile (bounded). Each pid is pinned with a pidfd and checked to
// be still in the cgroup before it is signalled, so a recycled pid is never
// hit. Returns the number of processes signalled. `done`, when given, holds
// pids already signalled by the caller (skipped, so no process gets a
// signal twice) and receives the ones handled here.
// `select`, when given, picks the processes to signal (the others count as
// handled).
int SignalCgroup(const JobCgroup& cg, std::span<const int> signals,
                 std::unordered_set<pid_t>* done = nullptr,
                 const std::function<bool(pid_t)>& select = {});

// Parsing helpers, exposed for tests. "key value" lines (memory.events,
// cpu.stat, memory.oom_control): the value of `key`, or -1 if absent.
int64_t KeyedValue(std::string_view text, std::string_view key);

}  // namespace muster::stepd

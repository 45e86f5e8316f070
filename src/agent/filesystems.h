// The filesystems an operator watches (MusterWatchedFilesystems, e.g.
// shared storage and scratch): each mount point's mount (from
// /proc/self/mountinfo) and its size and free space (statvfs), sampled
// with the GPUs every JobAcctGatherFrequency and exported per node as
// muster_node_filesystem_* (docs/metrics.md).
//
// statvfs runs on a thread of its own: on a network filesystem whose
// server is gone it blocks until the server answers, and the agent's one
// event-loop thread (registration, launches, job ends) must never wait on
// it. A path whose call has not returned within the wait is reported
// unknown, and is not asked again until that call has returned, so a hung
// mount costs the loop one wait and holds one thread (node_exporter does
// the same with its "stuck mounts").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_samples.h"

namespace muster::agent {

// One line of /proc/self/mountinfo: where, what and which kind.
struct MountEntry {
  std::string mountpoint;  // unescaped (mountinfo writes a space as \040)
  std::string device;      // the mount's source: "/dev/nvme0n1p2", "fs01:/home", "tmpfs"
  std::string fstype;      // "ext4", "nfs4", "lustre", ...
};

// The mounts listed in mountinfo `text`, in its order (a later mount on
// the same point hides the earlier); malformed lines are skipped.
std::vector<MountEntry> ParseMountInfo(std::string_view text);

// What statvfs said of one path.
struct FilesystemUsage {
  bool ok = false;  // false: statvfs failed
  int64_t size_bytes = 0;
  int64_t free_bytes = 0;
  int64_t avail_bytes = 0;
  int64_t files = 0;
  int64_t files_free = 0;
};

// statvfs(2) of `path`.
FilesystemUsage Statvfs(const std::string& path);

// Owned by the agent; Sample is called from one thread (the agent's loop).
class FilesystemWatch {
 public:
  // Measures one path; called on a thread of its own, so it must own or
  // share whatever it uses beyond its argument.
  using StatFn = std::function<FilesystemUsage(const std::string& path)>;

  // `paths`: absolute mount points, as the configuration lists them.
  // `mountinfo`: the file of the mounts; `wait`: how long a sample waits
  // for `stat` before it reports a path unknown. Tests give their own.
  explicit FilesystemWatch(std::vector<std::string> paths,
                           std::string mountinfo = "/proc/self/mountinfo",
                           std::chrono::milliseconds wait = std::chrono::seconds(1),
                           StatFn stat = Statvfs);

  // Each watched path's usage now, as one sample per node of `nodes` (an
  // agent's nodes share its host's mounts). A path that is not a mount
  // point, whose statvfs failed, or whose statvfs has not answered, is
  // reported with ok = false and its mount's device and type where known.
  std::vector<core::FilesystemSample> Sample(const std::vector<std::string>& nodes);

 private:
  std::vector<std::string> paths_;
  std::string mountinfo_;
  std::chrono::milliseconds wait_;
  StatFn stat_;
  // statvfs calls that had not answered by the end of their sample's wait,
  // by path: their threads own what they use, so a stuck one is left to
  // finish (or never) without holding the agent up, even at its exit.
  std::map<std::string, std::shared_future<FilesystemUsage>> in_flight_;
};

}  // namespace muster::agent

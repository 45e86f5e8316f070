// The device files of the GPUs (and MIG instances) of the nodes an agent
// hosts, for device confinement (cgroup.conf ConstrainDevices=yes,
// stepd/device_filter.h): a job is refused every such device it was not
// given.
//
// Where they come from, per GPU of a node (its GRES index, as
// CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS number it):
//   gres.conf File= (or MultipleFiles=), when it names character devices;
//   NVML (gres.conf AutoDetect=nvml) on the node that is this machine:
//     /dev/nvidia<minor>, and for each MIG instance its GPU's file and its
//     two capability files, /dev/nvidia-caps/nvidia-cap<N> (the minors of
//     /proc/driver/nvidia-caps/mig-minors);
//   emulation, on every other node: character devices the agent makes
//     under <spool>/dev/<node>/, of a major number no driver holds (opened
//     where allowed they fail with ENXIO, refused with EPERM), laid out as
//     a real node's: nvidia<i>, nvidiactl, nvidia-uvm, and for emulated MIG
//     (a Gres= type named as a MIG profile, "1g.10gb") nvidia-caps/.
// The shared control files (nvidiactl, nvidia-uvm, nvidia-uvm-tools,
// nvidia-modeset) are never refused: every CUDA program opens them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/gpus.h"
#include "core/node.h"
#include "stepd/device_filter.h"
#include "util/status.h"

namespace muster::agent {

// One GRES device of a node: a GPU, or a MIG instance of one.
struct GresDevice {
  int index = 0;                           // its GRES index on the node
  std::vector<std::string> paths;          // the files a job given it may open
  std::vector<stepd::DeviceRule> numbers;  // theirs, in the same order
  std::string uuid;                        // a MIG instance's "MIG-..." UUID; "" for a whole GPU
};

// The GRES devices of each node an agent hosts. Built at the agent's
// start; read by each launch. Not thread-safe (the agent has one thread).
class GpuDevices {
 public:
  void Set(const std::string& node, std::vector<GresDevice> devices);
  // Node's devices, in index order (empty when it has none known).
  const std::vector<GresDevice>& Of(const std::string& node) const;
  // The devices a job may not open that holds `held` (node -> its GRES
  // indices there, for the job's nodes on this host): every number of
  // every hosted node's devices that none of the held devices uses (a MIG
  // instance's GPU file is shared by its siblings), sorted, each once.
  std::vector<stepd::DeviceRule> DeniedFor(
      const std::map<std::string, std::vector<int>>& held) const;
  // The MIG UUID of each device of `node` by index ("" for whole GPUs);
  // empty when the node has no MIG instance.
  std::vector<std::string> MigUuids(const std::string& node) const;

 private:
  std::map<std::string, std::vector<GresDevice>> nodes_;
};

// Where an emulated node's device files are: <spool>/dev/<node>.
std::string GpuDeviceDir(const std::string& spool, const std::string& node);

// Whether a GPU type is a MIG profile ("1g.10gb", "3g.40gb", "1g.10gb+me"):
// the number of compute slices (of 7) it takes, or nullopt.
std::optional<int> MigSlices(std::string_view type);

// A character major number that no driver of this machine holds, from the
// text of /proc/devices: the first of Linux's numbers for local and
// experimental use (120-127, 60-63, 240-254) that it does not list.
util::Result<uint32_t> FreeCharMajor(std::string_view proc_devices);

// Makes (or keeps, when already right) the device files of emulated node
// `node` under `dir` (<spool>/dev/<node>): one per GPU of `types` (the
// node's GPU types by index, ConfiguredGpuTypes), with the shared control
// files, minors from `slot` * 256 (the node's place in the configuration,
// so no two emulated nodes of a machine share a number). MIG types take
// slices of emulated GPUs (7 each), each instance its GPU's file and two
// capability files; `cluster` seeds the MIG UUIDs. Making the files needs
// root (mknod): with `make_files` false only the layout is worked out.
util::Result<std::vector<GresDevice>> MakeEmulatedDevices(
    const std::string& dir, const std::string& cluster, const std::string& node, uint32_t major,
    uint32_t slot, const std::vector<std::string>& types, bool make_files = true);

// The devices gres.conf gives the node's GPUs (File= / MultipleFiles=),
// each file that is a device; a file that is missing or is not a device
// is left out and named in *problems.
std::vector<GresDevice> DevicesFromFiles(const core::NodeConfig& node,
                                         std::vector<std::string>* problems);

// The devices of the node that is this machine, from NVML (gpus, from
// Nvml::Inventory): /dev/nvidia<minor> per GPU, and for each MIG instance
// its GPU's file and its GPU and compute instances' capability files
// /dev/nvidia-caps/nvidia-cap<N>, N from `mig_minors` (the text of
// /proc/driver/nvidia-caps/mig-minors). Numbers come from the files where
// they exist, else from `proc_devices` (the nvidia and nvidia-caps
// majors). An instance whose capabilities are not listed is named in
// *problems and given its GPU's file alone.
std::vector<GresDevice> NvmlDevices(const std::vector<DetectedGpu>& gpus,
                                    std::string_view mig_minors, std::string_view proc_devices,
                                    std::vector<std::string>* problems);

// /proc/driver/nvidia-caps/mig-minors: "gpu0/gi1/access 12" and
// "gpu0/gi1/ci0/access 13" lines, as key ("gpu0/gi1", "gpu0/gi1/ci0") ->
// minor of /dev/nvidia-caps/nvidia-cap<minor>.
std::map<std::string, uint32_t> ParseMigMinors(std::string_view text);

// The number /proc/devices gives the character driver `name`
// ("nvidia-caps"), or nullopt.
std::optional<uint32_t> CharMajorOf(std::string_view proc_devices, std::string_view name);

}  // namespace muster::agent

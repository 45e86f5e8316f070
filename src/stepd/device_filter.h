// Device confinement (cgroup.conf ConstrainDevices=yes): the device files a
// job may not open, and the cgroup v2 program that refuses them.
//
// A job is refused the devices of the GRES it was not given (the GPUs, and
// MIG instances, of its node that other jobs hold or may hold) and keeps
// every other device: /dev/null, its terminal and the shared control
// devices a CUDA program needs (nvidiactl, nvidia-uvm) are never listed, as
// Slurm confines only GRES device files. On cgroup v1 the rules go into the
// job's devices controller (devices.deny); on v2, which has no such
// controller, a BPF_PROG_TYPE_CGROUP_DEVICE program (device_filter.bpf.c,
// loaded with libbpf) is attached to the job's cgroup, with the rules in a
// map of its own. The kernel keeps the program while the cgroup lives, and
// a process of the cgroup that opens a refused device gets EPERM.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace muster::stepd {

// One device, by its numbers, as the cgroup device rules name it.
struct DeviceRule {
  char type = 'c';  // 'c' character device, 'b' block device
  uint32_t major = 0;
  uint32_t minor = 0;

  // "c 195:3", the form of devices.deny without its access.
  std::string ToString() const;
  auto operator<=>(const DeviceRule&) const = default;
};

// Parses ToString()'s form; errors name the text.
util::Result<DeviceRule> ParseDeviceRule(std::string_view text);

// The device `path` is (stat), or NotFound / InvalidArgument when it does
// not exist or is not a character or block device.
util::Result<DeviceRule> DeviceOfFile(const std::string& path);

// Attaches the device filter to the cgroup v2 directory open as `cgroup_fd`
// so that its processes (and those of cgroups below it) cannot open or
// create the devices of `denied`. Requires root (CAP_BPF or
// CAP_SYS_ADMIN); fails with what the kernel or libbpf said. The program
// stays attached after the descriptors this call opens are closed, until
// the cgroup is removed.
[[nodiscard]] util::Status AttachDeviceFilter(int cgroup_fd, std::span<const DeviceRule> denied);

}  // namespace muster::stepd

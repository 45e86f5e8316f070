// The GPUs of the nodes an agent hosts, sampled for /metrics, accounting,
// health checks and the idle-GPU policy.
//
// Real GPUs are read through NVML, loaded with dlopen (libnvidia-ml.so.1)
// so that neither the build nor a machine without a GPU needs the
// library. Emulated GPUs (every node's configured GPUs where NVML is
// absent, or a node that is not this machine) report plausible figures
// marked emulated, which a job or a test steers through one small file per
// figure in the GPU's control directory (docs/metrics.md):
//   <SlurmdSpoolDir>/gpus/<node>/<index>/utilization    0-100 (percent)
//   .../temperature  (Celsius)  .../ecc_uncorrected  .../xid  (last code)
//   .../remapping_failed (1)    .../memory_used_mib
//   .../throttle_reasons (NVML's bits: 0x40)   .../nvlink_errors (a count)
// The job's environment names its node's directory (MUSTER_GPU_CONTROL_DIR),
// and the directories of the GPUs a job holds are its user's while it runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/node_samples.h"
#include "util/status.h"

namespace muster::agent {

// One MIG instance of a GPU, as NVML reports it.
struct DetectedMig {
  std::string uuid;     // "MIG-..."
  std::string profile;  // "1g.10gb": its GRES type
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
};

// One GPU as NVML reports it (the inventory gres.conf AutoDetect=nvml maps).
struct DetectedGpu {
  int index = 0;
  std::string uuid;
  std::string name;  // "NVIDIA H200"
  int64_t memory_bytes = 0;
  std::string pci_bus_id;
  int numa_node = -1;  // -1: unknown
  int minor = -1;  // of /dev/nvidia<minor>; -1: unknown
  bool mig_enabled = false;
  std::vector<DetectedMig> mig_devices;  // in NVML's order
};

// One GRES device as NVML shows it: a GPU without MIG, or one MIG instance
// of a GPU with MIG on (`mig` set), in index order (a GPU's instances
// where the GPU would be).
struct NvmlGresDevice {
  const DetectedGpu* gpu = nullptr;
  const DetectedMig* mig = nullptr;
};
std::vector<NvmlGresDevice> NvmlGresDevices(const std::vector<DetectedGpu>& gpus);

// The profile of a MIG device from the name NVML gives it
// ("NVIDIA H100 80GB HBM3 MIG 1g.10gb" -> "1g.10gb"); "" when it has none.
std::string MigProfileOf(std::string_view name);

class Nvml {
 public:
  virtual ~Nvml() = default;
  virtual std::string DriverVersion() const = 0;
  virtual std::vector<DetectedGpu> Inventory() const = 0;
  // The figures of every GPU now, labelled with `node`.
  virtual std::vector<core::GpuSample> Sample(const std::string& node) = 0;
};

// NVML from `library`; NotFound when it cannot be loaded (no driver: the
// normal case on a machine without GPUs), Unavailable when it loads but
// does not initialise.
util::Result<std::unique_ptr<Nvml>> LoadNvml(const std::string& library = "libnvidia-ml.so.1");

// The control directory of `node`'s emulated GPUs.
std::string GpuControlDir(const std::string& spool, const std::string& node);

// The emulated figures of GPU `index` of `node` (configured GPU model
// `type`, e.g. "h100"), with what its control directory sets.
core::GpuSample EmulatedGpuSample(const std::string& cluster, const std::string& node,
                                  const std::string& type, int index,
                                  const std::string& control_dir);

// What an emulated node's control directory says of the node as a whole
// (for health-check demos and tests): files `count` (GPUs found),
// `nvml_error` (NVML failing, with this text) and `driver_version`.
struct EmulatedNodeControl {
  int count = 0;
  std::string nvml_error;
  std::string driver_version;
};
EmulatedNodeControl ReadEmulatedNodeControl(const std::string& control_dir, int configured);

// The GPUs of `node` as configured (Gres=gpu:TYPE:N, in index order): one
// type per index.
std::vector<std::string> ConfiguredGpuTypes(const core::NodeConfig& node);

}  // namespace muster::agent

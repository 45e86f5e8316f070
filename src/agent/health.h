// The built-in health checks an agent runs on each of its nodes when
// musterd asks (config::HealthConfig; musterd itself compares driver
// versions across nodes). Each failure names its check and what it saw.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/node_samples.h"

namespace muster::agent {

struct HealthFailure {
  std::string check;
  std::string detail;
};

// What the checks look at for one node.
struct HealthInputs {
  const core::NodeConfig* node = nullptr;
  std::vector<core::GpuSample> gpus;  // as sampled now
  // The GPUs found (NVML's count, or an emulated node's: the configured
  // count unless its control directory's `count` says otherwise).
  int detected_gpus = 0;
  std::string nvml_error;  // empty: NVML (or its emulation) answered
  std::string spool;       // the agent's spool directory
};

std::vector<HealthFailure> RunBuiltinChecks(const config::HealthConfig& cfg,
                                            const HealthInputs& in);

// Whether `path` is a mount point (its device differs from its parent's,
// or it is the root); false when it does not exist.
bool IsMountPoint(const std::string& path);

}  // namespace muster::agent

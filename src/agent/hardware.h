// The hardware of the machine an agent runs on, as hwloc (CPUs, sockets,
// cores, threads, NUMA nodes, memory) and NVML (GPUs) find it, compared at
// registration with what the configuration says of the node that is this
// machine. A mismatch is reported with both values and the node is used as
// configured: never the silent drain Slurm gives a node with fewer CPUs or
// less memory than configured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/gpus.h"
#include "core/node.h"
#include "util/status.h"

namespace muster::agent {

struct DetectedHardware {
  int cpus = 0;  // processing units (hardware threads) this process may use
  int sockets = 0;
  int cores = 0;  // physical cores in all
  int threads_per_core = 1;
  int numa_nodes = 0;
  int64_t memory_mb = 0;       // the OS's total memory
  bool gpus_detected = false;  // NVML answered (else GPUs are emulated)
  std::string driver_version;
  std::vector<DetectedGpu> gpus;
};

// hwloc's view of this machine, and NVML's GPUs when `nvml` is not null.
util::Result<DetectedHardware> DetectHardware(const Nvml* nvml);

// What differs between `node`'s configuration and `hw`, each naming the
// key, both values and what it means ("RealMemory: configured 64000 MB,
// the OS has 15890 MB: ..."). GPUs are compared only where NVML answered.
std::vector<std::string> CompareHardware(const core::NodeConfig& node, const DetectedHardware& hw);

nlohmann::json ToJson(const DetectedHardware& hw);
// One line: "CPUs=8 Sockets=1 CoresPerSocket=4 ThreadsPerCore=2 NUMA=1
// Memory=15890M GPUs=1(NVIDIA H200,141G,0000:19:00.0,NUMA0) Driver=550.54.15".
std::string HardwareSummary(const DetectedHardware& hw);

}  // namespace muster::agent

#include "agent/hardware.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <hwloc.h>

#include "util/strings.h"

namespace muster::agent {

util::Result<DetectedHardware> DetectHardware(const Nvml* nvml) {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return util::Internal("hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> owner(topo, hwloc_topology_destroy);
  if (hwloc_topology_load(topo) != 0) return util::Internal("hwloc_topology_load failed");
  DetectedHardware hw;
  hw.cpus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hw.sockets = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
  hw.cores = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
  hw.threads_per_core = std::max(1, hw.cpus / hw.cores);
  hw.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  hw.memory_mb = static_cast<int64_t>(root->total_memory >> 20);
  if (nvml != nullptr) {
    hw.gpus_detected = true;
    hw.driver_version = nvml->DriverVersion();
    hw.gpus = nvml->Inventory();
  }
  return hw;
}

std::vector<std::string> CompareHardware(const core::NodeConfig& node, const DetectedHardware& hw) {
  std::vector<std::string> out;
  auto differ = [&](const char* key, int64_t configured, int64_t detected) {
    if (configured != detected) {
      out.push_back(fmt::format("{}: configured {}, detected {}", key, configured, detected));
    }
  };
  differ("CPUs", node.cpus, hw.cpus);
  differ("Sockets", node.sockets, hw.sockets);
  differ("CoresPerSocket", node.cores_per_socket, hw.cores / std::max(1, hw.sockets));
  differ("ThreadsPerCore", node.threads_per_core, hw.threads_per_core);
  if (node.real_memory_mb > hw.memory_mb) {
    out.push_back(fmt::format(
        "RealMemory: configured {} MB, the OS has {} MB: jobs may be given memory the node does "
        "not have (set RealMemory to at most {}, less what the OS and daemons need)",
        node.real_memory_mb, hw.memory_mb, hw.memory_mb));
  }
  if (!hw.gpus_detected) return out;
  // A MIG instance is a GRES device of its own, its profile its type.
  const std::vector<std::string> types = ConfiguredGpuTypes(node);
  const std::vector<NvmlGresDevice> found = NvmlGresDevices(hw.gpus);
  if (types.size() != found.size()) {
    out.push_back(fmt::format("Gres gpu: configured {}, NVML finds {}", types.size(), found.size()));
  }
  for (size_t i = 0; i < std::min(types.size(), found.size()); ++i) {
    const std::string want = util::ToLower(types[i]);
    if (found[i].mig != nullptr) {
      if (want != util::ToLower(found[i].mig->profile)) {
        out.push_back(fmt::format("Gres gpu {}: configured type {}, NVML finds MIG {} on {}", i,
                                  types[i], found[i].mig->profile, found[i].gpu->name));
      }
    } else if (!want.empty() && util::ToLower(found[i].gpu->name).find(want) == std::string::npos) {
      out.push_back(fmt::format("Gres gpu {}: configured type {}, NVML finds {}", i, types[i],
                                found[i].gpu->name));
    }
  }
  return out;
}

std::string HardwareSummary(const DetectedHardware& hw) {
  std::string out =
      fmt::format("CPUs={} Sockets={} CoresPerSocket={} ThreadsPerCore={} NUMA={} Memory={}M",
                  hw.cpus, hw.sockets, hw.cores / std::max(1, hw.sockets), hw.threads_per_core,
                  hw.numa_nodes, hw.memory_mb);
  if (!hw.gpus_detected) return out + " GPUs=emulated";
  std::vector<std::string> gpus;
  for (const DetectedGpu& g : hw.gpus) {
    gpus.push_back(fmt::format("{},{}G,{},NUMA{}{}", g.name, g.memory_bytes >> 30, g.pci_bus_id,
                               g.numa_node, g.mig_enabled ? ",MIG" : ""));
  }
  return out + fmt::format(" GPUs={}({}) Driver={}", hw.gpus.size(), util::Join(gpus, ";"),
                           hw.driver_version);
}

namespace {

std::vector<std::string> MigUuids(const DetectedGpu& g) {
  std::vector<std::string> out;
  for (const DetectedMig& m : g.mig_devices) out.push_back(m.uuid);
  return out;
}

}  // namespace

nlohmann::json ToJson(const DetectedHardware& hw) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const DetectedGpu& g : hw.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"memory_mb", g.memory_bytes >> 20},
                    {"pci_bus_id", g.pci_bus_id},
                    {"numa_node", g.numa_node},
                    {"mig", g.mig_enabled},
                    {"mig_devices", MigUuids(g)}});
  }
  return {{"cpus", hw.cpus},
          {"sockets", hw.sockets},
          {"cores", hw.cores},
          {"threads_per_core", hw.threads_per_core},
          {"numa_nodes", hw.numa_nodes},
          {"memory_mb", hw.memory_mb},
          {"gpus_detected", hw.gpus_detected},
          {"driver_version", hw.driver_version},
          {"gpus", gpus}};
}

}  // namespace muster::agent

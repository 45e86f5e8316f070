#include "agent/health.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "agent/gpus.h"
#include "util/strings.h"

namespace muster::agent {

namespace {

bool Enabled(const config::HealthConfig& cfg, std::string_view check) {
  return std::find(cfg.checks.begin(), cfg.checks.end(), check) != cfg.checks.end();
}

// Xid codes that mean the hardware needs service (double-bit ECC, fallen
// off the bus, NVLink and row-remapping failures, GSP errors), as against
// the many an application's own fault produces.
constexpr std::array<int64_t, 13> kHardwareXids = {48, 61, 62, 63,  64,  74, 79,
                                                   92, 94, 95, 119, 120, 140};

}  // namespace

bool IsMountPoint(const std::string& path) {
  struct stat self = {}, parent = {};
  if (::stat(path.c_str(), &self) != 0) return false;
  if (path == "/") return true;
  if (::stat((path + "/..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev || self.st_ino == parent.st_ino;
}

std::vector<HealthFailure> RunBuiltinChecks(const config::HealthConfig& cfg,
                                            const HealthInputs& in) {
  std::vector<HealthFailure> out;
  const std::vector<std::string> types =
      in.node != nullptr ? ConfiguredGpuTypes(*in.node) : std::vector<std::string>{};
  if (Enabled(cfg, "nvml") && !types.empty() && !in.nvml_error.empty()) {
    out.push_back({"nvml", in.nvml_error});
  }
  if (Enabled(cfg, "gpu_count") && in.detected_gpus != static_cast<int>(types.size())) {
    out.push_back(
        {"gpu_count", fmt::format("{} GPUs found, {} configured", in.detected_gpus, types.size())});
  }
  if (Enabled(cfg, "gpu_model")) {
    for (const core::GpuSample& g : in.gpus) {
      if (g.index >= static_cast<int>(types.size()) || types[g.index].empty()) continue;
      if (util::ToLower(g.model).find(util::ToLower(types[g.index])) == std::string::npos) {
        out.push_back({"gpu_model", fmt::format("GPU {} is {}, configured {}", g.index, g.model,
                                                types[g.index])});
        break;
      }
    }
  }
  if (Enabled(cfg, "mounts")) {
    for (const std::string& m : cfg.mounts) {
      if (!IsMountPoint(m)) {
        out.push_back({"mounts", fmt::format("{} is not mounted", m)});
        break;
      }
    }
  }
  if (Enabled(cfg, "spool_space")) {
    struct statvfs fs = {};
    if (::statvfs(in.spool.c_str(), &fs) == 0) {
      const int64_t free_mb =
          static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize) >> 20;
      if (free_mb < cfg.spool_min_free_mb) {
        out.push_back({"spool_space", fmt::format("{} has {} MiB free, below {} MiB", in.spool,
                                                  free_mb, cfg.spool_min_free_mb)});
      }
    }
  }
  for (const core::GpuSample& g : in.gpus) {
    if (Enabled(cfg, "ecc") && g.ecc_volatile_uncorrected > 0) {
      out.push_back({"ecc", fmt::format("GPU {} ({}): {} uncorrectable ECC errors", g.index, g.uuid,
                                        g.ecc_volatile_uncorrected)});
      break;
    }
  }
  for (const core::GpuSample& g : in.gpus) {
    if (Enabled(cfg, "remapped_rows") && g.remapping_failed) {
      out.push_back(
          {"remapped_rows", fmt::format("GPU {} ({}): row remapping failed", g.index, g.uuid)});
      break;
    }
  }
  for (const core::GpuSample& g : in.gpus) {
    if (Enabled(cfg, "xid") &&
        std::find(kHardwareXids.begin(), kHardwareXids.end(), g.last_xid) != kHardwareXids.end()) {
      out.push_back({"xid", fmt::format("GPU {} ({}): Xid {}", g.index, g.uuid, g.last_xid)});
      break;
    }
  }
  return out;
}

}  // namespace muster::agent

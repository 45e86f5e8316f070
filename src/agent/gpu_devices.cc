#include "agent/gpu_devices.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "util/strings.h"

namespace muster::agent {

namespace fs = std::filesystem;

namespace {

// A MIG-capable GPU is cut into 7 compute slices (A100, H100, H200).
constexpr int kSlicesPerGpu = 7;
// Within an emulated node's 256 minors: its GPUs from 0, MIG capability
// files from 128 (two per instance), the control files at the top.
constexpr uint32_t kMinorsPerNode = 256;
constexpr uint32_t kFirstCapMinor = 128;
constexpr uint32_t kCtlMinor = 255;
constexpr uint32_t kUvmMinor = 254;
constexpr uint32_t kMaxEmulatedGpus = kFirstCapMinor;
constexpr uint32_t kMaxEmulatedMig = (kUvmMinor - kFirstCapMinor) / 2;
// Minors are 20 bits: 4096 emulated nodes of 256 each, then they repeat.
constexpr uint32_t kMaxSlots = (1u << 20) / kMinorsPerNode;

std::optional<uint32_t> ParseU32(std::string_view s) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A character device `path` numbered `major`:`minor`, mode 0666 as the
// driver's own: kept when it is one already, made (again) otherwise.
util::Status MakeCharDevice(const std::string& path, uint32_t major_nr, uint32_t minor_nr) {
  const dev_t want = makedev(major_nr, minor_nr);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) && st.st_rdev == want && (st.st_mode & 0777) == 0666)
      return util::Status::Ok();
    ::unlink(path.c_str());
  }
  if (::mknod(path.c_str(), S_IFCHR | 0666, want) != 0) {
    return util::Unavailable(fmt::format("mknod {}: {}", path, std::strerror(errno)));
  }
  // mknod's mode passes through the umask.
  if (::chmod(path.c_str(), 0666) != 0) {
    return util::Unavailable(fmt::format("chmod {}: {}", path, std::strerror(errno)));
  }
  return util::Status::Ok();
}

// A stable, made-up MIG UUID per cluster, node and index, in NVIDIA's
// layout since driver R470 ("MIG-" and a UUID).
std::string EmulatedMigUuid(const std::string& cluster, const std::string& node, int index) {
  const size_t a = std::hash<std::string>{}(fmt::format("{}/{}/mig", cluster, node));
  const size_t b = std::hash<std::string>{}(fmt::format("{}#mig{}", node, index));
  return fmt::format("MIG-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a & 0xffffffff, (a >> 32) & 0xffff,
                     (a >> 48) & 0xffff, b & 0xffff, (b >> 16) & 0xffffffffffff);
}

}  // namespace

std::string GpuDeviceDir(const std::string& spool, const std::string& node) {
  return spool + "/dev/" + node;
}

void GpuDevices::Set(const std::string& node, std::vector<GresDevice> devices) {
  nodes_[node] = std::move(devices);
}

const std::vector<GresDevice>& GpuDevices::Of(const std::string& node) const {
  static const std::vector<GresDevice> kNone;
  auto it = nodes_.find(node);
  return it == nodes_.end() ? kNone : it->second;
}

std::vector<stepd::DeviceRule> GpuDevices::DeniedFor(
    const std::map<std::string, std::vector<int>>& held) const {
  std::set<stepd::DeviceRule> allowed;
  for (const auto& [node, indices] : held) {
    for (const GresDevice& d : Of(node)) {
      if (std::find(indices.begin(), indices.end(), d.index) != indices.end()) {
        allowed.insert(d.numbers.begin(), d.numbers.end());
      }
    }
  }
  std::set<stepd::DeviceRule> denied;
  for (const auto& [node, devices] : nodes_) {
    for (const GresDevice& d : devices) {
      for (const stepd::DeviceRule& n : d.numbers) {
        if (allowed.count(n) == 0) denied.insert(n);
      }
    }
  }
  return {denied.begin(), denied.end()};
}

std::vector<std::string> GpuDevices::MigUuids(const std::string& node) const {
  const std::vector<GresDevice>& devices = Of(node);
  if (std::none_of(devices.begin(), devices.end(),
                   [](const GresDevice& d) { return !d.uuid.empty(); })) {
    return {};
  }
  std::vector<std::string> out;
  for (const GresDevice& d : devices) {
    if (d.index >= static_cast<int>(out.size())) out.resize(static_cast<size_t>(d.index) + 1);
    out[static_cast<size_t>(d.index)] = d.uuid;
  }
  return out;
}

std::optional<int> MigSlices(std::string_view type) {
  // <slices>g.<memory>gb, then an optional "+me" (media extensions) or
  // similar suffix.
  const size_t g = type.find("g.");
  if (g == std::string_view::npos || g == 0) return std::nullopt;
  std::optional<uint32_t> slices = ParseU32(type.substr(0, g));
  std::string_view rest = type.substr(g + 2);
  const size_t gb = rest.find("gb");
  if (!slices || *slices < 1 || *slices > kSlicesPerGpu || gb == std::string_view::npos ||
      gb == 0 || !ParseU32(rest.substr(0, gb))) {
    return std::nullopt;
  }
  rest.remove_prefix(gb + 2);
  if (!rest.empty() && rest[0] != '+') return std::nullopt;
  return static_cast<int>(*slices);
}

util::Result<uint32_t> FreeCharMajor(std::string_view proc_devices) {
  std::set<uint32_t> used;
  // Only the character section: block majors are another space.
  const size_t block = proc_devices.find("Block devices:");
  for (std::string_view line : util::Split(proc_devices.substr(0, block), '\n')) {
    line = util::Trim(line);
    const size_t sp = line.find(' ');
    if (std::optional<uint32_t> m = ParseU32(line.substr(0, sp))) used.insert(*m);
  }
  for (const auto& [first, last] : {std::pair{120u, 127u}, {60u, 63u}, {240u, 254u}}) {
    for (uint32_t m = first; m <= last; ++m) {
      if (used.count(m) == 0) return m;
    }
  }
  return util::Unavailable(
      "every character major kept for local use (60-63, 120-127, 240-254) is taken");
}

std::optional<uint32_t> CharMajorOf(std::string_view proc_devices, std::string_view name) {
  const size_t block = proc_devices.find("Block devices:");
  for (std::string_view line : util::Split(proc_devices.substr(0, block), '\n')) {
    line = util::Trim(line);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos || util::Trim(line.substr(sp + 1)) != name) continue;
    return ParseU32(line.substr(0, sp));
  }
  return std::nullopt;
}

std::map<std::string, uint32_t> ParseMigMinors(std::string_view text) {
  std::map<std::string, uint32_t> out;
  for (std::string_view line : util::Split(text, '\n')) {
    line = util::Trim(line);
    const size_t sp = line.rfind(' ');
    if (sp == std::string_view::npos) continue;
    std::string_view key = line.substr(0, sp);
    std::optional<uint32_t> minor_nr = ParseU32(util::Trim(line.substr(sp + 1)));
    constexpr std::string_view kSuffix = "/access";
    if (!minor_nr || !key.ends_with(kSuffix)) continue;
    key.remove_suffix(kSuffix.size());
    out[std::string(key)] = *minor_nr;
  }
  return out;
}

util::Result<std::vector<GresDevice>> MakeEmulatedDevices(
    const std::string& dir, const std::string& cluster, const std::string& node, uint32_t major_nr,
    uint32_t slot, const std::vector<std::string>& types, bool make_files) {
  const uint32_t base = (slot % kMaxSlots) * kMinorsPerNode;
  std::error_code ec;
  auto make_dir = [&](const std::string& path) -> util::Status {
    if (!make_files) return util::Status::Ok();
    fs::create_directories(path, ec);
    if (ec) return util::Unavailable(fmt::format("cannot create {}: {}", path, ec.message()));
    ::chmod(path.c_str(), 0755);
    return util::Status::Ok();
  };
  auto make_device = [&](const std::string& path, uint32_t minor_nr) {
    return make_files ? MakeCharDevice(path, major_nr, minor_nr) : util::Status::Ok();
  };
  MUSTER_RETURN_IF_ERROR(make_dir(dir));
  MUSTER_RETURN_IF_ERROR(make_device(dir + "/nvidiactl", base + kCtlMinor));
  MUSTER_RETURN_IF_ERROR(make_device(dir + "/nvidia-uvm", base + kUvmMinor));
  std::vector<GresDevice> out;
  uint32_t gpu = 0;        // the next emulated GPU
  int slices_left = 0;     // of the GPU MIG instances are being cut from
  uint32_t instances = 0;  // MIG instances so far
  for (size_t i = 0; i < types.size(); ++i) {
    GresDevice d;
    d.index = static_cast<int>(i);
    const std::optional<int> slices = MigSlices(types[i]);
    if (!slices || *slices > slices_left) {
      // A whole GPU, or a MIG instance that needs a fresh one.
      if (gpu >= kMaxEmulatedGpus) {
        return util::InvalidArgument(
            fmt::format("node {}: more than {} emulated GPUs", node, kMaxEmulatedGpus));
      }
      const std::string path = fmt::format("{}/nvidia{}", dir, gpu);
      MUSTER_RETURN_IF_ERROR(make_device(path, base + gpu));
      ++gpu;
      slices_left = slices ? kSlicesPerGpu : 0;
    }
    const uint32_t parent = gpu - 1;
    d.paths.push_back(fmt::format("{}/nvidia{}", dir, parent));
    d.numbers.push_back({'c', major_nr, base + parent});
    if (slices) {
      if (instances >= kMaxEmulatedMig) {
        return util::InvalidArgument(
            fmt::format("node {}: more than {} emulated MIG instances", node, kMaxEmulatedMig));
      }
      slices_left -= *slices;
      // Its GPU instance's and compute instance's capability files.
      MUSTER_RETURN_IF_ERROR(make_dir(dir + "/nvidia-caps"));
      for (uint32_t c = 0; c < 2; ++c) {
        const uint32_t cap = 2 * instances + c;
        const std::string path = fmt::format("{}/nvidia-caps/nvidia-cap{}", dir, cap + 1);
        MUSTER_RETURN_IF_ERROR(make_device(path, base + kFirstCapMinor + cap));
        d.paths.push_back(path);
        d.numbers.push_back({'c', major_nr, base + kFirstCapMinor + cap});
      }
      d.uuid = EmulatedMigUuid(cluster, node, d.index);
      ++instances;
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<GresDevice> NvmlDevices(const std::vector<DetectedGpu>& gpus,
                                    std::string_view mig_minors, std::string_view proc_devices,
                                    std::vector<std::string>* problems) {
  // NVIDIA's registered major; the driver names it "nvidia-frontend" (or
  // "nvidia") in /proc/devices.
  const uint32_t gpu_major = CharMajorOf(proc_devices, "nvidia-frontend")
                                 .value_or(CharMajorOf(proc_devices, "nvidia").value_or(195));
  const std::optional<uint32_t> caps_major = CharMajorOf(proc_devices, "nvidia-caps");
  const std::map<std::string, uint32_t> caps = ParseMigMinors(mig_minors);
  auto device = [](const std::string& path, uint32_t major_nr, uint32_t minor_nr) {
    util::Result<stepd::DeviceRule> found = stepd::DeviceOfFile(path);
    return found.ok() ? *found : stepd::DeviceRule{'c', major_nr, minor_nr};
  };
  std::vector<GresDevice> out;
  for (const NvmlGresDevice& n : NvmlGresDevices(gpus)) {
    GresDevice d;
    d.index = static_cast<int>(out.size());
    const uint32_t minor_nr =
        static_cast<uint32_t>(n.gpu->minor >= 0 ? n.gpu->minor : n.gpu->index);
    d.paths.push_back(fmt::format("/dev/nvidia{}", minor_nr));
    d.numbers.push_back(device(d.paths.back(), gpu_major, minor_nr));
    if (n.mig != nullptr) {
      d.uuid = n.mig->uuid;
      const std::string gi = fmt::format("gpu{}/gi{}", minor_nr, n.mig->gpu_instance);
      const std::string ci = fmt::format("{}/ci{}", gi, n.mig->compute_instance);
      for (const std::string& key : {gi, ci}) {
        auto cap = caps.find(key);
        if (cap == caps.end() || !caps_major) {
          problems->push_back(fmt::format(
              "MIG {}: no capability {} in /proc/driver/nvidia-caps/mig-minors", n.mig->uuid, key));
          continue;
        }
        d.paths.push_back(fmt::format("/dev/nvidia-caps/nvidia-cap{}", cap->second));
        d.numbers.push_back(device(d.paths.back(), *caps_major, cap->second));
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<GresDevice> DevicesFromFiles(const core::NodeConfig& node,
                                         std::vector<std::string>* problems) {
  std::vector<GresDevice> out;
  int index = 0;
  for (const core::GresSpec& g : node.gres) {
    if (g.name != "gpu") continue;
    const bool per_device = g.device_files.size() == static_cast<size_t>(g.count);
    if (!g.device_files.empty() && !per_device) {
      problems->push_back(fmt::format("gres.conf names {} devices for the {} gpu:{} of node {}",
                                      g.device_files.size(), g.count, g.type, node.name));
    }
    for (int64_t i = 0; i < g.count; ++i, ++index) {
      if (!per_device) continue;
      GresDevice d;
      d.index = index;
      for (const std::string& path : g.device_files[static_cast<size_t>(i)]) {
        util::Result<stepd::DeviceRule> number = stepd::DeviceOfFile(path);
        if (!number.ok()) {
          problems->push_back(fmt::format("node {}: gres.conf File={}: {}", node.name, path,
                                          number.status().message()));
          continue;
        }
        d.paths.push_back(path);
        d.numbers.push_back(*number);
      }
      if (!d.numbers.empty()) out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace muster::agent

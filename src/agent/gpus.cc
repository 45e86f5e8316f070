#include "agent/gpus.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::agent {

std::vector<std::string> ConfiguredGpuTypes(const core::NodeConfig& node) {
  std::vector<std::string> types;
  for (const core::GresSpec& g : node.gres) {
    if (g.name != "gpu") continue;
    for (int64_t i = 0; i < g.count; ++i) types.push_back(g.type);
  }
  return types;
}

std::vector<NvmlGresDevice> NvmlGresDevices(const std::vector<DetectedGpu>& gpus) {
  std::vector<NvmlGresDevice> out;
  for (const DetectedGpu& g : gpus) {
    if (!g.mig_enabled) {
      out.push_back({&g, nullptr});
      continue;
    }
    for (const DetectedMig& m : g.mig_devices) out.push_back({&g, &m});
  }
  return out;
}

std::string MigProfileOf(std::string_view name) {
  constexpr std::string_view kMig = " MIG ";
  const size_t at = name.rfind(kMig);
  return at == std::string_view::npos ? std::string() : std::string(util::Trim(name.substr(at + kMig.size())));
}

std::string GpuControlDir(const std::string& spool, const std::string& node) {
  return spool + "/gpus/" + node;
}

namespace {

// What an emulated GPU of a configured type looks like.
struct Model {
  const char* type;
  const char* name;
  int64_t memory_gib;
  int64_t power_limit_w;
  int max_clock_mhz;
};

constexpr std::array<Model, 6> kModels = {{
    {"h200", "NVIDIA H200", 141, 700, 1980},
    {"h100", "NVIDIA H100 80GB HBM3", 80, 700, 1980},
    {"a100", "NVIDIA A100-SXM4-80GB", 80, 400, 1410},
    {"l40s", "NVIDIA L40S", 48, 350, 2520},
    {"v100", "Tesla V100-SXM2-32GB", 32, 300, 1530},
    {"", "NVIDIA H100 80GB HBM3", 80, 700, 1980},  // untyped or unknown
}};

const Model& ModelOf(const std::string& type) {
  const std::string t = util::ToLower(type);
  for (const Model& m : kModels) {
    if (t == m.type) return m;
  }
  return kModels.back();
}

// The integer in `dir`/`name` (decimal, or hex after 0x as NVML's
// throttle reasons are written), or `fallback` when the file is absent or
// holds none.
int64_t ControlValue(const std::string& dir, const char* name, int64_t fallback) {
  std::ifstream in(dir + "/" + name);
  std::string text;
  if (!(in >> text)) return fallback;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
    return ec == std::errc() && end == text.data() + text.size() ? v : fallback;
  }
  util::Result<int64_t> v = util::ParseInt(text);
  return v.ok() ? *v : fallback;
}

// A stable, made-up UUID per cluster, node and index, in NVIDIA's layout.
std::string EmulatedUuid(const std::string& cluster, const std::string& node, int index) {
  const size_t a = std::hash<std::string>{}(cluster + "/" + node);
  const size_t b = std::hash<std::string>{}(fmt::format("{}#{}", node, index));
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a & 0xffffffff, (a >> 32) & 0xffff,
                     (a >> 48) & 0xffff, b & 0xffff, (b >> 16) & 0xffffffffffff);
}

// The first line of `dir`/`name`, or "".
std::string ControlText(const std::string& dir, const char* name) {
  std::ifstream in(dir + "/" + name);
  std::string line;
  std::getline(in, line);
  return std::string(util::Trim(line));
}

}  // namespace

EmulatedNodeControl ReadEmulatedNodeControl(const std::string& control_dir, int configured) {
  EmulatedNodeControl c;
  c.count = static_cast<int>(ControlValue(control_dir, "count", configured));
  c.nvml_error = ControlText(control_dir, "nvml_error");
  c.driver_version = ControlText(control_dir, "driver_version");
  if (c.driver_version.empty()) c.driver_version = "emulated";
  return c;
}

core::GpuSample EmulatedGpuSample(const std::string& cluster, const std::string& node,
                                  const std::string& type, int index,
                                  const std::string& control_dir) {
  const Model& m = ModelOf(type);
  const std::string dir = fmt::format("{}/{}", control_dir, index);
  core::GpuSample g;
  g.node = node;
  g.index = index;
  g.uuid = EmulatedUuid(cluster, node, index);
  g.model = m.name;
  g.emulated = true;
  g.utilization_pct =
      static_cast<int>(std::clamp<int64_t>(ControlValue(dir, "utilization", 0), 0, 100));
  const int u = g.utilization_pct;
  g.memory_total_bytes = m.memory_gib << 30;
  // A busy GPU holds most of its memory; an idle one a context's worth.
  const int64_t default_used_mib = u > 0 ? (m.memory_gib << 10) * (10 + 8 * u / 10) / 100 : 0;
  g.memory_used_bytes = std::clamp<int64_t>(ControlValue(dir, "memory_used_mib", default_used_mib),
                                            0, m.memory_gib << 10)
                        << 20;
  g.temperature_c = static_cast<int>(ControlValue(dir, "temperature", 32 + u * 45 / 100));
  g.memory_temperature_c = g.temperature_c + 6;
  g.power_limit_mw = m.power_limit_w * 1000;
  g.power_mw = (70 + (m.power_limit_w - 70) * u / 100) * 1000;
  g.sm_clock_max_mhz = m.max_clock_mhz;
  g.sm_clock_mhz = u > 0 ? m.max_clock_mhz : 345;
  g.throttle_reasons = static_cast<uint64_t>(
      std::max<int64_t>(0, ControlValue(dir, "throttle_reasons", u > 0 ? 0 : 0x1)));  // 0x1: idle
  g.ecc_volatile_uncorrected = ControlValue(dir, "ecc_uncorrected", 0);
  g.ecc_aggregate_uncorrected = g.ecc_volatile_uncorrected;
  g.remapping_failed = ControlValue(dir, "remapping_failed", 0) != 0;
  g.last_xid = ControlValue(dir, "xid", 0);
  g.xid_events = g.last_xid != 0 ? 1 : 0;
  g.nvlink_errors = std::max<int64_t>(0, ControlValue(dir, "nvlink_errors", 0));
  return g;
}

// NVML through dlopen. The few types and constants used, as NVML's API
// reference documents them.
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
constexpr int kTemperatureGpu = 0;
constexpr int kClockSm = 1;
constexpr int kEccCorrected = 0, kEccUncorrected = 1;
constexpr int kEccVolatile = 0, kEccAggregate = 1;
constexpr int kNvlinkMaxLinks = 18;
constexpr int kNvlinkCounters = 4;  // replay, recovery, CRC flit, CRC data
constexpr unsigned long long kEventXidCritical = 0x8;
struct NvmlEventData {
  nvmlDevice_t device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id, compute_instance_id;
};
using nvmlEventSet_t = struct nvmlEventSet_st*;

class DlNvml final : public Nvml {
 public:
  explicit DlNvml(void* lib) : lib_(lib) {}
  ~DlNvml() override {
    if (shutdown_ != nullptr) shutdown_();
    ::dlclose(lib_);
  }

  util::Status Init() {
    auto init = Sym<nvmlReturn_t()>("nvmlInit_v2");
    shutdown_ = Sym<nvmlReturn_t()>("nvmlShutdown");
    count_ = Sym<nvmlReturn_t(unsigned*)>("nvmlDeviceGetCount_v2");
    handle_ = Sym<nvmlReturn_t(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
    if (init == nullptr || count_ == nullptr || handle_ == nullptr) {
      return util::Unavailable("NVML lacks nvmlInit_v2 or the device functions");
    }
    if (int rc = init(); rc != kNvmlSuccess) {
      shutdown_ = nullptr;
      return util::Unavailable(fmt::format("nvmlInit_v2 failed (NVML error {})", rc));
    }
    if (auto create = Sym<nvmlReturn_t(nvmlEventSet_t*)>("nvmlEventSetCreate")) {
      if (create(&events_) != kNvmlSuccess) events_ = nullptr;
    }
    auto reg = Sym<nvmlReturn_t(nvmlDevice_t, unsigned long long, nvmlEventSet_t)>(
        "nvmlDeviceRegisterEvents");
    for (nvmlDevice_t d : Devices()) {
      if (events_ != nullptr && reg != nullptr) reg(d, kEventXidCritical, events_);
    }
    return util::Status::Ok();
  }

  std::string DriverVersion() const override {
    std::array<char, 96> v{};
    auto f = Sym<nvmlReturn_t(char*, unsigned)>("nvmlSystemGetDriverVersion");
    if (f == nullptr || f(v.data(), v.size()) != kNvmlSuccess) return "";
    return v.data();
  }

  std::vector<DetectedGpu> Inventory() const override {
    std::vector<DetectedGpu> out;
    const std::vector<nvmlDevice_t> devs = Devices();
    for (size_t i = 0; i < devs.size(); ++i) {
      DetectedGpu g;
      g.index = static_cast<int>(i);
      Identify(devs[i], &g);
      out.push_back(std::move(g));
    }
    return out;
  }

  std::vector<core::GpuSample> Sample(const std::string& node) override {
    PollXids();
    std::vector<core::GpuSample> out;
    const std::vector<nvmlDevice_t> devs = Devices();
    const std::string driver = DriverVersion();
    for (size_t i = 0; i < devs.size(); ++i) {
      nvmlDevice_t d = devs[i];
      DetectedGpu id;
      Identify(d, &id);
      core::GpuSample g;
      g.node = node;
      g.index = static_cast<int>(i);
      g.uuid = id.uuid;
      g.model = id.name;
      g.pci_bus_id = id.pci_bus_id;
      g.driver_version = driver;
      g.mig_enabled = id.mig_enabled;
      g.memory_total_bytes = id.memory_bytes;
      NvmlUtilization u{};
      if (Call("nvmlDeviceGetUtilizationRates", d, &u)) g.utilization_pct = static_cast<int>(u.gpu);
      NvmlMemory m{};
      if (Call("nvmlDeviceGetMemoryInfo", d, &m))
        g.memory_used_bytes = static_cast<int64_t>(m.used);
      unsigned v = 0;
      if (Call("nvmlDeviceGetTemperature", d, kTemperatureGpu, &v))
        g.temperature_c = static_cast<int>(v);
      if (Call("nvmlDeviceGetPowerUsage", d, &v)) g.power_mw = v;
      if (Call("nvmlDeviceGetEnforcedPowerLimit", d, &v)) g.power_limit_mw = v;
      if (Call("nvmlDeviceGetClockInfo", d, kClockSm, &v)) g.sm_clock_mhz = static_cast<int>(v);
      if (Call("nvmlDeviceGetMaxClockInfo", d, kClockSm, &v))
        g.sm_clock_max_mhz = static_cast<int>(v);
      unsigned long long bits = 0;
      if (Call("nvmlDeviceGetCurrentClocksThrottleReasons", d, &bits)) g.throttle_reasons = bits;
      g.ecc_volatile_corrected = Ecc(d, kEccCorrected, kEccVolatile);
      g.ecc_volatile_uncorrected = Ecc(d, kEccUncorrected, kEccVolatile);
      g.ecc_aggregate_corrected = Ecc(d, kEccCorrected, kEccAggregate);
      g.ecc_aggregate_uncorrected = Ecc(d, kEccUncorrected, kEccAggregate);
      unsigned corr = 0, unc = 0, pending = 0, failed = 0;
      if (Call("nvmlDeviceGetRemappedRows", d, &corr, &unc, &pending, &failed)) {
        g.remapped_rows_correctable = corr;
        g.remapped_rows_uncorrectable = unc;
        g.remapping_failed = failed != 0;
      }
      g.nvlink_errors = NvlinkErrors(d);
      if (auto it = xids_.find(id.uuid); it != xids_.end()) {
        g.xid_events = it->second.first;
        g.last_xid = it->second.second;
      }
      out.push_back(std::move(g));
    }
    return out;
  }

 private:
  template <typename F>
  F* Sym(const char* name) const {
    return reinterpret_cast<F*>(::dlsym(lib_, name));
  }
  // Calls NVML's `name` with `args` (every one of these functions takes
  // the device and out-pointers); false when absent or failing.
  template <typename... Args>
  bool Call(const char* name, Args... args) const {
    auto f = Sym<nvmlReturn_t(Args...)>(name);
    return f != nullptr && f(args...) == kNvmlSuccess;
  }

  std::vector<nvmlDevice_t> Devices() const {
    unsigned n = 0;
    std::vector<nvmlDevice_t> out;
    if (count_(&n) != kNvmlSuccess) return out;
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice_t d = nullptr;
      if (handle_(i, &d) == kNvmlSuccess) out.push_back(d);
    }
    return out;
  }

  void Identify(nvmlDevice_t d, DetectedGpu* g) const {
    std::array<char, 96> text{};
    if (Call("nvmlDeviceGetName", d, text.data(), static_cast<unsigned>(text.size()))) {
      g->name = text.data();
    }
    text.fill(0);
    if (Call("nvmlDeviceGetUUID", d, text.data(), static_cast<unsigned>(text.size()))) {
      g->uuid = text.data();
    }
    NvmlMemory m{};
    if (Call("nvmlDeviceGetMemoryInfo", d, &m)) g->memory_bytes = static_cast<int64_t>(m.total);
    NvmlPciInfo pci{};
    if (Call("nvmlDeviceGetPciInfo_v3", d, &pci)) {
      g->pci_bus_id = pci.bus_id;
      // sysfs names the device with a 4-digit domain, in lower case.
      std::string sys = util::ToLower(g->pci_bus_id);
      if (sys.size() > 12) sys = sys.substr(sys.size() - 12);
      std::ifstream numa("/sys/bus/pci/devices/" + sys + "/numa_node");
      if (!(numa >> g->numa_node)) g->numa_node = -1;
    }
    unsigned minor = 0;
    if (Call("nvmlDeviceGetMinorNumber", d, &minor)) g->minor = static_cast<int>(minor);
    unsigned current = 0, pending = 0;
    if (Call("nvmlDeviceGetMigMode", d, &current, &pending)) g->mig_enabled = current == 1;
    unsigned max_mig = 0;
    if (g->mig_enabled && Call("nvmlDeviceGetMaxMigDeviceCount", d, &max_mig)) {
      for (unsigned i = 0; i < max_mig; ++i) {
        nvmlDevice_t mig = nullptr;
        if (!Call("nvmlDeviceGetMigDeviceHandleByIndex", d, i, &mig)) continue;
        DetectedMig m;
        text.fill(0);
        if (!Call("nvmlDeviceGetUUID", mig, text.data(), static_cast<unsigned>(text.size()))) continue;
        m.uuid = text.data();
        text.fill(0);
        if (Call("nvmlDeviceGetName", mig, text.data(), static_cast<unsigned>(text.size()))) {
          m.profile = MigProfileOf(text.data());
        }
        Call("nvmlDeviceGetGpuInstanceId", mig, &m.gpu_instance);
        Call("nvmlDeviceGetComputeInstanceId", mig, &m.compute_instance);
        g->mig_devices.push_back(std::move(m));
      }
    }
  }

  int64_t Ecc(nvmlDevice_t d, int type, int counter) const {
    unsigned long long n = 0;
    return Call("nvmlDeviceGetTotalEccErrors", d, type, counter, &n) ? static_cast<int64_t>(n) : 0;
  }

  int64_t NvlinkErrors(nvmlDevice_t d) const {
    int64_t total = -1;
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      for (int c = 0; c < kNvlinkCounters; ++c) {
        unsigned long long n = 0;
        if (!Call("nvmlDeviceGetNvLinkErrorCounter", d, link, c, &n)) continue;
        total = std::max<int64_t>(total, 0) + static_cast<int64_t>(n);
      }
    }
    return total;
  }

  // Critical Xid events since the last sample, without waiting.
  void PollXids() {
    auto wait = Sym<nvmlReturn_t(nvmlEventSet_t, NvmlEventData*, unsigned)>("nvmlEventSetWait_v2");
    if (events_ == nullptr || wait == nullptr) return;
    NvmlEventData e{};
    for (int i = 0; i < 64 && wait(events_, &e, 0) == kNvmlSuccess; ++i) {
      std::array<char, 96> uuid{};
      if (!Call("nvmlDeviceGetUUID", e.device, uuid.data(), static_cast<unsigned>(uuid.size()))) {
        continue;
      }
      auto& [count, last] = xids_[uuid.data()];
      ++count;
      last = static_cast<int64_t>(e.event_data);
    }
  }

  void* lib_;
  nvmlReturn_t (*shutdown_)() = nullptr;
  nvmlReturn_t (*count_)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlEventSet_t events_ = nullptr;
  std::map<std::string, std::pair<int64_t, int64_t>> xids_;  // uuid -> (events, last code)
};

}  // namespace

util::Result<std::unique_ptr<Nvml>> LoadNvml(const std::string& library) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return util::NotFound(fmt::format("cannot load {}: {}", library, why ? why : "unknown error"));
  }
  auto nvml = std::make_unique<DlNvml>(lib);
  util::Status st = nvml->Init();
  if (!st.ok()) return st;
  return std::unique_ptr<Nvml>(std::move(nvml));
}

}  // namespace muster::agent

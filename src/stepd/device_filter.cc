#include "stepd/device_filter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include "stepd/device_filter_bpf.h"  // kDeviceFilterObject, generated at build time

namespace muster::stepd {
namespace {

// The map's key, laid out as struct device_key in device_filter.bpf.c.
struct DeviceKey {
  uint32_t type;
  uint32_t major;
  uint32_t minor;
};

// The program's map holds at most this many rules (max_entries there).
constexpr size_t kMaxRules = 4096;

// libbpf's own messages go to stderr by default; its errors reach the
// caller as the Status instead.
int Quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

struct ObjectCloser {
  void operator()(bpf_object* obj) const { bpf_object__close(obj); }
};

uint32_t ParseNumber(std::string_view s, bool* ok) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  *ok = *ok && !s.empty() && ec == std::errc() && end == s.data() + s.size();
  return v;
}

}  // namespace

std::string DeviceRule::ToString() const { return fmt::format("{} {}:{}", type, major, minor); }

util::Result<DeviceRule> ParseDeviceRule(std::string_view text) {
  const size_t colon = text.find(':');
  bool ok = text.size() >= 5 && (text[0] == 'c' || text[0] == 'b') && text[1] == ' ' &&
            colon != std::string_view::npos;
  DeviceRule rule;
  if (ok) {
    rule.type = text[0];
    rule.major = ParseNumber(text.substr(2, colon - 2), &ok);
    rule.minor = ParseNumber(text.substr(colon + 1), &ok);
  }
  if (!ok) {
    return util::InvalidArgument(
        fmt::format("bad device rule '{}' (expected 'c MAJOR:MINOR')", text));
  }
  return rule;
}

util::Result<DeviceRule> DeviceOfFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return util::NotFound(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return util::InvalidArgument(path + " is not a character or block device");
  }
  return DeviceRule{S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev)};
}

util::Status AttachDeviceFilter(int cgroup_fd, std::span<const DeviceRule> denied) {
  if (denied.size() > kMaxRules) {
    return util::InvalidArgument(
        fmt::format("{} devices to refuse, more than the filter's {}", denied.size(), kMaxRules));
  }
  libbpf_set_print(Quiet);
  std::unique_ptr<bpf_object, ObjectCloser> obj(
      bpf_object__open_mem(kDeviceFilterObject, sizeof(kDeviceFilterObject), nullptr));
  if (obj == nullptr) {
    return util::Internal(fmt::format("cannot open the device filter: {}", std::strerror(errno)));
  }
  if (int err = bpf_object__load(obj.get()); err != 0) {
    return util::Unavailable(
        fmt::format("cannot load the device filter (BPF): {}", std::strerror(-err)));
  }
  bpf_map* map = bpf_object__find_map_by_name(obj.get(), "denied");
  bpf_program* prog = bpf_object__find_program_by_name(obj.get(), "device_filter");
  if (map == nullptr || prog == nullptr) {
    return util::Internal("the device filter object lacks its map or program");
  }
  for (const DeviceRule& rule : denied) {
    const DeviceKey key{rule.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, rule.major,
                        rule.minor};
    const uint8_t refused = 1;
    if (bpf_map_update_elem(bpf_map__fd(map), &key, &refused, BPF_ANY) != 0) {
      return util::Unavailable(fmt::format("cannot add {} to the device filter: {}",
                                           rule.ToString(), std::strerror(errno)));
    }
  }
  // ALLOW_MULTI: a program above the job's cgroup (a site's own) keeps
  // running too; a device is opened only where every program allows it.
  if (bpf_prog_attach(bpf_program__fd(prog), cgroup_fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI) !=
      0) {
    return util::Unavailable(fmt::format("cannot attach the device filter to the job's cgroup: {}",
                                         std::strerror(errno)));
  }
  return util::Status::Ok();
}

}  // namespace muster::stepd

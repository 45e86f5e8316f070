// JSON forms of StepSpec and StepResult: the launch message's spec, the
// result line of a step's state file, muster-step's spec file. Keys are the
// field names; a missing (or null) key keeps the field's default so either
// side may add fields first.
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "stepd/device_filter.h"
#include "stepd/step.h"

namespace muster::stepd {
namespace {

using nlohmann::json;

// Reads an integer field, rejecting non-integers and out-of-range values
// (nlohmann's get<> would silently wrap -1 into a uint32_t).
template <typename T>
util::Status ReadInt(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return util::Status::Ok();
  bool in_range = false;
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    in_range = v <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    if (in_range) *out = static_cast<T>(v);
  } else if (it->is_number_integer()) {
    int64_t v = it->get<int64_t>();
    in_range = v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
               (v < 0 || static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
    if (in_range) *out = static_cast<T>(v);
  }
  if (in_range) return util::Status::Ok();
  return util::InvalidArgument(fmt::format("key \"{}\": expected an integer in [{}, {}], got {}", key,
                                           std::numeric_limits<T>::min(),
                                           std::numeric_limits<T>::max(), it->dump()));
}

util::Status ReadBool(const json& j, const char* key, bool* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return util::Status::Ok();
  if (!it->is_boolean()) {
    return util::InvalidArgument(fmt::format("key \"{}\": expected true or false, got {}", key, it->dump()));
  }
  *out = it->get<bool>();
  return util::Status::Ok();
}

util::Status ReadString(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return util::Status::Ok();
  if (!it->is_string()) {
    return util::InvalidArgument(fmt::format("key \"{}\": expected a string, got {}", key, it->dump()));
  }
  *out = it->get<std::string>();
  return util::Status::Ok();
}

util::Status ReadStrings(const json& j, const char* key, std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return util::Status::Ok();
  bool ok = it->is_array();
  for (size_t i = 0; ok && i < it->size(); ++i) ok = (*it)[i].is_string();
  if (!ok) {
    return util::InvalidArgument(fmt::format("key \"{}\": expected an array of strings", key));
  }
  *out = it->get<std::vector<std::string>>();
  return util::Status::Ok();
}

util::Status ReadIds(const json& j, const char* key, std::vector<uint32_t>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return util::Status::Ok();
  if (!it->is_array()) {
    return util::InvalidArgument(fmt::format("key \"{}\": expected an array of integers", key));
  }
  std::vector<uint32_t> ids;
  for (const json& e : *it) {
    if (!e.is_number_unsigned() || e.get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
      return util::InvalidArgument(
          fmt::format("key \"{}\": expected an array of integers in [0, 4294967295], got {}", key, e.dump()));
    }
    ids.push_back(static_cast<uint32_t>(e.get<uint64_t>()));
  }
  *out = std::move(ids);
  return util::Status::Ok();
}

util::Status RequireObject(const json& j, const char* what) {
  if (j.is_object()) return util::Status::Ok();
  return util::InvalidArgument(fmt::format("{}: expected a JSON object", what));
}

}  // namespace

json ToJson(const StepSpec& s) {
  return json{
      {"job_id", s.job_id},
      {"uid", s.uid},
      {"gid", s.gid},
      {"groups", s.groups},
      {"user_name", s.user_name},
      {"work_dir", s.work_dir},
      {"script_path", s.script_path},
      {"argv", s.argv},
      {"env", s.env},
      {"std_out", s.std_out},
      {"std_err", s.std_err},
      {"std_in", s.std_in},
      {"open_append", s.open_append},
      {"time_limit_s", s.time_limit_s},
      {"kill_wait_s", s.kill_wait_s},
      {"warn_signal", s.warn_signal},
      {"warn_time_s", s.warn_time_s},
      {"warn_batch_only", s.warn_batch_only},
      {"mem_limit_mb", s.mem_limit_mb},
      {"cpuset", s.cpuset},
      {"denied_devices", s.denied_devices},
      {"prolog", s.prolog},
      {"epilog", s.epilog},
      {"hook_timeout_s", s.hook_timeout_s},
  };
}

util::Result<StepSpec> StepSpecFromJson(const json& j) {
  StepSpec s;
  MUSTER_RETURN_IF_ERROR(RequireObject(j, "step spec"));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "job_id", &s.job_id));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "uid", &s.uid));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "gid", &s.gid));
  MUSTER_RETURN_IF_ERROR(ReadIds(j, "groups", &s.groups));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "user_name", &s.user_name));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "work_dir", &s.work_dir));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "script_path", &s.script_path));
  MUSTER_RETURN_IF_ERROR(ReadStrings(j, "argv", &s.argv));
  MUSTER_RETURN_IF_ERROR(ReadStrings(j, "env", &s.env));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "std_out", &s.std_out));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "std_err", &s.std_err));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "std_in", &s.std_in));
  MUSTER_RETURN_IF_ERROR(ReadBool(j, "open_append", &s.open_append));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "time_limit_s", &s.time_limit_s));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "kill_wait_s", &s.kill_wait_s));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "warn_signal", &s.warn_signal));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "warn_time_s", &s.warn_time_s));
  MUSTER_RETURN_IF_ERROR(ReadBool(j, "warn_batch_only", &s.warn_batch_only));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "mem_limit_mb", &s.mem_limit_mb));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "cpuset", &s.cpuset));
  MUSTER_RETURN_IF_ERROR(ReadStrings(j, "denied_devices", &s.denied_devices));
  for (const std::string& rule : s.denied_devices) {
    util::Result<DeviceRule> parsed = ParseDeviceRule(rule);
    if (!parsed.ok()) return util::InvalidArgument("key \"denied_devices\": " + parsed.status().message());
  }
  MUSTER_RETURN_IF_ERROR(ReadString(j, "prolog", &s.prolog));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "epilog", &s.epilog));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "hook_timeout_s", &s.hook_timeout_s));
  return s;
}

json ToJson(const StepResult& r) {
  return json{
      {"job_id", r.job_id},
      {"state", r.state},
      {"exit_code", r.exit_code},
      {"exit_signal", r.exit_signal},
      {"start_time", r.start_time},
      {"end_time", r.end_time},
      {"detail", r.detail},
      {"max_rss_kb", r.max_rss_kb},
      {"total_cpu_ms", r.total_cpu_ms},
      {"oom_killed", r.oom_killed},
      {"cgroup", r.cgroup},
      {"prolog_failed", r.prolog_failed},
      {"epilog_error", r.epilog_error},
  };
}

util::Result<StepResult> StepResultFromJson(const json& j) {
  StepResult r;
  MUSTER_RETURN_IF_ERROR(RequireObject(j, "step result"));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "job_id", &r.job_id));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "state", &r.state));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "exit_code", &r.exit_code));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "exit_signal", &r.exit_signal));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "start_time", &r.start_time));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "end_time", &r.end_time));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "detail", &r.detail));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "max_rss_kb", &r.max_rss_kb));
  MUSTER_RETURN_IF_ERROR(ReadInt(j, "total_cpu_ms", &r.total_cpu_ms));
  MUSTER_RETURN_IF_ERROR(ReadBool(j, "oom_killed", &r.oom_killed));
  MUSTER_RETURN_IF_ERROR(ReadBool(j, "cgroup", &r.cgroup));
  MUSTER_RETURN_IF_ERROR(ReadBool(j, "prolog_failed", &r.prolog_failed));
  MUSTER_RETURN_IF_ERROR(ReadString(j, "epilog_error", &r.epilog_error));
  return r;
}

}  // namespace muster::stepd

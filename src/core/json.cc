#include "core/json.h"

#include <string>

#include "util/strings.h"

namespace muster::core {
namespace {

using nlohmann::json;

// Object fields, listed once for both directions.
#define MUSTER_GRES_SPEC_FIELDS(X) X(name) X(type) X(count) X(files) X(device_cores)
#define MUSTER_GRES_REQUEST_FIELDS(X) X(name) X(type) X(count) X(per_job)
#define MUSTER_NODE_ALLOC_FIELDS(X) X(node) X(cpus) X(mem_mb) X(tasks) X(gpu_indices) X(cpu_ids)
#define MUSTER_JOB_REQUEST_FIELDS(X)                                                     \
  X(name) X(partition) X(account) X(comment) X(qos) X(reservation) X(wckey) X(constraint) \
  X(uid) X(gid) X(user_name) X(groups) X(work_dir) X(submit_dir) X(submit_host) X(std_out) X(std_err)  \
  X(std_in) X(open_append) X(min_nodes) X(max_nodes) X(ntasks) X(ntasks_per_node)        \
  X(cpus_per_task) X(cpus_per_task_set) X(mem_per_node_mb) X(mem_per_cpu_mb) X(cpus_per_gpu) X(mem_per_gpu_mb) \
  X(mem_whole_node) X(gres) X(time_limit_s) X(exclusive) X(hold) X(begin_time) X(switches) X(switches_wait_s) \
  X(requeue) X(requeue_set) X(nice) X(signal_spec) X(array_spec) X(dependency) X(kill_invalid_dep) X(nodelist) X(exclude) X(export_mode)                \
  X(environment) X(argv) X(script) X(command) X(interactive) X(cron_spec) X(cron_line)
#define MUSTER_JOB_FIELDS(X)                                                            \
  X(id) X(req) X(state) X(reason) X(reason_nodes) X(reason_reserved) X(priority) X(admin_priority) X(held) X(held_by_admin) X(submit_time)   \
  X(eligible_time) X(start_time) X(end_time) X(time_limit_s) X(partition) X(alloc)      \
  X(batch_host) X(nodelist) X(exit_code) X(exit_signal) X(cancelled_by) X(preempted_by)                 \
  X(restart_count) X(ending_as) X(requeue_on_end) X(configuring) X(last_run_node_failed) X(failure_detail) X(max_rss_kb) X(total_cpu_ms) X(gpu_util_pct_s) X(gpu_sampled_s) X(gpu_mem_max_bytes) X(gpu_idle_since) X(gpu_idle_stage) X(next_step_id) \
  X(array_job_id) X(array_task_id) X(array_max_running) X(het_job_id) X(het_job_offset) X(het_job_size) X(explanation) X(estimated_start) X(estimated_nodes) X(dependency_state) X(dependency_failed)
#define MUSTER_NODE_CONFIG_FIELDS(X)                                                  \
  X(name) X(cpus) X(sockets) X(cores_per_socket) X(threads_per_core) X(real_memory_mb) \
  X(tmp_disk_mb) X(gres) X(features) X(weight) X(initial_state)
#define MUSTER_NODE_FIELDS(X)                                                      \
  X(config) X(registered) X(down) X(drain) X(fail) X(reason) X(reason_uid) X(reason_time) X(reason_actor) \
  X(reason_source) X(health_failures) X(health_time) X(health_drained_by) X(health_pending) \
  X(detected_hardware) X(hardware_mismatches) X(mig_uuids) X(boot_time) X(reboot) X(reboot_asap) \
  X(reboot_next_state) X(reboot_issued_time) X(last_busy) X(alloc_cpus) X(alloc_mem_mb) X(gpu_used) \
  X(running_jobs)

#define MUSTER_TO_JSON(field) j[#field] = v.field;
#define MUSTER_FROM_JSON(field) Get(j, #field, v.field);

void RequireObject(const json& j, const char* what) {
  if (!j.is_object()) {
    throw json::type_error::create(
        302, std::string(what) + " must be an object, not " + j.type_name(), &j);
  }
}

// Reads j[key] into field when present and not null; otherwise keeps the
// field as it is (its default), so partial objects are accepted.
template <typename T>
void Get(const json& j, const char* key, T& field) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(field);
}

[[noreturn]] void UnknownName(const json& j, const char* what) {
  throw json::other_error::create(501, std::string("unknown ") + what + " " + j.dump(), &j);
}

}  // namespace

json ParseIntegerJson(std::string_view text) {
  bool has_float = false;
  json::parser_callback_t check = [&has_float](int, json::parse_event_t event, json& value) {
    if (event == json::parse_event_t::value && value.is_number_float()) has_float = true;
    return true;
  };
  json j = json::parse(text, check, /*allow_exceptions=*/false);
  if (has_float) return json(json::value_t::discarded);
  return j;
}

void to_json(json& j, JobState v) { j = std::string(JobStateName(v)); }
void from_json(const json& j, JobState& v) {
  std::optional<JobState> s = ParseJobState(j.get<std::string>());
  if (!s) UnknownName(j, "job state");
  v = *s;
}

void to_json(json& j, PendingReason v) { j = std::string(PendingReasonName(v)); }
void from_json(const json& j, PendingReason& v) {
  std::optional<PendingReason> r = ParsePendingReason(j.get<std::string>());
  if (!r) UnknownName(j, "pending reason");
  v = *r;
}

void to_json(json& j, NodeInitialState v) { j = std::string(NodeInitialStateName(v)); }
void from_json(const json& j, NodeInitialState& v) {
  const std::string name = j.get<std::string>();
  // Empty: a record from before the state was typed, made without State=.
  std::optional<NodeInitialState> s =
      name.empty() ? NodeInitialState::kUnknown : ParseNodeInitialState(name);
  if (!s) UnknownName(j, "node state");
  v = *s;
}

void to_json(json& j, RebootState v) {
  j = v == RebootState::kRequested ? "REQUESTED" : v == RebootState::kIssued ? "ISSUED" : "";
}
void from_json(const json& j, RebootState& v) {
  const std::string name = j.get<std::string>();
  if (name.empty()) {
    v = RebootState::kNone;
  } else if (name == "REQUESTED") {
    v = RebootState::kRequested;
  } else if (name == "ISSUED") {
    v = RebootState::kIssued;
  } else {
    UnknownName(j, "reboot state");
  }
}

void to_json(json& j, ReasonSource v) { j = std::string(ReasonSourceName(v)); }
void from_json(const json& j, ReasonSource& v) {
  std::optional<ReasonSource> s = ParseReasonSource(j.get<std::string>());
  if (!s) UnknownName(j, "reason source");
  v = *s;
}

void to_json(json& j, ExportMode v) {
  switch (v) {
    case ExportMode::kAll: j = "ALL"; return;
    case ExportMode::kNone: j = "NONE"; return;
    case ExportMode::kList: j = "LIST"; return;
  }
  j = "ALL";
}
void from_json(const json& j, ExportMode& v) {
  const std::string s = j.get<std::string>();
  if (s == "ALL") {
    v = ExportMode::kAll;
  } else if (s == "NONE") {
    v = ExportMode::kNone;
  } else if (s == "LIST") {
    v = ExportMode::kList;
  } else {
    UnknownName(j, "export mode");
  }
}

void to_json(json& j, const GresSpec& v) {
  j = json::object();
  MUSTER_GRES_SPEC_FIELDS(MUSTER_TO_JSON)
}
void from_json(const json& j, GresSpec& v) {
  RequireObject(j, "gres spec");
  MUSTER_GRES_SPEC_FIELDS(MUSTER_FROM_JSON)
}

void to_json(json& j, const GresRequest& v) {
  j = json::object();
  MUSTER_GRES_REQUEST_FIELDS(MUSTER_TO_JSON)
}
void from_json(const json& j, GresRequest& v) {
  RequireObject(j, "gres request");
  MUSTER_GRES_REQUEST_FIELDS(MUSTER_FROM_JSON)
}

void to_json(json& j, const NodeAlloc& v) {
  j = json::object();
  MUSTER_NODE_ALLOC_FIELDS(MUSTER_TO_JSON)
}
void from_json(const json& j, NodeAlloc& v) {
  RequireObject(j, "node allocation");
  MUSTER_NODE_ALLOC_FIELDS(MUSTER_FROM_JSON)
}

void to_json(json& j, const JobRequest& v) {
  j = json::object();
  MUSTER_JOB_REQUEST_FIELDS(MUSTER_TO_JSON)
}
void from_json(const json& j, JobRequest& v) {
  RequireObject(j, "job request");
  MUSTER_JOB_REQUEST_FIELDS(MUSTER_FROM_JSON)
}

void to_json(json& j, const Job& v) {
  j = json::object();
  MUSTER_JOB_FIELDS(MUSTER_TO_JSON)
  // An array's pending tasks in range form ("5-9999", "2-99998:2"): the
  // record is journalled at every task start, so it must stay small.
  j["array_pending"] = util::FormatIndexRangesWithSteps(v.array_pending);
}
void from_json(const json& j, Job& v) {
  RequireObject(j, "job");
  MUSTER_JOB_FIELDS(MUSTER_FROM_JSON)
  auto pending = j.find("array_pending");
  if (pending != j.end() && pending->is_string()) {
    auto ids = util::ParseIndexRanges(pending->get<std::string>());
    if (!ids.ok()) {
      throw json::other_error::create(501, "array_pending: " + ids.status().message(), &j);
    }
    v.array_pending = std::move(ids).value();
  } else if (pending != j.end() && pending->is_array()) {
    pending->get_to(v.array_pending);
  }
}

void to_json(json& j, const NodeConfig& v) {
  j = json::object();
  MUSTER_NODE_CONFIG_FIELDS(MUSTER_TO_JSON)
}
void from_json(const json& j, NodeConfig& v) {
  RequireObject(j, "node config");
  MUSTER_NODE_CONFIG_FIELDS(MUSTER_FROM_JSON)
}

void to_json(json& j, const Node& v) {
  j = json::object();
  MUSTER_NODE_FIELDS(MUSTER_TO_JSON)
}
void from_json(const json& j, Node& v) {
  RequireObject(j, "node");
  MUSTER_NODE_FIELDS(MUSTER_FROM_JSON)
}

#undef MUSTER_TO_JSON
#undef MUSTER_FROM_JSON

}  // namespace muster::core

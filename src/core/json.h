// JSON forms of the core value types for the API, the journal and tests
// (nlohmann-json; to_json/from_json found by ADL). Keys are the snake_case
// field names; enums are their Slurm names (JobState "PENDING",
// PendingReason "Resources", ExportMode "ALL"/"NONE"/"LIST",
// NodeInitialState "UNKNOWN"; ReasonSource "operator", "health", "").
//
// from_json tolerates missing (or null) keys and keeps the field's default,
// so clients may send partial objects. A value of the wrong type or an
// unknown enum name throws nlohmann::json::exception: callers convert it to
// a Status at the edge (nothing throws across a module boundary).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/gres.h"
#include "core/job.h"
#include "core/node.h"

namespace muster::core {

// Outside input as JSON (API bodies, agent lines, the journal): as
// json::parse without exceptions, but a number with a fraction or an
// exponent makes it malformed too. Every number Muster reads is an
// integer, and converting a float out of the integer range is undefined
// behaviour (the API fuzzer sent {"time_limit_s": 6.7e109}). Returns a
// discarded value when the text is not such JSON.
nlohmann::json ParseIntegerJson(std::string_view text);

void to_json(nlohmann::json& j, JobState v);
void from_json(const nlohmann::json& j, JobState& v);
void to_json(nlohmann::json& j, PendingReason v);
void from_json(const nlohmann::json& j, PendingReason& v);
void to_json(nlohmann::json& j, ExportMode v);
void from_json(const nlohmann::json& j, ExportMode& v);
void to_json(nlohmann::json& j, NodeInitialState v);
void from_json(const nlohmann::json& j, NodeInitialState& v);
// RebootState: "" (none), "REQUESTED", "ISSUED".
void to_json(nlohmann::json& j, RebootState v);
void from_json(const nlohmann::json& j, RebootState& v);
void to_json(nlohmann::json& j, ReasonSource v);
void from_json(const nlohmann::json& j, ReasonSource& v);

void to_json(nlohmann::json& j, const GresSpec& v);
void from_json(const nlohmann::json& j, GresSpec& v);
void to_json(nlohmann::json& j, const GresRequest& v);
void from_json(const nlohmann::json& j, GresRequest& v);

void to_json(nlohmann::json& j, const NodeAlloc& v);
void from_json(const nlohmann::json& j, NodeAlloc& v);
void to_json(nlohmann::json& j, const JobRequest& v);
void from_json(const nlohmann::json& j, JobRequest& v);
void to_json(nlohmann::json& j, const Job& v);
void from_json(const nlohmann::json& j, Job& v);

void to_json(nlohmann::json& j, const NodeConfig& v);
void from_json(const nlohmann::json& j, NodeConfig& v);
void to_json(nlohmann::json& j, const Node& v);
void from_json(const nlohmann::json& j, Node& v);

}  // namespace muster::core

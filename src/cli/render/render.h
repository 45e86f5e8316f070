// Rendering of Slurm's text outputs (squeue, sinfo, scontrol show) from the
// controller's live objects. Pure functions of (request, state, now): they
// run inside musterd so that squeue over 100,000 jobs costs one pass and no
// serialisation; the CLI parses options into a request, sends it, prints
// the text. Request structs travel as JSON (ToJson/FromJson).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/job.h"
#include "core/node.h"
#include "util/status.h"

namespace muster::render {

// Everything the renderers may need about the cluster at one moment.
struct ClusterView {
  const config::Config* config = nullptr;
  std::vector<const core::Job*> jobs;    // job id order
  std::vector<const core::Node*> nodes;  // config order
  int64_t now = 0;
  uint32_t caller_uid = 0;
};

// ---- squeue ----
struct SqueueRequest {
  std::vector<std::string> users;        // -u (names or uids), --me adds the caller
  std::vector<std::string> states;       // -t (long or short names, "all")
  std::vector<std::string> job_ids;      // -j
  std::vector<std::string> partitions;   // -p
  std::vector<std::string> nodes;        // -w (hostlist)
  std::vector<std::string> names;        // -n/--name
  std::vector<std::string> accounts;     // -A
  std::string format;                    // -o, or empty
  std::string format_long;               // -O, or empty
  bool noheader = false;                 // -h
  bool long_view = false;                // -l
  bool start = false;                    // --start
  bool only_job_state = false;           // --only-job-state
  bool me = false;
  std::string sort;                      // -S
};
nlohmann::json ToJson(const SqueueRequest& r);
util::Result<SqueueRequest> SqueueRequestFromJson(const nlohmann::json& j);
// Parses squeue's argv (without argv[0]) and SQUEUE_FORMAT/SQUEUE_FORMAT2
// style environment; errors are squeue's messages.
util::Result<SqueueRequest> ParseSqueueArgs(const std::vector<std::string>& args);
util::Result<std::string> RenderSqueue(const SqueueRequest& req, const ClusterView& view);

// ---- sinfo ----
struct SinfoRequest {
  bool node_view = false;    // -N
  bool long_view = false;    // -l
  bool summarize = false;    // -s
  bool reasons = false;      // -R
  bool noheader = false;     // -h
  bool all = false;          // -a
  std::string format;        // -o
  std::string format_long;   // -O
  std::vector<std::string> partitions;  // -p
  std::vector<std::string> states;      // -t
  std::string nodes;                    // -n hostlist
};
nlohmann::json ToJson(const SinfoRequest& r);
util::Result<SinfoRequest> SinfoRequestFromJson(const nlohmann::json& j);
util::Result<SinfoRequest> ParseSinfoArgs(const std::vector<std::string>& args);
util::Result<std::string> RenderSinfo(const SinfoRequest& req, const ClusterView& view);

// ---- scontrol show ----
// `what` is job, node, partition or config; `name` narrows to one (empty = all).
// `one_liner` is scontrol -o; `details` is -d/-dd.
struct ShowRequest {
  std::string what;
  std::string name;
  bool one_liner = false;
  bool details = false;
};
nlohmann::json ToJson(const ShowRequest& r);
util::Result<ShowRequest> ShowRequestFromJson(const nlohmann::json& j);
// Errors match scontrol's, e.g. "Invalid job id specified" / "Node x not found".
util::Result<std::string> RenderShow(const ShowRequest& req, const ClusterView& view);

}  // namespace muster::render

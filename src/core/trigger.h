// strigger's triggers: a program to run, once (or every time, with PERM),
// when a node goes down, up, drained or FAIL, when the configuration changes,
// when a job ends, nears its time limit or loses a node, or when musterd
// takes control again after a restart. Value types and pure functions;
// the controller keeps them (src/ctld/triggers.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::core {

// What a trigger watches, as strigger --get's RES_TYPE names it.
enum class TriggerResource { kNode, kJob, kController };
std::string_view TriggerResourceName(TriggerResource r);  // "node", "job", "slurmctld"

struct Trigger {
  uint32_t id = 0;
  TriggerResource resource = TriggerResource::kNode;
  std::string resource_id = "*";  // node: "*" or a hostlist; job: its id
  // node: down, up, drained, fail, reconfig; job: fini, time, down, up;
  // controller: primary_slurmctld_resumed_operation,
  // primary_slurmctld_resumed_control.
  std::string type;
  int64_t offset = 0;  // seconds after the event (job time: negative, before the limit)
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
  bool perm = false;     // --flags=PERM: kept after it fires
  std::string program;   // an absolute path, then its own arguments
};

nlohmann::json ToJson(const Trigger& t);
util::Result<Trigger> TriggerFromJson(const nlohmann::json& j);

// Whether `type` is one Muster fires for `resource`.
bool TriggerTypeValid(TriggerResource resource, std::string_view type);

// The program's words: the path, its own arguments (split at spaces),
// then `argument` (the nodes or the job id the event is about; none when
// empty), as Slurm runs it.
std::vector<std::string> TriggerCommand(const Trigger& t, const std::string& argument);

// strigger --get's table, Slurm's columns; nothing at all for no triggers.
std::string RenderTriggers(const std::vector<Trigger>& triggers, bool noheader);

}  // namespace muster::core

#include "core/trigger.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace muster::core {

std::string_view TriggerResourceName(TriggerResource r) {
  switch (r) {
    case TriggerResource::kNode: return "node";
    case TriggerResource::kJob: return "job";
    case TriggerResource::kController: return "slurmctld";
  }
  return "";
}

nlohmann::json ToJson(const Trigger& t) {
  return {{"id", t.id},
          {"resource", std::string(TriggerResourceName(t.resource))},
          {"resource_id", t.resource_id},
          {"type", t.type},
          {"offset", t.offset},
          {"uid", t.uid},
          {"gid", t.gid},
          {"user", t.user},
          {"perm", t.perm},
          {"program", t.program}};
}

util::Result<Trigger> TriggerFromJson(const nlohmann::json& j) {
  try {
    Trigger t;
    t.id = j.at("id").get<uint32_t>();
    const std::string resource = j.at("resource").get<std::string>();
    if (resource == "node") {
      t.resource = TriggerResource::kNode;
    } else if (resource == "job") {
      t.resource = TriggerResource::kJob;
    } else if (resource == "slurmctld") {
      t.resource = TriggerResource::kController;
    } else {
      return util::InvalidArgument("bad trigger: resource " + resource);
    }
    t.resource_id = j.at("resource_id").get<std::string>();
    t.type = j.at("type").get<std::string>();
    t.offset = j.value("offset", int64_t{0});
    t.uid = j.at("uid").get<uint32_t>();
    t.gid = j.at("gid").get<uint32_t>();
    t.user = j.value("user", "");
    t.perm = j.value("perm", false);
    t.program = j.at("program").get<std::string>();
    if (!TriggerTypeValid(t.resource, t.type)) {
      return util::InvalidArgument("bad trigger: type " + t.type + " for a " + resource);
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    return util::InvalidArgument(std::string("bad trigger: ") + e.what());
  }
}

bool TriggerTypeValid(TriggerResource resource, std::string_view type) {
  switch (resource) {
    case TriggerResource::kNode:
      return type == "down" || type == "up" || type == "drained" || type == "fail" ||
             type == "reconfig";
    case TriggerResource::kJob:
      return type == "fini" || type == "time" || type == "down" || type == "up";
    case TriggerResource::kController:
      return type == "primary_slurmctld_resumed_operation" ||
             type == "primary_slurmctld_resumed_control";
  }
  return false;
}

std::vector<std::string> TriggerCommand(const Trigger& t, const std::string& argument) {
  std::vector<std::string> argv = util::Split(t.program, ' ');
  if (!argument.empty()) argv.push_back(argument);
  return argv;
}

std::string RenderTriggers(const std::vector<Trigger>& triggers, bool noheader) {
  if (triggers.empty()) return "";
  // As strigger 22.05 lays them out: TYPE wide enough for the controller
  // events' names.
  std::string out;
  if (!noheader) {
    out += fmt::format("{:>7} {:<8} {:>8} {:<35} {:>6} {:<8} {:<5} {}\n", "TRIG_ID", "RES_TYPE",
                       "RES_ID", "TYPE", "OFFSET", "USER", "FLAGS", "PROGRAM");
  }
  for (const Trigger& t : triggers) {
    out += fmt::format("{:>7} {:<8} {:>8} {:<35} {:>6} {:<8} {:<5} {}\n", t.id,
                       TriggerResourceName(t.resource), t.resource_id, t.type, t.offset, t.user,
                       t.perm ? "PERM" : "", t.program);
  }
  return out;
}

}  // namespace muster::core

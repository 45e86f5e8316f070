// Submit-time partition rules; see partition_rules.h for what Slurm does.
#include "sched/partition_rules.h"

#include <algorithm>

#include "util/strings.h"

namespace muster::sched {
namespace {

using util::Status;

bool ContainsIgnoreCase(const std::vector<std::string>& list, const std::string& s) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& x) { return util::EqualsIgnoreCase(x, s); });
}

// root and SlurmUser are exempt from AllowGroups and AllowAccounts
// (slurm.conf(5); observed for root on the oracle).
bool Privileged(const core::JobRequest& req, const config::Config& cfg) {
  return req.uid == 0 || (!req.user_name.empty() && req.user_name == cfg.slurm_user);
}

bool InAllowedGroup(const core::JobRequest& req, const core::Partition& part,
                    const GroupLookup& groups) {
  for (const std::string& name : part.allow_groups) {
    std::optional<uint32_t> gid = groups ? groups(name) : std::nullopt;
    if (!gid) continue;
    if (*gid == req.gid) return true;
    if (std::find(req.groups.begin(), req.groups.end(), *gid) != req.groups.end()) return true;
  }
  return false;
}

// Slurm's line and Muster's detail for a partition name not configured;
// Slurm names an empty list "(null)".
util::Status UnknownPartition(const std::string& name, const config::Config& cfg,
                              SubmitRefusal* why) {
  if (why != nullptr) {
    why->slurm_line = "invalid partition specified: " + (name.empty() ? "(null)" : name);
    std::vector<std::string> names;
    for (const core::Partition& p : cfg.partitions) names.push_back(p.name);
    const std::string known = "(" + util::Join(names, ", ") + ")";
    why->detail = name.empty() ? "partitions: -p names none; this cluster's are " + known
                               : "partitions: '" + name + "' is not one of this cluster's " + known;
  }
  return util::InvalidArgument(kInvalidPartitionMsg);
}

}  // namespace

std::vector<std::string> RequestedPartitionNames(const std::string& partition) {
  std::vector<std::string> out;
  for (std::string& name : util::Split(partition, ',')) {
    if (name.empty() || std::find(out.begin(), out.end(), name) != out.end()) continue;
    out.push_back(std::move(name));
  }
  return out;
}

Status CheckPartitionAccess(const core::JobRequest& req, const core::Partition& part,
                            const config::Config& cfg, const GroupLookup& groups) {
  if (part.state == core::PartitionState::kInactive || part.state == core::PartitionState::kDrain) {
    return util::Unavailable(kPartitionNotAvailableMsg);
  }
  if (Privileged(req, cfg)) return Status::Ok();
  if (!part.allow_groups.empty() && !InAllowedGroup(req, part, groups)) {
    return util::PermissionDenied(kGroupNotPermittedMsg);
  }
  // A Deny list is not enforced when the Allow list is set (slurm.conf(5)).
  if (!part.allow_accounts.empty()) {
    if (!ContainsIgnoreCase(part.allow_accounts, req.account)) {
      return util::PermissionDenied(kInvalidAccountMsg);
    }
  } else if (ContainsIgnoreCase(part.deny_accounts, req.account)) {
    return util::PermissionDenied(kInvalidAccountMsg);
  }
  return Status::Ok();
}

Status CheckPartitionLimits(const core::JobRequest& req, int64_t time_limit_s,
                            const core::Partition& part) {
  if (part.max_time_s >= 0 && (time_limit_s == -1 || time_limit_s > part.max_time_s)) {
    return util::InvalidArgument(kInvalidTimeLimitMsg);
  }
  const int64_t min_nodes = std::max(req.min_nodes, 1);
  const int64_t max_nodes = req.max_nodes > 0 ? req.max_nodes : min_nodes;
  const int64_t total = static_cast<int64_t>(part.nodes.size());
  if ((part.max_nodes >= 0 && min_nodes > part.max_nodes) || min_nodes > total ||
      max_nodes < part.min_nodes) {
    return util::InvalidArgument(kInvalidNodeCountMsg);
  }
  return Status::Ok();
}

util::Result<std::vector<const core::Partition*>> ResolveJobPartitions(
    const core::JobRequest& req, int64_t time_limit_s, const config::Config& cfg,
    const GroupLookup& groups, SubmitRefusal* why) {
  std::vector<const core::Partition*> asked;
  if (req.partition.empty()) {
    const core::Partition* def = cfg.DefaultPartition();
    if (def == nullptr) return util::InvalidArgument(kNoDefaultPartitionMsg);
    asked.push_back(def);
  } else {
    // Every name is checked before any rule: one unknown name refuses the
    // job even when another would do.
    for (const std::string& name : RequestedPartitionNames(req.partition)) {
      const core::Partition* p = cfg.FindPartition(name);
      if (p == nullptr) return UnknownPartition(name, cfg, why);
      asked.push_back(p);
    }
    if (asked.empty()) return UnknownPartition("", cfg, why);
  }
  const bool all = cfg.enforce_part_limits == config::EnforcePartLimits::kAll;

  std::vector<const core::Partition*> kept;
  std::optional<Status> first_refusal;
  for (const core::Partition* p : asked) {
    Status st = CheckPartitionAccess(req, *p, cfg, groups);
    if (st.ok()) {
      kept.push_back(p);
      continue;
    }
    if (all) return st;
    if (!first_refusal) first_refusal = st;
  }
  if (kept.empty()) return *first_refusal;

  if (cfg.enforce_part_limits == config::EnforcePartLimits::kNo) return kept;
  std::optional<Status> first_over;
  bool any_within = false;
  for (const core::Partition* p : kept) {
    Status st = CheckPartitionLimits(req, time_limit_s, *p);
    if (st.ok()) {
      any_within = true;
    } else if (!first_over) {
      first_over = st;
    }
  }
  if (all && first_over) return *first_over;
  if (!any_within) return *first_over;
  return kept;
}

}  // namespace muster::sched

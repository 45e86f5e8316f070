// Stage: the job's static node predicates. -C/--constraint features (all of
// `features`, one of each `feature_any` group; names compared exactly, as
// Slurm does), -x/--exclude, and GRES other than GPUs that a node must have
// configured. -C's counts and matching OR constrain the set of nodes, not
// each one: the selection sees to them. -w is not a filter here: the selection places the named
// nodes first and the rest of the request may use other nodes too (sbatch -w).
#include <algorithm>

#include "sched/pipeline.h"

namespace muster::sched {

bool HasFeature(const core::NodeConfig& node, std::string_view feature) {
  return std::find(node.features.begin(), node.features.end(), feature) != node.features.end();
}

bool NodeHasOtherGres(const core::NodeConfig& node, const ResourceRequest& r) {
  for (const auto& want : r.other_gres) {
    int64_t have = 0;
    for (const auto& g : node.gres) {
      if (g.name == want.name && (want.type.empty() || g.type == want.type)) have += g.count;
    }
    if (have < want.count) return false;
  }
  return true;
}

bool MeetsCount(const core::NodeConfig& node, const ResourceRequest::FeatureCount& c) {
  auto has = [&](const std::string& f) { return HasFeature(node, f); };
  return c.any ? std::any_of(c.names.begin(), c.names.end(), has)
               : std::all_of(c.names.begin(), c.names.end(), has);
}

bool HasFeatures(const core::NodeConfig& node, const ResourceRequest& r) {
  return std::all_of(r.features.begin(), r.features.end(),
                     [&](const std::string& f) { return HasFeature(node, f); }) &&
         std::all_of(r.feature_any.begin(), r.feature_any.end(), [&](const auto& group) {
           return std::any_of(group.begin(), group.end(),
                              [&](const std::string& f) { return HasFeature(node, f); });
         });
}

FilterResult FilterNodeMatch(const NodeMatch& m, const core::NodeConfig& node, int index) {
  const ResourceRequest& r = *m.request;
  if (!m.excluded.empty() && std::binary_search(m.excluded.begin(), m.excluded.end(), index)) {
    return {Verdict::kNeverSchedulable, "node excluded by -x"};
  }
  for (const auto& f : r.features) {
    if (!HasFeature(node, f)) return {Verdict::kNeverSchedulable, "node lacks a required feature"};
  }
  for (const auto& group : r.feature_any) {
    bool any = std::any_of(group.begin(), group.end(),
                           [&](const std::string& f) { return HasFeature(node, f); });
    if (!any) return {Verdict::kNeverSchedulable, "node has none of the alternative features"};
  }
  if (!r.other_gres.empty() && !NodeHasOtherGres(node, r)) {
    return {Verdict::kNeverSchedulable, "node lacks the requested gres"};
  }
  return {};
}

}  // namespace muster::sched

#include "ctld/node_prologs.h"

#include <algorithm>

namespace muster::ctld {

void NodePrologs::Start(core::JobId id, int run, const std::vector<std::string>& nodes) {
  if (nodes.empty()) {
    pending_.erase(id);
    return;
  }
  pending_[id] = Pending{run, std::set<std::string>(nodes.begin(), nodes.end())};
}

NodePrologs::Answer NodePrologs::Succeeded(core::JobId id, int run, const std::string& node) {
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.run != run || it->second.nodes.erase(node) == 0) {
    return Answer::kStale;
  }
  if (!it->second.nodes.empty()) return Answer::kWaiting;
  pending_.erase(it);
  return Answer::kAllDone;
}

bool NodePrologs::Waits(core::JobId id, int run, const std::string& node) const {
  auto it = pending_.find(id);
  return it != pending_.end() && it->second.run == run && it->second.nodes.count(node) != 0;
}

void NodePrologs::Forget(core::JobId id) { pending_.erase(id); }

std::map<core::JobId, std::vector<std::string>> NodePrologs::PendingOn(
    const std::vector<std::string>& nodes) const {
  std::map<core::JobId, std::vector<std::string>> out;
  for (const auto& [id, p] : pending_) {
    for (const std::string& n : nodes) {
      if (p.nodes.count(n) != 0) out[id].push_back(n);
    }
  }
  return out;
}

}  // namespace muster::ctld

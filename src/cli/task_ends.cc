#include "cli/task_ends.h"

#include <algorithm>

namespace muster::cli {

TaskEndLines::TaskEndLines(std::map<int, std::string> node_of, std::ostream& out)
    : node_of_(std::move(node_of)), out_(out) {
  for (const auto& [rank, node] : node_of_) ++left_[node];
}

void TaskEndLines::Ended(int rank, const std::string& how, Clock::time_point now) {
  auto node = node_of_.find(rank);
  if (node == node_of_.end()) return;
  const std::string name = node->second;
  node_of_.erase(node);  // a task ends once
  --left_[name];
  if (how.empty()) return;
  auto same = std::find_if(pending_.begin(), pending_.end(),
                           [&](const Line& l) { return l.node == name && l.how == how; });
  if (same == pending_.end()) {
    pending_.push_back({name, how, {rank}, now});
  } else {
    same->ranks.insert(std::upper_bound(same->ranks.begin(), same->ranks.end(), rank), rank);
  }
}

void TaskEndLines::Flush(bool all, Clock::time_point now) {
  std::vector<Line> kept;
  for (Line& l : pending_) {
    if (!all && left_[l.node] > 0 && now - l.first < kGather) {
      kept.push_back(std::move(l));
      continue;
    }
    out_ << "srun: error: " << l.node << ": " << (l.ranks.size() == 1 ? "task " : "tasks ")
         << Ranges(l.ranks) << ": " << l.how << "\n";
  }
  out_.flush();
  pending_ = std::move(kept);
}

int TaskEndLines::PollTimeoutMs(Clock::time_point now) const {
  int ms = -1;
  for (const Line& l : pending_) {
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(l.first + kGather - now);
    const int w = static_cast<int>(std::max<int64_t>(0, wait.count()));
    ms = ms < 0 ? w : std::min(ms, w);
  }
  return ms;
}

std::string TaskEndLines::Ranges(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += '-' + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace muster::cli

// The backfill planner's availability profile (see pipeline.h), and the
// overlay windows onto it. A node's steps are few (one per running job
// ending there and per planned start or end), so every operation walks
// them linearly.
#include <algorithm>
#include <bit>
#include <cassert>

#include "sched/pipeline.h"

namespace muster::sched {
namespace {

uint64_t GpuMask(const core::NodeAlloc& share) {
  uint64_t mask = 0;
  for (int g : share.gpu_indices) {
    if (g >= 0 && g < Profile::kMaxGpus) mask |= uint64_t{1} << g;
  }
  return mask;
}

}  // namespace

Profile::Profile(NodeConfigs configs, const Overlay& live, int64_t now)
    : configs_(configs),
      now_(now),
      steps_(configs.size()),
      versions_(configs.size(), 0),
      first_taken_(configs.size(), kForever) {
  for (size_t i = 0; i < configs.size(); ++i) {
    const int node = static_cast<int>(i);
    const NodeFree& f = live.at(node);
    Step s{now, f.cpus, f.mem_mb, 0, f.idle};
    for (uint32_t g = 0; g < f.gpu_count && g < kMaxGpus; ++g) {
      if (live.GpuUsed(node, static_cast<int>(g))) s.gpus_used |= uint64_t{1} << g;
    }
    steps_[i].push_back(s);
    total_cpus_change_[now] += f.cpus;
  }
  changes_.insert(now);
}

size_t Profile::Split(int node, int64_t t) {
  std::vector<Step>& steps = steps_[node];
  // The last step starting at or before t (the first starts at now).
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t v, const Step& s) { return v < s.start; });
  assert(it != steps.begin());
  --it;
  if (it->start == t) return static_cast<size_t>(it - steps.begin());
  Step copy = *it;
  copy.start = t;
  it = steps.insert(it + 1, copy);
  changes_.insert(t);
  return static_cast<size_t>(it - steps.begin());
}

void Profile::Release(int node, int64_t t, const core::NodeAlloc& share) {
  if (t == kForever) return;
  const core::NodeConfig& config = *configs_[node];
  const uint64_t mask = GpuMask(share);
  std::vector<Step>& steps = steps_[node];
  // A job at or past its expected end (at its time limit, not yet
  // stopped) still holds the share now: the first step is what is free
  // now, as the live overlay has it, and a start now must fit there.
  const int64_t at = std::max(t, now_ + 1);
  total_cpus_change_[at] += share.cpus;
  total_cpus_stale_ = true;
  for (size_t k = Split(node, at); k < steps.size(); ++k) {
    Step& s = steps[k];
    s.cpus = std::min(s.cpus + share.cpus, config.cpus);
    s.mem_mb = std::min(s.mem_mb + share.mem_mb, config.real_memory_mb);
    s.gpus_used &= ~mask;
    s.idle = s.cpus == config.cpus && s.mem_mb == config.real_memory_mb && s.gpus_used == 0;
  }
}

void Profile::Reserve(int node, int64_t start, int64_t end, const core::NodeAlloc& share) {
  reserved_ = true;
  ++versions_[node];
  if (start > now_) first_taken_[node] = std::min(first_taken_[node], start);
  const uint64_t mask = GpuMask(share);
  const size_t first = Split(node, std::max(start, now_));
  const size_t last = end == kForever ? steps_[node].size() : Split(node, end);
  total_cpus_change_[std::max(start, now_)] -= share.cpus;
  if (end != kForever) total_cpus_change_[end] += share.cpus;
  ++reserved_since_;
  for (size_t k = first; k < last; ++k) {
    Step& s = steps_[node][k];
    // The planner only reserves what the window showed free.
    assert(share.cpus <= s.cpus && share.mem_mb <= s.mem_mb && (s.gpus_used & mask) == 0);
    s.cpus -= share.cpus;
    s.mem_mb -= share.mem_mb;
    s.gpus_used |= mask;
    s.idle = false;
  }
}

void Profile::Block(int node, int64_t start, int64_t end, int tag) {
  reserved_ = true;
  ++versions_[node];
  if (blocked_.empty()) blocked_.resize(steps_.size());
  blocked_[node].push_back(Blocked{start, end, tag});
  changes_.insert(std::max(start, now_));
  if (end != kForever) changes_.insert(end);
}

void Profile::FreeOver(int node, int64_t start, int64_t end, NodeFree* free,
                       uint64_t* gpus_used) const {
  if (!blocked_.empty()) {
    for (const Blocked& b : blocked_[node]) {
      if (b.tag == exempt_ || b.end <= start || end <= b.start) continue;
      // Another reservation's: nothing of it is free.
      free->cpus = 0;
      free->mem_mb = 0;
      free->idle = false;
      *gpus_used = ~uint64_t{0};
      return;
    }
  }
  const std::vector<Step>& steps = steps_[node];
  // From now until the first planned start only ends come: now is the least.
  auto it = steps.begin();
  if (start == now_ && end <= first_taken_[node]) {
    free->cpus = it->cpus;
    free->mem_mb = it->mem_mb;
    free->idle = it->idle;
    *gpus_used = it->gpus_used;
    return;
  }
  if (start > now_) {
    it = std::upper_bound(steps.begin(), steps.end(), start,
                          [](int64_t v, const Step& s) { return v < s.start; });
    --it;
  }
  free->cpus = it->cpus;
  free->mem_mb = it->mem_mb;
  free->idle = it->idle;
  uint64_t used = it->gpus_used;
  for (++it; it != steps.end() && it->start < end; ++it) {
    free->cpus = std::min(free->cpus, it->cpus);
    free->mem_mb = std::min(free->mem_mb, it->mem_mb);
    free->idle = free->idle && it->idle;
    used |= it->gpus_used;
  }
  *gpus_used = used;
}

const std::vector<std::pair<int64_t, int64_t>>& Profile::TotalFreeCpus() const {
  // Worked out again once the reservations since number a quarter of its
  // steps: a pass that plans many jobs pays a few steps per reservation.
  if (!total_cpus_stale_ && reserved_since_ <= std::max<size_t>(16, total_cpus_.size() / 4)) {
    return total_cpus_;
  }
  total_cpus_.clear();
  int64_t cpus = 0;
  for (const auto& [t, change] : total_cpus_change_) {
    cpus += change;
    total_cpus_.emplace_back(t, cpus);
  }
  total_cpus_stale_ = false;
  reserved_since_ = 0;
  return total_cpus_;
}

void Profile::FirstFree(int node, int64_t from, int64_t span, int64_t grid,
                        int64_t (&at)[kBoundGpus + 1]) const {
  std::fill(std::begin(at), std::end(at), kForever);
  const std::vector<Step>& steps = steps_[node];
  const uint32_t count =
      std::min<uint32_t>(static_cast<uint32_t>(GpuCount(*configs_[node])), kMaxGpus);
  const uint64_t all = count == 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1;
  auto step_at = [&](int64_t t) {  // the step that covers t
    return std::prev(std::upper_bound(steps.begin(), steps.end(), t,
                                      [](int64_t v, const Step& s) { return v < s.start; }));
  };
  // The candidates: `from`, and each later step's start on the grid.
  int done = 0;  // at[0 .. done) are known
  int64_t t = from;
  for (auto it = step_at(from); it != steps.end() && done <= kBoundGpus;) {
    const int64_t end = span == kForever ? kForever : t + span;
    int least = kBoundGpus;  // GPUs free throughout [t, end); -1: a moment without a CPU
    for (auto w = it; w != steps.end() && w->start < end && least >= 0; ++w) {
      least = w->cpus < 1 ? -1 : std::min(least, std::popcount(all & ~w->gpus_used));
    }
    for (; done <= least; ++done) at[done] = t;
    // The next step that starts after t, its start on the grid.
    auto next =
        std::upper_bound(it, steps.end(), t, [](int64_t v, const Step& s) { return v < s.start; });
    if (next == steps.end()) break;
    t = std::max((next->start + grid - 1) / grid * grid, from);
    it = step_at(t);
  }
}

Overlay Overlay::ViewOf(const Profile& profile, const Overlay& layout) {
  Overlay view = layout;
  view.profile_ = &profile;
  view.filled_.assign(view.free_.size(), 0);
  view.window_ = 0;
  return view;
}

void Overlay::SetWindow(int64_t start, int64_t end) {
  start_ = start;
  end_ = end;
  if (++window_ == 0) {
    // Wrapped: no row may look filled for the new window.
    std::fill(filled_.begin(), filled_.end(), 0);
    window_ = 1;
  }
}

void Overlay::Fill(int node) const {
  if (filled_[node] == window_) return;
  filled_[node] = window_;
  NodeFree& f = free_[node];
  uint64_t used = 0;
  profile_->FreeOver(node, start_, end_, &f, &used);
  uint32_t busy = 0;
  for (uint32_t g = 0; g < f.gpu_count; ++g) {
    const bool b = g >= static_cast<uint32_t>(Profile::kMaxGpus) || ((used >> g) & 1) != 0;
    gpu_used_[f.gpu_begin + g] = b ? 1 : 0;
    busy += b ? 1 : 0;
  }
  f.gpus_free = f.gpu_count - busy;
}

}  // namespace muster::sched

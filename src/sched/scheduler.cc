// One scheduling pass, assembled from the stages (see pipeline.h):
//   for each pending job, in the order given:
//     1. eligibility (held, begin time, partition state and limits)
//     2. partition blocked by an earlier job waiting for Resources -> Priority
//     3. the request, computed once (MakeResourceRequest)
//     4. selection over the partition's usable nodes (state filter applied
//        once per partition per pass), with the job's node predicates and
//        the per-node fit
//     5. reserve the choice in the overlay so later jobs see it
//   and, for a job that did not fit, the reason: BadConstraints when no set
//   of the partition's nodes could ever hold it, ReqNodeNotAvail when -w
//   names an unusable node, else Resources (which blocks the partition:
//   Slurm's main scheduler without backfill).
#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "sched/pipeline.h"

namespace muster::sched {
namespace {

using core::PendingReason;

struct PartitionState {
  const core::Partition* part = nullptr;
  std::vector<int> members;   // nodes of the partition in the snapshot, by weight
  std::vector<int> usable;    // members that take new work now, by weight
  bool blocked = false;       // a job of this partition waits for Resources
  size_t live_begin = 0;      // usable[0, live_begin) have no free CPU left
  size_t gpu_live_begin = 0;  // usable[0, gpu_live_begin): no free CPU or GPU
};

class Pass {
 public:
  explicit Pass(const Snapshot& s) : s_(s) {
    configs_.reserve(s.nodes.size());
    usable_.reserve(s.nodes.size());
    index_.reserve(s.nodes.size());
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      const core::Node* n = s.nodes[i];
      configs_.push_back(&n->config);
      usable_.push_back(FilterNodeState(*n).ok());
      index_.emplace(n->config.name, static_cast<int>(i));  // first of duplicates wins
    }
    live_ = Overlay::FromNodes(s.nodes);
  }

  Plan Run() {
    Plan plan;
    plan.pending.reserve(s_.pending.size());
    std::vector<core::NodeAlloc> alloc;
    for (const core::Job* job : s_.pending) {
      PendingReason reason = Place(*job, &alloc);
      if (reason == PendingReason::kNone) {
        for (const auto& share : alloc) live_.Reserve(index_.at(share.node), share);
        plan.starts.push_back(StartDecision{job->id, current_->part->name, std::move(alloc)});
        alloc.clear();
      } else {
        plan.pending.push_back(PendingDecision{job->id, reason});
      }
    }
    return plan;
  }

 private:
  // Returns kNone with `alloc` filled when the job starts, else its reason.
  PendingReason Place(const core::Job& job, std::vector<core::NodeAlloc>* alloc) {
    PartitionState& p = Partition(job.partition);
    current_ = &p;
    PendingReason reason = CheckEligibility(job, p.part, s_.now);
    if (reason != PendingReason::kNone) return reason;
    if (p.blocked) return PendingReason::kPriority;
    auto request = MakeResourceRequest(job.req, s_.config->def_mem_per_cpu_mb);
    if (!request.ok()) return PendingReason::kBadConstraints;
    request_ = std::move(request).value();
    NodeMatch m = Compile(request_);
    // Nodes with no free CPU take nothing more this pass (every job needs
    // one), nodes with no free GPU no job that needs GPUs on every node;
    // first fit fills the list from the front, so skip those prefixes.
    auto full = [&](size_t k, bool gpus) {
      const NodeFree& f = live_.at(p.usable[k]);
      return f.cpus == 0 || (gpus && f.gpus_free == 0);
    };
    while (p.live_begin < p.usable.size() && full(p.live_begin, false)) ++p.live_begin;
    p.gpu_live_begin = std::max(p.gpu_live_begin, p.live_begin);
    while (p.gpu_live_begin < p.usable.size() && full(p.gpu_live_begin, true)) ++p.gpu_live_begin;
    // (--gpus without -n and -N spreads over GPU nodes only.)
    const bool gpus_everywhere =
        request_.gpus_per_node > 0 || (request_.gpus_per_job > 0 && !request_.ntasks_set &&
                                       request_.min_nodes == 1 && request_.max_nodes > 1);
    const size_t begin = gpus_everywhere ? p.gpu_live_begin : p.live_begin;
    std::span<const int> candidates(p.usable.data() + begin, p.usable.size() - begin);
    if (!candidates.empty() && SelectNodes(m, configs_, live_, candidates, &scratch_, alloc)) {
      return PendingReason::kNone;
    }
    reason = Diagnose(m, p);
    if (reason == PendingReason::kResources) p.blocked = true;
    return reason;
  }

  PendingReason Diagnose(const NodeMatch& m, const PartitionState& p) {
    if (!empty_) empty_ = Overlay::Empty(configs_);
    std::vector<core::NodeAlloc> ideal;
    if (!SelectNodes(m, configs_, *empty_, p.members, &scratch_, &ideal)) {
      return PendingReason::kBadConstraints;
    }
    for (int i : m.required) {
      if (!usable_[i]) return PendingReason::kReqNodeNotAvail;
    }
    return PendingReason::kResources;
  }

  NodeMatch Compile(const ResourceRequest& r) {
    NodeMatch m;
    m.request = &r;
    auto resolve = [&](const std::vector<std::string>& names, std::vector<int>* out) {
      bool unknown = false;
      for (const auto& name : names) {
        auto it = index_.find(name);
        if (it == index_.end()) {
          unknown = true;
        } else {
          out->push_back(it->second);
        }
      }
      std::sort(out->begin(), out->end());
      out->erase(std::unique(out->begin(), out->end()), out->end());
      return unknown;
    };
    m.required_unknown = resolve(r.required_nodes, &m.required);
    resolve(r.excluded_nodes, &m.excluded);
    return m;
  }

  PartitionState& Partition(const std::string& name) {
    auto it = parts_.find(name);
    if (it != parts_.end()) return it->second;
    PartitionState& p = parts_[name];
    p.part = s_.config->FindPartition(name);
    if (p.part == nullptr) return p;
    p.members.reserve(p.part->nodes.size());
    for (const auto& n : p.part->nodes) {
      auto idx = index_.find(n);
      if (idx != index_.end()) p.members.push_back(idx->second);
    }
    std::sort(p.members.begin(), p.members.end());
    p.members.erase(std::unique(p.members.begin(), p.members.end()), p.members.end());
    SortByWeight(configs_, &p.members);
    for (int i : p.members) {
      if (usable_[i]) p.usable.push_back(i);
    }
    return p;
  }

  const Snapshot& s_;
  std::vector<const core::NodeConfig*> configs_;
  std::vector<bool> usable_;
  std::unordered_map<std::string_view, int> index_;  // lookups only, never iterated
  Overlay live_;
  std::optional<Overlay> empty_;  // built on the first diagnosis
  std::map<std::string, PartitionState> parts_;
  PartitionState* current_ = nullptr;
  ResourceRequest request_;  // the current job's (NodeMatch points at it)
  SelectScratch scratch_;
};

}  // namespace

Plan Schedule(const Snapshot& snapshot) {
  Pass pass(snapshot);
  return pass.Run();
}

}  // namespace muster::sched

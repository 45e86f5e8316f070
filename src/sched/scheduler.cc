// One scheduling pass, assembled from the stages (see pipeline.h):
//   for each pending job, in the order given:
//     1. eligibility (held, begin time, partition state and limits)
//     2. partition blocked by an earlier job waiting for Resources -> Priority
//     3. the request, computed once (MakeResourceRequest)
//     4. selection over the partition's usable nodes (state filter applied
//        once per partition per pass), with the job's node predicates and
//        the per-node fit
//     5. reserve the choice in the overlay so later jobs see it
//   (an array's pending part goes round again for each further task, up to
//   its %N throttle), and, for a job that did not fit, the reason: BadConstraints when no set
//   of the partition's nodes could ever hold it, ReqNodeNotAvail when the
//   nodes that are up could not hold it even if idle (naming the unusable
//   nodes it asked for), else Resources (which blocks the partition:
//   Slurm's main scheduler; with backfill the blocked job gets a
//   reservation and later jobs that cannot delay it still start).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "sched/pipeline.h"
#include "util/hostlist.h"

namespace muster::sched {
namespace {

using core::PendingReason;

// When and where the first job blocked in a partition would start (see
// Schedule's backfill).
struct Reservation {
  int64_t start = 0;
  std::vector<int> nodes;  // sorted node indices
};

// A job started this pass whose time limit is unlimited never ends as far
// as a reservation can tell.
constexpr int64_t kNever = INT64_MAX;

struct PartitionState {
  const core::Partition* part = nullptr;
  std::vector<int> members;   // nodes of the partition in the snapshot, by weight
  std::vector<int> usable;    // members that take new work now, by weight
  bool blocked = false;       // a job of this partition waits for Resources
  core::JobId blocked_by = 0;  // that job
  std::optional<Reservation> reservation;  // its, with backfill
  size_t live_begin = 0;      // usable[0, live_begin) have no free CPU left
  size_t gpu_live_begin = 0;  // usable[0, gpu_live_begin): no free CPU or GPU
};

class Pass {
 public:
  explicit Pass(const Snapshot& s) : s_(s), limits_(s.accounts, *s.config, s.running) {
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
      // An array's pending part starts as many tasks as fit and its %N
      // throttle allows; any other job starts once.
      int want = job->IsArrayPendingPart() ? static_cast<int>(job->array_pending.size()) : 1;
      const int throttle_left = ThrottleLeft(*job);
      if (throttle_left == 0) {
        plan.pending.push_back(PendingDecision{job->id, PendingReason::kJobArrayTaskLimit});
        continue;
      }
      if (throttle_left > 0) want = std::min(want, throttle_left);
      PendingReason cut = PendingReason::kJobArrayTaskLimit;
      if (auto limit = s_.start_limit.find(job->id); limit != s_.start_limit.end()) {
        if (limit->second.count < want) cut = limit->second.reason;
        want = std::min(want, limit->second.count);
      }
      PendingReason reason = PendingReason::kNone;
      int started = 0;
      while (started < want) {
        reason = PlaceInPartitions(*job, &alloc);
        if (reason != PendingReason::kNone) break;
        // The limits again, for what the job would really take.
        reason = limit_reason_ = limits_.CheckAlloc(*job, alloc, &limit_detail_);
        if (reason != PendingReason::kNone) {
          alloc.clear();
          break;
        }
        for (const auto& share : alloc) live_.Reserve(index_.at(share.node), share);
        limits_.Add(*job, alloc);
        started_.emplace_back(job->time_limit_s >= 0 ? s_.now + job->time_limit_s : kNever, alloc);
        plan.starts.push_back(StartDecision{job->id, current_->part->name, std::move(alloc)});
        alloc.clear();
        ++started;
        if (job->array_job_id != 0) ++array_running_[job->array_job_id];
      }
      const bool left_over = job->IsArrayPendingPart() &&
                             started < static_cast<int>(job->array_pending.size());
      if (started == 0 || left_over) {
        if (reason == PendingReason::kNone) reason = cut;
        PendingDecision d{job->id, reason, {}};
        if (reason == PendingReason::kReqNodeNotAvail) d.unavailable_nodes = unavailable_;
        if (reason == limit_reason_) d.detail = limit_detail_;
        plan.pending.push_back(std::move(d));
      }
    }
    for (const auto& [name, p] : parts_) {
      if (!p.blocked || !p.reservation) continue;
      PlannedStart planned{p.blocked_by, name, p.reservation->start, {}};
      for (int i : p.reservation->nodes) planned.nodes.push_back(configs_[i]->name);
      plan.planned.push_back(std::move(planned));
    }
    return plan;
  }

 private:
  // How many more tasks of the job's array may run: -1 = no limit.
  int ThrottleLeft(const core::Job& job) {
    if (job.array_job_id == 0 || job.array_max_running <= 0) return -1;
    auto it = array_running_.find(job.array_job_id);
    if (it == array_running_.end()) {
      auto given = s_.array_running.find(job.array_job_id);
      const int running = given == s_.array_running.end() ? 0 : given->second;
      it = array_running_.emplace(job.array_job_id, running).first;
    }
    return std::max(0, job.array_max_running - it->second);
  }

  // -p a,b: the first partition listed where the job starts now. When it
  // starts nowhere, the reason is the first partition's.
  PendingReason PlaceInPartitions(const core::Job& job, std::vector<core::NodeAlloc>* alloc) {
    if (job.partition.find(',') == std::string::npos) return Place(job, job.partition, alloc);
    PendingReason first = PendingReason::kNone;
    std::string first_unavailable;
    std::vector<PartitionState*> blocked_here;
    size_t pos = 0;
    while (pos <= job.partition.size()) {
      size_t end = job.partition.find(',', pos);
      if (end == std::string::npos) end = job.partition.size();
      PendingReason r = Place(job, job.partition.substr(pos, end - pos), alloc);
      if (r == PendingReason::kNone) {
        // A job that starts somewhere holds back no one where it did not fit.
        for (PartitionState* p : blocked_here) {
          p->blocked = false;
          p->reservation.reset();
        }
        return r;
      }
      if (r == PendingReason::kResources) blocked_here.push_back(current_);
      if (first == PendingReason::kNone) {
        first = r;
        first_unavailable = unavailable_;
      }
      pos = end + 1;
    }
    unavailable_ = std::move(first_unavailable);
    return first;
  }

  // Returns kNone with `alloc` filled when the job starts in partition
  // `name`, else its reason there.
  PendingReason Place(const core::Job& job, const std::string& name,
                      std::vector<core::NodeAlloc>* alloc) {
    PartitionState& p = Partition(name);
    current_ = &p;
    PendingReason reason = CheckEligibility(job, p.part, s_.now);
    if (reason != PendingReason::kNone) return reason;
    // A QOS limit holds the job back, not its partition.
    limit_reason_ = limits_.Check(job, &limit_detail_);
    if (limit_reason_ != PendingReason::kNone) return limit_reason_;
    // Behind a blocked job only backfill may start it.
    const bool behind = p.blocked;
    if (behind && !p.reservation) return PendingReason::kPriority;
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
    if (behind) return Backfill(job, m, *p.reservation, candidates, alloc);
    if (!candidates.empty() && SelectNodes(m, configs_, live_, candidates, &scratch_, alloc)) {
      return PendingReason::kNone;
    }
    reason = Diagnose(m, p);
    if (reason == PendingReason::kResources) {
      p.blocked = true;
      p.blocked_by = job.id;
      // Without the running jobs' ends there is nothing to plan from.
      if (s_.config->backfill && !s_.running.empty()) p.reservation = Reserve(m, p);
    }
    return reason;
  }

  // A job behind the partition's blocked one starts now if it cannot
  // delay that one's reservation: on nodes outside it, or anywhere if its
  // time limit ends by the reservation's start.
  PendingReason Backfill(const core::Job& job, const NodeMatch& m, const Reservation& res,
                         std::span<const int> candidates, std::vector<core::NodeAlloc>* alloc) {
    std::vector<int> outside;
    for (int i : candidates) {
      if (!std::binary_search(res.nodes.begin(), res.nodes.end(), i)) outside.push_back(i);
    }
    if (!outside.empty() && SelectNodes(m, configs_, live_, outside, &scratch_, alloc)) {
      return PendingReason::kNone;
    }
    const bool ends_in_time = job.time_limit_s >= 0 && s_.now + job.time_limit_s <= res.start;
    if (ends_in_time && !candidates.empty() &&
        SelectNodes(m, configs_, live_, candidates, &scratch_, alloc)) {
      return PendingReason::kNone;
    }
    return PendingReason::kPriority;
  }

  // The earliest time the job of `m` fits in partition `p` as the running
  // jobs and this pass's starts end, in order, and the nodes it takes
  // then; none when it fits after none of them.
  std::optional<Reservation> Reserve(const NodeMatch& m, const PartitionState& p) {
    std::vector<std::pair<int64_t, const std::vector<core::NodeAlloc>*>> ends;
    ends.reserve(s_.running.size() + started_.size());
    for (const RunningJob& r : s_.running) ends.emplace_back(r.expected_end, &r.job->alloc);
    for (const auto& [end, alloc] : started_) {
      if (end != kNever) ends.emplace_back(end, &alloc);
    }
    std::stable_sort(ends.begin(), ends.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    Overlay future = live_;
    std::vector<core::NodeAlloc> alloc;
    for (size_t k = 0; k < ends.size();) {
      const int64_t t = ends[k].first;
      for (; k < ends.size() && ends[k].first == t; ++k) {
        for (const core::NodeAlloc& share : *ends[k].second) {
          auto it = index_.find(share.node);
          if (it != index_.end()) future.Release(it->second, share, *configs_[it->second]);
        }
      }
      if (SelectNodes(m, configs_, future, p.usable, &scratch_, &alloc)) {
        Reservation r{std::max(t, s_.now), {}};
        for (const core::NodeAlloc& share : alloc) r.nodes.push_back(index_.at(share.node));
        std::sort(r.nodes.begin(), r.nodes.end());
        return r;
      }
    }
    return std::nullopt;
  }

  // Why a job that did not fit waits: never (BadConstraints), for nodes to
  // come back (ReqNodeNotAvail, with unavailable_ set), or for resources.
  PendingReason Diagnose(const NodeMatch& m, const PartitionState& p) {
    unavailable_.clear();
    if (!empty_) empty_ = Overlay::Empty(configs_);
    std::vector<core::NodeAlloc> ideal;
    if (!SelectNodes(m, configs_, *empty_, p.members, &scratch_, &ideal)) {
      return PendingReason::kBadConstraints;
    }
    // Every node of the partition is up: only resources are in the way.
    if (p.usable.size() == p.members.size()) return PendingReason::kResources;
    if (SelectNodes(m, configs_, *empty_, p.usable, &scratch_, &ideal)) {
      return PendingReason::kResources;
    }
    unavailable_ = UnavailableNodes(m, p);
    return PendingReason::kReqNodeNotAvail;
  }

  // The unusable nodes a job held back by them asked for (see
  // PendingDecision::unavailable_nodes).
  std::string UnavailableNodes(const NodeMatch& m, const PartitionState& p) const {
    std::vector<std::string> names;
    if (!m.required.empty()) {
      for (int i : m.required) {
        if (!usable_[i]) names.push_back(configs_[i]->name);
      }
    } else if (!m.request->features.empty() || !m.request->feature_any.empty()) {
      for (int i : p.members) {
        if (!usable_[i] && FilterNodeMatch(m, *configs_[i], i).ok()) {
          names.push_back(configs_[i]->name);
        }
      }
    }
    return util::CompressHostlist(names);
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
  // This pass's starts: when each ends by its time limit, and its shares.
  std::vector<std::pair<int64_t, std::vector<core::NodeAlloc>>> started_;
  std::string unavailable_;  // the last ReqNodeNotAvail diagnosis's nodes
  LimitUsage limits_;
  PendingReason limit_reason_ = PendingReason::kNone;  // the last QOS limit hit
  std::string limit_detail_;                           // and what holds it
  SelectScratch scratch_;
  // Tasks of each array holding resources, counting the starts of this pass.
  std::map<core::JobId, int> array_running_;
};

}  // namespace

Plan Schedule(const Snapshot& snapshot) {
  Pass pass(snapshot);
  return pass.Run();
}

}  // namespace muster::sched

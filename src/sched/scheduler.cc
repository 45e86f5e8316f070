// One scheduling pass, assembled from the stages (see pipeline.h):
//   for each pending job, in the order given:
//     1. eligibility (held, begin time, partition state and limits)
//     2. partition held back by an earlier job (sched/builtin, or a job
//        that could not be planned) -> Priority
//     3. the request, computed once (MakeResourceRequest)
//     4. selection over the partition's usable nodes (state filter applied
//        once per partition per pass), with the job's node predicates and
//        the per-node fit, over what is free now, or with backfill over
//        what stays free for the job's whole time limit (the profile)
//     5. reserve the choice so later jobs see it
//   (an array's pending part goes round again for each further task, up to
//   its %N throttle), and, for a job that did not fit, the reason:
//   BadConstraints when no set of the partition's nodes could ever hold it,
//   ReqNodeNotAvail when the nodes that are up could not hold it even if
//   idle (naming the unusable nodes it asked for), else Resources for the
//   first such job of a partition and Priority after it. Without backfill
//   that job blocks its partition (Slurm's main scheduler); with backfill it
//   is planned: its earliest start in the availability profile is reserved,
//   and later jobs start now only where they cannot delay it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "sched/pipeline.h"
#include "util/hostlist.h"

namespace muster::sched {
namespace {

using core::PendingReason;

// A job started this pass whose time limit is unlimited never ends as far
// as the planner can tell.
constexpr int64_t kNever = Profile::kForever;

// The order in which a start now tries the nodes of one Weight: the
// busiest first (the default, a best fit: fewest free GPUs, then CPUs, so
// whole nodes stay whole), the least loaded first (CR_LLN, LLN=YES: most
// idle CPUs), or configuration order (a partition the pass does not know).
enum class Placement { kFirstFit, kPack, kLeastLoaded };

struct PartitionState {
  const core::Partition* part = nullptr;
  std::vector<int> members;    // nodes of the partition in the snapshot, by weight
  std::vector<int> usable;     // members that take new work now, by weight
  bool blocked = false;        // a job of this partition waits for Resources
  core::JobId blocked_by = 0;  // that job
  // Later jobs of the partition wait with Priority without being tried:
  // sched/builtin, or with backfill a job that no known end lets start
  // within bf_window (nothing to plan it by, so nothing may pass it).
  bool held_back = false;
  size_t gpu_less = 0;        // usable nodes without GPUs
  size_t live_begin = 0;      // usable[0, live_begin) have no free CPU left
  size_t gpu_live_begin = 0;  // usable[0, gpu_live_begin): no free CPU or GPU
  // The usable nodes in the placement's order (busiest or least loaded
  // first) for jobs without GPUs [0] and with [1], by what is free now;
  // built on first use and kept in order as the pass starts jobs.
  std::array<std::vector<int>, 2> ordered;
  std::array<bool, 2> ordered_built{false, false};
  // How many of ordered[g] lead with nodes full for a job without [0] or
  // with [1] GPUs on every node (at least; the scan goes on from there).
  std::array<std::array<size_t, 2>, 2> ordered_full{};
  Placement placement = Placement::kFirstFit;  // LLN=YES, else the cluster's
};

// The earliest start found for a job that cannot start now.
struct Planned {
  int64_t start = 0;
  PartitionState* partition = nullptr;
  std::vector<core::NodeAlloc> alloc;
};

// The indices of a partition's nodes, by Weight, then index.
std::vector<int> MembersOf(const core::Partition& part, NodeConfigs configs,
                           const std::unordered_map<std::string_view, int>& index) {
  std::vector<int> members;
  members.reserve(part.nodes.size());
  for (const auto& n : part.nodes) {
    auto idx = index.find(n);
    if (idx != index.end()) members.push_back(idx->second);
  }
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  SortByWeight(configs, &members);
  return members;
}

class Pass {
 public:
  explicit Pass(const Snapshot& s)
      : s_(s), stages_(JobStagesFor(s)), preemption_(PreemptionFor(s)) {
    configs_.reserve(s.nodes.size());
    usable_.reserve(s.nodes.size());
    if (s.node_index == nullptr) own_index_.reserve(s.nodes.size());
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      const core::Node* n = s.nodes[i];
      configs_.push_back(&n->config);
      usable_.push_back(FilterNodeState(*n).ok());
      if (s.node_index == nullptr) {
        own_index_.emplace(n->config.name, static_cast<int>(i));  // first of duplicates wins
      }
    }
    live_ = Overlay::FromNodes(s.nodes);
    live_.SetGpuReserve(s.config->gpu_reserve_cpus, s.config->gpu_reserve_mem_mb);
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      if (usable_[i]) free_cpus_now_ += live_.at(static_cast<int>(i)).cpus;
    }
    if (s.config->topology_tree) {
      const std::vector<config::Switch>& switches = s.config->switches;
      leaf_of_.assign(s.nodes.size(), -1);
      for (size_t i = 0; i < s.nodes.size(); ++i) {
        auto it = s.config->leaf_of_node.find(s.nodes[i]->config.name);
        if (it != s.config->leaf_of_node.end()) leaf_of_[i] = it->second;
      }
      root_of_.resize(switches.size());
      for (size_t k = 0; k < switches.size(); ++k) {
        int top = static_cast<int>(k);
        while (switches[top].parent >= 0) top = switches[top].parent;
        root_of_[k] = top;
      }
    }
    if (s.config->least_loaded) placement_ = Placement::kLeastLoaded;
  }

  Plan Run() {
    Plan plan;
    plan.pending.reserve(s_.pending.size());
    // Reservations hold their nodes in the profile from the start.
    if (!s_.reservations.empty()) EnsureProfile();
    for (const core::Reservation* r : s_.reservations) {
      SameUntil(r->start);
      SameUntil(r->end);
    }

    // A heterogeneous job's components, placed together when the first
    // of them comes up.
    std::map<core::JobId, std::vector<const core::Job*>> het_jobs;
    for (const core::Job* job : s_.pending) {
      if (job->IsHetComponent()) het_jobs[job->het_job_id].push_back(job);
    }
    for (auto& [id, components] : het_jobs) {
      std::sort(components.begin(), components.end(),
                [](const core::Job* a, const core::Job* b) {
                  return a->het_job_offset < b->het_job_offset;
                });
    }

    // Without plan_all, the fewest CPUs any job from each on could start
    // with: once fewer are free, nothing after can start now.
    std::vector<int64_t> fewest_from(s_.pending.size() + 1, INT64_MAX);
    if (!s_.plan_all) {
      for (size_t k = s_.pending.size(); k-- > 0;) {
        const core::JobRequest& r = s_.pending[k]->req;
        const int64_t least = std::max<int64_t>(
            {1, int64_t{r.ntasks} * std::max(1, r.cpus_per_task), int64_t{r.min_nodes}});
        fewest_from[k] = std::min(fewest_from[k + 1], least);
      }
    }
    std::vector<core::NodeAlloc> alloc;
    bool one_waits = false;  // a job before this one waits for resources
    for (size_t k = 0; k < s_.pending.size(); ++k) {
      const core::Job* job = s_.pending[k];
      if (!s_.plan_all && !preemption_ && free_cpus_now_ < fewest_from[k]) {
        // Nothing can start now, and only a start could change the plan's
        // starts: the rest wait unplanned.
        plan.pending.push_back(PendingDecision{
            job->id, one_waits ? PendingReason::kPriority : PendingReason::kResources});
        continue;
      }
      if (job->IsHetComponent()) {
        auto components = het_jobs.find(job->het_job_id);
        if (components == het_jobs.end()) continue;  // placed with an earlier one
        PlaceHetJob(components->second, &plan, &one_waits);
        het_jobs.erase(components);
        continue;
      }
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
      planned_.reset();
      while (started < want) {
        reason = PlaceInPartitions(*job, &alloc);
        if (reason != PendingReason::kNone) break;
        // The job stages again, for what the job would really take.
        reason = Admit(*job, alloc);
        if (reason != PendingReason::kNone) {
          alloc.clear();
          break;
        }
        Start(*job, StartDecision{job->id, current_->part->name, std::move(alloc)}, one_waits,
              &plan);
        alloc.clear();
        ++started;
      }
      const bool left_over =
          job->IsArrayPendingPart() && started < static_cast<int>(job->array_pending.size());
      if (started == 0 || left_over) {
        if (reason == PendingReason::kNone) reason = cut;
        plan.pending.push_back(Waits(*job, reason));
        const bool waits_its_turn = reason == PendingReason::kResources ||
                                    reason == PendingReason::kPriority ||
                                    reason == PendingReason::kReservation;
        if (waits_its_turn && planned_) Commit(*job, *planned_, &plan);
        one_waits = one_waits || reason == PendingReason::kResources;
      }
    }
    plan.preemptions = std::move(preemptions_);
    plan.figures.depth = static_cast<int64_t>(s_.pending.size());
    if (profile_ && s_.config->backfill) {
      plan.figures.planned = true;
      plan.figures.table_size = static_cast<int64_t>(profile_->changes().size());
      // A job planned no start within bf_window may find one once the
      // window reaches the next change past it (on bf_resolution's grid).
      const int64_t window = s_.config->bf.window_s;
      const int64_t horizon = s_.now + window;
      auto c = profile_->changes().upper_bound(horizon - s_.config->bf.resolution_s);
      for (; c != profile_->changes().end() && *c != kNever; ++c) {
        const int64_t at = RoundUp(*c, *c);
        if (at > horizon) {
          SameUntil(at - window);
          break;
        }
      }
    }
    plan.same_until = same_until_;
    return plan;
  }

 private:
  // A start: taken from what is free now (and from the profile), counted
  // by the job stages and the array's throttle.
  void Start(const core::Job& job, StartDecision start, bool one_waits, Plan* plan) {
    const int64_t end = EndOf(job, s_.now);
    for (const auto& share : start.alloc) {
      const int i = IndexOf(share);
      assert(i >= 0);  // the pass's own selection
      ReserveLive(i, share);
      if (profile_) profile_->Reserve(i, s_.now, end, share);
    }
    for (const auto& stage : stages_) stage->Started(job, start.alloc);
    if (!profile_) started_.emplace_back(end, start.alloc);
    start.backfilled = one_waits;
    plan->starts.push_back(std::move(start));
    if (one_waits) ++plan->figures.backfilled;
    if (job.array_job_id != 0) ++array_running_[job.array_job_id];
  }

  // The decision for a job left waiting with `reason`, with what the last
  // placement found holding it back.
  PendingDecision Waits(const core::Job& job, PendingReason reason) const {
    PendingDecision d{job.id, reason, {}};
    if (reason == PendingReason::kReqNodeNotAvail) {
      d.unavailable_nodes = unavailable_;
      d.reserved = reserved_;
    }
    if (reason == verdict_.reason) {
      d.stage = verdict_.stage;
      d.detail = verdict_.detail;
    }
    return d;
  }

  // A heterogeneous job: every component is placed, each on nodes no
  // other component of it takes (as Slurm's do), before any starts; when
  // one cannot start now none does, and all wait with its reason. A
  // component missing from the queue (held, waiting on a dependency)
  // holds the others back too. No start is planned for such a job (see
  // the header).
  void PlaceHetJob(const std::vector<const core::Job*>& components, Plan* plan, bool* one_waits) {
    PendingReason reason = PendingReason::kNone;
    std::vector<StartDecision> starts;
    if (static_cast<int>(components.size()) == components.front()->het_job_size) {
      for (const core::Job* c : components) {
        std::vector<core::NodeAlloc> alloc;
        reason = PlaceInPartitions(*c, &alloc);
        if (reason == PendingReason::kNone) reason = Admit(*c, alloc);
        if (reason != PendingReason::kNone) break;
        for (const core::NodeAlloc& share : alloc) het_taken_.push_back(share.node);
        starts.push_back(StartDecision{c->id, current_->part->name, std::move(alloc)});
      }
    }
    het_taken_.clear();
    planned_.reset();
    if (starts.size() == components.size()) {
      for (size_t k = 0; k < starts.size(); ++k) {
        Start(*components[k], std::move(starts[k]), *one_waits, plan);
      }
      return;
    }
    for (const core::Job* c : components) plan->pending.push_back(Waits(*c, reason));
    *one_waits = *one_waits || reason == PendingReason::kResources;
  }

  // The index of a share's node in the snapshot (-1: not one of its nodes).
  int IndexOf(const core::NodeAlloc& share) const {
    const int hint = share.node_index;
    if (hint >= 0 && static_cast<size_t>(hint) < configs_.size() &&
        configs_[hint]->name == share.node) {
      return hint;
    }
    auto it = index_.find(share.node);
    return it == index_.end() ? -1 : it->second;
  }

  // A moment at which the time alone may change what this pass decides.
  void SameUntil(int64_t t) {
    if (t > s_.now) same_until_ = std::min(same_until_, t);
  }

  // When a job started at `start` ends by its time limit.
  static int64_t EndOf(const core::Job& job, int64_t start) {
    return job.time_limit_s >= 0 ? start + job.time_limit_s : kNever;
  }

  // Reserves a planned start in the profile, so later jobs plan around it.
  void Commit(const core::Job& job, const Planned& planned, Plan* plan) {
    SameUntil(planned.start);
    const int64_t end = EndOf(job, planned.start);
    for (const core::NodeAlloc& share : planned.alloc) {
      profile_->Reserve(IndexOf(share), planned.start, end, share);
    }
    plan->planned.push_back(
        PlannedStart{job.id, planned.partition->part->name, planned.start, planned.alloc});
    ++planned_count_;
    if (s_.config->bf.max_job_user > 0) ++planned_by_user_[job.req.uid];
  }

  // Whether backfill plans the job's start (bf_max_job_test,
  // bf_max_job_user, bf_min_prio_reserve).
  bool MayPlan(const core::Job& job) const {
    const config::BackfillConfig& bf = s_.config->bf;
    if (!s_.config->backfill) return false;
    if (bf.max_job_test > 0 && planned_count_ >= bf.max_job_test) return false;
    if (bf.min_prio_reserve > 0 && job.priority < bf.min_prio_reserve) return false;
    if (bf.max_job_user > 0) {
      auto it = planned_by_user_.find(job.req.uid);
      if (it != planned_by_user_.end() && it->second >= bf.max_job_user) return false;
    }
    return true;
  }

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

  // The job stages' pre-filters for `job` in `part`: the first refusal,
  // recorded in verdict_.
  PendingReason PreFilter(const core::Job& job, const core::Partition* part) {
    verdict_ = {};
    return FirstRefusal(
        [&](JobStage& stage, std::string* detail) { return stage.PreFilter(job, part, detail); });
  }

  // The job stages on what the selection took for `job`.
  PendingReason Admit(const core::Job& job, const std::vector<core::NodeAlloc>& alloc) {
    return FirstRefusal(
        [&](JobStage& stage, std::string* detail) { return stage.Admit(job, alloc, detail); });
  }

  // The first job stage whose `check` refuses, recorded in verdict_.
  template <typename Check>
  PendingReason FirstRefusal(Check check) {
    for (const auto& stage : stages_) {
      std::string detail;
      const PendingReason reason = check(*stage, &detail);
      if (reason != PendingReason::kNone) {
        verdict_ = {stage->name(), reason, std::move(detail)};
        return reason;
      }
    }
    return PendingReason::kNone;
  }

  // -p a,b: the first partition listed where the job starts now. When it
  // starts nowhere, the reason is the first partition's, and the start
  // planned is the earliest of any.
  PendingReason PlaceInPartitions(const core::Job& job, std::vector<core::NodeAlloc>* alloc) {
    if (job.partition.find(',') == std::string::npos) return Place(job, job.partition, alloc);
    PendingReason first = PendingReason::kNone;
    std::string first_unavailable;
    bool first_reserved = false;
    StageVerdict first_verdict;
    std::vector<PartitionState*> blocked_here;
    size_t pos = 0;
    while (pos <= job.partition.size()) {
      size_t end = job.partition.find(',', pos);
      if (end == std::string::npos) end = job.partition.size();
      PendingReason r = Place(job, job.partition.substr(pos, end - pos), alloc);
      if (r == PendingReason::kNone) {
        // A job that starts somewhere holds back no one where it did not fit.
        for (PartitionState* p : blocked_here) p->blocked = p->held_back = false;
        planned_.reset();
        return r;
      }
      if (r == PendingReason::kResources) blocked_here.push_back(current_);
      if (first == PendingReason::kNone) {
        first = r;
        first_unavailable = unavailable_;
        first_reserved = reserved_;
        first_verdict = verdict_;
      }
      pos = end + 1;
    }
    unavailable_ = std::move(first_unavailable);
    reserved_ = first_reserved;
    verdict_ = std::move(first_verdict);
    return first;
  }

  // Returns kNone with `alloc` filled when the job starts in partition
  // `name`, else its reason there (and, with backfill, its earliest start
  // there in planned_ when that is the earliest so far).
  PendingReason Place(const core::Job& job, const std::string& name,
                      std::vector<core::NodeAlloc>* alloc) {
    PartitionState& p = Partition(name);
    current_ = &p;
    // What a job stage refuses (a QOS limit among them) holds the job
    // back, not its partition.
    PendingReason reason = PreFilter(job, p.part);
    if (reason != PendingReason::kNone) return reason;
    if (p.held_back) return PendingReason::kPriority;
    // --reservation: its window must have begun (before it, the job is
    // planned for its start).
    int tag = -1;
    bool before_window = false;
    if (!job.req.reservation.empty()) {
      tag = ReservationOf(job);
      if (tag < 0) return PendingReason::kReservation;
      before_window = s_.now < s_.reservations[tag]->start;
    }
    if (profile_) profile_->Exempt(tag);
    auto request = MakeResourceRequest(job.req, s_.config->def_mem_per_cpu_mb);
    if (!request.ok()) {
      return before_window ? PendingReason::kReservation : PendingReason::kBadConstraints;
    }
    request_ = std::move(request).value();
    // A heterogeneous job's component keeps off its earlier ones' nodes
    // (ShapeOf counts them).
    request_.excluded_nodes.insert(request_.excluded_nodes.end(), het_taken_.begin(),
                                   het_taken_.end());
    NodeMatch m = Compile(request_);
    m.all_have_gpus = p.gpu_less == 0;
    // A start now takes nodes in the partition's placement order (below);
    // planning, diagnosis and preemption in config order.
    m.pack_tasks = s_.config->pack_nodes;
    if (s_.config->topology_tree) {
      m.leaf_of = &leaf_of_;
      m.root_of = &root_of_;
      // --switches=N holds out for N leaves until its wait is over.
      const int64_t wait =
          job.req.switches_wait_s >= 0 ? job.req.switches_wait_s : s_.config->max_switch_wait_s;
      const int64_t since = std::max(job.submit_time, job.req.begin_time);
      if (job.req.switches > 0 && s_.now < since + wait) {
        m.max_leaves = job.req.switches;
        SameUntil(since + wait);
      }
    }
    shape_ = ShapeOf(request_, p) + "|" + job.req.reservation;
    if (m.max_leaves > 0) shape_ += "|switches=" + std::to_string(m.max_leaves);
    // Nodes with no free CPU take nothing more this pass (every job needs
    // one), nodes with no free GPU no job that needs GPUs on every node;
    // first fit fills the list from the front, so skip those prefixes.
    // (Planned starts only take more, so this holds for the profile too.)
    auto full = [&](size_t k, bool gpus) { return Full(p.usable[k], gpus); };
    while (p.live_begin < p.usable.size() && full(p.live_begin, false)) ++p.live_begin;
    p.gpu_live_begin = std::max(p.gpu_live_begin, p.live_begin);
    while (p.gpu_live_begin < p.usable.size() && full(p.gpu_live_begin, true)) ++p.gpu_live_begin;
    // (--gpus without -n and -N spreads over GPU nodes only.)
    const bool gpus_everywhere =
        request_.gpus_per_node > 0 || (request_.gpus_per_job > 0 && !request_.ntasks_set &&
                                       request_.min_nodes == 1 && request_.max_nodes > 1);
    const size_t begin = gpus_everywhere ? p.gpu_live_begin : p.live_begin;
    std::span<const int> candidates(p.usable.data() + begin, p.usable.size() - begin);
    if (p.placement != Placement::kFirstFit) {
      // In the placement's order, kept by the pass (sorting each job's
      // candidates would cost a sort per job); full nodes lead it.
      const bool gpus = AsksForGpus(request_);
      const std::vector<int>& order = Ordered(p, gpus);
      size_t& k = p.ordered_full[gpus][gpus_everywhere];
      while (k < order.size() && Full(order[k], gpus_everywhere)) ++k;
      candidates = std::span<const int>(order.data() + k, order.size() - k);
    }
    // A job of a reservation runs on its nodes (with FLEX, anywhere).
    std::vector<int> inside;
    if (tag >= 0 && !s_.reservations[tag]->Has(core::kResvFlex)) {
      const std::vector<std::string>& names = s_.reservations[tag]->nodes;
      for (int i : candidates) {
        if (std::find(names.begin(), names.end(), configs_[i]->name) != names.end()) {
          inside.push_back(i);
        }
      }
      candidates = inside;
    }
    if (before_window) {
      PlanInReservation(job, m, p, tag, s_.reservations[tag]->start);
      return PendingReason::kReservation;
    }
    if (StartsNow(job, m, candidates, alloc)) return PendingReason::kNone;
    if (p.blocked && !s_.config->backfill) {
      p.held_back = true;
      return PendingReason::kPriority;
    }
    reason = Diagnose(m, p);
    if (reason == PendingReason::kBadConstraints) RecordNever(job, p);
    if (reason != PendingReason::kResources) return reason;
    if (RequiredNodeReserved(job, m, tag)) {
      reserved_ = true;
      return PendingReason::kReqNodeNotAvail;
    }
    if (preemption_) Preempt(job, m, p);
    if (p.blocked) {
      reason = PendingReason::kPriority;
    } else {
      p.blocked = true;
      p.blocked_by = job.id;
    }
    if (!s_.config->backfill) {
      p.held_back = true;
      return reason;
    }
    if (tag >= 0) {
      PlanInReservation(job, m, p, tag, s_.now + 1);
      return reason;
    }
    if (!MayPlan(job)) return reason;
    std::optional<Planned> planned = PlanStart(job, m, p);
    if (!planned) return reason;
    if (!planned_ || planned->start < planned_->start) planned_ = std::move(planned);
    return reason;
  }

  // Whether the job starts now on `candidates`, filling `alloc`: on what is
  // free now, and with planned starts, for its whole time limit. As the
  // pass only ever takes, a request that did not fit now does not fit for
  // later jobs of the pass either (nor for a longer time limit), which
  // spares a scan of the partition for each job of a long queue.
  bool StartsNow(const core::Job& job, const NodeMatch& m, std::span<const int> candidates,
                 std::vector<core::NodeAlloc>* alloc) {
    if (candidates.empty()) return false;
    const int64_t time = job.time_limit_s >= 0 ? job.time_limit_s : kNever;
    auto failed = now_fails_.find(shape_);
    if (failed != now_fails_.end() && time >= failed->second) return false;
    // What is free now first (no planned start can make room).
    bool fits = SelectNodes(m, configs_, live_, candidates, &scratch_, alloc);
    int64_t fails_from = 0;
    if (fits && profile_ && profile_->reserved()) {
      view_.SetWindow(s_.now, EndOf(job, s_.now));
      fits = SelectNodes(m, configs_, view_, candidates, &scratch_, alloc);
      fails_from = time;
    }
    if (!fits) {
      int64_t& from = now_fails_.try_emplace(shape_, kNever).first->second;
      from = std::min(from, fails_from);
    }
    return fits;
  }

  // The profile, made on the first job that cannot start now: free now,
  // more as the running jobs and this pass's starts end.
  Profile& EnsureProfile() {
    if (profile_) return *profile_;
    profile_.emplace(configs_, live_, s_.now);
    first_start_ = RoundUp(s_.now + 1, s_.now + 1);
    auto release = [&](int64_t end, const std::vector<core::NodeAlloc>& alloc) {
      for (const core::NodeAlloc& share : alloc) {
        const int i = IndexOf(share);
        if (i >= 0) profile_->Release(i, end, share);
      }
    };
    for (const RunningJob& r : s_.running) release(r.expected_end, r.job->alloc);
    for (const auto& [end, alloc] : started_) release(end, alloc);
    started_.clear();
    for (size_t k = 0; k < s_.reservations.size(); ++k) {
      const core::Reservation& r = *s_.reservations[k];
      for (const std::string& name : r.nodes) {
        auto it = index_.find(name);
        if (it != index_.end()) profile_->Block(it->second, r.start, r.end, static_cast<int>(k));
      }
    }
    view_ = Overlay::ViewOf(*profile_, live_);
    return *profile_;
  }

  // The index in the snapshot of the reservation the job names; -1 = gone.
  int ReservationOf(const core::Job& job) const {
    for (size_t k = 0; k < s_.reservations.size(); ++k) {
      if (s_.reservations[k]->name == job.req.reservation) return static_cast<int>(k);
    }
    return -1;
  }

  // How long the planner holds a job's place: its time limit rounded up to
  // a class (10, 30 minutes, 1, 2, 4, 8 hours, ... doubling), so that jobs
  // alike share their searches; a start found for the class holds for the
  // job. The reservation itself is for the time limit.
  static int64_t SpanOf(const core::Job& job) {
    if (job.time_limit_s < 0) return kNever;
    int64_t span = 600;
    if (job.time_limit_s > span) span = 1800;
    while (job.time_limit_s > span) span = span == 1800 ? 3600 : span * 2;
    return span;
  }
  static int64_t EndAt(int64_t t, int64_t span) { return span == kNever ? kNever : t + span; }

  // The earliest moment after now (rounded up to bf_resolution, within
  // bf_window) from which the job of `m` fits in partition `p` for its
  // span, and the nodes it takes then. Three facts bound the search:
  // planned starts only take, so requests alike (same partition, request
  // and span) only ever start later than the last one planned, and a node
  // whose profile has not changed keeps its earliest start; and a request
  // that finds no start in the window finds none with a longer span either.
  std::optional<Planned> PlanStart(const core::Job& job, const NodeMatch& m, PartitionState& p) {
    EnsureProfile();
    const int64_t horizon = s_.now + s_.config->bf.window_s;
    const int64_t span = SpanOf(job);
    const ResourceRequest& r = *m.request;
    auto fails = fails_from_.find(shape_);
    if (fails != fails_from_.end() && span >= fails->second) return std::nullopt;
    std::optional<Planned> out;
    if (r.max_nodes == 1 && m.required.empty()) {
      out = EarliestOnOneNode(span, m, p, '=');
    } else if (r.min_nodes == 1 && m.required.empty() && FitsOneNode(m, p)) {
      // A job that may spread is planned on one node where one can hold
      // it: that start can be later than a spread one, never earlier, and
      // each pass still tries to start it now spread over several. (A
      // search over every node at every moment costs a thousand times
      // more on a large cluster.)
      ResourceRequest one = r;
      one.max_nodes = 1;
      NodeMatch single = m;
      single.request = &one;
      out = EarliestOnOneNode(span, single, p, '1');
    } else if (r.min_nodes == r.max_nodes && r.gpus_per_job == 0 && m.required.empty()) {
      out = EarliestOnNodes(span, m, p);
    } else {
      int64_t& from = shape_from_[fmt::format("{}|{}", shape_, span)];
      from = std::max(from, RoundUp(s_.now + 1, s_.now + 1));
      out = EarliestAnywhere(span, m, p, from);
      if (out) from = out->start;
    }
    if (out && out->start <= horizon) return out;
    int64_t& fail = fails_from_.try_emplace(shape_, kNever).first->second;
    fail = std::min(fail, span);
    // Past bf_window it may still start by the known ends (no reservation,
    // as in Slurm); if it fits after none of them, nothing may pass it.
    // (Asked once per shape: planned starts past the window are few.)
    if (!after_all_ends_.insert(shape_).second) return std::nullopt;
    // (GpuReserve aside: a job only the reserve keeps out waits for GPUs to
    // be taken, which no plan foresees, and holds back nothing.)
    view_.SetWindow(*profile_->changes().rbegin(), kNever);
    view_.SetGpuReserve(0, 0);
    std::vector<core::NodeAlloc> alloc;
    if (!SelectNodes(m, configs_, view_, p.usable, &scratch_, &alloc)) p.held_back = true;
    view_.SetGpuReserve(s_.config->gpu_reserve_cpus, s_.config->gpu_reserve_mem_mb);
    return std::nullopt;
  }

  // A moment rounded up to a multiple of bf_resolution, and no earlier
  // than `from`. The grid is fixed, not counted from now: rounded from
  // now, a planned start would stay a resolution ahead of every pass, and
  // a stream of short jobs could push it back for ever.
  int64_t RoundUp(int64_t t, int64_t from) const {
    const int64_t r = s_.config->bf.resolution_s;
    const int64_t up = t >= 0 ? (t + r - 1) / r * r : t / r * r;
    return std::max(up, from);
  }

  // Node `n` holds the job of `m` over [t, t + span).
  bool FitsAt(int n, int64_t t, int64_t span, const NodeMatch& m,
              std::vector<core::NodeAlloc>* alloc) {
    view_.SetWindow(t, EndAt(t, span));
    return SelectNodes(m, configs_, view_, std::span<const int>(&n, 1), &scratch_, alloc);
  }

  // The least a one-node request takes on node `n`: a necessary condition
  // of FitsAt that the profile answers without a selection.
  struct Need {
    int cpus;
    int64_t mem_mb;
    int64_t gpus;
    bool idle;  // --exclusive
  };
  Need NeedOn(int n, const ResourceRequest& r) const {
    assert(r.max_nodes == 1);
    const core::NodeConfig& node = *configs_[n];
    const Share share = BlockShare(r, 1, 0);
    const int cpus = ShareCpus(r, node, share.tasks, share.gpus);
    return Need{cpus, ShareMem(r, node, cpus, share.gpus), share.gpus, r.exclusive};
  }

  // Whether node `n` has `need` free throughout [t, t + span): without it
  // FitsAt cannot hold there.
  bool HasRoom(int n, int64_t t, int64_t span, const Need& need) const {
    NodeFree free;
    uint64_t used = 0;
    profile_->FreeOver(n, t, EndAt(t, span), &free, &used);
    if (free.cpus < need.cpus || free.mem_mb < need.mem_mb || (need.idle && !free.idle)) {
      return false;
    }
    if (need.gpus == 0) return true;
    const uint32_t count = std::min<uint32_t>(live_.at(n).gpu_count, Profile::kMaxGpus);
    const uint64_t all = count == 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1;
    return std::popcount(all & ~used) >= need.gpus;
  }

  // The earliest moment from `from` (within bf_window) at which node `n`
  // holds the one-node job of `m` for `span`, looking only where the node
  // gains resources; 0 = none. `holds_idle` caches whether the node could
  // hold it at all (-1 = not known yet).
  int64_t EarliestOn(int n, int64_t span, const NodeMatch& m, int64_t from, int8_t* holds_idle) {
    const int64_t stop = s_.now + s_.config->bf.window_s;
    if (from > stop) return 0;
    const Need need = NeedOn(n, *m.request);
    auto fits = [&](int64_t t) {
      const bool room = HasRoom(n, t, span, need);
      const bool fits = room && FitsAt(n, t, span, m, &alloc_);
      assert(room || !FitsAt(n, t, span, m, &alloc_));
      return fits;
    };
    if (fits(from)) return from;
    // A node that could not hold it even idle never will.
    if (*holds_idle < 0) {
      if (!empty_) empty_ = Overlay::Empty(configs_);
      *holds_idle =
          SelectNodes(m, configs_, *empty_, std::span<const int>(&n, 1), &scratch_, &alloc_);
    }
    if (*holds_idle == 0) return 0;
    int64_t found = 0;
    int64_t tried = from;
    profile_->ForEachRise(n, from, [&](int64_t rise) {
      const int64_t t = RoundUp(rise, from);
      if (t > stop) return false;
      if (t == tried) return true;
      tried = t;
      if (!fits(t)) return true;
      found = t;
      return false;
    });
    return found;
  }

  // Each node's earliest start for one shape of request and span, by
  // (start, preference), worked out lazily: an entry starts as its node's
  // BoundOf (shared by every shape), and one whose node changed since (a
  // start was planned there) is a lower bound too; either is worked out
  // when it reaches the top. The first query works through the nodes in
  // (bound, preference) order until one fits at its bound, as first fit
  // does; later ones pay only for the nodes that changed.
  struct NodeStart {
    int64_t start;
    int rank;          // in the partition's preference order (its node: NodeQueue::node)
    uint32_t version;  // of the node's profile when worked out (see kBounded)
    bool operator>(const NodeStart& o) const {
      return start != o.start ? start > o.start : rank > o.rank;
    }
  };
  // What a queue of nodes' earliest starts keeps beside its order.
  class NodeQueueBase {
   public:
    NodeQueueBase() = default;
    // `nodes`: the partition's usable nodes, in preference order.
    explicit NodeQueueBase(std::span<const int> nodes)
        : holds_idle(nodes.size(), -1), nodes_(nodes) {}
    int node(const NodeStart& e) const { return nodes_[static_cast<size_t>(e.rank)]; }
    // By rank: whether the node could hold the request at all, once known
    // (EarliestOn).
    std::vector<int8_t> holds_idle;

   private:
    std::span<const int> nodes_;
  };

  // A min-heap of nodes' earliest starts, with a replacement of the top
  // that sifts down once where a pop and a push would sift twice. Any
  // entry may be pushed (EarliestOnNodes puts back what it took).
  class NodeHeap : public NodeQueueBase {
   public:
    NodeHeap() = default;
    NodeHeap(std::vector<NodeStart> all, std::span<const int> nodes)
        : NodeQueueBase(nodes), v_(std::move(all)) {
      // From the last entry with children up.
      for (size_t i = v_.size() < 2 ? 0 : (v_.size() - 2) / kArity + 1; i-- > 0;) {
        SiftDown(i, v_[i]);
      }
    }
    bool empty() const { return v_.empty(); }
    const NodeStart& top() const { return v_.front(); }
    void pop() {
      const NodeStart last = v_.back();
      v_.pop_back();
      if (!v_.empty()) SiftDown(0, last);
    }
    void push(const NodeStart& e) {
      size_t i = v_.size();
      v_.push_back(e);
      while (i > 0) {
        const size_t parent = (i - 1) / kArity;
        if (!(v_[parent] > e)) break;
        v_[i] = v_[parent];
        i = parent;
      }
      v_[i] = e;
    }
    // The top, worked out again (never earlier), back in its place.
    void ReplaceTop(const NodeStart& e) { SiftDown(0, e); }

   private:
    // A heap of four children per entry: half the levels of a binary one,
    // and an entry's children side by side in memory.
    static constexpr size_t kArity = 4;
    void SiftDown(size_t i, NodeStart e) {  // e by value: it may be an entry
      const size_t n = v_.size();
      for (;;) {
        const size_t first = kArity * i + 1;
        if (first >= n) break;
        size_t c = first;
        const size_t last = std::min(first + kArity, n);
        for (size_t k = first + 1; k < last; ++k) {
          if (v_[c] > v_[k]) c = k;  // the earliest child
        }
        if (!(e > v_[c])) break;
        v_[i] = v_[c];
        i = c;
      }
      v_[i] = e;
    }
    std::vector<NodeStart> v_;
  };

  // The same order as a radix heap, for a queue whose entries only ever
  // move later (no entry is pushed below the last top): refreshing a stale
  // top, most of the planner's time, appends it to a bucket instead of
  // sifting it through a heap whose every level is a cache miss on a large
  // cluster. An entry's key is its start (from `base`) and rank; it sits in
  // the bucket of the highest bit in which it differs from the last top's.
  class NodeRadixQueue : public NodeQueueBase {
   public:
    NodeRadixQueue() = default;
    NodeRadixQueue(const std::vector<NodeStart>& all, std::span<const int> nodes, int64_t base)
        : NodeQueueBase(nodes), base_(base) {
      for (const NodeStart& e : all) Insert(e);
    }
    bool empty() const { return size_ == 0; }
    const NodeStart& top() {
      Settle();
      return buckets_[0].front();
    }
    void pop() {
      Settle();
      buckets_[0].pop_back();
      --size_;
    }
    void ReplaceTop(const NodeStart& e) {
      pop();
      Insert(e);
    }

   private:
    uint64_t Key(const NodeStart& e) const {
      assert(e.start >= base_ && e.rank >= 0);
      return static_cast<uint64_t>(e.start - base_) << 32 | static_cast<uint32_t>(e.rank);
    }
    void Insert(const NodeStart& e) {
      assert(Key(e) >= last_);
      buckets_[static_cast<size_t>(std::bit_width(Key(e) ^ last_))].push_back(e);
      ++size_;
    }
    // Brings the least key to bucket 0 (keys are unique: one rank each).
    void Settle() {
      if (!buckets_[0].empty()) return;
      size_t b = 1;
      while (buckets_[b].empty()) ++b;
      std::vector<NodeStart>& from = buckets_[b];
      last_ = Key(*std::min_element(from.begin(), from.end(),
                                    [&](const auto& x, const auto& y) { return Key(x) < Key(y); }));
      for (const NodeStart& e : from) {
        buckets_[static_cast<size_t>(std::bit_width(Key(e) ^ last_))].push_back(e);
      }
      from.clear();
    }
    int64_t base_ = 0;
    uint64_t last_ = 0;
    size_t size_ = 0;
    std::array<std::vector<NodeStart>, 65> buckets_;
  };
  // A NodeStart's version with this bit: its start is only BoundOf's at
  // that version.
  static constexpr uint32_t kBounded = uint32_t{1} << 31;

  // A lower bound of node `n`'s earliest start for any request of `gpus`
  // GPUs on it for `span` (from the first moment it has a CPU and that many
  // GPUs free throughout), on the bf_resolution grid; 0 = none in
  // bf_window. Worked out once per node, span and version, for every queue.
  int64_t BoundOf(int n, int64_t gpus, int64_t span) {
    size_t k = 0;
    while (k < bound_spans_.size() && bound_spans_[k] != span) ++k;
    if (k == bound_spans_.size()) {
      bound_spans_.push_back(span);
      bounds_.emplace_back(configs_.size());
    }
    NodeBound& b = bounds_[k][n];
    if (b.version != profile_->version(n)) {
      b.version = profile_->version(n);
      profile_->FirstFree(n, first_start_, span, s_.config->bf.resolution_s, b.at);
      const int64_t stop = s_.now + s_.config->bf.window_s;
      for (int64_t& t : b.at) t = t > stop ? 0 : t;
    }
    return b.at[std::min<int64_t>(gpus, Profile::kBoundGpus)];
  }

  // The queue of the current job's shape (shape_) in one of its forms
  // (`variant`: as asked, on one node, one node's block) for `span`, of
  // one-node requests `r`.
  template <typename Queue>
  Queue& QueueFor(std::unordered_map<std::string, Queue>* queues, int64_t span, char variant,
                  const PartitionState& p, const ResourceRequest& r) {
    queue_key_.assign(shape_);
    queue_key_ += variant;
    queue_key_ += std::to_string(span);
    auto [it, fresh] = queues->try_emplace(queue_key_);
    if (fresh) {
      const int64_t gpus = r.gpus_per_node + r.gpus_per_job;
      std::vector<NodeStart> all;
      all.reserve(p.usable.size());
      for (size_t k = 0; k < p.usable.size(); ++k) {
        const int n = p.usable[k];
        const int64_t bound = BoundOf(n, gpus, span);
        if (bound == 0) continue;
        all.push_back(NodeStart{bound, static_cast<int>(k), profile_->version(n) | kBounded});
      }
      if constexpr (std::is_same_v<Queue, NodeRadixQueue>) {
        it->second = Queue(all, p.usable, first_start_);
      } else {
        it->second = Queue(std::move(all), p.usable);
      }
    }
    return it->second;
  }

  // Brings the queue's top up to date: afterwards it is empty or its top
  // is the earliest start of any node. A stale top moves to its node's
  // bound first, where that is later; only a top at its bound is worked out.
  template <typename Queue>
  void Refresh(Queue* q, int64_t span, const NodeMatch& m) {
    const int64_t gpus = m.request->gpus_per_node + m.request->gpus_per_job;
    while (!q->empty()) {
      NodeStart top = q->top();
      const int node = q->node(top);
      const uint32_t version = profile_->version(node);
      if (top.version == version) return;
      if (top.version != (version | kBounded)) {
        const int64_t bound = BoundOf(node, gpus, span);
        if (bound == 0) {
          q->pop();
          continue;
        }
        if (bound > top.start) {
          top.start = bound;
          top.version = version | kBounded;
          q->ReplaceTop(top);
          continue;
        }
      }
      top.version = version;
      top.start = EarliestOn(node, span, m, top.start, &q->holds_idle[top.rank]);
      if (top.start != 0) {
        q->ReplaceTop(top);
      } else {
        q->pop();
      }
    }
  }

  // PlanStart for a job on one node: the node with the earliest start,
  // the preference order breaking ties.
  std::optional<Planned> EarliestOnOneNode(int64_t span, const NodeMatch& m, PartitionState& p,
                                           char variant) {
    NodeRadixQueue& q = QueueFor(&queues_, span, variant, p, *m.request);
    Refresh(&q, span, m);
    if (q.empty()) return std::nullopt;
    Planned out{q.top().start, &p, {}};
    if (!FitsAt(q.node(q.top()), out.start, span, m, &out.alloc)) return std::nullopt;
    return out;
  }

  // PlanStart for a job on a fixed number k of nodes, each with its block
  // of the tasks: no moment before the k-th earliest of the nodes' own
  // earliest starts (for the largest block) can hold it, so that moment t
  // is tried over the nodes that could start by then. Those that cannot
  // hold it at t after all (a planned start lies between) move on to
  // their next start after t, and t to the new k-th earliest, until k
  // nodes hold it at once.
  std::optional<Planned> EarliestOnNodes(int64_t span, const NodeMatch& m, PartitionState& p) {
    const ResourceRequest& r = *m.request;
    const size_t k = static_cast<size_t>(r.min_nodes);
    ResourceRequest block = r;
    block.min_nodes = block.max_nodes = 1;
    block.feature_counts.clear();  // a count is met by the set, not by one node
    if (r.ntasks_set) block.ntasks = (r.ntasks + r.min_nodes - 1) / r.min_nodes;
    NodeMatch one = m;
    one.request = &block;
    NodeHeap& q = QueueFor(&block_queues_, span, 'b', p, block);
    std::vector<NodeStart> taken;  // off the queue, put back as they were
    std::vector<NodeStart> local;  // the same, with starts moved past t
    auto take = [&](int64_t upto) {
      for (;;) {
        Refresh(&q, span, one);
        if (q.empty() || (local.size() >= k && q.top().start > upto)) return;
        taken.push_back(q.top());
        local.push_back(q.top());
        q.pop();
      }
    };
    auto kth = [&] {
      std::nth_element(local.begin(), local.begin() + static_cast<ptrdiff_t>(k - 1), local.end(),
                       [](const NodeStart& a, const NodeStart& b) { return a.start < b.start; });
      return local[k - 1].start;
    };
    const int64_t stop = s_.now + s_.config->bf.window_s;
    std::optional<Planned> out;
    take(0);
    while (local.size() >= k) {
      const int64_t t = kth();
      if (t > stop) break;
      take(t);
      std::vector<std::pair<int, int>> fitting;  // (rank, node)
      for (NodeStart& e : local) {
        if (e.start > t) continue;
        const int node = q.node(e);
        if (FitsAt(node, t, span, one, &alloc_)) {
          fitting.emplace_back(e.rank, node);
          continue;
        }
        const int64_t next =
            EarliestOn(node, span, one, RoundUp(t + 1, t + 1), &q.holds_idle[e.rank]);
        e.start = next == 0 ? kNever : next;
      }
      if (fitting.size() >= k) {
        std::sort(fitting.begin(), fitting.end());
        std::vector<int> nodes;
        for (const auto& f : fitting) nodes.push_back(f.second);
        Planned found{t, &p, {}};
        view_.SetWindow(t, EndAt(t, span));
        if (SelectNodes(m, configs_, view_, nodes, &scratch_, &found.alloc)) {
          out = std::move(found);
        } else {
          out = EarliestAnywhere(span, m, p, t);
        }
        break;
      }
      std::erase_if(local, [](const NodeStart& e) { return e.start == kNever; });
    }
    for (const NodeStart& e : taken) q.push(e);
    return out;
  }

  // PlanStart for any other job: the whole partition at each moment
  // something changes, earliest first, within bf_window.
  std::optional<Planned> EarliestAnywhere(int64_t span, const NodeMatch& m, PartitionState& p,
                                          int64_t from) {
    return EarliestOnSet(span, m, p, from, p.usable);
  }

  // A job of reservation `tag` is planned on the reservation's usable
  // nodes (any node of the partition with FLEX), from `from`: the first
  // moment the profile, in which the reservation is its own, lets them
  // hold it for its time limit. Its planned start is reserved like any
  // other, so later jobs of the reservation do not delay it.
  void PlanInReservation(const core::Job& job, const NodeMatch& m, PartitionState& p, int tag,
                         int64_t from) {
    if (!MayPlan(job)) return;
    EnsureProfile();
    const core::Reservation& r = *s_.reservations[tag];
    std::vector<int> nodes;
    for (int i : p.usable) {
      if (r.Has(core::kResvFlex) ||
          std::find(r.nodes.begin(), r.nodes.end(), configs_[i]->name) != r.nodes.end()) {
        nodes.push_back(i);
      }
    }
    const int64_t span = SpanOf(job);
    std::optional<Planned> planned;
    if (from == r.start) {
      // Its start is a fixed moment (no grid needed to keep it from
      // drifting): the job starts then if the nodes hold it.
      view_.SetWindow(from, EndAt(from, span));
      Planned at{from, &p, {}};
      if (SelectNodes(m, configs_, view_, nodes, &scratch_, &at.alloc)) planned = std::move(at);
    }
    if (!planned) planned = EarliestOnSet(span, m, p, from, nodes);
    if (planned && (!planned_ || planned->start < planned_->start)) planned_ = std::move(planned);
  }

  // The earliest moment from `from` (within bf_window) at which `nodes`
  // hold the job, trying the moments the profile changes.
  std::optional<Planned> EarliestOnSet(int64_t span, const NodeMatch& m, PartitionState& p,
                                       int64_t from, std::span<const int> nodes) {
    const std::set<int64_t>& changes = profile_->changes();
    const int64_t stop = s_.now + s_.config->bf.window_s;
    // The CPUs of all nodes together bound what any of them can give: a
    // moment without as many as the job takes is passed over at once.
    const int64_t least = LeastCpus(*m.request);
    const std::vector<std::pair<int64_t, int64_t>>& total = profile_->TotalFreeCpus();
    int64_t short_until = 0;  // no start before it has the CPUs throughout
    // From the step that holds `from` (the first change is now, before it).
    int64_t tried = 0;
    Planned out;
    for (auto it = std::prev(changes.upper_bound(from)); it != changes.end(); ++it) {
      const int64_t t = RoundUp(*it, from);
      if (t > stop) break;
      if (t <= tried || t < short_until) continue;
      tried = t;
      const int64_t end = EndAt(t, span);
      // (The first few steps of the window: a longer look costs more than
      // the selection it would spare.)
      auto step = std::prev(std::upper_bound(total.begin(), total.end(), std::pair(t, kNever)));
      for (int k = 0; k < 8 && step != total.end() && step->first < end; ++k, ++step) {
        if (step->second >= least) continue;
        short_until = std::next(step) == total.end() ? kNever : std::next(step)->first;
        break;
      }
      if (t < short_until) continue;
      view_.SetWindow(t, end);
      if (SelectNodes(m, configs_, view_, nodes, &scratch_, &out.alloc)) {
        out.start = t;
        out.partition = &p;
        return out;
      }
    }
    return std::nullopt;
  }

  // The fewest CPUs a request takes on all its nodes together.
  static int64_t LeastCpus(const ResourceRequest& r) {
    const int64_t tasks = r.ntasks_set ? r.ntasks : r.min_nodes;
    return std::max<int64_t>(tasks * std::max(1, r.cpus_per_task), r.min_nodes);
  }

  // What makes two jobs plan alike in a partition: their requests.
  static std::string ShapeOf(const ResourceRequest& r, const PartitionState& p) {
    return p.part->name + "|" + RequestKey(r);
  }

  // Chooses the running jobs to stop so that `job` fits in partition `p`
  // (see Schedule's preemption rules) and records them in the plan.
  void Preempt(const core::Job& job, const NodeMatch& m, const PartitionState& p) {
    const int tier = p.part->priority_tier;
    Overlay base = live_;
    auto release = [&](Overlay* ov, const core::Job& j) {
      for (const core::NodeAlloc& share : j.alloc) {
        const int i = IndexOf(share);
        if (i >= 0) ov->Release(i, share, *configs_[i]);
      }
    };
    std::vector<std::pair<int64_t, const core::Job*>> candidates;  // (rank, job)
    for (const RunningJob& r : s_.running) {
      const core::Job& j = *r.job;
      if (victims_.count(j.id)) continue;  // stopped for another job of this pass
      if (j.state != core::JobState::kRunning || s_.preempting.count(j.id)) {
        release(&base, j);  // ending already
        continue;
      }
      std::optional<int64_t> rank = preemption_->Rank(job, tier, j);
      if (!rank) continue;
      const PreemptTerms terms = PreemptTermsOf(j, *s_.config, s_.accounts);
      if (terms.mode == core::PreemptMode::kOff) continue;
      if (s_.now - j.start_time < terms.exempt_s) {
        SameUntil(j.start_time + terms.exempt_s);
        continue;
      }
      candidates.emplace_back(*rank, &j);
    }
    std::vector<core::NodeAlloc> alloc;
    auto fits = [&](const Overlay& ov) {
      return SelectNodes(m, configs_, ov, p.usable, &scratch_, &alloc);
    };
    if (candidates.empty() || fits(base)) return;  // nothing to stop, or it waits for those ending
    // The lowest rank first, then the most recently started.
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      if (a.second->start_time != b.second->start_time) {
        return a.second->start_time > b.second->start_time;
      }
      return a.second->id > b.second->id;
    });
    std::vector<const core::Job*> chosen;
    Overlay ov = base;
    for (const auto& candidate : candidates) {
      release(&ov, *candidate.second);
      chosen.push_back(candidate.second);
      if (fits(ov)) break;
    }
    if (!fits(ov)) return;  // even all of them would not make room
    // Spare each one it fits without, the last chosen first.
    for (size_t k = chosen.size(); k-- > 0;) {
      Overlay without = base;
      for (size_t i = 0; i < chosen.size(); ++i) {
        if (i != k) release(&without, *chosen[i]);
      }
      if (fits(without)) chosen.erase(chosen.begin() + static_cast<ptrdiff_t>(k));
    }
    for (const core::Job* j : chosen) {
      victims_.insert(j->id);
      preemptions_.push_back(Preemption{j->id, job.id});
    }
  }

  // Whether a node the job names (-w) is held, at some moment of its time
  // limit from now, by a reservation other than its own (`tag`).
  bool RequiredNodeReserved(const core::Job& job, const NodeMatch& m, int tag) const {
    const int64_t end = EndOf(job, s_.now);
    for (int i : m.required) {
      for (size_t k = 0; k < s_.reservations.size(); ++k) {
        if (static_cast<int>(k) == tag) continue;
        if (s_.reservations[k]->Covers(configs_[i]->name, s_.now, end)) return true;
      }
    }
    return false;
  }

  // Whether some node of the partition, idle, could hold the whole job.
  bool FitsOneNode(const NodeMatch& m, const PartitionState& p) {
    if (!empty_) empty_ = Overlay::Empty(configs_);
    ResourceRequest one = *m.request;
    one.max_nodes = 1;
    NodeMatch single = m;
    single.request = &one;
    std::vector<core::NodeAlloc> alloc;
    return SelectNodes(single, configs_, *empty_, p.members, &scratch_, &alloc);
  }

  // Why a job that did not fit waits: never (BadConstraints), for nodes to
  // come back (ReqNodeNotAvail, with unavailable_ set), or for resources.
  // The answer looks at idle nodes only, so it holds for the pass: worked
  // out once per shape of request.
  PendingReason Diagnose(const NodeMatch& waiting, const PartitionState& p) {
    reserved_ = false;
    auto [it, fresh] = diagnosed_.try_emplace(shape_);
    if (fresh) {
      it->second.first = DiagnoseOnIdle(waiting, p);
      it->second.second = std::move(unavailable_);
    }
    unavailable_ = it->second.second;
    return it->second.first;
  }
  PendingReason DiagnoseOnIdle(const NodeMatch& waiting, const PartitionState& p) {
    unavailable_.clear();
    // --switches only delays a start: what could ever run ignores it, as
    // CheckSatisfiable does at submission.
    NodeMatch m = waiting;
    m.max_leaves = 0;
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

  // A job no node of the partition could ever hold: the verdict carries
  // the refusal its submission would get now, from the same check
  // (CheckSatisfiable), so the two cannot disagree. Worked out once per
  // shape of request in a pass.
  void RecordNever(const core::Job& job, const PartitionState& p) {
    auto [it, fresh] = never_detail_.try_emplace(shape_);
    if (fresh) {
      SubmitRefusal why;
      const util::Status st = CheckSatisfiable(job.req, *p.part, *s_.config, &why);
      it->second = st.ok() ? "" : (why.detail.empty() ? st.message() : why.detail);
    }
    verdict_ = {"placement", PendingReason::kBadConstraints, it->second};
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

  // A node's place in the placement's order, by what is free now: its
  // Weight, then the busiest first (fewest free GPUs then CPUs for a job
  // with GPUs, CPUs then memory without) or the least loaded (most free
  // CPUs); then config order.
  std::array<int64_t, 4> OrderKey(const PartitionState& p, int i, bool gpus) const {
    const NodeFree& f = live_.at(i);
    const int64_t w = configs_[i]->weight;
    if (p.placement == Placement::kLeastLoaded) return {w, -f.cpus, 0, i};
    return gpus ? std::array<int64_t, 4>{w, f.gpus_free, f.cpus, i}
                : std::array<int64_t, 4>{w, f.cpus, f.mem_mb, i};
  }

  const std::vector<int>& Ordered(PartitionState& p, bool gpus) {
    std::vector<int>& order = p.ordered[gpus];
    if (!p.ordered_built[gpus]) {
      p.ordered_built[gpus] = true;
      order = p.usable;
      // Sorted by OrderKey packed into two words (this sort of a large
      // partition is much of a short pass): weight and the first count
      // above, the second count and the index below.
      constexpr uint64_t kIndexBits = 24, kIndexMask = (uint64_t{1} << kIndexBits) - 1;
      auto biased = [](int64_t v) {  // an int's order as an unsigned one
        return static_cast<uint64_t>(static_cast<uint32_t>(v + (int64_t{1} << 31)));
      };
      std::vector<std::pair<uint64_t, uint64_t>> keyed;
      keyed.reserve(order.size());
      for (int i : order) {
        const std::array<int64_t, 4> k = OrderKey(p, i, gpus);
        assert(k[2] >= 0 && k[2] < (int64_t{1} << 40) && k[3] >= 0 &&
               static_cast<uint64_t>(k[3]) <= kIndexMask);
        keyed.emplace_back(biased(k[0]) << 32 | biased(k[1]),
                           static_cast<uint64_t>(k[2]) << kIndexBits | static_cast<uint64_t>(k[3]));
      }
      std::sort(keyed.begin(), keyed.end());
      for (size_t k = 0; k < keyed.size(); ++k) {
        order[k] = static_cast<int>(keyed[k].second & kIndexMask);
      }
    }
    return order;
  }

  // Where node i's key (as it is now) falls in p.ordered[g].
  std::vector<int>::iterator PlaceInOrder(PartitionState& p, int g, int i) const {
    std::vector<int>& order = p.ordered[g];
    const auto key = OrderKey(p, i, g == 1);
    return std::lower_bound(order.begin(), order.end(), key,
                            [&](int a, const auto& k) { return OrderKey(p, a, g == 1) < k; });
  }

  // Whether node i has no CPU left (or, for a job with GPUs on every node,
  // no GPU) for any further job of the pass.
  bool Full(int i, bool gpus) const {
    const NodeFree& f = live_.at(i);
    return f.cpus == 0 || (gpus && f.gpus_free == 0);
  }

  // A start's share on node i: taken from what is free now, the node moved
  // to its new place in every placement order that holds it (found by its
  // key before, put back by its key after).
  void ReserveLive(int i, const core::NodeAlloc& share) {
    held_in_.clear();
    for (auto& part : parts_) {
      PartitionState& p = part.second;
      for (int g = 0; g < 2; ++g) {
        if (!p.ordered_built[g]) continue;
        std::vector<int>& order = p.ordered[g];
        auto it = PlaceInOrder(p, g, i);
        if (it == order.end() || *it != i) continue;
        const size_t at = static_cast<size_t>(it - order.begin());
        order.erase(it);
        for (size_t& full : p.ordered_full[g]) {
          if (at < full) --full;
        }
        held_in_.emplace_back(&p, g);
      }
    }
    live_.Reserve(i, share);
    if (usable_[i]) free_cpus_now_ -= share.cpus;
    for (auto [p, g] : held_in_) {
      std::vector<int>& order = p->ordered[g];
      auto it = PlaceInOrder(*p, g, i);
      const size_t at = static_cast<size_t>(it - order.begin());
      order.insert(it, i);
      // A full node within the full lead extends it; another cuts it.
      for (int e = 0; e < 2; ++e) {
        size_t& full = p->ordered_full[g][e];
        if (at <= full) full = Full(i, e == 1) ? full + 1 : at;
      }
    }
  }

  PartitionState& Partition(const std::string& name) {
    auto it = parts_.find(name);
    if (it != parts_.end()) return it->second;
    PartitionState& p = parts_[name];
    p.part = s_.config->FindPartition(name);
    if (p.part == nullptr) return p;
    p.placement = p.part->least_loaded ? Placement::kLeastLoaded : placement_;
    const std::vector<int>* known = nullptr;
    if (s_.partition_nodes != nullptr) {
      auto it = s_.partition_nodes->find(name);
      if (it != s_.partition_nodes->end()) known = &it->second;
    }
    p.members = known != nullptr ? *known : MembersOf(*p.part, configs_, index_);
    for (int i : p.members) {
      if (!usable_[i]) continue;
      p.usable.push_back(i);
      if (live_.gpu_count(i) == 0) ++p.gpu_less;
    }
    return p;
  }

  const Snapshot& s_;
  std::vector<const core::NodeConfig*> configs_;
  std::vector<bool> usable_;
  // Node name -> index in the snapshot: the caller's (Snapshot::node_index)
  // or one built for this pass. Lookups only, never iterated.
  std::unordered_map<std::string_view, int> own_index_;
  const std::unordered_map<std::string_view, int>& index_ =
      s_.node_index != nullptr ? *s_.node_index : own_index_;
  Overlay live_;
  Placement placement_ = Placement::kPack;                // SelectTypeParameters' node order
  std::vector<std::pair<PartitionState*, int>> held_in_;  // ReserveLive's scratch
  std::vector<int> leaf_of_, root_of_;                    // topology/tree (see NodeMatch)
  std::optional<Overlay> empty_;                          // built on the first diagnosis
  // Backfill: the availability profile (from the first job that cannot
  // start now) and a window onto it.
  std::optional<Profile> profile_;
  Overlay view_;
  std::optional<Planned> planned_;  // the current job's earliest start
  int planned_count_ = 0;
  int64_t same_until_ = kNever;              // Plan::same_until
  std::map<uint32_t, int> planned_by_user_;  // with bf_max_job_user
  // Per shape of request and span: the nodes' earliest starts, where the
  // search over the whole partition resumes, and the shortest span that
  // found no start (see PlanStart).
  std::unordered_map<std::string, NodeRadixQueue> queues_;
  std::unordered_map<std::string, NodeHeap> block_queues_;
  // Per span and node, BoundOf's moments by GPU count, at a version of the
  // node's profile.
  struct NodeBound {
    uint32_t version = UINT32_MAX;
    int64_t at[Profile::kBoundGpus + 1];
  };
  std::vector<std::vector<NodeBound>> bounds_;  // by span, as in bound_spans_
  std::vector<int64_t> bound_spans_;
  int64_t first_start_ = 0;  // the earliest planned start: now, rounded up
  std::string queue_key_;    // QueueFor's scratch
  std::unordered_map<std::string, int64_t> shape_from_;
  std::unordered_map<std::string, int64_t> fails_from_;
  std::set<std::string> after_all_ends_;  // shapes tried past every known end
  std::vector<core::NodeAlloc> alloc_;    // EarliestOn's scratch
  std::map<std::string, PartitionState> parts_;
  PartitionState* current_ = nullptr;
  ResourceRequest request_;  // the current job's (NodeMatch points at it)
  std::string shape_;        // and its ShapeOf
  // Per shape: the shortest time limit that found no room now (0: none at
  // all on what is free now); see StartsNow.
  std::unordered_map<std::string, int64_t> now_fails_;
  // Starts before the profile exists: when each ends by its time limit,
  // and its shares.
  std::vector<std::pair<int64_t, std::vector<core::NodeAlloc>>> started_;
  std::string unavailable_;  // the last ReqNodeNotAvail diagnosis's nodes
  bool reserved_ = false;    // and whether a reservation holds them
  // The profile's job stages, and the last refusal of one; its preemption
  // policy (null: none).
  std::vector<std::unique_ptr<JobStage>> stages_;
  std::unique_ptr<PreemptionStage> preemption_;
  // CPUs free now on usable nodes, as the pass starts jobs (Snapshot::plan_all).
  int64_t free_cpus_now_ = 0;
  struct StageVerdict {
    std::string_view stage;
    PendingReason reason = PendingReason::kNone;
    std::string detail;
  };
  StageVerdict verdict_;
  std::unordered_map<std::string, std::string> never_detail_;  // by shape_
  // Diagnose's reason and unavailable nodes, by shape_.
  std::unordered_map<std::string, std::pair<PendingReason, std::string>> diagnosed_;
  SelectScratch scratch_;
  // Tasks of each array holding resources, counting the starts of this pass.
  std::map<core::JobId, int> array_running_;
  // Preemptions chosen this pass, and their victims.
  std::vector<Preemption> preemptions_;
  std::set<core::JobId> victims_;
  // The nodes the components of a heterogeneous job placed so far take.
  std::vector<std::string> het_taken_;
};

}  // namespace

PreemptTerms PreemptTermsOf(const core::Job& job, const config::Config& cfg,
                            const core::AccountTable* accounts) {
  PreemptTerms t;
  const core::QosRecord* qos =
      accounts != nullptr ? accounts->FindQos(core::QosName(job.req)) : nullptr;
  if (cfg.preempt_type == config::PreemptType::kQos) {
    t.mode = qos != nullptr ? qos->preempt_mode.value_or(cfg.preempt_mode) : cfg.preempt_mode;
    t.grace_s = qos != nullptr ? qos->grace_time_s : 0;
  } else {
    const core::Partition* part = cfg.FindPartition(job.partition);
    t.mode = part != nullptr ? part->preempt_mode.value_or(cfg.preempt_mode) : cfg.preempt_mode;
    t.grace_s = part != nullptr ? part->grace_time_s : 0;
  }
  t.exempt_s = qos != nullptr && qos->preempt_exempt_time_s >= 0 ? qos->preempt_exempt_time_s
                                                                 : cfg.preempt_exempt_time_s;
  return t;
}

Plan Schedule(const Snapshot& snapshot) {
  Pass pass(snapshot);
  return pass.Run();
}

std::unordered_map<std::string, std::vector<int>> PartitionNodes(const Snapshot& snapshot) {
  std::vector<const core::NodeConfig*> configs;
  std::unordered_map<std::string_view, int> own;
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) {
    configs.push_back(&snapshot.nodes[i]->config);
    if (snapshot.node_index == nullptr) own.emplace(configs.back()->name, static_cast<int>(i));
  }
  const auto& index = snapshot.node_index != nullptr ? *snapshot.node_index : own;
  std::unordered_map<std::string, std::vector<int>> out;
  for (const core::Partition& part : snapshot.config->partitions) {
    out.emplace(part.name, MembersOf(part, configs, index));
  }
  return out;
}

}  // namespace muster::sched

// Internal to src/sched: the pieces one scheduling pass is assembled from
// (see scheduler.cc for the assembly). Each stage is a small pure function
// in its own stage_*.cc file; they share the types below. Nothing here is
// part of the interface the controller codes against.
//
// Per pass the cost is O(jobs x candidate nodes) at worst, with early exits:
// a partition blocked for Resources costs O(1) per later job, single-node
// jobs stop at the first fitting node, node predicates allocate nothing, and
// scratch buffers live in the pass, not in the job loop.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounts.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/tres.h"
#include "sched/scheduler.h"

namespace muster::sched {

// The fixed set of answers a stage gives.
enum class Verdict {
  kOk,
  kUnschedulableNow,  // fits the hardware, not the current free resources
  kNeverSchedulable,  // no node of this kind could ever take it
  kWait,              // not yet (held, begin time, blocked partition)
  kInternal,
};

// A stage's answer with a static reason (for explanations and tests; no
// allocation on the hot path).
struct FilterResult {
  Verdict verdict = Verdict::kOk;
  std::string_view reason;
  bool ok() const { return verdict == Verdict::kOk; }
};

// Free resources of one node as the pass sees them: starts from the live
// node (or the configured hardware for "could it ever run" questions) and
// is reduced by every reservation of the pass. A node with an exclusive
// job has cpus == 0, so nothing else fits there.
struct NodeFree {
  int cpus = 0;
  int64_t mem_mb = 0;
  bool idle = true;        // nothing allocated at all (for --exclusive)
  uint32_t gpu_begin = 0;  // offset of this node's flags in Overlay::gpu_used_
  uint32_t gpu_count = 0;
  uint32_t gpus_free = 0;  // of any type
};

class Profile;
class ShareTree;  // sched/fairshare.h

// The nodes a pass works over: configured hardware by index (snapshot or
// config order), shared by the overlay.
using NodeConfigs = std::span<const core::NodeConfig* const>;

// The pass's private copy of free counts (the input is never mutated). One
// allocation per pass for all nodes; GPU flags in one flat array.
//
// An overlay may also be a window onto a Profile (ViewOf): each row is then
// what the node has free throughout [start, end), worked out from the
// profile the first time the row is read after SetWindow, so a first-fit
// selection pays only for the nodes it looks at.
class Overlay {
 public:
  // From live nodes: free = configured - allocated.
  static Overlay FromNodes(std::span<const core::Node* const> nodes);
  // Every node entirely free: what the hardware could ever offer.
  static Overlay Empty(std::span<const core::NodeConfig* const> configs);
  // A window onto `profile` (which must outlive it); SetWindow before use.
  static Overlay ViewOf(const Profile& profile, const Overlay& layout);

  const NodeFree& at(int node) const {
    if (profile_ != nullptr) Fill(node);
    return free_[node];
  }
  // The GPUs a node has (its layout: no window needed).
  uint32_t gpu_count(int node) const { return free_[node].gpu_count; }
  bool GpuUsed(int node, int gpu) const {
    if (profile_ != nullptr) Fill(node);
    return gpu_used_[free_[node].gpu_begin + gpu] != 0;
  }
  // GpuReserve: CPUs and memory each free GPU keeps from a share that
  // takes no GPU on its node. Views copy it; Empty() has none (hardware).
  void SetGpuReserve(int cpus, int64_t mem_mb) {
    reserve_cpus_ = cpus;
    reserve_mem_mb_ = mem_mb;
  }
  // What a share may take on `node`: what is free, less the reserve of its
  // free GPUs unless the share takes GPUs there (or the whole node).
  struct Room {
    int cpus = 0;
    int64_t mem_mb = 0;
  };
  Room RoomFor(int node, bool takes_gpus) const {
    const NodeFree& f = at(node);
    if (takes_gpus || f.gpus_free == 0 || (reserve_cpus_ == 0 && reserve_mem_mb_ == 0)) {
      return {f.cpus, f.mem_mb};
    }
    return {std::max(0, f.cpus - reserve_cpus_ * static_cast<int>(f.gpus_free)),
            std::max<int64_t>(0, f.mem_mb - reserve_mem_mb_ * f.gpus_free)};
  }
  // Takes a node's share of an allocation (cpus, memory, GPU indices).
  void Reserve(int node, const core::NodeAlloc& share);
  // Gives a share back (a job that ends); the node is idle again once all
  // of `config` is free.
  void Release(int node, const core::NodeAlloc& share, const core::NodeConfig& config);
  // A view's window; every row is worked out again when next read (also
  // after the profile changed).
  void SetWindow(int64_t start, int64_t end);

 private:
  void Fill(int node) const;

  mutable std::vector<NodeFree> free_;
  mutable std::vector<uint8_t> gpu_used_;
  int reserve_cpus_ = 0;
  int64_t reserve_mem_mb_ = 0;
  // A view's profile and window, and the window each row was filled for.
  const Profile* profile_ = nullptr;
  int64_t start_ = 0, end_ = 0;
  uint32_t window_ = 0;
  mutable std::vector<uint32_t> filled_;
};

// ---- profile.cc: the backfill planner's availability profile. For every
// node, what it has free from now on, as steps in time: the live free
// resources now, more as running jobs end (by their time limits), less
// where the pass has planned a job's start. Reservations only ever take,
// so within a pass a node's free resources at any moment only shrink, and
// the earliest start of a given request only moves later.
class Profile {
 public:
  // A never-ending job (no time limit) holds its share for good.
  static constexpr int64_t kForever = INT64_MAX;

  // Node rows and GPU layout from `live` (free now, at `now`).
  Profile(NodeConfigs configs, const Overlay& live, int64_t now);

  // A share comes back to node `node` at time `t` (a running job's end),
  // never before now + 1: until it is stopped, a job holds what it has.
  void Release(int node, int64_t t, const core::NodeAlloc& share);
  // A share is taken on node `node` over [start, end).
  void Reserve(int node, int64_t start, int64_t end, const core::NodeAlloc& share);
  // Node `node` takes nothing over [start, end) but jobs of reservation
  // `tag` (an advance reservation); Exempt(tag) says whose job is placed.
  void Block(int node, int64_t start, int64_t end, int tag);
  void Exempt(int tag) { exempt_ = tag; }
  // What node `node` has free throughout [start, end): the least CPUs and
  // memory, every GPU used at some moment, idle only if idle throughout.
  void FreeOver(int node, int64_t start, int64_t end, NodeFree* free, uint64_t* gpus_used) const;
  // Every moment at which some node's free resources change.
  const std::set<int64_t>& changes() const { return changes_; }
  // The CPUs all nodes have free together, as steps (start, CPUs) from
  // now on: at least what any set of nodes has free together at that
  // moment. A bound, worked out again only now and then: ends are not
  // capped at a node's size, holds of reservations are not taken off,
  // and the reservations made since it was worked out only take.
  const std::vector<std::pair<int64_t, int64_t>>& TotalFreeCpus() const;
  // The moments after `from` at which node `node` gains free resources
  // (a job's end, a planned job's end), ascending, until visit returns
  // false. Only there can a request that did not fit start to fit: a
  // window that moves past a reservation's start only takes it in.
  // The end of another reservation's hold on the node is one too.
  template <typename Visit>
  void ForEachRise(int node, int64_t from, Visit visit) const {
    const std::vector<Step>& steps = steps_[node];
    const bool held = !blocked_.empty() && !blocked_[node].empty();
    std::vector<int64_t> times;  // with holds only: rises and hold ends, merged
    for (size_t k = 1; k < steps.size(); ++k) {
      const Step& a = steps[k - 1];
      const Step& b = steps[k];
      if (b.start <= from) continue;
      const bool rises =
          b.cpus > a.cpus || b.mem_mb > a.mem_mb || (a.gpus_used & ~b.gpus_used) != 0;
      if (!rises) continue;
      if (held) {
        times.push_back(b.start);
      } else if (!visit(b.start)) {
        return;
      }
    }
    if (!held) return;
    for (const Blocked& b : blocked_[node]) {
      if (b.tag != exempt_ && b.end > from && b.end != kForever) times.push_back(b.end);
    }
    std::sort(times.begin(), times.end());
    for (int64_t t : times) {
      if (!visit(t)) return;
    }
  }
  // For g = 0 .. kBoundGpus, the first moment from `from`, on the grid of
  // `grid` seconds, from which node `node` has a CPU and g GPUs free for
  // `span`, or kForever: no request for g GPUs (or more) and that span
  // starts there before. Reservations' holds are not looked at.
  static constexpr int kBoundGpus = 8;
  void FirstFree(int node, int64_t from, int64_t span, int64_t grid,
                 int64_t (&at)[kBoundGpus + 1]) const;
  int64_t now() const { return now_; }
  // Counts the reservations made on a node: what was worked out for it
  // holds while this is unchanged.
  uint32_t version(int node) const { return versions_[node]; }
  // Whether any reservation was made (else the live overlay is the view
  // of every window that starts now).
  bool reserved() const { return reserved_; }
  // GPUs a profile follows per node; indices past it count as busy in
  // every window after now.
  static constexpr int kMaxGpus = 64;

 private:
  struct Step {
    int64_t start = 0;  // until the next step's start
    int cpus = 0;
    int64_t mem_mb = 0;
    uint64_t gpus_used = 0;  // bit i: GPU index i
    bool idle = true;
  };
  // The index of the step that starts at `t`, splitting the one that
  // covers it.
  size_t Split(int node, int64_t t);

  NodeConfigs configs_;
  int64_t now_;
  std::vector<std::vector<Step>> steps_;
  std::vector<uint32_t> versions_;
  std::vector<int64_t> first_taken_;  // per node, the first planned start after now
  struct Blocked {
    int64_t start, end;
    int tag;
  };
  std::vector<std::vector<Blocked>> blocked_;  // per node; empty for most
  int exempt_ = -1;
  std::set<int64_t> changes_;
  std::map<int64_t, int64_t> total_cpus_change_;  // TotalFreeCpus, as changes
  mutable std::vector<std::pair<int64_t, int64_t>> total_cpus_;
  mutable bool total_cpus_stale_ = true;  // a share came back since (the bound would not hold)
  mutable size_t reserved_since_ = 0;     // reservations since (the bound grows loose)
  bool reserved_ = false;
};

// Number of GPUs of a node (all "gpu" gres entries).
int GpuCount(const core::NodeConfig& node);
// The GPUs of a node one job may take there, of which `counted(index)`
// holds: those of `type`, or with "" (any type) those of the type that has
// the most. One job never mixes GPU types on one node (Slurm does), so
// gpu:a100:2,gpu:h100:2 holds an untyped --gres=gpu:2 but not gpu:3.
template <typename Counted>
int64_t GpusOfOneType(const core::NodeConfig& node, std::string_view type, Counted counted) {
  // Per type, in the order the types first appear; a node has few.
  std::array<std::pair<std::string_view, int64_t>, 8> by_type{};
  size_t types = 0;
  int64_t most = 0, other = 0;  // other: past the 8th type, counted as one
  int index = 0;
  for (const auto& g : node.gres) {
    if (g.name != "gpu") continue;
    const bool match = type.empty() || g.type == type;
    size_t t = 0;
    while (t < types && by_type[t].first != g.type) ++t;
    if (t == types && types < by_type.size()) by_type[types++] = {g.type, 0};
    int64_t& n = t < types ? by_type[t].second : other;
    for (int64_t k = 0; k < g.count; ++k, ++index) {
      if (match && counted(index)) most = std::max(most, ++n);
    }
  }
  return most;
}
// How many GPUs one job may take on a node (GpusOfOneType, all counted).
int64_t GpuCountOfType(const core::NodeConfig& node, std::string_view type);
// Free GPUs one job may take on node `i` of the overlay.
int64_t FreeGpus(const core::NodeConfig& node, const Overlay& ov, int i, std::string_view type);
// The type a job takes `want` GPUs of on a node: `type` itself, the type
// of a node of one model, else the first type (in gres order) with that
// many `usable`; "" when none has. For a share the selection found fits.
std::string_view GpuTypeFor(const core::NodeConfig& node, std::string_view type, int64_t want,
                            const std::function<bool(int)>& usable);

// ---- stage_limits.cc: the limits of a job's QOS and association on what
// runs at once (sacctmgr's MaxJobsPerUser, MaxTRESPerUser, GrpJobs,
// GrpTRES, MaxTRESPerJob, MaxWall of the QOS; MaxJobs, MaxWall, GrpJobs,
// GrpTRES of the user's association and of every account above it).
// Counts what the running jobs hold and what the pass starts. A job a
// limit holds back does not hold back its partition: others may start in
// its place. The QOS's limits are checked first, as Slurm does.
class LimitUsage {
 public:
  // `table` may be null (no limits at all).
  LimitUsage(const core::AccountTable* table, const config::Config& cfg,
             std::span<const RunningJob> running);
  // kNone, or the reason (QOSMaxJobsPerUserLimit, AssocGrpGRES, ...) and,
  // in *detail, the limit and what holds it ("MaxJobsPerUser=2 in QOS
  // limited; alice's running jobs hold 2 and this job needs 1 more").
  core::PendingReason Check(const core::Job& job, std::string* detail) const;
  // The same for the resources the job would really take (--exclusive
  // takes whole nodes, --ntasks-per-node reserves its count): what is
  // checked, as Slurm does after selecting nodes, before a start.
  core::PendingReason CheckAlloc(const core::Job& job, const std::vector<core::NodeAlloc>& alloc,
                                 std::string* detail) const;
  // A start of this pass.
  void Add(const core::Job& job, const std::vector<core::NodeAlloc>& alloc);

 private:
  struct Held {
    int64_t jobs = 0;
    int64_t cpu = 0;
    int64_t mem_mb = 0;
    int64_t node = 0;
    int64_t gpu = 0;
  };
  static Held Of(const std::vector<core::NodeAlloc>& alloc);
  // What `map` holds under `key`; nothing when absent.
  template <typename Map, typename Key>
  static Held HeldIn(const Map& map, const Key& key) {
    auto it = map.find(key);
    return it == map.end() ? Held{} : it->second;
  }
  const core::QosRecord* QosOf(const core::Job& job) const;
  core::PendingReason CheckWant(const core::Job& job, const core::Tres& want,
                                std::string* detail) const;
  core::PendingReason CheckQos(const core::Job& job, const core::Tres& want,
                               std::string* detail) const;
  core::PendingReason CheckAssoc(const core::Job& job, const core::Tres& want,
                                 std::string* detail) const;

  // The memory defaults of a job's partition (DefMemPerCPU, a whole node's
  // memory), looked up once per partition named in a pass.
  const core::MemoryDefaults& MemoryDefaultsOf(const core::Job& job) const;

  const core::AccountTable* table_;  // null: no limit anywhere holds a job back
  const config::Config& cfg_;
  mutable std::map<std::string, core::MemoryDefaults> memory_defaults_;  // by partition as named
  std::map<std::string, Held> by_qos_;                        // by QOS name
  std::map<std::pair<std::string, uint32_t>, Held> by_user_;  // by (QOS, uid)
  std::map<std::string, Held> by_account_;  // by account, its sub-accounts' included
  std::map<std::pair<std::string, std::string>, Held> by_assoc_;  // by (account, user)
};

// ---- Job stages: the pre-filter extension point (stages.cc). A pass runs
// its profile's job stages, in order, for each job and partition before
// any node is looked at (PreFilter); once the node selection has found an
// allocation, each may still refuse what it really takes (Admit); when the
// job starts, each counts it (Started). The first refusal is recorded with
// the stage's name and detail in the job's PendingDecision. The per-node
// stages (node state, match, fit, select) stay functions: they are the
// pass's inner loop.
class JobStage {
 public:
  virtual ~JobStage() = default;
  virtual std::string_view name() const = 0;
  // kNone when the job may be placed in `part` (null: unknown) now; else
  // its pending reason and, where the stage has numbers, *detail.
  virtual core::PendingReason PreFilter(const core::Job& job, const core::Partition* part,
                                        std::string* detail) = 0;
  virtual core::PendingReason Admit(const core::Job& job,
                                    const std::vector<core::NodeAlloc>& alloc,
                                    std::string* detail) {
    (void)job, (void)alloc, (void)detail;
    return core::PendingReason::kNone;
  }
  virtual void Started(const core::Job& job, const std::vector<core::NodeAlloc>& alloc) {
    (void)job, (void)alloc;
  }
};

// The job stages of a pass over `snapshot`, assembled from its
// configuration: eligibility always, then the QOS and association limits
// when there are accounts to hold them.
std::vector<std::unique_ptr<JobStage>> JobStagesFor(const Snapshot& snapshot);

// ---- The queue-sort extension point (stages.cc): the priority pending
// jobs are tried in, from PriorityType (sched/priority.h's OrderQueue
// sorts by it).
class QueueSortStage {
 public:
  virtual ~QueueSortStage() = default;
  virtual std::string_view name() const = 0;  // PriorityType's value
  virtual uint32_t Priority(const core::Job& job) const = 0;
};

// priority/multifactor over `shares` (the fairshare tree; null: every
// fairshare factor is 0), else priority/basic.
std::unique_ptr<QueueSortStage> QueueSortFor(const Snapshot& snapshot, const ShareTree* shares);

// ---- The post-filter extension point (stages.cc): which running jobs a
// job waiting for resources may preempt, and in which order. The search
// for the fewest victims is the pass's; the policy is the stage's.
class PreemptionStage {
 public:
  virtual ~PreemptionStage() = default;
  virtual std::string_view name() const = 0;  // PreemptType's value
  // Whether `job`, of a partition of PriorityTier `tier`, may preempt
  // `victim`, and if so the victim's rank (the lowest goes first).
  virtual std::optional<int64_t> Rank(const core::Job& job, int tier,
                                      const core::Job& victim) const = 0;
};

// The pass's post-filter from PreemptType: null for preempt/none.
std::unique_ptr<PreemptionStage> PreemptionFor(const Snapshot& snapshot);

// ---- stage_eligibility.cc: job-level checks before any node is looked at.
// Mirrors Slurm's held / BeginTime / partition state and limit reasons.
// Returns kNone when the job may be placed. `part` may be null (unknown).
core::PendingReason CheckEligibility(const core::Job& job, const core::Partition* part,
                                     int64_t now);

// ---- stage_node_state.cc: is the node usable at all now (registered, not
// DOWN, not DRAIN, not FUTURE)? Mirrors sinfo's idle/mix/alloc vs the rest.
FilterResult FilterNodeState(const core::Node& node);

// ---- request.cc: MakeResourceRequest, telling CheckSatisfiable which
// errors Slurm reports as "Requested node configuration is not available"
// (inconsistent node/task counts) rather than as bad input.
enum class RequestError { kNone, kMalformed, kCounts };
util::Result<ResourceRequest> BuildResourceRequest(const core::JobRequest& req,
                                                   int64_t def_mem_per_cpu_mb, RequestError* kind);

// ---- stage_node_match.cc: per job, the static node predicates
// (-C features, -w/-x lists, other GRES); the pass resolves -w/-x names to
// node indices once per job.
// The selection tries the candidates in the order given: the pass gives
// a start now's candidates busiest first among nodes of one Weight (see
// Placement in scheduler.cc), everything else in configuration order.
struct NodeMatch {
  const ResourceRequest* request = nullptr;
  // CR_Pack_Nodes: a fixed node count's tasks fill the first nodes with
  // --exclusive too (Slurm's default spreads those evenly).
  bool pack_tasks = false;
  // topology/tree: each node's leaf switch (-1: none) and each leaf's top
  // switch, by node and switch index; null without a topology. A job
  // that may take several nodes goes under as few leaves as it can, and
  // with max_leaves > 0 (--switches while it waits) under at most that many.
  const std::vector<int>* leaf_of = nullptr;
  const std::vector<int>* root_of = nullptr;
  int max_leaves = 0;
  std::vector<int> required;      // -w as node indices, sorted
  std::vector<int> excluded;      // -x as node indices, sorted
  bool required_unknown = false;  // -w names a node not in the node set
  // Every candidate has GPUs, so a job that asks for none has no nodes
  // without them to prefer (spares a look at each candidate).
  bool all_have_gpus = false;
};
// Does the node have the features, and is it allowed by -x? (-w is handled
// by the selection, which places required nodes first.)
FilterResult FilterNodeMatch(const NodeMatch& m, const core::NodeConfig& node, int index);
bool HasFeature(const core::NodeConfig& node, std::string_view feature);
// Whether the node counts for a -C count (`a*2`, `(a&b)*2`, `(a|b)*2`).
bool MeetsCount(const core::NodeConfig& node, const ResourceRequest::FeatureCount& c);
// Whether the node has every feature of -C (all of `features`, one of each
// `feature_any` group).
bool HasFeatures(const core::NodeConfig& node, const ResourceRequest& r);
bool NodeHasOtherGres(const core::NodeConfig& node, const ResourceRequest& r);

// ---- stage_fit.cc: does a share fit on one node? (CPUs, memory, GPUs,
// --exclusive; Slurm's cons_tres per-node test.)
struct Share {
  int tasks = 0;
  int64_t gpus = 0;  // on this node (per node + this node's part of --gpus)
};
// The share of the j-th of a job's n nodes where it takes a fixed number of
// them: its block of the tasks (-n), else --ntasks-per-node or one, and
// its block of --gpus.
Share BlockShare(const ResourceRequest& r, int n, int j);
// The CPUs a share's tasks need, and what it takes on a node (all of them
// with --exclusive); the memory it takes.
// `gpus`: the GPUs the share gets on the node (--cpus-per-gpu, --mem-per-gpu).
int NeedCpus(const ResourceRequest& r, int tasks, int64_t gpus = 0);
int ShareCpus(const ResourceRequest& r, const core::NodeConfig& node, int tasks, int64_t gpus);
int64_t ShareMem(const ResourceRequest& r, const core::NodeConfig& node, int cpus, int64_t gpus);
FilterResult FitShare(const ResourceRequest& r, const core::NodeConfig& node, const Overlay& ov,
                      int i, const Share& share);
// How many of a job's tasks a node holds with `cpus_free` CPUs and
// `mem_free_mb` memory free (`idle`: nothing runs there), GPUs aside:
// --ntasks-per-node's count or none, within what --mem-per-cpu leaves room
// for. The one rule the pass (MaxTasksOnNode) and the estimate (squeue
// --start, the why-pending line) both count with, so they cannot disagree.
int64_t TaskCapacity(const ResourceRequest& r, const core::NodeConfig& node, int cpus_free,
                     int64_t mem_free_mb, bool idle);
// The most tasks (<= want) that fit on the node with `gpus` GPUs; 0 if none.
int MaxTasksOnNode(const ResourceRequest& r, const core::NodeConfig& node, const Overlay& ov, int i,
                   int64_t gpus, int want);
// Fills a NodeAlloc for a fitting share (lowest free GPU indices of the type).
void MakeShareAlloc(const ResourceRequest& r, const core::NodeConfig& node, const Overlay& ov,
                    int i, const Share& share, core::NodeAlloc* out);

// ---- stage_select.cc: choose the nodes (fixed count or spreading), all or
// nothing. `candidates` are node indices in preference order; every -w node
// must be among them. On success fills `out` (one entry per chosen node, in
// node index order, i.e. config order) and returns true.
struct SelectScratch {
  std::vector<int> chosen;
  std::vector<Share> shares;
  std::vector<int> order;  // the candidates, those a -C count can use first
  std::vector<int> matching;    // those of one matching-OR alternative
  std::vector<int> by_leaf;     // the candidates by leaf switch
  std::vector<int> tree;        // those of one tree, largest leaves first
  std::vector<int> count_left;  // per -C count, nodes it still needs
  int counts_unmet = 0;         // their sum
};
// Whether the job asks for GPUs. One that does not keeps off nodes with
// GPUs while others can take it, as Slurm's select/cons_tres does (the
// oracle puts `srun -n1` in a partition of gpu[01-04],cpu[01-02] on cpu01,
// -N3 on cpu[01-02],gpu01).
bool AsksForGpus(const ResourceRequest& r);
bool SelectNodes(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                 std::span<const int> candidates, SelectScratch* scratch,
                 std::vector<core::NodeAlloc>* out);

// Sorts node indices the way Slurm prefers them: lower Weight first, then
// the given (config) order.
void SortByWeight(NodeConfigs configs, std::vector<int>* indices);

}  // namespace muster::sched

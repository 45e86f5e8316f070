// EstimateStarts: Schedule() replayed at the moments running jobs end, over
// copies of the nodes. ExplainResources: the job's per-node share against
// the partition's nodes now and as the running jobs on them end.
#include "sched/estimate.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "sched/pipeline.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::sched {
namespace {

using core::PendingReason;

// Nodes that can be released and started on, found by name.
class NodeCopies {
 public:
  explicit NodeCopies(std::span<const core::Node* const> nodes) {
    nodes_.reserve(nodes.size());
    for (const core::Node* n : nodes) nodes_.push_back(*n);
    index_.reserve(nodes_.size());
    for (core::Node& n : nodes_) index_.emplace(n.config.name, &n);  // first of duplicates wins
  }
  NodeLookup Lookup() {
    return [this](const std::string& name) -> core::Node* {
      auto it = index_.find(name);
      return it == index_.end() ? nullptr : it->second;
    };
  }
  std::vector<const core::Node*> Pointers() const {
    std::vector<const core::Node*> v;
    v.reserve(nodes_.size());
    for (const core::Node& n : nodes_) v.push_back(&n);
    return v;
  }

 private:
  std::vector<core::Node> nodes_;  // never resized after construction
  std::unordered_map<std::string_view, core::Node*> index_;
};

// A job of the simulation ending: its allocation goes back at `at`.
struct End {
  int64_t at = 0;
  size_t seq = 0;  // ties in insertion order, for determinism
  const std::vector<core::NodeAlloc>* alloc = nullptr;
  bool operator>(const End& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

bool WaitsForResources(PendingReason r) {
  return r == PendingReason::kResources || r == PendingReason::kPriority;
}

// ---- ExplainResources

// Tasks and GPUs the busiest node of a fixed-count job holds (as
// CheckSatisfiable counts them); a spreading job is counted per task.
int PerNodeTasks(const ResourceRequest& r) {
  if (r.ntasks_per_node > 0) return r.ntasks_per_node;
  if (!r.ntasks_set || r.max_nodes > r.min_nodes) return 1;
  return (r.ntasks + r.min_nodes - 1) / r.min_nodes;
}

int64_t PerNodeGpus(const ResourceRequest& r) {
  int64_t g = r.gpus_per_node;
  if (r.gpus_per_job > 0 && r.min_nodes == r.max_nodes) {
    g += (r.gpus_per_job + r.min_nodes - 1) / r.min_nodes;
  }
  return g;
}

std::string Count(int64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}
std::string CpusText(int64_t n) { return Count(n, "CPU", "CPUs"); }
std::string GpusText(int64_t n, const std::string& type) {
  return Count(n, "GPU", "GPUs") + (type.empty() ? "" : " (" + type + ")");
}
std::string MemText(int64_t mb) { return std::to_string(mb) + "M"; }
// "is"/"are" after a count or a node list of `n`.
std::string_view Is(size_t n) { return n == 1 ? "is" : "are"; }

// What a node has free for one job: CPUs, memory, GPUs of the job's type.
struct Free {
  int cpus = 0;
  int64_t mem_mb = 0;
  int64_t gpus = 0;
  bool idle = true;  // nothing allocated at all (for --exclusive)
};

Free FreeOf(const core::Node& n, std::string_view gpu_type) {
  Free f;
  f.cpus = std::max(0, n.config.cpus - n.alloc_cpus);
  f.mem_mb = std::max<int64_t>(0, n.config.real_memory_mb - n.alloc_mem_mb);
  auto used = [&](int index) {
    return static_cast<size_t>(index) < n.gpu_used.size() && n.gpu_used[index];
  };
  f.gpus = GpusOfOneType(n.config, gpu_type, [&](int index) { return !used(index); });
  const bool any_gpu_used = std::any_of(n.gpu_used.begin(), n.gpu_used.end(), [](bool u) { return u; });
  f.idle = n.alloc_cpus == 0 && n.alloc_mem_mb == 0 && n.running_jobs == 0 && !any_gpu_used;
  return f;
}

// A usable node of the partition that could hold the job's share, copied so
// the running jobs on it can be released.
struct Candidate {
  core::Node node;
  int cpus = 0;  // the share it would take there
  int64_t mem_mb = 0;
  Free free;
};

bool Fits(const ResourceRequest& r, const Candidate& c, int64_t gpus) {
  return (!r.exclusive || c.free.idle) && c.free.cpus >= c.cpus && c.free.mem_mb >= c.mem_mb &&
         c.free.gpus >= gpus;
}

// A spreading job counts tasks (-n) or GPUs (--gpus alone).
bool CountsGpus(const ResourceRequest& r) { return r.gpus_per_job > 0 && !r.ntasks_set; }

// What a spreading job could take of a node now, in CPUs (its tasks', as
// the pass counts them) or GPUs.
int64_t Units(const ResourceRequest& r, const Candidate& c) {
  const Free& f = c.free;
  if (r.exclusive && !f.idle) return 0;
  if (r.gpus_per_node > 0 && f.gpus < r.gpus_per_node) return 0;
  if (CountsGpus(r)) return Fits(r, c, 1) ? f.gpus : 0;
  return TaskCapacity(r, c.node.config, f.cpus, f.mem_mb, f.idle) * r.cpus_per_task;
}

// The candidates' future: the running jobs holding any of them, released in
// the order they end.
class Future {
 public:
  Future(std::vector<Candidate>* candidates, std::span<const RunningJob> running, int64_t now,
         std::string gpu_type)
      : c_(*candidates), gpu_type_(std::move(gpu_type)) {
    for (size_t i = 0; i < c_.size(); ++i) index_.emplace(c_[i].node.config.name, i);
    for (const RunningJob& rj : running) {
      const bool here = std::any_of(rj.job->alloc.begin(), rj.job->alloc.end(),
                                    [&](const core::NodeAlloc& a) { return index_.count(a.node); });
      if (here) ends_.emplace_back(std::max(rj.expected_end, now), &rj.job->alloc);
    }
    std::stable_sort(ends_.begin(), ends_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  // Releases every job ending at the next moment and refreshes its nodes'
  // free counts; `touched` gets their indices (once each, any order).
  // Returns false when no job is left.
  bool Advance(std::vector<size_t>* touched) {
    touched->clear();
    if (next_ == ends_.size()) return false;
    at_ = ends_[next_].first;
    NodeLookup lookup = [this](const std::string& name) -> core::Node* {
      auto it = index_.find(name);
      return it == index_.end() ? nullptr : &c_[it->second].node;
    };
    for (; next_ < ends_.size() && ends_[next_].first == at_; ++next_) {
      const std::vector<core::NodeAlloc>& alloc = *ends_[next_].second;
      util::Status released = ReleaseJob(alloc, lookup);  // best effort, as in the estimates
      (void)released;
      for (const auto& a : alloc) {
        auto it = index_.find(a.node);
        if (it != index_.end()) touched->push_back(it->second);
      }
    }
    std::sort(touched->begin(), touched->end());
    touched->erase(std::unique(touched->begin(), touched->end()), touched->end());
    for (size_t i : *touched) c_[i].free = FreeOf(c_[i].node, gpu_type_);
    return true;
  }
  int64_t at() const { return at_; }

 private:
  std::vector<Candidate>& c_;
  std::string gpu_type_;
  std::unordered_map<std::string_view, size_t> index_;  // lookups only, never iterated
  std::vector<std::pair<int64_t, const std::vector<core::NodeAlloc>*>> ends_;
  size_t next_ = 0;
  int64_t at_ = 0;
};

// The partition's nodes matching the job (-C, -x, other GRES, -w when it
// names all the nodes) that could ever take its share, split into usable
// ones (copied, with their free resources) and names of the rest.
struct Candidates {
  std::vector<Candidate> usable;
  std::vector<std::string> unusable;  // down, drained, not responding, FUTURE
};

Candidates FindCandidates(const ResourceRequest& r, const core::Partition& part, const Snapshot& s,
                          int tasks, int64_t gpus) {
  std::unordered_set<std::string_view> members(part.nodes.begin(), part.nodes.end());
  const bool only_named =
      !r.required_nodes.empty() && static_cast<int>(r.required_nodes.size()) >= r.min_nodes;
  auto listed = [](const std::vector<std::string>& v, const std::string& name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  NodeMatch m;
  m.request = &r;  // -x is checked by name below
  Candidates out;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const core::Node& n = *s.nodes[i];
    const core::NodeConfig& cfg = n.config;
    if (!members.count(cfg.name) || listed(r.excluded_nodes, cfg.name)) continue;
    if (only_named && !listed(r.required_nodes, cfg.name)) continue;
    if (!FilterNodeMatch(m, cfg, static_cast<int>(i)).ok()) continue;
    const int64_t gpus_here = std::max<int64_t>(gpus, CountsGpus(r) ? 1 : 0);
    const int cpus = ShareCpus(r, cfg, tasks, gpus_here);
    const int64_t mem = ShareMem(r, cfg, cpus, gpus_here);
    if (NeedCpus(r, tasks, gpus_here) > cfg.cpus || mem > cfg.real_memory_mb ||
        GpuCountOfType(cfg, r.gpu_type) < gpus_here) {
      continue;
    }
    if (!FilterNodeState(n).ok()) {
      out.unusable.push_back(cfg.name);
      continue;
    }
    out.usable.push_back(Candidate{n, cpus, mem, FreeOf(n, r.gpu_type)});
  }
  return out;
}

// "; gpu[01-03] have that but are down or drained" when no candidate is usable.
std::string NoneUsable(const Candidates& c, const core::Partition& part) {
  if (c.unusable.empty()) return "; no node of partition " + part.name + " matches it now";
  return "; " + util::CompressHostlist(c.unusable) + (c.unusable.size() == 1 ? " has" : " have") +
         " that but " + std::string(Is(c.unusable.size())) + " down or drained";
}

// For a job that could never run in the partition (BadConstraints): the
// per-node resource no node has, else CheckSatisfiable's detail.
std::string NeverLine(const ResourceRequest& r, const core::Partition& part,
                      const config::Config& cfg, int tasks, int64_t gpus,
                      const std::string& fallback) {
  std::unordered_set<std::string_view> members(part.nodes.begin(), part.nodes.end());
  int max_cpus = 0;
  int64_t max_mem = 0, max_gpus = 0;
  for (const core::NodeConfig& n : cfg.nodes) {
    if (!members.count(n.name)) continue;
    max_cpus = std::max(max_cpus, n.cpus);
    max_mem = std::max(max_mem, n.real_memory_mb);
    max_gpus = std::max(max_gpus, GpuCountOfType(n, r.gpu_type));
  }
  const std::string none = "; no node of partition " + part.name + " has ";
  const int cpus = NeedCpus(r, tasks, gpus);
  if (cpus > max_cpus) return "needs " + CpusText(cpus) + " on one node" + none + "that many";
  const int64_t mem = r.mem_per_gpu_mb > 0    ? r.mem_per_gpu_mb * gpus
                      : r.mem_per_node_mb > 0 ? r.mem_per_node_mb
                                              : r.mem_per_cpu_mb * cpus;
  if (!r.whole_node_mem && mem > max_mem) {
    return "needs " + MemText(mem) + " memory on one node" + none + "that much";
  }
  if (gpus > max_gpus) {
    return "needs " + GpusText(gpus, r.gpu_type) + " on one node" + none +
           (max_gpus == 0 && !r.gpu_type.empty() ? r.gpu_type + " GPUs" : "that many");
  }
  return fallback;
}

// The whole line for a job that fits now (the state changed since its pass).
std::string FitsNow(const std::vector<std::string>& names) {
  return "fits on " + util::CompressHostlist(names) + " now; the next scheduling pass starts it";
}

using TimeFormat = std::function<std::string(int64_t)>;

// What a single-node job is short of on every usable candidate, in the
// order people think of it: an idle node, GPUs, CPUs, memory, else the
// combination (each resource is free somewhere, never all on one node).
enum class Short { kIdle, kGpus, kCpus, kMem, kTogether };

Short Classify(const ResourceRequest& r, const std::vector<Candidate>& u, int64_t gpus) {
  auto none = [&](auto has) { return std::none_of(u.begin(), u.end(), has); };
  if (r.exclusive) return Short::kIdle;
  if (gpus > 0 && none([&](const Candidate& x) { return x.free.gpus >= gpus; })) {
    return Short::kGpus;
  }
  if (none([&](const Candidate& x) { return x.free.cpus >= x.cpus; })) return Short::kCpus;
  if (none([&](const Candidate& x) { return x.free.mem_mb >= x.mem_mb; })) return Short::kMem;
  return Short::kTogether;
}

// "waits for 8 GPUs (h100) on one node".
std::string SingleNeed(const ResourceRequest& r, Short what, int cpus, int64_t mem, int64_t gpus) {
  switch (what) {
    case Short::kIdle:
      return "waits for an idle node";
    case Short::kGpus:
      return "waits for " + GpusText(gpus, r.gpu_type) + " on one node";
    case Short::kCpus:
      return "waits for " + CpusText(cpus) + " on one node";
    case Short::kMem:
      return r.whole_node_mem ? "waits for a node with all its memory free"
                              : "waits for " + MemText(mem) + " memory on one node";
    case Short::kTogether:
      return "waits for " + CpusText(cpus) + (gpus > 0 ? ", " : " and ") + MemText(mem) +
             " memory" + (gpus > 0 ? " and " + GpusText(gpus, r.gpu_type) : "") +
             " together on one node";
  }
  return "";
}

// "; 3 nodes have 8, all busy" or "; the largest free share is 12 CPUs on
// gpu02". Sets *all_busy when nothing of the short resource is free.
std::string SingleNow(const ResourceRequest& r, Short what, const std::vector<Candidate>& u,
                      int cpus, int64_t mem, int64_t gpus, bool* all_busy) {
  *all_busy = false;
  const std::string count = std::to_string(u.size());
  switch (what) {
    case Short::kIdle:
      return u.size() == 1 ? "; the one node that could take it is not idle"
                           : "; none of the " + count + " nodes that could take it is idle";
    case Short::kTogether:
      return "; no node has all of it free at once";
    case Short::kGpus:
    case Short::kCpus:
    case Short::kMem:
      break;
  }
  auto free_of = [&](const Candidate& x) -> int64_t {
    return what == Short::kGpus ? x.free.gpus : what == Short::kCpus ? x.free.cpus : x.free.mem_mb;
  };
  const Candidate* where = &u.front();  // the largest free share, first node on ties
  for (const auto& x : u) {
    if (free_of(x) > free_of(*where)) where = &x;
  }
  const int64_t largest = free_of(*where);
  if (largest == 0) {
    *all_busy = true;
    const std::string amount = what == Short::kGpus   ? std::to_string(gpus)
                               : what == Short::kCpus ? std::to_string(cpus)
                                                      : MemText(mem);
    return "; " + count + (u.size() == 1 ? " node has " : " nodes have ") + amount +
           (u.size() == 1 ? ", busy" : ", all busy");
  }
  const std::string share = what == Short::kGpus   ? GpusText(largest, r.gpu_type)
                            : what == Short::kCpus ? CpusText(largest)
                                                   : MemText(largest);
  return "; the largest free share is " + share + " on " + where->node.config.name;
}

std::string SingleNode(const ResourceRequest& r, const core::Partition& part, Candidates c,
                       int tasks, int64_t gpus, std::span<const RunningJob> running, int64_t now,
                       const TimeFormat& format_time) {
  std::vector<Candidate>& u = c.usable;
  const int cpus = u.empty() ? NeedCpus(r, tasks) : u.front().cpus;
  const int64_t mem = u.empty() ? 0 : u.front().mem_mb;
  const Short what = Classify(r, u, gpus);
  const std::string need = SingleNeed(r, what, cpus, mem, gpus);
  if (u.empty()) return need + NoneUsable(c, part);
  std::vector<std::string> fit;
  for (const auto& x : u) {
    if (Fits(r, x, gpus)) fit.push_back(x.node.config.name);
  }
  if (!fit.empty()) return FitsNow(fit);
  bool all_busy = false;
  const std::string line = need + SingleNow(r, what, u, cpus, mem, gpus, &all_busy);

  // When the first node fits, and which nodes fit then.
  Future future(&u, running, now, r.gpu_type);
  std::vector<size_t> touched;
  while (fit.empty() && future.Advance(&touched)) {
    for (size_t i : touched) {
      if (Fits(r, u[i], gpus)) fit.push_back(u[i].node.config.name);
    }
  }
  if (fit.empty()) return line;
  const std::string when = "about " + format_time(future.at());
  if (all_busy) return line + " until " + when;
  const std::string who = util::CompressHostlist(fit);
  if (what == Short::kIdle) {
    return line + "; " + who + " " + std::string(Is(fit.size())) + " idle at " + when;
  }
  return line + "; " + who + (fit.size() == 1 ? " frees up at " : " free up at ") + when;
}

// -N n (n > 1): how many nodes take their share now, and when enough do.
std::string MultiNode(const ResourceRequest& r, Candidates c, int tasks, int64_t gpus,
                      std::span<const RunningJob> running, int64_t now,
                      const TimeFormat& format_time) {
  std::vector<Candidate>& u = c.usable;
  const size_t n = static_cast<size_t>(r.min_nodes);
  const int cpus = u.empty() ? NeedCpus(r, tasks) : u.front().cpus;
  const std::string share = gpus > 0 ? GpusText(gpus, r.gpu_type) : CpusText(cpus);
  std::string line = "waits for " + std::to_string(n) +
                     (r.exclusive ? " idle nodes" : " nodes with " + share + " each");
  if (u.size() < n) {
    line += u.empty() ? std::string("; no such node is up")
                      : "; only " + std::to_string(u.size()) +
                            (u.size() == 1 ? " such node is up" : " such nodes are up");
    if (!c.unusable.empty()) {
      line += " (" + util::CompressHostlist(c.unusable) + " down or drained)";
    }
    return line;
  }
  // Releases only add free resources, so a node that fits keeps fitting.
  std::vector<bool> fits(u.size());
  std::vector<std::string> names;
  for (size_t i = 0; i < u.size(); ++i) {
    fits[i] = Fits(r, u[i], gpus);
    if (fits[i]) names.push_back(u[i].node.config.name);
  }
  const size_t free_now = names.size();
  if (free_now >= n) return FitsNow(names);
  line += free_now == 0
              ? std::string("; none is free now")
              : "; " + std::to_string(free_now) + " " + std::string(Is(free_now)) + " free now";
  size_t count = free_now;
  Future future(&u, running, now, r.gpu_type);
  std::vector<size_t> touched;
  while (count < n && future.Advance(&touched)) {
    for (size_t i : touched) {
      if (!fits[i] && Fits(r, u[i], gpus)) fits[i] = true, ++count;
    }
  }
  if (count < n) return line;
  const std::string when = "about " + format_time(future.at());
  return line + (n - free_now == 1 ? ", the next frees up at " : ", enough free up by ") + when;
}

// -n or --gpus without a fixed node count: the total the partition has free
// now, and when there is enough.
std::string Spread(const ResourceRequest& r, const core::Partition& part, Candidates c,
                   std::span<const RunningJob> running, int64_t now,
                   const TimeFormat& format_time) {
  std::vector<Candidate>& u = c.usable;
  const bool gpus = CountsGpus(r);
  const int64_t need = gpus ? r.gpus_per_job : static_cast<int64_t>(r.ntasks) * r.cpus_per_task;
  std::string line =
      "waits for " + (gpus ? GpusText(need, r.gpu_type) : CpusText(need)) + " across nodes";
  if (u.empty()) return line + NoneUsable(c, part);
  std::vector<int64_t> units(u.size());
  std::vector<std::string> names;
  int64_t sum = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    units[i] = Units(r, u[i]);
    sum += units[i];
    if (units[i] > 0) names.push_back(u[i].node.config.name);
  }
  if (sum >= need) return FitsNow(names);
  line += sum == 0 ? std::string("; none is free now")
                   : "; " + std::to_string(sum) + " " + std::string(Is(static_cast<size_t>(sum))) +
                         " free now";
  Future future(&u, running, now, r.gpu_type);
  std::vector<size_t> touched;
  while (sum < need && future.Advance(&touched)) {
    for (size_t i : touched) {
      const int64_t v = Units(r, u[i]);
      sum += v - units[i];
      units[i] = v;
    }
  }
  if (sum < need) return line;
  return line + ", enough free up by about " + format_time(future.at());
}

}  // namespace

std::vector<StartEstimate> EstimateStarts(const Snapshot& snapshot,
                                          std::span<const RunningJob> running, int64_t horizon_s,
                                          size_t max_jobs) {
  std::vector<StartEstimate> out(snapshot.pending.size());
  std::vector<bool> placed(snapshot.pending.size(), false);
  std::unordered_map<core::JobId, size_t> slot;  // lookups only, never iterated
  for (size_t k = 0; k < snapshot.pending.size(); ++k) {
    out[k].job_id = snapshot.pending[k]->id;
    slot.emplace(out[k].job_id, k);
  }
  const int64_t horizon = snapshot.now + std::max<int64_t>(0, horizon_s);
  NodeCopies copies(snapshot.nodes);
  NodeLookup lookup = copies.Lookup();
  Snapshot sim = snapshot;
  sim.nodes = copies.Pointers();
  // The replayed passes keep priority order (sched/builtin: no plans over
  // the simulated ends); with backfill the real pass plans every job itself.
  sim.running.clear();
  config::Config strict = *snapshot.config;
  strict.backfill = false;
  sim.config = &strict;

  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  size_t seq = 0;
  for (const RunningJob& rj : running) {
    ends.push(End{std::max(rj.expected_end, snapshot.now), seq++, &rj.job->alloc});
  }
  std::deque<std::vector<core::NodeAlloc>> started_allocs;  // stable addresses for `ends`
  auto start = [&](const StartDecision& st, int64_t at) {
    auto it = slot.find(st.job_id);
    if (it == slot.end()) return;
    // The plan was made over these very copies, so this cannot fail; if it
    // did, the job simply gets no estimate.
    if (!ApplyStart(st.alloc, lookup).ok()) return;
    placed[it->second] = true;
    StartEstimate& e = out[it->second];
    e.start = at;
    for (const auto& share : st.alloc) e.nodes.push_back(share.node);
    const int64_t limit = snapshot.pending[it->second]->time_limit_s;
    if (limit >= 0 && at + limit <= horizon) {
      started_allocs.push_back(st.alloc);
      ends.push(End{at + limit, seq++, &started_allocs.back()});
    }
  };

  // The first pass decides who is simulated at all.
  Plan first = Schedule(sim);
  for (const auto& st : first.starts) start(st, snapshot.now);
  std::unordered_set<core::JobId> window_ids;
  for (const auto& d : first.pending) {
    if (window_ids.size() >= max_jobs) break;
    if (WaitsForResources(d.reason)) window_ids.insert(d.job_id);
  }
  std::vector<const core::Job*> waiting;  // the window's jobs not placed yet, in order
  waiting.reserve(window_ids.size());
  for (const core::Job* j : snapshot.pending) {
    if (window_ids.count(j->id) && !placed[slot.at(j->id)]) waiting.push_back(j);
  }

  while (!waiting.empty() && !ends.empty() && ends.top().at <= horizon) {
    const int64_t at = ends.top().at;
    while (!ends.empty() && ends.top().at == at) {
      // Inconsistent accounting (a running job listed twice) releases what
      // it can; the estimate is then optimistic, never a crash.
      util::Status released = ReleaseJob(*ends.top().alloc, lookup);
      (void)released;
      ends.pop();
    }
    sim.now = at;
    sim.pending = waiting;
    Plan plan = Schedule(sim);
    if (plan.starts.empty()) continue;
    for (const auto& st : plan.starts) start(st, at);
    std::erase_if(waiting, [&](const core::Job* j) { return placed[slot.at(j->id)]; });
  }
  return out;
}

std::string ExplainResources(const core::Job& job, const Snapshot& snapshot,
                             std::span<const RunningJob> running,
                             const std::function<std::string(int64_t)>& format_time) {
  const config::Config& cfg = *snapshot.config;
  // A job waiting in several partitions (-p a,b) is explained in the
  // first of them that still exists.
  const core::Partition* part = nullptr;
  for (const std::string& name : util::Split(job.partition, ',')) {
    if ((part = cfg.FindPartition(name)) != nullptr) break;
  }
  if (part == nullptr) return "partition " + job.partition + " does not exist";
  auto request = MakeResourceRequest(job.req, cfg.def_mem_per_cpu_mb);
  if (!request.ok()) return "cannot be placed: " + request.status().message();
  const ResourceRequest& r = *request;
  const int tasks = PerNodeTasks(r);
  const int64_t gpus = PerNodeGpus(r);
  SubmitRefusal why;
  util::Status satisfiable = CheckSatisfiable(job.req, *part, cfg, &why);
  if (!satisfiable.ok()) {
    return NeverLine(r, *part, cfg, tasks, gpus,
                     why.detail.empty() ? satisfiable.message() : why.detail);
  }
  Candidates c = FindCandidates(r, *part, snapshot, tasks, gpus);
  // -N min-max without -n spreads nothing: it waits for min nodes.
  if (r.max_nodes > r.min_nodes && (r.ntasks_set || CountsGpus(r))) {
    return Spread(r, *part, std::move(c), running, snapshot.now, format_time);
  }
  if (r.min_nodes > 1) {
    return MultiNode(r, std::move(c), tasks, gpus, running, snapshot.now, format_time);
  }
  return SingleNode(r, *part, std::move(c), tasks, gpus, running, snapshot.now, format_time);
}

}  // namespace muster::sched

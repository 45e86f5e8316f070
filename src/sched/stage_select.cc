// Stage: choose the nodes, all or nothing (Slurm allocates a job's nodes
// at once; there are no partial starts). Nodes named by -w are taken first
// and must all fit; the rest come from the candidates in preference order.
//   Fixed count (-N n, or one node) with -n alone: as Slurm's cons_tres
//   allocates, each node in turn takes as many tasks as fit, leaving one
//   for each node still to come (-N 2 -n 4 on free nodes: 3 + 1,
//   SLURM_TASKS_PER_NODE=3,1). Should that greedy pass find no room, the
//   blocks below choose the nodes and the tasks are filled into them the
//   same way.
//   Fixed count with --ntasks-per-node, --exclusive or --gpus: the first n
//   nodes that each hold their block of the tasks (-N 2 -n 3: 2 + 1; Slurm:
//   -N 2 -n 4 --exclusive is 2 + 2) and GPUs (--gpus=3 on 2 nodes: 2 + 1).
//   Spreading (-n without -N, --gpus without -N/-n, -N min-max): each node
//   in turn takes as many tasks (and --gpus GPUs) as fit, leaving one task
//   for every node still needed to reach min_nodes, until the request is
//   placed or max_nodes is reached. With --gpus, nodes with free GPUs of
//   the type are visited first.
//   With CR_Pack_Nodes the tasks fill the nodes first with --exclusive too.
//   Either way a job that asks for no GPU visits nodes without GPUs first,
//   as Slurm's cons_tres keeps such jobs off GPU nodes. Greedy, so it can miss a packing that a
//   search would find (e.g. -n 2 --gpus=12 where the GPUs sit on three
//   nodes); Slurm's select plugin has the same kind of limits.
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "sched/pipeline.h"

namespace muster::sched {
namespace {

// The j-th of n blocks of `total` (the first total % n blocks get one more).
int64_t Block(int64_t total, int n, int j) { return total / n + (j < total % n ? 1 : 0); }

bool IsRequired(const NodeMatch& m, int index) {
  return !m.required.empty() && std::binary_search(m.required.begin(), m.required.end(), index);
}

// Calls visit(index, required) for the candidates: required ones first (in
// candidate order), then the others — with a `prefer` predicate, those for
// which it holds before the rest. Stops when visit returns false; returns
// false when stopped because a required node was refused or is not a
// candidate.
constexpr auto kNoPreference = nullptr;

template <typename Visit, typename Prefer>
bool ForEachCandidate(const NodeMatch& m, std::span<const int> candidates, Visit visit,
                      Prefer prefer) {
  if (!m.required.empty()) {
    size_t seen = 0;
    for (int i : candidates) {
      if (!IsRequired(m, i)) continue;
      ++seen;
      if (!visit(i, true)) return false;
    }
    if (seen != m.required.size()) return false;  // a named node is not usable
  }
  constexpr bool kPrefer = !std::is_null_pointer_v<Prefer>;
  for (int round = 0; round < (kPrefer ? 2 : 1); ++round) {
    for (int i : candidates) {
      if (IsRequired(m, i)) continue;
      if constexpr (kPrefer) {
        if (prefer(i) != (round == 0)) continue;
      }
      if (!visit(i, false)) return true;
    }
  }
  return true;
}

// -C counts: the first count not yet met that the node counts for, else -1.
int OpenCount(const ResourceRequest& r, const core::NodeConfig& node, const SelectScratch& s) {
  for (size_t c = 0; c < r.feature_counts.size(); ++c) {
    if (s.count_left[c] > 0 && MeetsCount(node, r.feature_counts[c])) return static_cast<int>(c);
  }
  return -1;
}

// Whether a selection with `slots` nodes still to take may take this one:
// always, unless the counts not yet met need every slot left and the node
// meets none of them.
bool CountsAdmit(const ResourceRequest& r, const core::NodeConfig& node, const SelectScratch& s,
                 int slots) {
  return s.counts_unmet == 0 || s.counts_unmet < slots || OpenCount(r, node, s) >= 0;
}

void TakeCount(const ResourceRequest& r, const core::NodeConfig& node, SelectScratch* s) {
  if (s->counts_unmet == 0) return;
  const int c = OpenCount(r, node, *s);
  if (c < 0) return;
  --s->count_left[c];
  --s->counts_unmet;
}

}  // namespace

Share BlockShare(const ResourceRequest& r, int n, int j) {
  Share share;
  share.tasks =
      r.ntasks_set ? static_cast<int>(Block(r.ntasks, n, j)) : std::max(r.ntasks_per_node, 1);
  share.gpus = r.gpus_per_node + (r.gpus_per_job > 0 ? Block(r.gpus_per_job, n, j) : 0);
  return share;
}

namespace {

bool SelectBlocks(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                  std::span<const int> candidates, SelectScratch* s) {
  const ResourceRequest& r = *m.request;
  const int n = r.min_nodes;
  auto visit = [&](int i, bool required) {
    if (static_cast<int>(s->chosen.size()) == n) return false;
    const core::NodeConfig& node = *configs[i];
    const int j = static_cast<int>(s->chosen.size());
    const Share share = BlockShare(r, n, j);
    if (FilterNodeMatch(m, node, i).ok() && CountsAdmit(r, node, *s, n - j) &&
        FitShare(r, node, ov, i, share).ok()) {
      s->chosen.push_back(i);
      s->shares.push_back(share);
      TakeCount(r, node, s);
      return true;
    }
    return !required;
  };
  auto gpu_less = [&](int i) { return ov.gpu_count(i) == 0; };
  bool ok = AsksForGpus(r) || m.all_have_gpus
                ? ForEachCandidate(m, candidates, visit, kNoPreference)
                : ForEachCandidate(m, candidates, visit, gpu_less);
  return ok && static_cast<int>(s->chosen.size()) == n;
}

bool SelectSpread(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                  std::span<const int> candidates, SelectScratch* s) {
  const ResourceRequest& r = *m.request;
  const int per_node_tasks = std::max(r.ntasks_per_node, 1);
  int64_t tasks_left = r.ntasks_set ? r.ntasks : 0;
  int64_t gpus_left = r.gpus_per_job;
  auto done = [&] {
    const int chosen = static_cast<int>(s->chosen.size());
    if (chosen >= r.max_nodes) return true;
    if (chosen < r.min_nodes || s->counts_unmet > 0) return false;
    if (r.ntasks_set) return tasks_left == 0 && gpus_left == 0;
    return r.gpus_per_job > 0 && gpus_left == 0;
  };
  auto visit = [&](int i, bool required) {
    if (!required && done()) return false;
    const core::NodeConfig& node = *configs[i];
    const int chosen = static_cast<int>(s->chosen.size());
    if (!FilterNodeMatch(m, node, i).ok() || !CountsAdmit(r, node, *s, r.max_nodes - chosen)) {
      return !required;
    }
    int64_t gpus_here = 0;
    if (gpus_left > 0) {
      int64_t avail = FreeGpus(node, ov, i, r.gpu_type) - r.gpus_per_node;
      gpus_here = std::clamp<int64_t>(avail, 0, gpus_left);
      // Without -n a node is only worth taking for its GPUs.
      if (!r.ntasks_set && gpus_here == 0) return !required;
    }
    int want;
    if (r.ntasks_set) {
      // Leave a task for each node still needed to reach min_nodes (named
      // nodes come first, so that covers them), and one for a node with GPUs
      // while --gpus is not yet placed: -n 18 --gpus=2 must not let the GPU-less
      // nodes of higher preference take every task.
      const int still_needed =
          std::max(r.min_nodes - chosen - 1, 0) + (gpus_left - gpus_here > 0 ? 1 : 0);
      want = static_cast<int>(std::min<int64_t>(tasks_left - still_needed, 1 << 30));
    } else {
      want = per_node_tasks;
    }
    const int tasks = MaxTasksOnNode(r, node, ov, i, r.gpus_per_node + gpus_here, want);
    if (tasks <= 0 || (!r.ntasks_set && tasks < want)) return !required;
    s->chosen.push_back(i);
    s->shares.push_back(Share{tasks, r.gpus_per_node + gpus_here});
    TakeCount(r, node, s);
    if (r.ntasks_set) tasks_left -= tasks;
    gpus_left -= gpus_here;
    return true;
  };
  // With --gpus, nodes that have free GPUs of the type go first, so that
  // GPU-less nodes of higher preference do not take all the tasks; without
  // any GPU, nodes without GPUs go first.
  auto has_gpus = [&](int i) { return FreeGpus(*configs[i], ov, i, r.gpu_type) > r.gpus_per_node; };
  auto gpu_less = [&](int i) { return ov.gpu_count(i) == 0; };
  bool ok = r.gpus_per_job > 0 ? ForEachCandidate(m, candidates, visit, has_gpus)
            : AsksForGpus(r) || m.all_have_gpus
                ? ForEachCandidate(m, candidates, visit, kNoPreference)
                : ForEachCandidate(m, candidates, visit, gpu_less);
  if (!ok) return false;
  const int chosen = static_cast<int>(s->chosen.size());
  return chosen >= r.min_nodes && chosen <= r.max_nodes && tasks_left == 0 && gpus_left == 0;
}

// Nothing chosen yet; every -C count still to meet.
void ResetSelection(const ResourceRequest& r, SelectScratch* s) {
  s->chosen.clear();
  s->shares.clear();
  s->count_left.clear();
  s->counts_unmet = 0;
  for (const auto& c : r.feature_counts) {
    s->count_left.push_back(c.count);
    s->counts_unmet += c.count;
  }
}

// Whether a fixed-count job's tasks fill its nodes first rather than in
// even blocks (see the file comment).
bool FillsFirst(const NodeMatch& m) {
  const ResourceRequest& r = *m.request;
  return r.min_nodes > 1 && r.ntasks_set && r.ntasks_per_node == 0 &&
         (!r.exclusive || m.pack_tasks) && r.gpus_per_job == 0;
}

// Lays the tasks out again over the nodes SelectBlocks chose: each takes as
// many as fit, leaving one for each node after it. Each node holds at
// least its block, so the tasks always fit; the blocks stay otherwise.
void RefillFirst(const ResourceRequest& r, NodeConfigs configs, const Overlay& ov,
                 SelectScratch* s) {
  const int n = static_cast<int>(s->chosen.size());
  std::vector<int> tasks(s->chosen.size());
  int64_t left = r.ntasks;
  for (int j = 0; j < n; ++j) {
    const int i = s->chosen[j];
    const int want = static_cast<int>(std::min<int64_t>(left - (n - j - 1), 1 << 30));
    tasks[j] = MaxTasksOnNode(r, *configs[i], ov, i, s->shares[j].gpus, want);
    if (tasks[j] <= 0) return;
    left -= tasks[j];
  }
  if (left != 0) return;
  for (int j = 0; j < n; ++j) s->shares[j].tasks = tasks[j];
}

bool SelectFixed(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                 std::span<const int> candidates, SelectScratch* s) {
  const ResourceRequest& r = *m.request;
  if (!FillsFirst(m)) return SelectBlocks(m, configs, ov, candidates, s);
  // min_nodes == max_nodes: the spreading pass stops at exactly n nodes.
  if (SelectSpread(m, configs, ov, candidates, s)) return true;
  ResetSelection(r, s);
  if (!SelectBlocks(m, configs, ov, candidates, s)) return false;
  RefillFirst(r, configs, ov, s);
  return true;
}

// The selection over `candidates` as ordered: fills `out` on success.
bool SelectPlain(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                 std::span<const int> candidates, SelectScratch* scratch,
                 std::vector<core::NodeAlloc>* out) {
  const ResourceRequest& r = *m.request;
  ResetSelection(r, scratch);
  const bool fixed = r.min_nodes == r.max_nodes;
  if (!(fixed ? SelectFixed(m, configs, ov, candidates, scratch)
              : SelectSpread(m, configs, ov, candidates, scratch))) {
    return false;
  }
  if (scratch->counts_unmet > 0) return false;
  // The allocation lists nodes in config order, as Slurm's node bitmap does
  // (the first is the batch host); each keeps its own share.
  const size_t n = scratch->chosen.size();
  out->resize(n);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return scratch->chosen[a] < scratch->chosen[b]; });
  for (size_t k = 0; k < n; ++k) {
    const size_t j = order[k];
    const int i = scratch->chosen[j];
    MakeShareAlloc(r, *configs[i], ov, i, scratch->shares[j], &(*out)[k]);
  }
  return true;
}

// topology/tree: a job that may take several nodes goes under one leaf
// switch where one can hold it (the leaf with the fewest candidates first,
// so big leaves stay whole), else under as few leaves of one tree as it
// can (the leaves with the most candidates first). Nodes under no switch
// count as one leaf of a tree of their own. --switches=N while it waits:
// at most N leaves.
bool SelectUnderSwitches(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                         std::span<const int> candidates, SelectScratch* scratch,
                         std::vector<core::NodeAlloc>* out) {
  const ResourceRequest& r = *m.request;
  const std::vector<int>& leaf_of = *m.leaf_of;
  std::vector<int>& by_leaf = scratch->by_leaf;
  by_leaf.assign(candidates.begin(), candidates.end());
  std::stable_sort(by_leaf.begin(), by_leaf.end(),
                   [&](int a, int b) { return leaf_of[a] < leaf_of[b]; });
  struct Range {
    int leaf, root;
    size_t begin, end;
    bool has_gpus;  // for a job that asks for none, a leaf to try late
    size_t size() const { return end - begin; }
  };
  const bool gpu_less_first = !AsksForGpus(r) && !m.all_have_gpus;
  std::vector<Range> ranges;
  for (size_t k = 0; k < by_leaf.size();) {
    const int leaf = leaf_of[by_leaf[k]];
    size_t end = k;
    bool has_gpus = false;
    for (; end < by_leaf.size() && leaf_of[by_leaf[end]] == leaf; ++end) {
      has_gpus = has_gpus || (gpu_less_first && GpuCount(*configs[by_leaf[end]]) > 0);
    }
    ranges.push_back(Range{leaf, leaf < 0 ? -1 : (*m.root_of)[leaf], k, end, has_gpus});
    k = end;
  }
  auto span_of = [&](const Range& g) {
    return std::span<const int>(by_leaf.data() + g.begin, g.size());
  };
  std::stable_sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return std::pair(a.has_gpus, a.size()) < std::pair(b.has_gpus, b.size());
  });
  for (const Range& g : ranges) {
    if (static_cast<int>(g.size()) < r.min_nodes) continue;
    if (SelectPlain(m, configs, ov, span_of(g), scratch, out)) return true;
  }
  if (m.max_leaves == 1 || ranges.size() < 2) return false;
  // Over several leaves of one tree, the largest tree first.
  std::vector<std::pair<size_t, int>> trees;  // (candidates, root)
  for (const Range& g : ranges) {
    auto it = std::find_if(trees.begin(), trees.end(), [&](auto& t) { return t.second == g.root; });
    if (it == trees.end()) {
      trees.emplace_back(g.size(), g.root);
    } else {
      it->first += g.size();
    }
  }
  std::stable_sort(trees.begin(), trees.end(), [](auto& a, auto& b) { return a.first > b.first; });
  for (const auto& [size, root] : trees) {
    if (static_cast<int>(size) < r.min_nodes) continue;
    // Its leaves, the most candidates first (for a CPU-only job, those
    // without GPUs before).
    std::vector<const Range*> order;
    for (const Range& g : ranges) {
      if (g.root == root) order.push_back(&g);
    }
    std::stable_sort(order.begin(), order.end(), [](const Range* a, const Range* b) {
      return std::pair(!a->has_gpus, a->size()) > std::pair(!b->has_gpus, b->size());
    });
    std::vector<int>& tree = scratch->tree;
    tree.clear();
    for (const Range* g : order) {
      tree.insert(tree.end(), by_leaf.begin() + g->begin, by_leaf.begin() + g->end);
    }
    const int leaves = static_cast<int>(order.size());
    if (leaves < 2 || !SelectPlain(m, configs, ov, tree, scratch, out)) continue;
    if (m.max_leaves > 0) {
      std::vector<int> used;
      for (int i : scratch->chosen) used.push_back(leaf_of[i]);
      std::sort(used.begin(), used.end());
      if (std::unique(used.begin(), used.end()) - used.begin() > m.max_leaves) continue;
    }
    return true;
  }
  out->clear();
  return false;
}

// SelectNodes over one set of candidates (a matching OR's alternative).
bool SelectAmong(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                 std::span<const int> candidates, SelectScratch* scratch,
                 std::vector<core::NodeAlloc>* out) {
  const ResourceRequest& r = *m.request;
  if (!r.feature_counts.empty()) {
    // Nodes a count can use go first, so a spreading job meets its counts
    // before it is done.
    scratch->order.assign(candidates.begin(), candidates.end());
    std::stable_partition(scratch->order.begin(), scratch->order.end(), [&](int i) {
      return std::any_of(r.feature_counts.begin(), r.feature_counts.end(),
                         [&](const auto& c) { return MeetsCount(*configs[i], c); });
    });
    candidates = scratch->order;
  }
  if (m.leaf_of != nullptr && r.max_nodes > 1) {
    return SelectUnderSwitches(m, configs, ov, candidates, scratch, out);
  }
  return SelectPlain(m, configs, ov, candidates, scratch, out);
}

}  // namespace

bool AsksForGpus(const ResourceRequest& r) { return r.gpus_per_node > 0 || r.gpus_per_job > 0; }

bool SelectNodes(const NodeMatch& m, NodeConfigs configs, const Overlay& ov,
                 std::span<const int> candidates, SelectScratch* scratch,
                 std::vector<core::NodeAlloc>* out) {
  const ResourceRequest& r = *m.request;
  out->clear();
  if (m.required_unknown) return false;
  if (r.feature_match.empty()) return SelectAmong(m, configs, ov, candidates, scratch, out);
  // -C [a|b]: all nodes of one alternative, the first that holds the job.
  for (const std::string& feature : r.feature_match) {
    scratch->matching.clear();
    for (int i : candidates) {
      if (HasFeature(*configs[i], feature)) scratch->matching.push_back(i);
    }
    // (SelectAmong reorders into scratch->order, never `matching`.)
    if (!scratch->matching.empty() &&
        SelectAmong(m, configs, ov, scratch->matching, scratch, out)) {
      return true;
    }
  }
  out->clear();
  return false;
}

void SortByWeight(NodeConfigs configs, std::vector<int>* indices) {
  std::stable_sort(indices->begin(), indices->end(), [&](int a, int b) {
    if (configs[a]->weight != configs[b]->weight) return configs[a]->weight < configs[b]->weight;
    return a < b;
  });
}

}  // namespace muster::sched

#include "sched/fairshare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace muster::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct TreeNode {
  std::string account;
  std::string user;  // "" for an account
  int64_t shares = 1;
  int parent = -1;
  std::vector<int> children;  // users by name, then accounts by name
  double usage = 0;
  double norm_shares = 0;  // among its siblings
  double level_usage = 0;  // its usage among its siblings'
  double level_fs = 0;
  int depth = 0;
};

class Builder {
 public:
  Builder(const std::vector<Association>& assocs, const std::map<AssocKey, double>& usage) {
    nodes_.push_back(TreeNode{"root", "", 0, -1, {}, 0, 0, 0, 0, 0});
    accounts_["root"] = 0;
    for (const Association& a : assocs) {
      if (a.user.empty()) Account(a.account).shares = a.shares;
    }
    for (const Association& a : assocs) {
      if (a.user.empty() && a.account != "root") {
        SetParent(accounts_.at(a.account), a.parent_account);
      }
    }
    for (const auto& [name, i] : accounts_) {
      if (i != 0 && nodes_[i].parent < 0) Attach(i, 0);
    }
    for (const Association& a : assocs) {
      if (a.user.empty() || users_.count({a.account, a.user}) != 0) continue;
      const int parent =
          accounts_.count(a.account) != 0 ? accounts_.at(a.account) : NewAccount(a.account);
      const int i = static_cast<int>(nodes_.size());
      nodes_.push_back(TreeNode{a.account, a.user, a.shares, -1, {}, 0, 0, 0, 0, 0});
      users_[{a.account, a.user}] = i;
      Attach(i, parent);
    }
    for (const auto& [key, used] : usage) {
      auto it = users_.find(key);
      if (it == users_.end()) continue;
      for (int i = it->second; i >= 0; i = nodes_[i].parent) nodes_[i].usage += used;
    }
    for (TreeNode& n : nodes_) {
      std::sort(n.children.begin(), n.children.end(), [&](int a, int b) {
        const TreeNode& x = nodes_[a];
        const TreeNode& y = nodes_[b];
        if (x.user.empty() != y.user.empty()) return !x.user.empty();
        return x.user.empty() ? x.account < y.account : x.user < y.user;
      });
    }
    Level(0, 0);
  }

  std::vector<ShareRow> Finish(bool fair_tree, std::map<AssocKey, double>* factors) {
    std::vector<double> global_shares(nodes_.size(), 0);
    std::vector<double> effective(nodes_.size(), 0);
    const double total = nodes_[0].usage;
    std::vector<ShareRow> rows;
    Walk(0, [&](int i) {
      const TreeNode& n = nodes_[i];
      ShareRow row;
      row.account = n.account;
      row.user = n.user;
      row.depth = n.depth;
      row.raw_shares = i == 0 ? 0 : n.shares;
      row.raw_usage = n.usage;
      row.norm_usage = total > 0 ? n.usage / total : 0;
      if (i == 0) {
        row.effective_usage = total > 0 ? 1 : 0;
      } else if (fair_tree) {
        row.norm_shares = n.norm_shares;
        row.effective_usage = n.level_usage;
        row.level_fs = n.level_fs;
      } else {
        // Classic: shares multiply down the tree; an association is charged
        // its own usage and, beyond the root's children, its share of what
        // its parent used beyond it.
        global_shares[i] = n.norm_shares * (n.parent == 0 ? 1 : global_shares[n.parent]);
        effective[i] =
            n.parent == 0 ? row.norm_usage
                          : row.norm_usage + (effective[n.parent] - row.norm_usage) * n.norm_shares;
        row.norm_shares = global_shares[i];
        row.effective_usage = effective[i];
        if (!n.user.empty()) {
          row.fairshare =
              row.norm_shares > 0 ? std::exp2(-row.effective_usage / row.norm_shares) : 0;
          (*factors)[{n.account, n.user}] = row.fairshare;
        }
      }
      rows.push_back(std::move(row));
    });
    if (fair_tree) {
      RankUsers(factors);
      for (ShareRow& row : rows) {
        if (row.user.empty()) continue;
        auto it = factors->find({row.account, row.user});
        row.fairshare = it == factors->end() ? 0 : it->second;
      }
    }
    return rows;
  }

 private:
  TreeNode& Account(const std::string& name) {
    return nodes_[accounts_.count(name) ? accounts_.at(name) : NewAccount(name)];
  }

  int NewAccount(const std::string& name) {
    const int i = static_cast<int>(nodes_.size());
    nodes_.push_back(TreeNode{name, "", 1, -1, {}, 0, 0, 0, 0, 0});
    accounts_[name] = i;
    return i;
  }

  // Under `parent_name` (root when empty or unknown, or when it would make
  // a cycle).
  void SetParent(int i, const std::string& parent_name) {
    if (nodes_[i].parent >= 0) return;
    int parent = 0;
    if (!parent_name.empty() && parent_name != nodes_[i].account) {
      parent =
          accounts_.count(parent_name) != 0 ? accounts_.at(parent_name) : NewAccount(parent_name);
      if (nodes_[parent].parent < 0 && parent != 0) Attach(parent, 0);
      for (int up = parent; up >= 0; up = nodes_[up].parent) {
        if (up == i) parent = 0;
      }
    }
    Attach(i, parent);
  }

  void Attach(int child, int parent) {
    nodes_[child].parent = parent;
    nodes_[parent].children.push_back(child);
  }

  // Shares and usage relative to the siblings, and LevelFS, from `i` down.
  void Level(int i, int depth) {
    TreeNode& n = nodes_[i];
    n.depth = depth;
    double shares = 0;
    double usage = 0;
    for (int c : n.children) {
      shares += static_cast<double>(nodes_[c].shares);
      usage += nodes_[c].usage;
    }
    for (int c : n.children) {
      TreeNode& child = nodes_[c];
      child.norm_shares = shares > 0 ? static_cast<double>(child.shares) / shares : 0;
      child.level_usage = usage > 0 ? child.usage / usage : 0;
      child.level_fs = child.norm_shares == 0   ? 0
                       : child.level_usage == 0 ? kInf
                                                : child.norm_shares / child.level_usage;
      Level(c, depth + 1);
    }
  }

  template <typename F>
  void Walk(int i, const F& visit) {
    visit(i);
    for (int c : nodes_[i].children) Walk(c, visit);
  }

  // Fair Tree's ranking: see fairshare.h.
  void RankUsers(std::map<AssocKey, double>* factors) {
    const int users = static_cast<int>(users_.size());
    int visited = 0;
    RankLevel(nodes_[0].children, users, &visited, factors);
  }

  void RankLevel(std::vector<int> level, int users, int* visited,
                 std::map<AssocKey, double>* factors) {
    std::stable_sort(level.begin(), level.end(),
                     [&](int a, int b) { return nodes_[a].level_fs > nodes_[b].level_fs; });
    for (size_t k = 0; k < level.size();) {
      size_t end = k;
      while (end < level.size() && nodes_[level[end]].level_fs == nodes_[level[k]].level_fs) ++end;
      const int rank = users - *visited;
      std::vector<int> merged;
      for (size_t j = k; j < end; ++j) {
        const TreeNode& n = nodes_[level[j]];
        if (n.user.empty()) {
          merged.insert(merged.end(), n.children.begin(), n.children.end());
          continue;
        }
        (*factors)[{n.account, n.user}] =
            n.shares > 0 && users > 0 ? static_cast<double>(rank) / users : 0;
        ++*visited;
      }
      if (!merged.empty()) RankLevel(std::move(merged), users, visited, factors);
      k = end;
    }
  }

  std::vector<TreeNode> nodes_;
  std::map<std::string, int> accounts_;
  std::map<AssocKey, int> users_;
};

}  // namespace

ShareTree ShareTree::Build(const std::vector<Association>& assocs,
                           const std::map<AssocKey, double>& usage, bool fair_tree) {
  ShareTree tree;
  Builder b(assocs, usage);
  tree.rows_ = b.Finish(fair_tree, &tree.factors_);
  return tree;
}

double ShareTree::Factor(const std::string& account, const std::string& user) const {
  auto it = factors_.find({account, user});
  return it == factors_.end() ? 0 : it->second;
}

std::vector<Association> DefaultAssociations(const std::vector<AssocKey>& keys) {
  std::set<std::string> accounts;
  std::set<AssocKey> users;
  for (const AssocKey& k : keys) {
    if (k.first.empty() || k.second.empty()) continue;
    accounts.insert(k.first);
    users.insert(k);
  }
  std::vector<Association> out;
  for (const std::string& a : accounts) {
    if (a != "root") out.push_back({a, "", "root", 1});
  }
  for (const AssocKey& k : users) out.push_back({k.first, k.second, "", 1});
  return out;
}

}  // namespace muster::sched

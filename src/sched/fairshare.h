// Fairshare: how far each user association is below or above its share of
// the cluster, from a tree of accounts with shares and the usage charged
// to each user (sched/usage.h). Pure: built from its arguments, read-only
// afterwards, deterministic.
//
// The tree: the root account "root"; accounts below it (a parent tree);
// user associations (account, user) as leaves. Each association's shares
// count against its siblings' only. Two algorithms, as Slurm's
// PriorityFlags choose:
//   Fair Tree (the default): at every level LevelFS = NormShares /
//     EffectvUsage (both relative to the siblings; infinite without
//     usage). Walking the tree depth first, siblings in decreasing LevelFS
//     (accounts with equal LevelFS have their children ranked together),
//     each user association in turn gets a rank, from the number of users
//     down, equal LevelFS sharing a rank; its factor is rank / users. So
//     an account that used less than its share ranks all its users above
//     every user of an account that used more.
//   Classic (NO_FAIR_TREE): NormShares is the product of the shares down
//     the tree, EffectvUsage the association's own normalised usage plus
//     its share of its parent's excess, and the factor
//     2^(-EffectvUsage / NormShares).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace muster::sched {

// (account, user): a user association's key; user "" names the account.
using AssocKey = std::pair<std::string, std::string>;

struct Association {
  std::string account;
  std::string user;            // "" for the account itself
  std::string parent_account;  // an account's parent ("" = root's child); users: unused
  int64_t shares = 1;          // RawShares
};

// One row of sshare: an association and its figures.
struct ShareRow {
  std::string account;
  std::string user;        // "" for an account
  int depth = 0;           // root 0, its children 1, ...
  int64_t raw_shares = 0;  // root: none (0)
  double norm_shares = 0;
  double raw_usage = 0;   // billing-seconds, decayed; an account's is its subtree's
  double norm_usage = 0;  // raw_usage / the root's
  double effective_usage = 0;
  double level_fs = 0;   // Fair Tree only; +inf without usage
  double fairshare = 0;  // user rows only
};

class ShareTree {
 public:
  // `assocs` may list accounts and users in any order; an account named by
  // a user or as a parent but not listed is added under root with one
  // share; "root" is always the root. Usage of keys with no association is
  // ignored.
  static ShareTree Build(const std::vector<Association>& assocs,
                         const std::map<AssocKey, double>& usage, bool fair_tree);

  // Depth first from root; under each account its users, then its
  // sub-accounts, each by name (sshare's order).
  const std::vector<ShareRow>& rows() const { return rows_; }

  // The fairshare factor of a user association, 0 when it has none.
  double Factor(const std::string& account, const std::string& user) const;

 private:
  std::vector<ShareRow> rows_;
  std::map<AssocKey, double> factors_;
};

// The associations of a cluster whose accounts and users are not
// administered (no sacctmgr records): every account that `keys` name is a
// child of root with one share, and every user association has one share.
std::vector<Association> DefaultAssociations(const std::vector<AssocKey>& keys);

}  // namespace muster::sched

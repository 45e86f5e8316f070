// MakeResourceRequest: sbatch's -N/-n/--ntasks-per-node/-c/--mem/--gres/
// --gpus/-C/-w/-x reduced to the numbers placement works with. The rules
// mirror Slurm 22.05 (man sbatch, and what sbatch --test-only answers on
// the oracle cluster):
//   -n 64 on 32-CPU nodes spreads over 2 nodes; -N 2 -n 1 is lowered to one
//   node ("can't run 1 processes on 2 nodes, setting nnodes to 1");
//   -n 5 --ntasks-per-node=2 takes 3 nodes; -w gpu[01-02] implies -N 2 and
//   with -N 1 is "invalid number of nodes (-N 2-1)"; --gpus=12 without -N
//   spreads over as many nodes as it needs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sched/pipeline.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::sched {
namespace {

using util::Status;

// A list of names in first-seen order without duplicates.
void AppendUnique(std::vector<std::string>* v, std::string name) {
  if (std::find(v->begin(), v->end(), name) == v->end()) v->push_back(std::move(name));
}

Status ExpandList(const std::string& expr, const char* option, std::vector<std::string>* out) {
  if (util::Trim(expr).empty()) return Status::Ok();
  auto hosts = util::ExpandHostlist(expr);
  if (!hosts.ok()) {
    return util::InvalidArgument(std::string(option) + ": " + hosts.status().message());
  }
  for (auto& h : *hosts) AppendUnique(out, std::move(h));
  return Status::Ok();
}

Status ParseGres(const std::vector<core::GresRequest>& gres, ResourceRequest* r) {
  bool have_gpu = false;
  for (const auto& g : gres) {
    if (g.count < 0) {
      return util::InvalidArgument("--gres: negative count for " + g.name);
    }
    if (g.count == 0) continue;  // "gpu:0" asks for nothing
    if (g.name == "gpu") {
      if (have_gpu && g.type != r->gpu_type) {
        return util::InvalidArgument("--gres/--gpus: GPUs of two types ('" + r->gpu_type +
                                     "' and '" + g.type + "') in one job are not supported");
      }
      have_gpu = true;
      r->gpu_type = g.type;
      (g.per_job ? r->gpus_per_job : r->gpus_per_node) += g.count;
      continue;
    }
    auto same = std::find_if(
        r->other_gres.begin(), r->other_gres.end(),
        [&](const core::GresRequest& o) { return o.name == g.name && o.type == g.type; });
    if (same != r->other_gres.end()) {
      same->count += g.count;
    } else {
      r->other_gres.push_back(g);
      r->other_gres.back().per_job = false;
    }
  }
  return Status::Ok();
}

std::string NodeRange(int lo, int hi) {
  return "invalid number of nodes (-N " + std::to_string(lo) + "-" + std::to_string(hi) + ")";
}

}  // namespace

namespace {

// A recursive-descent reader of -C's grammar:
//   constraint := item (AND item)* | item ('|' item)*     AND: '&' or ','
//   item       := term | '[' term ('|' term)+ ']' | '[' term (AND term)* ']'
//   term       := (name | '(' name (op name)* ')') ['*' count]
// where one term's parenthesised names use one operator. The OR of the
// whole constraint, and a matching OR, take no counts; a bracket of ANDs
// takes a count on every term.
class ConstraintReader {
 public:
  ConstraintReader(std::string_view text, ResourceRequest* r) : s_(text), r_(r) {}

  Status Read() {
    std::vector<ResourceRequest::FeatureCount> items;
    char op = 0;
    for (;;) {
      MUSTER_RETURN_IF_ERROR(Item(&items));
      Skip();
      if (pos_ == s_.size()) break;
      const char c = Operator(s_[pos_]);
      if (c == 0) return Error("unexpected '" + std::string(1, s_[pos_]) + "'");
      if (op != 0 && c != op) {
        return Error("mixing '&' and '|' needs parentheses, as in '(a|b)&c'");
      }
      op = c;
      ++pos_;
    }
    if (op == '|' && bracket_) return Error("brackets go with '&' only, as in 'a&[b|c]'");
    for (auto& t : items) {
      if (op == '|' && t.names.size() > 1 && !t.any) {
        return Error("an OR of ANDs ('(a&b)|c') is not supported");
      }
      if (t.count > 0) {
        if (op == '|') return Error("a count ('*') goes with '&' only");
        r_->feature_counts.push_back(std::move(t));
      } else if (op == '|') {
        for (auto& n : t.names) any_.push_back(std::move(n));
      } else if (t.any && t.names.size() > 1) {
        r_->feature_any.push_back(std::move(t.names));
      } else {
        for (auto& n : t.names) AppendUnique(&r_->features, std::move(n));
      }
    }
    if (any_.size() > 1) {
      r_->feature_any.push_back(std::move(any_));
    } else {
      for (auto& n : any_) AppendUnique(&r_->features, std::move(n));
    }
    return Status::Ok();
  }

 private:
  static char Operator(char c) { return c == ',' ? '&' : (c == '&' || c == '|') ? c : 0; }

  Status Error(const std::string& why) const {
    return util::InvalidArgument("--constraint '" + std::string(s_) + "': " + why);
  }

  void Skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }

  // One item: a term, or a bracket (matching OR or multiple counts).
  Status Item(std::vector<ResourceRequest::FeatureCount>* items) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == '[') {
      if (bracket_) return Error("only one set of brackets is allowed");
      bracket_ = true;
      ++pos_;
      std::vector<ResourceRequest::FeatureCount> inner;
      char op = 0;
      MUSTER_RETURN_IF_ERROR(List(']', "brackets", &op, [&] {
        ResourceRequest::FeatureCount t;
        MUSTER_RETURN_IF_ERROR(Term(&t));
        inner.push_back(std::move(t));
        return Status::Ok();
      }));
      if (op == '|' || (op == 0 && inner.front().count == 0)) {
        std::vector<std::string> alternatives;
        for (auto& t : inner) {
          if (t.count > 0) return Error("a matching OR ('[a|b]') takes no counts");
          if (t.names.size() != 1) return Error("a matching OR chooses among single features");
          AppendUnique(&alternatives, std::move(t.names.front()));
        }
        r_->feature_match = alternatives;
        r_->feature_any.push_back(std::move(alternatives));
        return Status::Ok();
      }
      for (auto& t : inner) {
        if (t.count == 0) {
          return Error("every feature in '[..&..]' needs a count, as in '[a*2&b*4]'");
        }
        items->push_back(std::move(t));
      }
      return Status::Ok();
    }
    ResourceRequest::FeatureCount t;
    MUSTER_RETURN_IF_ERROR(Term(&t));
    items->push_back(std::move(t));
    return Status::Ok();
  }

  // Pieces read by `piece`, joined by one operator ('&' or ',', else '|',
  // into *op; 0 for a single piece), up to `close`, which it takes too.
  template <typename Piece>
  Status List(char close, const char* what, char* op, Piece piece) {
    for (;;) {
      MUSTER_RETURN_IF_ERROR(piece());
      Skip();
      if (pos_ < s_.size() && s_[pos_] == close) break;
      const char c = pos_ < s_.size() ? Operator(s_[pos_]) : 0;
      if (c == 0) return Error(std::string("missing '") + close + "'");
      if (*op != 0 && c != *op) return Error(std::string("mixing '&' and '|' in ") + what);
      *op = c;
      ++pos_;
    }
    ++pos_;  // `close`
    return Status::Ok();
  }

  // A name or a parenthesised group, with its count if any.
  Status Term(ResourceRequest::FeatureCount* t) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      char op = 0;
      MUSTER_RETURN_IF_ERROR(List(')', "parentheses", &op, [&] {
        std::string name;
        MUSTER_RETURN_IF_ERROR(Name(&name));
        AppendUnique(&t->names, std::move(name));
        return Status::Ok();
      }));
      t->any = op == '|';
    } else {
      std::string name;
      MUSTER_RETURN_IF_ERROR(Name(&name));
      t->names.push_back(std::move(name));
    }
    Skip();
    if (pos_ < s_.size() && s_[pos_] == '*') {
      ++pos_;
      const size_t begin = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      auto n = util::ParseInt(s_.substr(begin, pos_ - begin));
      if (!n.ok() || *n < 1 || *n > 100000) return Error("a count needs a number from 1");
      t->count = static_cast<int>(*n);
    }
    return Status::Ok();
  }

  Status Name(std::string* out) {
    Skip();
    const size_t begin = pos_;
    while (pos_ < s_.size() &&
           std::string_view("&,|*[]() ").find(s_[pos_]) == std::string_view::npos) {
      ++pos_;
    }
    if (pos_ == begin) return Error("empty feature name");
    *out = std::string(s_.substr(begin, pos_ - begin));
    return Status::Ok();
  }

  std::string_view s_;
  ResourceRequest* r_;
  size_t pos_ = 0;
  bool bracket_ = false;
  std::vector<std::string> any_;  // the top level's OR
};

}  // namespace

util::Status ParseConstraint(std::string_view text, ResourceRequest* r) {
  std::string_view s = util::Trim(text);
  if (s.empty()) return util::Status::Ok();
  return ConstraintReader(s, r).Read();
}

util::Result<ResourceRequest> BuildResourceRequest(const core::JobRequest& req,
                                                   int64_t def_mem_per_cpu_mb, RequestError* kind) {
  *kind = RequestError::kMalformed;
  ResourceRequest r;
  if (req.min_nodes < 0 || req.max_nodes < 0) {
    return util::InvalidArgument("invalid number of nodes");
  }
  if (req.ntasks < 0) return util::InvalidArgument("invalid number of tasks (-n)");
  if (req.ntasks_per_node < 0) return util::InvalidArgument("invalid --ntasks-per-node");
  if (req.cpus_per_task < 1) return util::InvalidArgument("invalid --cpus-per-task");
  r.cpus_per_task = req.cpus_per_task;
  r.ntasks_per_node = req.ntasks_per_node;
  r.exclusive = req.exclusive;

  // Memory: --mem (per node), --mem-per-cpu, --mem-per-gpu, else
  // DefMemPerCPU, else the whole node (Slurm's behaviour without
  // DefMemPerCPU); --mem=0 = whole node.
  const int mem_options = (req.mem_per_node_mb > 0 || req.mem_whole_node ? 1 : 0) +
                          (req.mem_per_cpu_mb > 0 ? 1 : 0) + (req.mem_per_gpu_mb > 0 ? 1 : 0);
  if (mem_options > 1) {
    return util::InvalidArgument("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  }
  if (req.cpus_per_gpu < 0 || req.mem_per_gpu_mb < 0) {
    return util::InvalidArgument("invalid --cpus-per-gpu or --mem-per-gpu");
  }
  if (req.cpus_per_gpu > 0 && req.cpus_per_task_set) {
    return util::InvalidArgument("--cpus-per-gpu is mutually exclusive with --cpus-per-task");
  }
  r.cpus_per_gpu = req.cpus_per_gpu;
  if (req.mem_per_gpu_mb > 0) {
    r.mem_per_gpu_mb = req.mem_per_gpu_mb;
  } else if (req.mem_whole_node) {
    r.whole_node_mem = true;
  } else if (req.mem_per_node_mb > 0) {
    r.mem_per_node_mb = req.mem_per_node_mb;
  } else if (req.mem_per_cpu_mb > 0) {
    r.mem_per_cpu_mb = req.mem_per_cpu_mb;
  } else if (def_mem_per_cpu_mb > 0) {
    r.mem_per_cpu_mb = def_mem_per_cpu_mb;
  } else {
    r.whole_node_mem = true;
  }

  MUSTER_RETURN_IF_ERROR(ParseGres(req.gres, &r));
  if (r.mem_per_gpu_mb > 0 && r.gpus_per_node == 0 && r.gpus_per_job == 0) {
    return util::InvalidArgument(fmt::format(
        "Requested mem_per_tres=gres:gpu:{} but did not request any GPU.", r.mem_per_gpu_mb));
  }
  MUSTER_RETURN_IF_ERROR(ParseConstraint(req.constraint, &r));
  MUSTER_RETURN_IF_ERROR(ExpandList(req.nodelist, "-w/--nodelist", &r.required_nodes));
  MUSTER_RETURN_IF_ERROR(ExpandList(req.exclude, "-x/--exclude", &r.excluded_nodes));
  for (const auto& n : r.required_nodes) {
    if (std::find(r.excluded_nodes.begin(), r.excluded_nodes.end(), n) != r.excluded_nodes.end()) {
      return util::InvalidArgument("node " + n + " is both required (-w) and excluded (-x)");
    }
  }

  // Node count and tasks.
  const bool nodes_given = req.min_nodes > 0;
  const int npn = req.ntasks_per_node;
  int min_nodes = nodes_given ? req.min_nodes : 1;
  // The most -N allows (0 = -N not given).
  int hi = nodes_given ? std::max(req.min_nodes, req.max_nodes) : 0;
  if (nodes_given && req.max_nodes > 0 && req.max_nodes < req.min_nodes) {
    return util::InvalidArgument(NodeRange(req.min_nodes, req.max_nodes));
  }
  int max_nodes = 0;
  *kind = RequestError::kCounts;
  if (req.ntasks > 0) {
    r.ntasks_set = true;
    r.ntasks = req.ntasks;
    if (nodes_given && min_nodes > r.ntasks) {
      // sbatch: "can't run 1 processes on 2 nodes, setting nnodes to 1".
      min_nodes = r.ntasks;
      hi = std::min(hi, r.ntasks);
    }
    if (npn > 0) {
      int need = (r.ntasks + npn - 1) / npn;
      if (nodes_given && need > hi) {
        return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) +
                                     " with --ntasks-per-node=" + std::to_string(npn) + " needs " +
                                     std::to_string(need) + " nodes, but -N allows at most " +
                                     std::to_string(hi));
      }
      min_nodes = std::max(min_nodes, need);
      max_nodes = nodes_given ? hi : need;
    } else {
      max_nodes = nodes_given ? hi : r.ntasks;  // -n alone may spread
    }
  } else {
    r.ntasks_set = false;
    if (!nodes_given && r.gpus_per_job > 0) {
      // --gpus=N alone: as many nodes as the GPUs need, at most N.
      max_nodes = static_cast<int>(std::min<int64_t>(r.gpus_per_job, 1 << 20));
    } else {
      max_nodes = nodes_given ? hi : 1;
    }
  }

  // -w names nodes that must all be in the allocation.
  int named = static_cast<int>(r.required_nodes.size());
  if (named > min_nodes) {
    if (nodes_given && hi < named) {
      *kind = RequestError::kMalformed;
      return util::InvalidArgument(NodeRange(named, hi));
    }
    if (r.ntasks_set && r.ntasks < named) {
      return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) + " is less than the " +
                                   std::to_string(named) + " nodes named by -w");
    }
    min_nodes = named;
    max_nodes = std::max(max_nodes, named);
  }
  // -C counts: the job has at least as many nodes as they add up to.
  int counted = 0;
  for (const auto& c : r.feature_counts) counted += c.count;
  if (counted > min_nodes) {
    if (nodes_given && hi < counted) {
      *kind = RequestError::kMalformed;
      return util::InvalidArgument("--constraint '" + req.constraint + "' counts " +
                                   std::to_string(counted) + " nodes, more than -N allows (" +
                                   std::to_string(hi) + ")");
    }
    if (r.ntasks_set && r.ntasks < counted) {
      return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) + " is less than the " +
                                   std::to_string(counted) + " nodes --constraint counts");
    }
    min_nodes = counted;
    max_nodes = std::max(max_nodes, counted);
  }
  if (npn > 0 && r.ntasks_set && static_cast<int64_t>(max_nodes) * npn < r.ntasks) {
    return util::InvalidArgument("--ntasks=" + std::to_string(r.ntasks) +
                                 " is more than --ntasks-per-node=" + std::to_string(npn) + " on " +
                                 std::to_string(max_nodes) + " node(s)");
  }
  r.min_nodes = min_nodes;
  r.max_nodes = std::max(max_nodes, min_nodes);
  if (!r.ntasks_set) r.ntasks = r.min_nodes * std::max(npn, 1);
  *kind = RequestError::kNone;
  return r;
}

util::Result<ResourceRequest> MakeResourceRequest(const core::JobRequest& req,
                                                  int64_t def_mem_per_cpu_mb) {
  RequestError kind;
  return BuildResourceRequest(req, def_mem_per_cpu_mb, &kind);
}

std::string RequestKey(const ResourceRequest& r) {
  // Bytes, not text: the pass makes a key for every waiting job. Numbers
  // are copied whole, strings and lists after their length, so two
  // requests share a key only when every field is equal.
  std::string key;
  key.reserve(96);
  auto number = [&](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto text = [&](const std::string& t) {
    number(static_cast<int64_t>(t.size()));
    key += t;
  };
  auto texts = [&](const std::vector<std::string>& list) {
    number(static_cast<int64_t>(list.size()));
    for (const std::string& t : list) text(t);
  };
  for (int64_t v :
       {int64_t{r.min_nodes}, int64_t{r.max_nodes}, int64_t{r.ntasks}, int64_t{r.ntasks_set},
        int64_t{r.ntasks_per_node}, int64_t{r.cpus_per_task}, r.mem_per_node_mb, r.mem_per_cpu_mb,
        int64_t{r.whole_node_mem}, int64_t{r.cpus_per_gpu}, r.mem_per_gpu_mb, r.gpus_per_node,
        r.gpus_per_job, int64_t{r.exclusive}}) {
    number(v);
  }
  text(r.gpu_type);
  texts(r.features);
  number(static_cast<int64_t>(r.feature_any.size()));
  for (const auto& group : r.feature_any) texts(group);
  texts(r.feature_match);
  number(static_cast<int64_t>(r.feature_counts.size()));
  for (const auto& c : r.feature_counts) {
    texts(c.names);
    number(c.any);
    number(c.count);
  }
  texts(r.required_nodes);
  texts(r.excluded_nodes);
  number(static_cast<int64_t>(r.other_gres.size()));
  for (const auto& g : r.other_gres) {
    text(g.name);
    text(g.type);
    number(g.count);
    number(g.per_job);
  }
  return key;
}

}  // namespace muster::sched

// sinfo: the request's JSON form and the renderer (its arguments are
// src/cli/sinfo_args.cc).
//
// The renderer mirrors how sinfo builds its table: every (partition, node)
// pair that passes the filters is a candidate row; in the partition view
// pairs whose displayed per-partition and per-node fields are equal merge
// into one record (node lists, counts and CPU/node tallies aggregate, CPUs,
// memory, disk and weight show "min+" unless -e), while -N keeps one row per
// pair. Records sort by "#P,-t" (partitions as configured, node state
// descending) or "N" with -N, then print through the -o/-O field list.
// Behaviour was taken from Slurm 22.05.8's sinfo output and man page.

#include <time.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/render/format_util.h"
#include "cli/render/render.h"
#include "core/gres.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::render {
namespace {

using util::InvalidArgument;
using util::Result;
using util::Status;

// ---------------------------------------------------------------------------
// Fields

enum class Fid {
  kAvail, kActiveFeatures, kMaxCpusPerNode, kCpus, kCpusState, kDisk, kNodes,
  kFreeMem, kReason, kFeatures, kNodeAiot, kGroups, kGres, kOversubscribe,
  kTimestamp, kPrioJobFactor, kTime, kDefaultTime, kMemory, kPreemptMode,
  kHostnames, kNodeList, kNodeAddr, kCpuLoad, kPrioTier, kPartition, kRoot,
  kPartitionName, kSize, kAllocNodes, kStateCompact, kStateLong, kUser,
  kUserLong, kVersion, kCluster, kWeight, kSockets, kCores, kThreads, kSct,
  kNodeAi, kAllocMem, kComment, kExtra, kGresUsed, kPort, kStateComplete,
};

// How a field combines over the nodes of a record.
enum class Agg {
  kPartition,  // a property of the partition: part of the record's identity
  kNode,       // a property of the node: part of the identity too
  kRanged,     // a number shown as "min+" over the nodes (identity with -e)
  kSum,        // a count or list over the nodes
};

struct FieldInfo {
  Fid id;
  char letter;  // -o type, 0 when only -O has it
  const char* name;  // -O name
  const char* header;
  Agg agg;
};

constexpr FieldInfo kFields[] = {
    {Fid::kAvail, 'a', "Available", "AVAIL", Agg::kPartition},
    {Fid::kActiveFeatures, 'b', "features_act", "ACTIVE_FEATURES", Agg::kNode},
    {Fid::kMaxCpusPerNode, 'B', "MaxCPUsPerNode", "MAX_CPUS_PER_NODE", Agg::kPartition},
    {Fid::kCpus, 'c', "CPUs", "CPUS", Agg::kRanged},
    {Fid::kCpusState, 'C', "CPUsState", "CPUS(A/I/O/T)", Agg::kSum},
    {Fid::kDisk, 'd', "Disk", "TMP_DISK", Agg::kRanged},
    {Fid::kNodes, 'D', "Nodes", "NODES", Agg::kSum},
    {Fid::kFreeMem, 'e', "FreeMem", "FREE_MEM", Agg::kSum},
    {Fid::kReason, 'E', "Reason", "REASON", Agg::kNode},
    {Fid::kFeatures, 'f', "Features", "AVAIL_FEATURES", Agg::kNode},
    {Fid::kNodeAiot, 'F', "NodeAIOT", "NODES(A/I/O/T)", Agg::kSum},
    {Fid::kGroups, 'g', "Groups", "GROUPS", Agg::kPartition},
    {Fid::kGres, 'G', "Gres", "GRES", Agg::kNode},
    {Fid::kOversubscribe, 'h', "OverSubscribe", "OVERSUBSCRIBE", Agg::kPartition},
    {Fid::kTimestamp, 'H', "TimeStamp", "TIMESTAMP", Agg::kNode},
    {Fid::kPrioJobFactor, 'I', "PriorityJobFactor", "PRIO_JOB_FACTOR", Agg::kPartition},
    {Fid::kTime, 'l', "Time", "TIMELIMIT", Agg::kPartition},
    {Fid::kDefaultTime, 'L', "DefaultTime", "DEFAULTTIME", Agg::kPartition},
    {Fid::kMemory, 'm', "Memory", "MEMORY", Agg::kRanged},
    {Fid::kPreemptMode, 'M', "PreemptMode", "PREEMPT_MODE", Agg::kPartition},
    {Fid::kHostnames, 'n', "NodeHost", "HOSTNAMES", Agg::kSum},
    {Fid::kNodeList, 'N', "NodeList", "NODELIST", Agg::kSum},
    {Fid::kNodeAddr, 'o', "NodeAddr", "NODE_ADDR", Agg::kSum},
    {Fid::kCpuLoad, 'O', "CPUsLoad", "CPU_LOAD", Agg::kSum},
    {Fid::kPrioTier, 'p', "PriorityTier", "PRIO_TIER", Agg::kPartition},
    {Fid::kPartition, 'P', "Partition", "PARTITION", Agg::kPartition},
    {Fid::kRoot, 'r', "Root", "ROOT", Agg::kPartition},
    {Fid::kPartitionName, 'R', "PartitionName", "PARTITION", Agg::kPartition},
    {Fid::kSize, 's', "Size", "JOB_SIZE", Agg::kPartition},
    {Fid::kAllocNodes, 'S', "AllocNodes", "ALLOCNODES", Agg::kPartition},
    {Fid::kStateCompact, 't', "StateCompact", "STATE", Agg::kNode},
    {Fid::kStateLong, 'T', "StateLong", "STATE", Agg::kNode},
    {Fid::kUser, 'u', "User", "USER", Agg::kNode},
    {Fid::kUserLong, 'U', "UserLong", "USER", Agg::kNode},
    {Fid::kVersion, 'v', "Version", "VERSION", Agg::kNode},
    {Fid::kCluster, 'V', "Cluster", "CLUSTER", Agg::kPartition},
    {Fid::kWeight, 'w', "Weight", "WEIGHT", Agg::kRanged},
    {Fid::kSockets, 'X', "Sockets", "SOCKETS", Agg::kRanged},
    {Fid::kCores, 'Y', "Cores", "CORES", Agg::kRanged},
    {Fid::kThreads, 'Z', "Threads", "THREADS", Agg::kRanged},
    {Fid::kSct, 'z', "SocketCoreThread", "S:C:T", Agg::kRanged},
    {Fid::kNodeAi, 'A', "NodeAI", "NODES(A/I)", Agg::kSum},
    {Fid::kAllocMem, 0, "AllocMem", "ALLOCMEM", Agg::kNode},
    {Fid::kComment, 0, "Comment", "COMMENT", Agg::kNode},
    {Fid::kExtra, 0, "Extra", "EXTRA", Agg::kNode},
    {Fid::kGresUsed, 0, "GresUsed", "GRES_USED", Agg::kNode},
    {Fid::kPort, 0, "Port", "PORT", Agg::kNode},
    {Fid::kStateComplete, 0, "StateComplete", "STATECOMPLETE", Agg::kNode},
};

const FieldInfo& Info(Fid id) {
  for (const FieldInfo& f : kFields) {
    if (f.id == id) return f;
  }
  return kFields[0];  // unreachable: every Fid has a row
}

const FieldInfo* ByLetter(char c) {
  for (const FieldInfo& f : kFields) {
    if (f.letter != 0 && f.letter == c) return &f;
  }
  return nullptr;
}

const FieldInfo* ByName(std::string_view name) {
  for (const FieldInfo& f : kFields) {
    if (util::EqualsIgnoreCase(f.name, name)) return &f;
  }
  return nullptr;
}

// One piece of a format: literal text or a field.
struct Spec {
  bool literal = false;
  std::string text;  // the literal text
  Fid id = Fid::kPartition;
  int width = 0;          // 0 = as wide as the value
  bool right = false;     // '.': right-justified
  bool computed = false;  // '#': widest value (internal formats only)
  std::string suffix;     // -O only
};

// What sinfo's "%all" / -O All expands to.
constexpr std::string_view kAllFormat =
    "%a|%b|%c|%d|%e|%f|%g|%h|%l|%m|%n|%o|%p|%r|%s|%t|%u|%v|%w|%z|%A |%B |%C |%D |%E |"
    "%F |%G |%H |%I |%L |%M |%N |%O |%P |%R |%S |%T |%U |%V |%X |%Y |%Z ";

void AddLiteral(std::vector<Spec>* out, std::string_view text) {
  if (text.empty()) return;
  if (!out->empty() && out->back().literal) {
    out->back().text += text;
    return;
  }
  Spec s;
  s.literal = true;
  s.text = std::string(text);
  out->push_back(std::move(s));
}

// Parses an -o format "%[.][size]type[suffix]". As in sinfo, the text is
// cut at every run of '%' characters ("%%P" is "%P"; there is no escape for
// a literal '%'), a piece whose type is unknown prints as written ("%x")
// and an empty piece at the end vanishes. `internal` allows '#' (computed
// width) for the built-in formats.
std::vector<Spec> ParseFormat(std::string_view fmt, bool internal) {
  std::vector<Spec> out;
  size_t pct = fmt.find('%');
  AddLiteral(&out, fmt.substr(0, pct));
  while (pct != std::string_view::npos) {
    size_t start = fmt.find_first_not_of('%', pct);
    if (start == std::string_view::npos) break;
    size_t end = fmt.find('%', start);
    std::string_view piece = fmt.substr(start, end == std::string_view::npos ? end : end - start);
    pct = end;
    if (piece.substr(0, 3) == "all") {
      std::vector<Spec> all = ParseFormat(kAllFormat, false);
      for (Spec& s : all) {
        if (s.literal) {
          AddLiteral(&out, s.text);
        } else {
          out.push_back(std::move(s));
        }
      }
      AddLiteral(&out, piece.substr(3));
      continue;
    }
    Spec s;
    size_t j = 0;
    if (j < piece.size() && piece[j] == '.') {
      s.right = true;
      ++j;
    }
    if (internal && j < piece.size() && piece[j] == '#') {
      s.computed = true;
      ++j;
    }
    s.width = ReadWidth(piece, &j);
    const FieldInfo* f = j < piece.size() ? ByLetter(piece[j]) : nullptr;
    if (f == nullptr) {
      AddLiteral(&out, "%" + std::string(piece));
      continue;
    }
    s.id = f->id;
    out.push_back(std::move(s));
    AddLiteral(&out, piece.substr(j + 1));
  }
  return out;
}

// Parses an -O list "Name[:[.][size][suffix]],...": 20 columns by default.
Result<std::vector<Spec>> ParseFormatLong(std::string_view fmt) {
  std::vector<Spec> out;
  for (const std::string& item : util::Split(fmt, ',')) {
    size_t colon = item.find(':');
    std::string name = item.substr(0, colon);
    if (util::EqualsIgnoreCase(name, "All")) {
      std::vector<Spec> all = ParseFormat(kAllFormat, false);
      out.insert(out.end(), all.begin(), all.end());
      continue;
    }
    const FieldInfo* f = ByName(name);
    if (f == nullptr) {
      return InvalidArgument("sinfo: error: Invalid job format specification: " + name);
    }
    Spec s;
    s.id = f->id;
    s.width = 20;
    if (colon != std::string::npos) {
      size_t j = colon + 1;
      s.width = 0;
      if (j < item.size() && item[j] == '.') {
        s.right = true;
        ++j;
      }
      s.width = ReadWidth(item, &j);
      s.suffix = item.substr(j);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// sinfo's built-in formats ('#' = widest value, see the man page).
constexpr std::string_view kDefaultFormat = "%#P %.5a %.10l %.6D %.6t %N";
constexpr std::string_view kSummarizeFormat = "%#P %.5a %.10l %.16F %N";
constexpr std::string_view kLongFormat = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
// As sinfo prints them (not quite as its man page lists them): the node
// formats right-justify the computed partition column and left-justify CPUS.
constexpr std::string_view kNodeFormat = "%#N %.6D %.#P %6t";
constexpr std::string_view kNodeLongFormat =
    "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";
constexpr std::string_view kReasonsFormat = "%20E %9u %19H %N";
constexpr std::string_view kReasonsLongFormat = "%20E %12U %19H %6t %N";

// ---------------------------------------------------------------------------
// Node states

bool Busy(const core::Node& n) {
  core::NodeBase b = n.Base();
  return n.alloc_cpus > 0 || n.running_jobs > 0 || b == core::NodeBase::kMixed ||
         b == core::NodeBase::kAllocated;
}

// Slurm sorts by its numeric node state: base (unknown 0, down 1, idle 2,
// allocated 3, mixed 5, future 6) plus flag bits (drain, not responding),
// so "-t" lists draining before mixed before allocated before idle.
int StateRank(const core::Node& n) {
  int rank = 2;
  switch (n.Base()) {
    case core::NodeBase::kUnknown: rank = 0; break;
    case core::NodeBase::kDown: rank = 1; break;
    case core::NodeBase::kIdle: rank = n.registered ? 2 : 0; break;
    case core::NodeBase::kAllocated: rank = 3; break;
    case core::NodeBase::kMixed: rank = 5; break;
    case core::NodeBase::kFuture: rank = 6; break;
  }
  if (n.drain) rank += 0x200;
  if (n.fail) rank += 0x400;
  if (!n.Responding()) rank += 0x800;
  return rank;
}

// sinfo -t names, lower case. The error lists them as sinfo does.
const std::set<std::string>& ValidStates() {
  static const std::set<std::string> states = {
      "all", "alloc", "allocated", "cloud", "comp", "completing", "down", "drain",
      "drained", "draining", "drng", "fail", "failg", "failing", "future", "futr",
      "idle", "inval", "maint", "mix", "mixed", "no_respond", "npc", "perfctrs",
      "planned", "plnd", "pow_dn", "pow_up", "power_down", "powered_down",
      "powering_down", "powering_up", "reboot", "reboot^", "reboot_issued",
      "reboot_requested", "reserved", "resv", "unk", "unknown"};
  return states;
}

Status CheckStates(const std::vector<std::string>& states) {
  for (const std::string& token : states) {
    for (const std::string& s : util::Split(token, '&')) {
      if (ValidStates().count(util::ToLower(s)) == 0) {
        return InvalidArgument(
            "sinfo: error: Bad state string: \"" + s +
            "\"\nsinfo: error: valid states: unknown,down,idle,allocated,?,mixed,future,"
            "drain,drained,draining,no_respond,reserved,perfctrs,cloud,completing,"
            "powering_down,powered_down,power_down,powering_up,fail,maint,reboot,reboot^,"
            "unknown");
      }
    }
  }
  return Status::Ok();
}

// Whether a node is in state `s` (one lower-case -t name). A drained or
// draining node matches only the drain names (and down/no_respond), as in
// sinfo, where "-t mix" leaves out a mixed node that drains.
bool StateMatches(const core::Node& n, const std::string& s) {
  if (s == "all") return true;
  bool down = n.Base() == core::NodeBase::kDown;
  bool plain = !down && !n.drain && !n.fail;
  core::NodeBase b = n.Base();
  if (s == "down") return down;
  if (s == "fail") return n.fail;
  if (s == "failing" || s == "failg") return n.fail && Busy(n);
  if (s == "drain") return n.drain;
  if (s == "drained") return n.drain && !Busy(n);
  if (s == "draining" || s == "drng") return n.drain && Busy(n);
  if (s == "no_respond") return !n.Responding();
  if (s == "future" || s == "futr") return b == core::NodeBase::kFuture;
  if (s == "unknown" || s == "unk") {
    return plain && (b == core::NodeBase::kUnknown || (b == core::NodeBase::kIdle && !n.registered));
  }
  if (s == "idle") return plain && b == core::NodeBase::kIdle && n.registered;
  if (s == "alloc" || s == "allocated") {
    return plain && (b == core::NodeBase::kAllocated || b == core::NodeBase::kMixed);
  }
  if (s == "mix" || s == "mixed") return plain && b == core::NodeBase::kMixed;
  return false;  // states Muster's nodes never take (maint, cloud, ...)
}

bool NodeInStates(const core::Node& n, const std::vector<std::string>& states) {
  if (states.empty()) return true;
  for (const std::string& token : states) {
    bool all = true;
    for (const std::string& s : util::Split(token, '&')) {
      all = all && StateMatches(n, util::ToLower(s));
    }
    if (all) return true;
  }
  return false;
}

// The node is unavailable in the sense of %C/%F's "other" column.
bool Other(const core::Node& n) {
  return n.Base() == core::NodeBase::kDown || n.drain || n.fail || !n.Responding();
}

bool Allocated(const core::Node& n) {
  core::NodeBase b = n.Base();
  return b == core::NodeBase::kAllocated || b == core::NodeBase::kMixed;
}

// StateComplete: the base state and every flag, lower case.
std::string StateComplete(const core::Node& n) {
  std::string out;
  switch (n.Base()) {
    case core::NodeBase::kDown: out = "down"; break;
    case core::NodeBase::kAllocated: out = "allocated"; break;
    // Slurm keeps a partly used node as "allocated" internally and names it
    // "mixed" only when no flag is set.
    case core::NodeBase::kMixed:
      out = n.drain || n.fail || !n.Responding() ? "allocated" : "mixed";
      break;
    case core::NodeBase::kFuture: out = "future"; break;
    case core::NodeBase::kUnknown: out = "unknown"; break;
    case core::NodeBase::kIdle: out = n.registered ? "idle" : "unknown"; break;
  }
  if (n.drain) out += "+drain";
  if (n.fail) out += "+fail";
  if (!n.Responding()) out += "+not_responding";
  return out;
}

// "0-1,4" from GPU indices; "N/A" when none.
std::string IndexRanges(const std::vector<int>& idx) {
  return idx.empty() ? "N/A" : util::FormatIndexRanges(idx);
}

}  // namespace

bool NodeNameLess(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    size_t k = s.size();
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') --k;
    return k;
  };
  size_t ka = split(a);
  size_t kb = split(b);
  int c = a.compare(0, ka, b, 0, kb);
  if (c != 0) return c < 0;
  std::string_view na = std::string_view(a).substr(ka);
  std::string_view nb = std::string_view(b).substr(kb);
  std::string_view ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
  std::string_view tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
  if (ta.size() != tb.size()) return ta.size() < tb.size();
  if (ta != tb) return ta < tb;
  return a < b;
}

std::string NodeGresUsed(const core::Node& n, const config::Config& cfg) {
  std::vector<std::string> parts;
  std::set<std::string> seen;
  auto spec_text = [&](const core::GresSpec& g, int first_index) {
    std::string head = g.name + (g.type.empty() ? "" : ":" + g.type);
    if (g.name != "gpu") {
      int64_t used = n.TotalGres(g.name, g.type) - n.FreeGres(g.name, g.type);
      return fmt::format("{}:{}", head, used);
    }
    std::vector<int> idx;
    for (int k = 0; k < g.count; ++k) {
      size_t i = static_cast<size_t>(first_index + k);
      if (i < n.gpu_used.size() && n.gpu_used[i]) idx.push_back(first_index + k);
    }
    return fmt::format("{}:{}(IDX:{})", head, idx.size(), IndexRanges(idx));
  };
  auto add_name = [&](const std::string& name) {
    if (!seen.insert(name).second) return;
    bool any = false;
    int gpu_index = 0;
    for (const core::GresSpec& g : n.config.gres) {
      if (g.name == name) {
        parts.push_back(spec_text(g, gpu_index));
        any = true;
      }
      if (g.name == "gpu") gpu_index += static_cast<int>(g.count);
    }
    if (!any) parts.push_back(name + ":0");
  };
  for (const std::string& t : cfg.gres_types) add_name(t);
  for (const core::GresSpec& g : n.config.gres) add_name(g.name);
  if (parts.empty()) return "(null)";
  return util::Join(parts, ",");
}

namespace {

std::string Features(const core::Node& n) {
  if (n.config.features.empty()) return "(null)";
  return util::Join(n.config.features, ",");
}

// ---------------------------------------------------------------------------
// Records

struct Record {
  int part = -1;  // index into config.partitions
  std::vector<const core::Node*> nodes;
};

struct Ctx {
  const ClusterView& view;
  const config::Config& cfg;
  bool exact = false;
};

std::string PartitionState(core::PartitionState state) {
  if (state == core::PartitionState::kInactive) return "inact";
  return util::ToLower(core::PartitionStateName(state));
}

std::string PartitionDisplayName(const core::Partition& p) {
  return p.name + (p.is_default ? "*" : "");
}

std::string PartitionValue(Fid id, const core::Partition& p) {
  switch (id) {
    case Fid::kAvail: return PartitionState(p.state);
    case Fid::kMaxCpusPerNode: return "UNLIMITED";
    case Fid::kGroups: return p.allow_groups.empty() ? "all" : util::Join(p.allow_groups, ",");
    // Observed: OverSubscribe=FORCE shows as FORCE:4 in sinfo -o %h too.
    case Fid::kOversubscribe: return p.oversubscribe;
    case Fid::kPrioJobFactor: return std::to_string(p.priority_job_factor);
    case Fid::kTime: return p.max_time_s < 0 ? "infinite" : util::FormatDuration(p.max_time_s);
    case Fid::kDefaultTime:
      return p.default_time_s < 0 ? "n/a" : util::FormatDuration(p.default_time_s);
    case Fid::kPreemptMode: return "OFF";
    case Fid::kPrioTier: return std::to_string(p.priority_tier);
    case Fid::kPartition: return PartitionDisplayName(p);
    case Fid::kRoot: return "no";
    case Fid::kPartitionName: return p.name;
    case Fid::kSize: {
      int lo = std::max(1, p.min_nodes);
      if (p.max_nodes < 0) return fmt::format("{}-infinite", lo);
      if (p.max_nodes == lo) return std::to_string(lo);
      return fmt::format("{}-{}", lo, p.max_nodes);
    }
    case Fid::kAllocNodes: return "all";
    case Fid::kCluster: return "N/A";
    default: return "";
  }
}

std::string NodeValue(Fid id, const core::Node& n, const Ctx& c) {
  bool has_reason = !n.reason.empty();
  switch (id) {
    case Fid::kActiveFeatures:
    case Fid::kFeatures: return Features(n);
    case Fid::kReason: return has_reason ? n.reason : "none";
    case Fid::kGres: return core::FormatGres(n.config.gres);
    case Fid::kTimestamp:
      return has_reason ? util::FormatTimestamp(n.reason_time) : "Unknown";
    case Fid::kStateCompact: return n.SinfoState(false);
    case Fid::kStateLong: return n.SinfoState(true);
    case Fid::kUser: return has_reason ? ReasonActor(n, *c.view.users) : "Unknown";
    case Fid::kUserLong:
      return has_reason ? fmt::format("{}({})", ReasonActor(n, *c.view.users), n.reason_uid)
                        : "Unknown";
    case Fid::kVersion: return c.view.version;
    case Fid::kAllocMem: return std::to_string(n.alloc_mem_mb);
    case Fid::kComment:
    case Fid::kExtra: return "(null)";
    case Fid::kGresUsed: return NodeGresUsed(n, c.cfg);
    case Fid::kPort: return std::to_string(c.cfg.slurmd_port);
    case Fid::kStateComplete: return StateComplete(n);
    default: return "";
  }
}

// "min" or "min+" over the record's nodes.
std::string Ranged(const Record& r, int64_t (*get)(const core::Node&)) {
  int64_t lo = get(*r.nodes[0]);
  int64_t hi = lo;
  for (const core::Node* n : r.nodes) {
    lo = std::min(lo, get(*n));
    hi = std::max(hi, get(*n));
  }
  return std::to_string(lo) + (hi != lo ? "+" : "");
}

int64_t GetCpus(const core::Node& n) { return n.config.cpus; }
int64_t GetMem(const core::Node& n) { return n.config.real_memory_mb; }
int64_t GetDisk(const core::Node& n) { return n.config.tmp_disk_mb; }
int64_t GetWeight(const core::Node& n) { return n.config.weight; }
int64_t GetSockets(const core::Node& n) { return n.config.sockets; }
int64_t GetCores(const core::Node& n) { return n.config.cores_per_socket; }
int64_t GetThreads(const core::Node& n) { return n.config.threads_per_core; }

std::vector<std::string> NodeNames(const Record& r) {
  std::vector<std::string> names;
  names.reserve(r.nodes.size());
  for (const core::Node* n : r.nodes) names.push_back(n->config.name);
  return names;
}

// The values of a partition row with no nodes left after filtering, as
// sinfo prints them (a zeroed record).
std::string EmptyValue(Fid id, const Ctx& c) {
  switch (id) {
    case Fid::kNodes:
    case Fid::kCpus:
    case Fid::kMemory:
    case Fid::kDisk:
    case Fid::kWeight:
    case Fid::kSockets:
    case Fid::kCores:
    case Fid::kThreads:
    case Fid::kFreeMem:
    case Fid::kAllocMem:
    case Fid::kPort: return "0";
    case Fid::kHostnames:
    case Fid::kNodeList:
    case Fid::kNodeAddr: return "";
    case Fid::kStateCompact:
    case Fid::kStateLong:
    case Fid::kStateComplete: return "n/a";
    case Fid::kCpusState:
    case Fid::kNodeAiot: return "0/0/0/0";
    case Fid::kNodeAi: return "0/0";
    case Fid::kSct: return "0:0:0";
    case Fid::kCpuLoad: return "0.00";
    case Fid::kReason: return "none";
    case Fid::kUser: return c.view.users->UserName(0);
    case Fid::kUserLong: return c.view.users->UserName(0) + "(0)";
    case Fid::kTimestamp: return "Unknown";
    case Fid::kVersion: return c.view.version;
    default: return "(null)";
  }
}

std::string Value(Fid id, const Record& r, const Ctx& c) {
  const FieldInfo& info = Info(id);
  if (info.agg == Agg::kPartition) {
    if (r.part < 0) return "n/a";
    return PartitionValue(id, c.cfg.partitions[static_cast<size_t>(r.part)]);
  }
  if (r.nodes.empty()) return EmptyValue(id, c);
  const core::Node& first = *r.nodes[0];
  if (info.agg == Agg::kNode) return NodeValue(id, first, c);
  switch (id) {
    case Fid::kCpus: return Ranged(r, GetCpus);
    case Fid::kMemory: return Ranged(r, GetMem);
    case Fid::kDisk: return Ranged(r, GetDisk);
    case Fid::kWeight: return Ranged(r, GetWeight);
    case Fid::kSockets: return Ranged(r, GetSockets);
    case Fid::kCores: return Ranged(r, GetCores);
    case Fid::kThreads: return Ranged(r, GetThreads);
    case Fid::kSct:
      return Ranged(r, GetSockets) + ":" + Ranged(r, GetCores) + ":" + Ranged(r, GetThreads);
    case Fid::kNodes: return std::to_string(r.nodes.size());
    case Fid::kHostnames:
    case Fid::kNodeList:
    case Fid::kNodeAddr: return util::CompressHostlist(NodeNames(r));
    // Muster's agents report neither load nor free memory.
    case Fid::kCpuLoad:
    case Fid::kFreeMem: return "N/A";
    case Fid::kCpusState: {
      int64_t a = 0, i = 0, o = 0, t = 0;
      for (const core::Node* n : r.nodes) {
        int64_t total = n->config.cpus;
        int64_t used = std::min<int64_t>(n->alloc_cpus, total);
        a += used;
        (Other(*n) ? o : i) += total - used;
        t += total;
      }
      return fmt::format("{}/{}/{}/{}", a, i, o, t);
    }
    case Fid::kNodeAiot:
    case Fid::kNodeAi: {
      int64_t a = 0, i = 0, o = 0;
      for (const core::Node* n : r.nodes) {
        if (Allocated(*n)) {
          ++a;
        } else if (Other(*n)) {
          ++o;
        } else {
          ++i;
        }
      }
      if (id == Fid::kNodeAi) return fmt::format("{}/{}", a, i);
      return fmt::format("{}/{}/{}/{}", a, i, o, r.nodes.size());
    }
    default: return "";
  }
}

// Whether a field separates records in the partition view.
bool Groups(Fid id, bool exact) {
  Agg a = Info(id).agg;
  return a == Agg::kPartition || a == Agg::kNode || (a == Agg::kRanged && exact);
}

// ---------------------------------------------------------------------------
// Sorting

struct SortKey {
  char letter = 'P';
  bool desc = false;
  bool config_order = false;  // "#P"
};

std::vector<SortKey> ParseSort(std::string_view text) {
  std::vector<SortKey> keys;
  for (const std::string& item : util::Split(text, ',')) {
    SortKey k;
    size_t i = 0;
    if (i < item.size() && (item[i] == '+' || item[i] == '-')) k.desc = item[i++] == '-';
    if (i < item.size() && item[i] == '#') {
      k.config_order = true;
      ++i;
    }
    if (i >= item.size() || ByLetter(item[i]) == nullptr) continue;
    k.letter = item[i];
    keys.push_back(k);
  }
  return keys;
}

// Negative, zero or positive as a sorts before, with or after b.
int CompareBy(const SortKey& k, const Record& a, const Record& b, const Ctx& c) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (k.letter) {
    case 'P':
      if (k.config_order) return cmp(a.part, b.part);
      break;
    case 't':
    case 'T':
      return cmp(a.nodes.empty() ? -1 : StateRank(*a.nodes[0]),
                 b.nodes.empty() ? -1 : StateRank(*b.nodes[0]));
    case 'N': {
      std::string na = a.nodes.empty() ? "" : a.nodes[0]->config.name;
      std::string nb = b.nodes.empty() ? "" : b.nodes[0]->config.name;
      return NodeNameLess(na, nb) ? -1 : (NodeNameLess(nb, na) ? 1 : 0);
    }
    case 'D': return cmp(a.nodes.size(), b.nodes.size());
    case 'c': case 'm': case 'd': case 'w': case 'X': case 'Y': case 'Z':
    case 'p': case 'I': {
      Fid id = ByLetter(k.letter)->id;
      return cmp(std::atoll(Value(id, a, c).c_str()), std::atoll(Value(id, b, c).c_str()));
    }
    case 'l':
    case 'L': {
      auto secs = [&](const Record& r) -> int64_t {
        if (r.part < 0) return 0;
        const core::Partition& p = c.cfg.partitions[static_cast<size_t>(r.part)];
        int64_t s = k.letter == 'l' ? p.max_time_s : p.default_time_s;
        return s < 0 ? INT64_MAX : s;
      };
      return cmp(secs(a), secs(b));
    }
    default: break;
  }
  Fid id = ByLetter(k.letter)->id;
  return Value(id, a, c).compare(Value(id, b, c));
}

void SortRecords(std::vector<Record>* records, const std::vector<SortKey>& keys, const Ctx& c) {
  std::stable_sort(records->begin(), records->end(), [&](const Record& a, const Record& b) {
    for (const SortKey& k : keys) {
      int r = CompareBy(k, a, b, c);
      if (r != 0) return k.desc ? r > 0 : r < 0;
    }
    return false;
  });
}

// ---------------------------------------------------------------------------
// Output

// Pads or cuts a value to its column.
std::string Fit(std::string v, int width, bool right) {
  if (width <= 0) return v;
  size_t w = static_cast<size_t>(width);
  if (v.size() > w) v.resize(w);
  if (v.size() < w) {
    std::string pad(w - v.size(), ' ');
    v = right ? pad + v : v + pad;
  }
  return v;
}

std::string Cell(const Spec& s, int width, const Record& r, const Ctx& c) {
  std::string v = Value(s.id, r, c);
  // A default partition cut to its column keeps its '*': "sh*".
  if (s.id == Fid::kPartition && width > 0 && static_cast<size_t>(width) < v.size() &&
      !v.empty() && v.back() == '*') {
    v = v.substr(0, static_cast<size_t>(width - 1)) + "*";
  }
  return Fit(std::move(v), width, s.right) + s.suffix;
}

std::string HeaderCell(const Spec& s, int width) {
  std::string h = Info(s.id).header;
  // sinfo right-justifies host-list headers without cutting them.
  bool hostlist = s.id == Fid::kNodeList || s.id == Fid::kHostnames || s.id == Fid::kNodeAddr;
  if (s.right && hostlist && width > 0 && h.size() > static_cast<size_t>(width)) {
    return h + s.suffix;
  }
  return Fit(std::move(h), width, s.right) + s.suffix;
}

// The width a '#' column takes: the widest value, at least 9 (sinfo's
// minimum for both the partition and the node-name column).
int ComputedWidth(const Spec& s, const std::vector<Record>& records, const Ctx& c) {
  size_t w = 9;
  for (const Record& r : records) w = std::max(w, Value(s.id, r, c).size());
  return static_cast<int>(w);
}

std::string DateLine(int64_t now) { return CtimeDate(now); }

bool HasPartitionName(const std::vector<Spec>& specs) {
  for (const Spec& s : specs) {
    if (!s.literal && (s.id == Fid::kPartition || s.id == Fid::kPartitionName)) return true;
  }
  return false;
}


// The field list: -O, else -o, else the format the options imply (in
// sinfo's precedence: -s, then -N, then -R, then -l).
Result<std::vector<Spec>> ChooseFormat(const SinfoRequest& req) {
  if (!req.format_long.empty()) return ParseFormatLong(req.format_long);
  if (!req.format.empty()) return ParseFormat(req.format, false);
  if (req.summarize) return ParseFormat(kSummarizeFormat, true);
  if (req.node_view) return ParseFormat(req.long_view ? kNodeLongFormat : kNodeFormat, true);
  if (req.reasons) return ParseFormat(req.long_view ? kReasonsLongFormat : kReasonsFormat, true);
  return ParseFormat(req.long_view ? kLongFormat : kDefaultFormat, true);
}

// The node filters: -n, -t, -d, -r and -R (down or drained nodes only).
class NodeFilter {
 public:
  explicit NodeFilter(const SinfoRequest& req) : req_(req) {
    if (req.nodes.empty()) return;
    Result<std::vector<std::string>> names = util::ExpandHostlist(req.nodes);
    std::vector<std::string> list = names.ok() ? *names : util::Split(req.nodes, ',');
    names_.insert(list.begin(), list.end());
  }
  bool Passes(const core::Node& n) const {
    if (!req_.nodes.empty() && names_.count(n.config.name) == 0) return false;
    if (!NodeInStates(n, req_.states)) return false;
    if (req_.dead && n.Responding()) return false;
    if (req_.responding && !n.Responding()) return false;
    if (req_.reasons && !(n.Base() == core::NodeBase::kDown || n.drain || n.fail)) return false;
    return true;
  }

 private:
  const SinfoRequest& req_;
  std::set<std::string> names_;
};

// The rows before sorting. Candidates are (partition, node) pairs, the
// partitions as configured and each one's nodes by name; -N keeps each pair,
// otherwise pairs merge on the values of the grouping fields. A partition
// left without nodes still gets a row when a partition name is shown.
std::vector<Record> BuildRecords(const SinfoRequest& req, const std::vector<Spec>& specs,
                                 const Ctx& ctx) {
  NodeFilter filter(req);
  std::set<std::string> only_parts(req.partitions.begin(), req.partitions.end());
  std::map<std::string, const core::Node*> by_name;
  for (const core::Node* n : ctx.view.nodes) {
    if (n != nullptr) by_name[n->config.name] = n;
  }
  bool partition_rows = !req.node_view && HasPartitionName(specs);
  std::vector<Record> records;
  std::map<std::string, size_t> by_key;
  std::set<std::pair<size_t, const core::Node*>> in_record;
  // Hidden=YES partitions are left out unless -a/--all or -p asks for them
  // (observed as a plain user on the oracle: `sinfo` omits train, `sinfo -a`
  // and `sinfo -p train` show it; root always sees it), and so are those
  // whose AllowGroups leaves the caller out (man sinfo, -a).
  const bool show_all = req.all || !only_parts.empty();
  for (size_t p = 0; p < ctx.cfg.partitions.size(); ++p) {
    const core::Partition& part = ctx.cfg.partitions[p];
    if (!only_parts.empty() && only_parts.count(part.name) == 0) continue;
    if (!show_all && !PartitionVisible(part, ctx.view)) continue;
    std::vector<const core::Node*> members;
    for (const std::string& name : part.nodes) {
      auto it = by_name.find(name);
      if (it != by_name.end() && filter.Passes(*it->second)) members.push_back(it->second);
    }
    std::sort(members.begin(), members.end(), [](const core::Node* a, const core::Node* b) {
      return NodeNameLess(a->config.name, b->config.name);
    });
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.empty() && partition_rows) records.push_back(Record{static_cast<int>(p), {}});
    for (const core::Node* n : members) {
      Record single{static_cast<int>(p), {n}};
      if (req.node_view) {
        records.push_back(std::move(single));
        continue;
      }
      std::string key;
      for (const Spec& s : specs) {
        if (s.literal || !Groups(s.id, req.exact)) continue;
        key += Value(s.id, single, ctx);
        key += '\x1f';
      }
      auto [it, inserted] = by_key.emplace(key, records.size());
      // A node in two partitions counts once in a record both share.
      if (!in_record.emplace(it->second, n).second) continue;
      if (inserted) {
        records.push_back(std::move(single));
      } else {
        records[it->second].nodes.push_back(n);
      }
    }
  }
  return records;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public

Status CheckSinfoStates(const std::vector<std::string>& states) { return CheckStates(states); }

Status CheckSinfoFormatLong(std::string_view format) { return ParseFormatLong(format).status(); }

nlohmann::json ToJson(const SinfoRequest& r) {
  return nlohmann::json{
      {"node_view", r.node_view}, {"long_view", r.long_view}, {"summarize", r.summarize},
      {"reasons", r.reasons},     {"noheader", r.noheader},   {"all", r.all},
      {"format", r.format},       {"format_long", r.format_long},
      {"partitions", r.partitions}, {"states", r.states},     {"nodes", r.nodes},
      {"exact", r.exact},         {"dead", r.dead},           {"responding", r.responding},
      {"sort", r.sort},           {"iterate_s", r.iterate_s}, {"help", r.help},
      {"version", r.version},     {"reservation", r.reservation},
  };
}

Result<SinfoRequest> SinfoRequestFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("sinfo request: expected a JSON object");
  try {
    SinfoRequest r;
    r.node_view = j.value("node_view", false);
    r.long_view = j.value("long_view", false);
    r.summarize = j.value("summarize", false);
    r.reasons = j.value("reasons", false);
    r.noheader = j.value("noheader", false);
    r.all = j.value("all", false);
    r.format = j.value("format", std::string());
    r.format_long = j.value("format_long", std::string());
    r.partitions = j.value("partitions", std::vector<std::string>{});
    r.states = j.value("states", std::vector<std::string>{});
    r.nodes = j.value("nodes", std::string());
    r.exact = j.value("exact", false);
    r.dead = j.value("dead", false);
    r.responding = j.value("responding", false);
    r.sort = j.value("sort", std::string());
    r.iterate_s = j.value("iterate_s", 0);
    r.help = j.value("help", false);
    r.version = j.value("version", false);
    r.reservation = j.value("reservation", false);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("sinfo request: ") + e.what());
  }
}


Result<std::string> RenderSinfo(const SinfoRequest& req, const ClusterView& view) {
  if (view.config == nullptr) return util::Internal("sinfo: no configuration");
  MUSTER_RETURN_IF_ERROR(CheckStates(req.states));
  Result<std::vector<Spec>> specs = ChooseFormat(req);
  if (!specs.ok()) return specs.status();
  Ctx ctx{view, *view.config, req.exact};

  std::vector<Record> records = BuildRecords(req, *specs, ctx);
  std::string sort = req.sort;
  if (sort.empty()) sort = req.node_view ? "N" : "#P,-t";
  SortRecords(&records, ParseSort(sort), ctx);

  std::vector<int> widths;
  for (const Spec& s : *specs) {
    widths.push_back(s.computed ? ComputedWidth(s, records, ctx) : s.width);
  }
  std::string out;
  if (!req.noheader) {
    if (req.long_view) out += DateLine(view.now) + "\n";
    for (size_t i = 0; i < specs->size(); ++i) {
      const Spec& s = (*specs)[i];
      out += s.literal ? s.text : HeaderCell(s, widths[i]);
    }
    out += '\n';
  }
  for (const Record& r : records) {
    for (size_t i = 0; i < specs->size(); ++i) {
      const Spec& s = (*specs)[i];
      out += s.literal ? s.text : Cell(s, widths[i], r, ctx);
    }
    out += '\n';
  }
  return out;
}

std::string RenderSinfoReservations(const nlohmann::json& list, bool noheader, bool long_view,
                                    int64_t now) {
  std::string out;
  if (long_view && !noheader) out += DateLine(now) + "\n";
  if (list.empty()) return out + "No reservations in the system\n";
  // The name column is as wide as its header, and as the longest name
  // only when the header is printed: Slurm 22.05 measures the names while
  // printing the header (so with -h longer names push the row along).
  size_t name_width = std::string_view("RESV_NAME").size();
  if (!noheader) {
    for (const nlohmann::json& r : list) {
      name_width = std::max(name_width, r.value("name", std::string()).size());
    }
    out += fmt::format("{:<{}}  {:>8}  {:>19}  {:>19}  {:>11}  {}\n", "RESV_NAME", name_width,
                       "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
  }
  for (const nlohmann::json& r : list) {
    const int64_t start = r.value("start", int64_t{0});
    const int64_t end = r.value("end", int64_t{0});
    out += fmt::format("{:<{}}  {:>8}  {:>19}  {:>19}  {:>11}  {}\n", r.value("name", ""),
                       name_width, r.value("state", ""), util::FormatTimestamp(start),
                       util::FormatTimestamp(end), util::FormatDurationLong(end - start),
                       util::CompressHostlist(r.value("nodes", std::vector<std::string>{})));
  }
  return out;
}

}  // namespace muster::render

// Parsing of muster.conf / slurm.conf and gres.conf into Config.
//
// The work is done in three steps: the lexer turns text into logical lines
// (comments stripped, continuations joined) and lines into Key=Value pairs;
// the Parser applies each line in order (Include recursing into files,
// NodeName/PartitionName lines building records with their DEFAULT
// overlays); Finish() resolves what may refer forward (partition and
// nodeset members, DownNodes, the controller host, GresTypes) and applies
// gres.conf. Every pair carries its file:line so any error can name it.

#include "config/config.h"

#include <arpa/inet.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/gres.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::config {
namespace {

namespace fs = std::filesystem;
using util::InvalidArgument;
using util::Result;
using util::Status;

constexpr int kMaxIncludeDepth = 16;
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// ---------------------------------------------------------------------------
// Known keys.

// Top-level slurm.conf parameters (slurm.conf(5), Slurm 22.05, plus a few
// from older and newer releases that real files still carry) that Muster
// accepts without effect. Stored lower-case; the keys Muster uses are
// handled before this table is consulted.
const std::set<std::string>& SlurmOnlyKeys() {
  static const std::set<std::string> keys = [] {
    const char* names[] = {
        "AccountingStorageBackupHost", "AccountingStorageExternalHost",
        "AccountingStorageHost", "AccountingStorageParameters", "AccountingStoragePass",
        "AccountingStoragePort", "AccountingStorageTRES", "AccountingStorageType",
        "AccountingStorageUser", "AccountingStoreFlags", "AcctGatherEnergyType",
        "AcctGatherFilesystemType", "AcctGatherInterconnectType", "AcctGatherNodeFreq",
        "AcctGatherProfileType", "AllowSpecResourcesUsage", "AuthAltParameters", "AuthAltTypes",
        "BatchStartTimeout", "BcastExclude", "BcastParameters",
        "BurstBufferType", "CliFilterPlugins", "CommunicationParameters", "CompleteWait",
        "CoreSpecPlugin", "CpuFreqDef", "CpuFreqGovernors", "CredType", "DebugFlags",
        "DefCpuPerGPU", "DefMemPerGPU", "DefMemPerNode", "DependencyParameters", "DisableRootJobs",
        "EioTimeout", "EpilogMsgTime",
        "ExtSensorsFreq", "ExtSensorsType", "FairShareDampeningFactor", "FederationParameters",
        "GetEnvTimeout", "GpuFreqDef", "GroupUpdateForce", "GroupUpdateTime", "InactiveLimit",
        "InteractiveStepOptions", "JobAcctGatherParams", "JobAcctGatherType", "JobCompHost",
        "JobCompLoc", "JobCompParams", "JobCompPass", "JobCompPort", "JobCompType", "JobCompUser",
        "JobContainerType", "JobFileAppend", "JobRequeue", "JobSubmitPlugins", "KillOnBadExit",
        "LaunchParameters", "LaunchType", "Licenses", "LogTimeFormat", "MailDomain", "MailProg",
        "MaxDBDMsgs", "MaxJobId", "MaxMemPerNode", "MaxNodeCount", "MaxStepCount",
        "MaxTasksPerNode", "MCSParameters", "MCSPlugin", "MessageTimeout",
        "MpiParams", "NodeFeaturesPlugins", "OverTimeLimit", "PluginDir", "PlugStackConfig",
        "PowerParameters", "PowerPlugin",
        "PrEpParameters", "PrEpPlugins", "PriorityParameters",
        "PrioritySiteFactorParameters", "PrioritySiteFactorPlugin",
        "PrivateData", "ProctrackType",
        "PropagatePrioProcess",
        "PropagateResourceLimits", "PropagateResourceLimitsExcept",
        "ReconfigFlags", "RequeueExit", "RequeueExitHold", "ResumeFailProgram", "ResumeProgram",
        "ResumeRate", "ResvEpilog", "ResvOverRun", "ResvProlog", "ReturnToService",
        "RoutePlugin", "SchedulerTimeSlice",
        "ScronParameters", "SelectType", "SlurmctldAddr", "SlurmctldDebug",
        "SlurmctldLogFile", "SlurmctldPidFile", "SlurmctldPlugstack",
        "SlurmctldPrimaryOffProg", "SlurmctldPrimaryOnProg", "SlurmctldSyslogDebug",
        "SlurmctldTimeout", "SlurmdDebug", "SlurmdLogFile", "SlurmdParameters", "SlurmdPidFile",
        "SlurmdSyslogDebug", "SlurmdUser", "SlurmSchedLogFile", "SlurmSchedLogLevel",
        "SrunEpilog", "SrunPortRange", "SrunProlog", "SuspendExcNodes", "SuspendExcParts",
        "SuspendProgram", "SuspendRate", "SuspendTime", "SuspendTimeout", "SwitchParameters",
        "SwitchType", "TaskEpilog", "TaskPlugin", "TaskPluginParam", "TaskProlog", "TCPTimeout",
        "TopologyParam", "TrackWCKey", "TreeWidth",
        "UnkillableStepProgram", "UnkillableStepTimeout", "UsePAM", "VSizeFactor", "WaitTime",
        "X11Parameters",
        // Removed from or renamed in recent Slurm, still found in old files.
        "AccountingStorageLoc", "CacheGroups", "CheckpointType", "ChosLoc", "CryptoType",
        "DefaultStorageHost", "DefaultStorageLoc", "DefaultStoragePass", "DefaultStoragePort",
        "DefaultStorageType", "DefaultStorageUser", "FastSchedule", "JobCheckpointDir",
        "JobCredentialPrivateKey", "JobCredentialPublicCertificate", "KeepAliveTime",
        "MemLimitEnforce", "SallocDefaultCommand", "SchedulerPort", "SchedulerRootFilter",
        // Added after 22.05.
        "CertmgrParameters", "CertmgrType", "DataParserParameters", "HashPlugin",
        "SuspendExcStates", "TLSParameters", "TLSType"};
    std::set<std::string> out;
    for (const char* n : names) out.insert(util::ToLower(n));
    return out;
  }();
  return keys;
}

// NodeName= attributes Slurm documents that Muster does not use.
constexpr std::string_view kNodeIgnoredKeys[] = {"bcastaddr", "corespeccount", "cpubind",
                                                 "cpuspeclist", "memspeclimit", "reason"};
constexpr std::string_view kNodeKeys[] = {
    "cpus",           "procs",          "boards",     "sockets", "socketsperboard",
    "corespersocket", "threadspercore", "realmemory", "tmpdisk", "gres",
    "feature",        "features",       "weight",     "state",   "nodehostname",
    "nodeaddr",       "port"};

// PartitionName= attributes Slurm documents that Muster does not use.
constexpr std::string_view kPartitionIgnoredKeys[] = {
    "allocnodes", "alternate", "cpubind", "defcpupergpu", "defmempercpu", "defmempergpu",
    "defmempernode", "disablerootjobs", "exclusiveuser", "maxcpuspernode",
    "maxmempercpu", "maxmempernode", "overtimelimit", "qos", "reqresv",
    "resumetimeout", "rootonly", "selecttypeparameters", "suspendtime", "suspendtimeout",
    // Added after 22.05.
    "maxcpuspersocket", "powerdownonidle"};
constexpr std::string_view kPartitionKeys[] = {
    "nodes",    "default",      "maxtime",           "defaulttime", "state",   "allowgroups",
    "priority", "prioritytier", "priorityjobfactor", "maxnodes",    "minnodes",
    "allowaccounts", "denyaccounts", "allowqos", "denyqos", "hidden", "oversubscribe", "shared",
    "tresbillingweights", "preemptmode", "gracetime", "lln",
    "idlegpucancel"};

// What DownNodes= may give its nodes.
constexpr core::NodeInitialState kDownNodeStates[] = {
    core::NodeInitialState::kDown, core::NodeInitialState::kDrain, core::NodeInitialState::kFail,
    core::NodeInitialState::kFailing, core::NodeInitialState::kFuture};
constexpr std::string_view kGresAutoDetect[] = {"off", "nvml", "rsmi", "oneapi", "nrt", "nvidia"};

// A node name is a host name: what commands print after "NodeName=" and
// split at commas must not hold '=', ',', blanks or control bytes.
bool ValidNodeName(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// Whether `list` holds `s` exactly.
bool In(std::span<const std::string_view> list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

constexpr std::string_view kDownNodesKeys[] = {"state"};
constexpr std::string_view kDownNodesIgnoredKeys[] = {"reason"};
constexpr std::string_view kNodeSetKeys[] = {"nodes", "feature"};

// ---------------------------------------------------------------------------
// Lexer.

// Where a line came from: the file as messages name it, the line number and
// the absolute directory of the file (for relative Include and paths).
struct Loc {
  std::string file;
  int line = 0;
  std::string dir;
  std::string Str() const { return file + ":" + std::to_string(line); }
};

// One Key=Value pair, the key as written and the value unquoted.
struct Pair {
  std::string key;
  std::string value;
  Loc loc;
  std::string lower() const { return util::ToLower(key); }
};

struct LogicalLine {
  int line;  // number of its first physical line
  std::string text;
};

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// Drops a comment: '#' starts one even inside double quotes (Slurm 22.05
// reads Reason="a # b" as Reason="a); "\#" stands for a literal '#'.
std::string StripComment(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      out += '#';
      ++i;
      continue;
    }
    if (c == '#') break;
    out += c;
  }
  return out;
}

// Splits text into logical lines. A line whose last non-blank character is
// a backslash continues on the next one; the pieces are joined without
// adding blanks, so a hostlist may be split anywhere.
std::vector<LogicalLine> SplitLines(std::string_view text) {
  std::vector<LogicalLine> out;
  std::string pending;
  int start = 0;
  int number = 0;
  bool continuing = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (!continuing) start = number;
    std::string line = StripComment(raw);
    while (!line.empty() && IsSpace(line.back())) line.pop_back();
    continuing = !line.empty() && line.back() == '\\';
    if (continuing) line.pop_back();
    pending += line;
    if (!continuing) {
      if (!util::Trim(pending).empty()) out.push_back({start, pending});
      pending.clear();
    }
  }
  if (!util::Trim(pending).empty()) out.push_back({start, pending});
  return out;
}

// Whether s[i..] starts with `Key=` (blanks allowed before '=').
bool LooksLikePair(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && IsKeyChar(s[j])) ++j;
  if (j == i) return false;
  while (j < s.size() && IsSpace(s[j])) ++j;
  return j < s.size() && s[j] == '=';
}

// Reads a value at s[*i]: a "quoted string" or a run of non-blanks. A
// quote with no closing one is an ordinary character, as in Slurm (where
// Reason="a # b" is read as the value `"a`).
void ReadValue(std::string_view s, size_t* i, std::string* value) {
  if (*i < s.size() && s[*i] == '"') {
    size_t close = s.find('"', *i + 1);
    if (close != std::string_view::npos) {
      *value = std::string(s.substr(*i + 1, close - *i - 1));
      *i = close + 1;
      return;
    }
  }
  size_t end = *i;
  while (end < s.size() && !IsSpace(s[end])) ++end;
  *value = std::string(s.substr(*i, end - *i));
  *i = end;
}

// Splits a logical line into Key=Value pairs. Blanks may surround '='; a
// '=' followed by blanks and then another Key= is an empty value (Slurm's
// "Nodes= " for a partition without nodes).
Result<std::vector<Pair>> Tokenize(std::string_view s, const Loc& loc) {
  std::vector<Pair> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i >= s.size()) break;
    if (!LooksLikePair(s, i)) {
      size_t end = i;
      while (end < s.size() && !IsSpace(s[end])) ++end;
      return InvalidArgument(loc.Str() + ": expected Key=Value, got '" +
                             std::string(s.substr(i, end - i)) + "'");
    }
    size_t key_start = i;
    while (IsKeyChar(s[i])) ++i;
    Pair pair{std::string(s.substr(key_start, i - key_start)), "", loc};
    while (s[i] != '=') ++i;
    ++i;
    if (i < s.size() && !IsSpace(s[i])) {
      ReadValue(s, &i, &pair.value);
    } else {
      size_t next = i;
      while (next < s.size() && IsSpace(s[next])) ++next;
      if (next < s.size() && !LooksLikePair(s, next)) {
        i = next;
        ReadValue(s, &i, &pair.value);
      }
    }
    out.push_back(std::move(pair));
  }
  return out;
}

// "Include <file>" (any case, then blanks); returns the file part.
std::optional<std::string> IncludeTarget(std::string_view line) {
  std::string_view t = util::Trim(line);
  constexpr std::string_view kWord = "include";
  if (util::EqualsIgnoreCase(t, kWord)) return std::string();
  if (t.size() <= kWord.size() || !util::EqualsIgnoreCase(t.substr(0, kWord.size()), kWord) ||
      !IsSpace(t[kWord.size()])) {
    return std::nullopt;
  }
  std::string target(util::Trim(t.substr(kWord.size())));
  if (target.size() >= 2 && target.front() == '"' && target.back() == '"') {
    target = target.substr(1, target.size() - 2);
  }
  return target;
}

// ---------------------------------------------------------------------------
// Value helpers. Each error names "<file:line>: [<context>: ]<Key>: ...".

std::string Where(const Pair& p, const std::string& context) {
  return p.loc.Str() + ": " + (context.empty() ? "" : context + ": ") + p.key;
}

// Calls f(pairs, loc) for each line of a file beside the main one
// (gres.conf, topology.conf; `loc` names it), its pairs tokenized; stops
// at an error.
template <typename F>
Status ForEachLine(std::string_view text, Loc loc, F f) {
  for (const LogicalLine& logical : SplitLines(text)) {
    loc.line = logical.line;
    Result<std::vector<Pair>> pairs = Tokenize(logical.text, loc);
    if (!pairs.ok()) return pairs.status();
    MUSTER_RETURN_IF_ERROR(f(*pairs, loc));
  }
  return Status::Ok();
}

Status BadValue(const Pair& p, const std::string& context, const std::string& why = {}) {
  return InvalidArgument(Where(p, context) + ": invalid value '" + p.value + "'" +
                         (why.empty() ? "" : " (" + why + ")"));
}

bool IsUnlimited(std::string_view v) {
  return util::EqualsIgnoreCase(v, "UNLIMITED") || util::EqualsIgnoreCase(v, "INFINITE");
}

Result<int64_t> IntValue(const Pair& p, const std::string& context, int64_t min, int64_t max) {
  Result<int64_t> n = util::ParseInt(p.value);
  if (!n.ok()) return BadValue(p, context);
  if (*n < min || *n > max) {
    return BadValue(p, context,
                    max == kMaxInt64 || max == kMaxInt
                        ? "must be at least " + std::to_string(min)
                        : "must be " + std::to_string(min) + ".." + std::to_string(max));
  }
  return *n;
}

Result<bool> BoolValue(const Pair& p, const std::string& context) {
  std::string v = util::ToLower(p.value);
  if (v == "yes" || v == "true" || v == "1" || v == "on" || v == "up") return true;
  if (v == "no" || v == "false" || v == "0" || v == "off" || v == "down") return false;
  return BadValue(p, context, "expected YES or NO");
}

// A time limit in seconds, rounded up to whole minutes as Slurm stores
// limits; util::kUnlimited for UNLIMITED/INFINITE.
Result<int64_t> TimeValue(const Pair& p, const std::string& context) {
  Result<int64_t> s = util::ParseTimeLimitSeconds(p.value);
  if (!s.ok()) return BadValue(p, context);
  if (*s == util::kUnlimited) return util::kUnlimited;
  if (*s < 0) return BadValue(p, context);
  return (*s + 59) / 60 * 60;
}

// One "name=N" item of a list key (SchedulerParameters=max_script_size=N),
// in min..max; errors name the file, line, key and item.
Result<int64_t> ItemInt(const Pair& p, const std::string& name, std::string_view value,
                        int64_t min, int64_t max) {
  Result<int64_t> n = util::ParseInt(value);
  if (!n.ok() || *n < min || *n > max) {
    return InvalidArgument(Where(p, "") + ": " + name + ": invalid value '" + std::string(value) +
                           "' (must be " + std::to_string(min) + ".." + std::to_string(max) + ")");
  }
  return *n;
}

// A comma list; blanks around items dropped, empty items skipped.
std::vector<std::string> ListValue(std::string_view v) {
  std::vector<std::string> out;
  for (const std::string& item : util::Split(v, ',')) {
    std::string_view t = util::Trim(item);
    if (!t.empty()) out.emplace_back(t);
  }
  return out;
}

// gres.conf Count: a number with an optional K/M/G/T/P multiplier (1024).
Result<int64_t> GresCount(const Pair& p) {
  std::string v = p.value;
  int64_t mult = 1;
  if (!v.empty() && std::isalpha(static_cast<unsigned char>(v.back()))) {
    const std::string units = "KMGTP";
    size_t u = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(v.back()))));
    if (u == std::string::npos) return BadValue(p, "");
    for (size_t k = 0; k <= u; ++k) mult *= 1024;
    v.pop_back();
  }
  Result<int64_t> n = util::ParseInt(v);
  if (!n.ok() || *n > kMaxInt64 / mult) return BadValue(p, "");
  return *n * mult;
}

// Absolute, normalised form of `path`, relative ones taken from `dir`.
std::string AbsolutePath(const std::string& path, const std::string& dir) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(dir) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return InvalidArgument(path + ": is a directory");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return InvalidArgument(path + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return InvalidArgument(path + ": read error");
  return text;
}

bool HasGlob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool ContainsIgnoreCase(const std::vector<std::string>& list, std::string_view s) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& x) { return util::EqualsIgnoreCase(x, s); });
}

// ---------------------------------------------------------------------------
// Parser.

// Attributes of a NodeName/PartitionName record: lower-case key -> pair.
using Attrs = std::map<std::string, Pair>;

const Pair* Find(const Attrs& attrs, const char* key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

// Reads attrs[key], when present, as an integer in [min, max].
Status OptInt(const Attrs& attrs, const char* key, const std::string& context, int64_t min,
              int64_t max, std::optional<int64_t>* out) {
  if (const Pair* p = Find(attrs, key)) {
    Result<int64_t> v = IntValue(*p, context, min, max);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  return Status::Ok();
}

// Sets *field from attrs[key] when present; with `unlimited`, the words
// UNLIMITED/INFINITE are accepted and stored as that value.
template <typename T>
Status SetInt(const Attrs& attrs, const char* key, const std::string& context, int64_t min,
              int64_t max, T* field, std::optional<int64_t> unlimited = std::nullopt) {
  const Pair* p = Find(attrs, key);
  if (p == nullptr) return Status::Ok();
  if (unlimited && IsUnlimited(p->value)) {
    *field = static_cast<T>(*unlimited);
    return Status::Ok();
  }
  std::optional<int64_t> v;
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, key, context, min, max, &v));
  *field = static_cast<T>(*v);
  return Status::Ok();
}

Status SetTime(const Attrs& attrs, const char* key, const std::string& context, int64_t* field) {
  if (const Pair* p = Find(attrs, key)) {
    Result<int64_t> s = TimeValue(*p, context);
    if (!s.ok()) return s.status();
    *field = *s;
  }
  return Status::Ok();
}

template <typename T>
Status SetTopInt(const Pair& p, T* field, int64_t min, int64_t max) {
  Result<int64_t> n = IntValue(p, "", min, max);
  if (!n.ok()) return n.status();
  *field = static_cast<T>(*n);
  return Status::Ok();
}

class Parser {
 public:
  explicit Parser(const std::string& main_path)
      : main_dir_(fs::path(main_path).parent_path().string()) {
    cfg_.path = main_path;
  }

  // Parses one file's text; `abs_path` is that file's absolute path.
  Status ParseText(std::string_view text, const std::string& abs_path);
  // Resolves forward references and checks the whole configuration.
  Status Finish();
  // Applies gres.conf text read from `abs_path`.
  Status ApplyGresConf(std::string_view text, const std::string& abs_path);
  // Applies topology.conf text read from `abs_path`.
  Status ApplyTopologyConf(std::string_view text, const std::string& abs_path);
  // Applies cgroup.conf text read from `abs_path`.
  Status ApplyCgroupConf(std::string_view text, const std::string& abs_path);
  bool TopologyTree() const { return cfg_.topology_tree; }

  Config Take() { return std::move(cfg_); }

 private:
  struct PendingPartition {
    Loc loc;
    std::optional<Pair> nodes;
  };
  struct NodeSet {
    Loc loc;
    std::string name;
    std::optional<Pair> nodes;
    std::optional<Pair> feature;
  };

  std::string Display(const std::string& abs_path) const;
  // Where a line of a file beside the main one is, before its line number.
  Loc SideFile(const std::string& abs_path) const;
  Status HandleLine(const LogicalLine& line, const Loc& loc);
  Status Include(const std::string& target, const Loc& loc);
  Status ApplyTopLevel(const Pair& p);
  Status SetControlHost(const Pair& p);
  Status SetAuthInfo(const Pair& p);
  Status SetSchedulerParameters(const Pair& p);
  Status SetSelectTypeParameters(const Pair& p);
  Status SetGpuReserve(const Pair& p);
  Status SetBackfillParameter(const Pair& p, const std::string& name, std::string_view value);
  // PriorityType and the priority/multifactor keys; false when `p` is none.
  std::optional<Status> SetPriority(const Pair& p);
  Status SetApiParameters(const Pair& p);
  Status CheckApiLimits() const;
  Status HandleNodeLine(const std::vector<Pair>& pairs);
  Status HandlePartitionLine(const std::vector<Pair>& pairs);
  Status HandleNodeSetLine(const std::vector<Pair>& pairs);
  Status CheckKeys(const std::vector<Pair>& pairs, const std::string& record,
                   std::span<const std::string_view> known,
                   std::span<const std::string_view> ignored);
  // A duration in any Slurm form (minutes, MM:SS, HH:MM:SS, D-HH).
  Status SetDuration(const Pair& p, int64_t* out) {
    Result<int64_t> s = util::ParseTimeLimitSeconds(p.value);
    if (!s.ok() || *s < 0) {
      return BadValue(p, "", "expected a time: MINUTES, MINUTES:SECONDS or HOURS:MINUTES:SECONDS");
    }
    *out = *s;
    return Status::Ok();
  }

  // IdleGpu* keys; nullopt when `p` is none of them.
  std::optional<Status> SetIdleGpu(const Pair& p) {
    const std::string k = util::ToLower(p.key);
    IdleGpuConfig& c = cfg_.idle_gpu;
    if (k == "idlegputhreshold") return SetTopInt(p, &c.threshold_pct, 0, 100);
    if (k == "idlegpuflagtime") return SetDuration(p, &c.flag_after_s);
    if (k == "idlegpureporttime") return SetDuration(p, &c.report_after_s);
    if (k == "idlegpucanceltime") return SetDuration(p, &c.cancel_after_s);
    if (k == "idlegpunotifyprogram") {
      if (!p.value.empty() && p.value.front() != '/') {
        return BadValue(p, "", "expected an absolute path");
      }
      c.notify_program = p.value;
      return Status::Ok();
    }
    return std::nullopt;
  }

  // PrologFlags: Alloc and Contain act; DeferBatch is how Muster runs
  // Alloc anyway; NoHold, Serial and X11 are taken without effect (X11
  // still implies Contain and Alloc, as in Slurm).
  Status SetPrologFlags(const Pair& p) {
    PrologFlags f;
    for (const std::string& item : ListValue(p.value)) {
      const std::string flag = util::ToLower(item);
      if (flag == "alloc" || flag == "deferbatch") {
        f.alloc = true;
      } else if (flag == "contain" || flag == "x11") {
        f.alloc = f.contain = true;
      } else if (flag != "nohold" && flag != "serial" && flag != "forcerequeueonfail" &&
                 flag != "runinjob") {
        return BadValue(p, "", "unknown flag '" + item +
                                   "' (expected Alloc, Contain, DeferBatch, NoHold, Serial or X11)");
      }
      if (flag == "nohold" || flag == "serial" || flag == "x11" || flag == "forcerequeueonfail" ||
          flag == "runinjob") {
        cfg_.ignored_keys.push_back(p.loc.Str() + ": " + p.key + "=" + item);
      }
    }
    cfg_.prolog_flags = f;
    return Status::Ok();
  }

  // HealthCheck* and MusterHealth* keys; nullopt when `p` is none of them.
  std::optional<Status> SetHealth(const Pair& p) {
    const std::string k = util::ToLower(p.key);
    HealthConfig& h = cfg_.health;
    auto known = [](const std::string& name) {
      return std::find(std::begin(kHealthChecks), std::end(kHealthChecks), name) !=
             std::end(kHealthChecks);
    };
    if (k == "healthcheckprogram") {
      if (!p.value.empty() && p.value.front() != '/') {
        return BadValue(p, "", "expected an absolute path");
      }
      h.program = p.value;
      return Status::Ok();
    }
    if (k == "healthcheckinterval") return SetTopInt(p, &h.interval_s, 0, 86400 * 7);
    if (k == "healthchecknodestate") {
      h.node_states.clear();
      h.skip_drained = h.cycle = h.start_only = false;
      for (const std::string& item : ListValue(p.value)) {
        const std::string s = util::ToLower(item);
        if (s == "any") continue;
        if (s == "cycle") {
          h.cycle = true;
        } else if (s == "start_only") {
          h.start_only = true;
        } else if (s == "nondrained_idle") {
          h.node_states.push_back("idle");
          h.skip_drained = true;
        } else if (s == "idle" || s == "alloc" || s == "mixed") {
          h.node_states.push_back(s);
        } else {
          return BadValue(p, "", "unknown state '" + item +
                                     "' (expected ANY, ALLOC, IDLE, MIXED, NONDRAINED_IDLE, "
                                     "CYCLE or START_ONLY)");
        }
      }
      return Status::Ok();
    }
    if (k == "musterhealthchecks" || k == "musterhealthautoresume") {
      std::vector<std::string> names;
      for (const std::string& item : ListValue(p.value)) {
        const std::string name = util::ToLower(item);
        if (!known(name) && !(k == "musterhealthautoresume" && name == "program")) {
          return BadValue(p, "", "unknown check '" + item +
                                     "' (expected gpu_count, gpu_model, driver_version, mounts, "
                                     "spool_space, ecc, remapped_rows, xid or nvml" +
                                     (k == "musterhealthautoresume" ? ", or program)" : ")"));
        }
        if (k == "musterhealthautoresume" &&
            std::find(std::begin(kHealthChecksNeverResumed), std::end(kHealthChecksNeverResumed),
                      name) != std::end(kHealthChecksNeverResumed)) {
          return BadValue(p, "", "check '" + item +
                                     "' finds hardware faults: a node it drains is resumed by an "
                                     "operator only");
        }
        names.push_back(name);
      }
      (k == "musterhealthchecks" ? h.checks : h.auto_resume) = names;
      return Status::Ok();
    }
    if (k == "musterhealthmounts") {
      h.mounts = ListValue(p.value);
      for (const std::string& m : h.mounts) {
        if (m.empty() || m.front() != '/') {
          return BadValue(p, "", "'" + m + "' is not an absolute path");
        }
      }
      return Status::Ok();
    }
    if (k == "musterhealthspoolminfree") {
      Result<int64_t> mb = util::ParseMemoryMb(p.value);
      if (!mb.ok()) return BadValue(p, "", "expected a size (e.g. 500M, 2G)");
      h.spool_min_free_mb = *mb;
      return Status::Ok();
    }
    if (k == "musterhealthmaxdrainpercent") return SetTopInt(p, &h.max_drain_percent, 1, 100);
    return std::nullopt;
  }

  // MusterWatchedFilesystems=PATH,...: mount points, matched as written
  // against the agents' /proc/self/mountinfo, so each must be absolute and
  // plain (no "." or ".." and no doubled slash); a trailing slash is
  // dropped.
  Status SetWatchedFilesystems(const Pair& p) {
    std::vector<std::string> paths;
    for (std::string path : ListValue(p.value)) {
      if (path.front() != '/') return BadValue(p, "", "'" + path + "' is not an absolute path");
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      const std::vector<std::string> parts =
          util::Split(std::string_view(path).substr(1), '/', /*skip_empty=*/false);
      if (path != "/" && std::any_of(parts.begin(), parts.end(), [](const std::string& part) {
            return part.empty() || part == "." || part == "..";
          })) {
        return BadValue(p, "", "'" + path + "' is not a plain path (no '.', '..' or '//')");
      }
      if (std::find(paths.begin(), paths.end(), path) != paths.end()) {
        return BadValue(p, "", "'" + path + "' is listed twice");
      }
      paths.push_back(std::move(path));
    }
    cfg_.watched_filesystems = std::move(paths);
    return Status::Ok();
  }

  // ADDRESS:PORT, an IPv4 or IPv6 address ([v6] in brackets) to listen on.
  Status SetListenAddress(const Pair& p, std::string* host_out, int* port_out) {
    const size_t colon = p.value.rfind(':');
    Result<int64_t> port =
        colon == std::string::npos ? Result<int64_t>(0) : util::ParseInt(p.value.substr(colon + 1));
    std::string host = colon == std::string::npos ? "" : p.value.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    unsigned char ip[sizeof(struct in6_addr)];
    const bool address = inet_pton(AF_INET, host.c_str(), ip) == 1 ||
                         inet_pton(AF_INET6, host.c_str(), ip) == 1;
    if (!address || !port.ok() || *port < 1 || *port > 65535) {
      return BadValue(p, "",
                      "expected ADDRESS:PORT, an IP address to listen on (0.0.0.0 for all) and "
                      "a port 1..65535, e.g. 127.0.0.1:9817");
    }
    *host_out = host;
    *port_out = static_cast<int>(*port);
    return Status::Ok();
  }
  void RecordIgnored(const Pair& p) { cfg_.ignored_keys.push_back(p.loc.Str() + ": " + p.key); }
  void RecordRaw(const Pair& p);
  Status ResolveNodeSets();
  Status ResolvePartitionNodes(core::Partition& part, const PendingPartition& pending);
  Status ApplyDownNodes();
  Status CheckGresTypes() const;
  Result<std::vector<size_t>> NodeIndices(const Pair& p, const std::string& context,
                                          bool allow_sets) const;
  std::vector<size_t> GresTargets(const std::optional<std::vector<std::string>>& nodes) const;

  Config cfg_;
  std::string main_dir_;
  // Files being read, outermost first: canonical paths (for cycles) and the
  // names messages use.
  std::vector<std::string> include_stack_;
  std::vector<std::string> include_names_;
  std::map<std::string, std::string> raw_spelling_;  // lower key -> key in raw
  Attrs node_defaults_;
  Attrs partition_defaults_;
  std::vector<Loc> node_locs_;  // parallel to cfg_.nodes
  std::unordered_map<std::string, size_t> node_index_;
  std::vector<PendingPartition> pending_partitions_;  // parallel to cfg_.partitions
  std::vector<NodeSet> node_sets_;
  std::vector<std::vector<Pair>> down_nodes_;
  std::optional<Pair> slurmctld_host_;  // first SlurmctldHost
  std::optional<Pair> control_machine_;
  std::optional<Pair> control_addr_;
  // MusterApiParameters when it sets max_body_size (else derived in Finish).
  std::optional<Pair> api_body_size_;
};

Loc Parser::SideFile(const std::string& abs_path) const {
  return Loc{Display(abs_path), 0, fs::path(abs_path).parent_path().string()};
}

std::string Parser::Display(const std::string& abs_path) const {
  std::string prefix = main_dir_ == "/" ? "/" : main_dir_ + "/";
  if (util::StartsWith(abs_path, prefix)) return abs_path.substr(prefix.size());
  return abs_path;
}

Status Parser::ParseText(std::string_view text, const std::string& abs_path) {
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(abs_path, ec).string();
  if (ec) canonical = abs_path;
  Loc base{Display(abs_path), 0, fs::path(abs_path).parent_path().string()};
  include_stack_.push_back(canonical);
  include_names_.push_back(base.file);
  Status st = Status::Ok();
  for (const LogicalLine& line : SplitLines(text)) {
    Loc loc = base;
    loc.line = line.line;
    st = HandleLine(line, loc);
    if (!st.ok()) break;
  }
  include_stack_.pop_back();
  include_names_.pop_back();
  return st;
}

Status Parser::HandleLine(const LogicalLine& line, const Loc& loc) {
  if (std::optional<std::string> target = IncludeTarget(line.text)) {
    return Include(*target, loc);
  }
  Result<std::vector<Pair>> pairs = Tokenize(line.text, loc);
  if (!pairs.ok()) return pairs.status();
  const std::string head = pairs->front().lower();
  if (head == "nodename") return HandleNodeLine(*pairs);
  if (head == "partitionname") return HandlePartitionLine(*pairs);
  if (head == "nodeset") return HandleNodeSetLine(*pairs);
  if (head == "downnodes") {
    MUSTER_RETURN_IF_ERROR(CheckKeys(*pairs, "DownNodes", kDownNodesKeys, kDownNodesIgnoredKeys));
    down_nodes_.push_back(*pairs);
    return Status::Ok();
  }
  if (head == "frontendname") {
    // Front end nodes (Cray/BlueGene) have no meaning here.
    RecordIgnored(pairs->front());
    return Status::Ok();
  }
  for (const Pair& p : *pairs) MUSTER_RETURN_IF_ERROR(ApplyTopLevel(p));
  return Status::Ok();
}

Status Parser::Include(const std::string& target, const Loc& loc) {
  if (target.empty()) return InvalidArgument(loc.Str() + ": Include: missing file name");
  // %c stands for the cluster name (slurm.conf(5), INCLUDE MODIFIERS).
  std::string name;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == '%' && i + 1 < target.size() && target[i + 1] == 'c') {
      name += cfg_.cluster_name;
      ++i;
    } else {
      name += target[i];
    }
  }
  std::string path = AbsolutePath(name, loc.dir);
  std::vector<std::string> files;
  if (HasGlob(name)) {
    glob_t g{};
    int rc = glob(path.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
    if (files.empty()) {
      return InvalidArgument(loc.Str() + ": Include '" + target + "': no file matches " + path);
    }
  } else {
    files.push_back(path);
  }
  for (const std::string& file : files) {
    std::error_code ec;
    std::string canonical = fs::weakly_canonical(file, ec).string();
    if (ec) canonical = file;
    if (std::find(include_stack_.begin(), include_stack_.end(), canonical) !=
        include_stack_.end()) {
      std::string chain;
      for (const std::string& f : include_names_) chain += f + " -> ";
      return InvalidArgument(loc.Str() + ": Include cycle: " + chain + Display(file));
    }
    if (static_cast<int>(include_stack_.size()) >= kMaxIncludeDepth) {
      return InvalidArgument(loc.Str() + ": Include '" + target + "': nested more than " +
                             std::to_string(kMaxIncludeDepth) + " deep");
    }
    Result<std::string> text = ReadFile(file);
    if (!text.ok()) {
      return InvalidArgument(loc.Str() + ": Include '" + target + "': cannot read " +
                             text.status().message());
    }
    MUSTER_RETURN_IF_ERROR(ParseText(*text, file));
  }
  return Status::Ok();
}

void Parser::RecordRaw(const Pair& p) {
  std::string lower = p.lower();
  auto it = raw_spelling_.find(lower);
  if (it != raw_spelling_.end() && it->second != p.key) cfg_.raw.erase(it->second);
  raw_spelling_[lower] = p.key;
  cfg_.raw[p.key] = p.value;
}

Status Parser::ApplyTopLevel(const Pair& p) {
  const std::string k = p.lower();
  if (k == "nodename" || k == "partitionname" || k == "nodeset" || k == "downnodes" ||
      k == "frontendname") {
    return InvalidArgument(p.loc.Str() + ": " + p.key + " must begin its line");
  }
  RecordRaw(p);
  if (k == "clustername") {
    if (p.value.empty()) return BadValue(p, "");
    // Slurm maps the name to lower case (accounting table names).
    cfg_.cluster_name = util::ToLower(p.value);
    return Status::Ok();
  }
  if (k == "slurmctldhost") return SetControlHost(p);
  if (k == "controlmachine") {
    if (p.value.empty()) return BadValue(p, "");
    control_machine_ = p;
    return Status::Ok();
  }
  if (k == "controladdr") {
    control_addr_ = p;
    return Status::Ok();
  }
  if (k == "backupcontroller") {
    if (!p.value.empty()) cfg_.backup_control_hosts.push_back(p.value);
    return Status::Ok();
  }
  if (k == "backupaddr") {
    RecordIgnored(p);
    return Status::Ok();
  }
  if (k == "statesavelocation" || k == "slurmdspooldir") {
    if (p.value.empty()) return BadValue(p, "");
    std::string path = AbsolutePath(p.value, p.loc.dir);
    (k == "statesavelocation" ? cfg_.state_save_location : cfg_.slurmd_spool_dir) = path;
    return Status::Ok();
  }
  if (k == "defmempercpu") return SetTopInt(p, &cfg_.def_mem_per_cpu_mb, 0, kMaxInt64);
  if (k == "maxmempercpu") return SetTopInt(p, &cfg_.max_mem_per_cpu_mb, 0, kMaxInt64);
  if (k == "killwait") return SetTopInt(p, &cfg_.kill_wait_s, 0, 65535);
  if (k == "mpidefault") {
    // srun's --mpi when it gives none: none or pmix (pmix_v4, the
    // library's version, as Slurm names it).
    const std::string v = util::ToLower(p.value);
    if (v != "none" && v != "pmix" && v != "pmix_v4") return BadValue(p, "none or pmix");
    cfg_.mpi_default = v == "none" ? "none" : "pmix";
    return Status::Ok();
  }
  if (k == "minjobage") return SetTopInt(p, &cfg_.min_job_age_s, 0, kMaxInt);
  if (k == "slurmdtimeout") return SetTopInt(p, &cfg_.slurmd_timeout_s, 0, 65535);
  if (k == "jobrequeue") return SetTopInt(p, &cfg_.job_requeue, 0, 1);
  if (k == "slurmctldport") {
    // Slurm allows a range ("6817-6820") for several listening ports; the
    // first is the one clients use.
    size_t dash = p.value.find('-');
    Result<int64_t> lo = util::ParseInt(p.value.substr(0, dash));
    Result<int64_t> hi = dash == std::string::npos ? lo : util::ParseInt(p.value.substr(dash + 1));
    if (!lo.ok() || !hi.ok() || *lo < 1 || *hi > 65535 || *hi < *lo) {
      return BadValue(p, "", "must be a port 1..65535 or a range of them");
    }
    cfg_.slurmctld_port = static_cast<int>(*lo);
    return Status::Ok();
  }
  if (k == "slurmdport") return SetTopInt(p, &cfg_.slurmd_port, 1, 65535);
  if (k == "authinfo") return SetAuthInfo(p);
  if (k == "authtype") {
    const std::string v = util::ToLower(p.value);
    if (v == "auth/slurm") {
      cfg_.auth_type = AuthType::kSlurm;
    } else if (v == "auth/munge") {
      cfg_.auth_type = AuthType::kMunge;
    } else {
      return BadValue(p, "", "expected auth/munge or auth/slurm (leave it unset for one host)");
    }
    return Status::Ok();
  }
  if (k == "preempttype") {
    const std::string v = util::ToLower(p.value);
    if (v == "preempt/partition_prio") {
      cfg_.preempt_type = PreemptType::kPartitionPrio;
    } else if (v == "preempt/qos") {
      cfg_.preempt_type = PreemptType::kQos;
    } else if (v == "preempt/none") {
      cfg_.preempt_type = PreemptType::kNone;
    } else {
      return BadValue(p, "", "expected preempt/none, preempt/partition_prio or preempt/qos");
    }
    return Status::Ok();
  }
  if (k == "preemptmode") {
    std::optional<core::PreemptMode> m = core::ParsePreemptMode(p.value);
    if (!m) return BadValue(p, "", "expected OFF, CANCEL or REQUEUE (SUSPEND and GANG are not supported)");
    cfg_.preempt_mode = *m;
    return Status::Ok();
  }
  if (k == "preemptexempttime") {
    Result<int64_t> t = TimeValue(p, "");
    if (!t.ok()) return t.status();
    cfg_.preempt_exempt_time_s = *t == util::kUnlimited ? 0 : *t;
    return Status::Ok();
  }
  if (k == "schedulertype") {
    const std::string v = util::ToLower(p.value);
    if (v == "sched/backfill") {
      cfg_.backfill = true;
    } else if (v == "sched/builtin") {
      cfg_.backfill = false;
    } else {
      return BadValue(p, "", "expected sched/backfill or sched/builtin");
    }
    return Status::Ok();
  }
  if (k == "selecttypeparameters") return SetSelectTypeParameters(p);
  if (k == "gpureserve") return SetGpuReserve(p);
  if (k == "topologyplugin") {
    const std::string v = util::ToLower(p.value);
    if (v == "topology/tree") {
      cfg_.topology_tree = true;
    } else if (v == "topology/none" || v == "topology/default" || v.empty()) {
      cfg_.topology_tree = false;
    } else {
      return BadValue(p, "", "expected topology/tree or topology/none");
    }
    return Status::Ok();
  }
  if (k == "tmpfs") {
    if (p.value.empty()) return BadValue(p, "");
    cfg_.tmp_fs = p.value;
    return Status::Ok();
  }
  if (k == "grestypes") {
    cfg_.gres_types = ListValue(p.value);
    return Status::Ok();
  }
  if (k == "adminusers") {
    cfg_.admin_users = ListValue(p.value);
    return Status::Ok();
  }
  if (k == "maxjobcount") return SetTopInt(p, &cfg_.max_job_count, 1, kMaxInt64);
  if (k == "firstjobid") return SetTopInt(p, &cfg_.first_job_id, 1, kMaxInt);
  if (k == "slurmuser") {
    if (p.value.empty()) return BadValue(p, "");
    cfg_.slurm_user = p.value;
    return Status::Ok();
  }
  if (k == "enforcepartlimits") {
    std::string v = util::ToUpper(p.value);
    if (v == "ALL" || v == "YES") {
      cfg_.enforce_part_limits = EnforcePartLimits::kAll;
    } else if (v == "ANY") {
      cfg_.enforce_part_limits = EnforcePartLimits::kAny;
    } else if (v == "NO") {
      cfg_.enforce_part_limits = EnforcePartLimits::kNo;
    } else {
      return BadValue(p, "", "expected ALL, ANY or NO");
    }
    return Status::Ok();
  }
  // slurm.conf(5): "The value may not exceed 4000001."
  if (k == "maxarraysize") return SetTopInt(p, &cfg_.max_array_size, 0, 4000001);
  if (k == "accountingstorageenforce") {
    // Muster enforces associations (and refuses the flags it does not know);
    // limits, qos and safe imply associations, as in Slurm.
    cfg_.enforce_associations = false;
    for (const std::string& flag : ListValue(p.value)) {
      const std::string f = util::ToLower(flag);
      if (f == "associations" || f == "limits" || f == "qos" || f == "safe" || f == "all") {
        cfg_.enforce_associations = true;
      } else if (f != "nojobs" && f != "nosteps" && f != "wckeys" && f != "0" && f != "none") {
        return BadValue(p, "", "unknown flag '" + flag +
                                   "' (expected associations, limits, qos, safe, wckeys, nojobs, "
                                   "nosteps or all)");
      }
    }
    return Status::Ok();
  }
  if (k == "schedulerparameters") return SetSchedulerParameters(p);
  if (std::optional<Status> done = SetPriority(p)) return *done;
  if (k == "musterapiparameters") return SetApiParameters(p);
  if (k == "mustermetricsaddress") {
    return SetListenAddress(p, &cfg_.metrics_host, &cfg_.metrics_port);
  }
  if (k == "musteragentmetricsaddress") {
    return SetListenAddress(p, &cfg_.agent_metrics_host, &cfg_.agent_metrics_port);
  }
  if (k == "musterwatchedfilesystems") return SetWatchedFilesystems(p);
  if (k == "prolog" || k == "epilog" || k == "prologslurmctld" || k == "epilogslurmctld") {
    if (!p.value.empty() && p.value.front() != '/') {
      return BadValue(p, "", "expected an absolute path");
    }
    (k == "prolog"            ? cfg_.prolog
     : k == "epilog"          ? cfg_.epilog
     : k == "prologslurmctld" ? cfg_.prolog_slurmctld
                              : cfg_.epilog_slurmctld) = p.value;
    return Status::Ok();
  }
  if (k == "prologepilogtimeout") return SetTopInt(p, &cfg_.prolog_epilog_timeout_s, 1, 86400);
  if (k == "prologflags") return SetPrologFlags(p);
  if (k == "rebootprogram") {
    if (!p.value.empty() && p.value.front() != '/') {
      return BadValue(p, "", "expected an absolute path");
    }
    cfg_.reboot_program = p.value;
    return Status::Ok();
  }
  if (k == "resumetimeout") return SetTopInt(p, &cfg_.resume_timeout_s, 1, 86400 * 7);
  if (std::optional<Status> done = SetIdleGpu(p)) return *done;
  if (std::optional<Status> done = SetHealth(p)) return *done;
  if (k == "jobacctgatherfrequency") {
    // N, or task=N among other kinds (energy=, network=, filesystem=,
    // which Muster does not sample): seconds between samples, 0 for none.
    for (const std::string& part : ListValue(p.value)) {
      const size_t eq = part.find('=');
      const std::string kind = eq == std::string::npos ? "task" : util::ToLower(part.substr(0, eq));
      if (kind != "task") continue;
      Result<int64_t> n = util::ParseInt(eq == std::string::npos ? part : part.substr(eq + 1));
      if (!n.ok() || *n < 0 || *n > 86400) {
        return BadValue(p, "", "expected seconds 0..86400, or task=SECONDS");
      }
      cfg_.acct_gather_frequency_s = static_cast<int>(*n);
    }
    return Status::Ok();
  }
  if (k == "slurmctldparameters") {
    // Kept whole for `scontrol show config`; Muster acts on enable_configless.
    cfg_.enable_configless = false;
    for (const std::string& flag : ListValue(p.value)) {
      if (util::EqualsIgnoreCase(flag, "enable_configless")) cfg_.enable_configless = true;
    }
    return Status::Ok();
  }
  if (SlurmOnlyKeys().count(k) != 0) {
    RecordIgnored(p);
    return Status::Ok();
  }
  cfg_.raw.erase(p.key);
  raw_spelling_.erase(k);
  return InvalidArgument(p.loc.Str() + ": unknown key '" + p.key + "'");
}

// SelectTypeParameters: what select/cons_tres counts (Muster always counts
// CPUs and memory, as CR_Core_Memory does, so the resource kinds are
// accepted as written) and how nodes are chosen: CR_Pack_Nodes packs a
// job's tasks onto its first nodes, CR_LLN takes the least loaded.
Status Parser::SetSelectTypeParameters(const Pair& p) {
  static constexpr std::string_view kAccepted[] = {
      "cr_cpu",        "cr_cpu_memory",        "cr_core",           "cr_core_memory",
      "cr_socket",     "cr_socket_memory",     "cr_memory",         "cr_one_task_per_core",
      "cr_core_default_dist_block"};
  cfg_.pack_nodes = false;
  cfg_.least_loaded = false;
  for (const std::string& item : ListValue(p.value)) {
    const std::string v = util::ToLower(item);
    if (v == "cr_pack_nodes") {
      cfg_.pack_nodes = true;
    } else if (v == "cr_lln") {
      cfg_.least_loaded = true;
    } else if (std::find(std::begin(kAccepted), std::end(kAccepted), v) == std::end(kAccepted)) {
      return BadValue(p, "", "unknown item '" + item +
                                 "' (expected CR_Core_Memory, CR_CPU_Memory, CR_Core, CR_CPU, "
                                 "CR_Socket[_Memory], CR_Memory, CR_Pack_Nodes, CR_LLN, "
                                 "CR_ONE_TASK_PER_CORE or CR_CORE_DEFAULT_DIST_BLOCK)");
    }
  }
  if (cfg_.pack_nodes && cfg_.least_loaded) {
    return BadValue(p, "", "CR_Pack_Nodes packs and CR_LLN spreads; give one");
  }
  return Status::Ok();
}

// GpuReserve=CPUs=N,Mem=SIZE: what each free GPU keeps from CPU-only work.
Status Parser::SetGpuReserve(const Pair& p) {
  cfg_.gpu_reserve_cpus = 0;
  cfg_.gpu_reserve_mem_mb = 0;
  for (const std::string& item : ListValue(p.value)) {
    const size_t eq = item.find('=');
    const std::string name = util::ToLower(item.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (name == "cpus") {
      Result<int64_t> n = util::ParseInt(value);
      if (!n.ok() || *n < 0 || *n > 4096) {
        return BadValue(p, "", "CPUs= needs a count from 0 to 4096, not '" + value + "'");
      }
      cfg_.gpu_reserve_cpus = static_cast<int>(*n);
    } else if (name == "mem") {
      Result<int64_t> mb = util::ParseMemoryMb(value);
      if (!mb.ok()) return BadValue(p, "", "Mem=" + value + ": " + mb.status().message());
      cfg_.gpu_reserve_mem_mb = *mb;
    } else {
      return BadValue(p, "", "unknown item '" + item + "' (expected CPUs=N and Mem=SIZE)");
    }
  }
  return Status::Ok();
}

// AuthInfo: a comma-separated list ("cred_expire=30,ttl=60,socket=/run/munge.sock",
// or a bare socket path in old files); Muster reads cred_expire, ttl and socket.
Status Parser::SetAuthInfo(const Pair& p) {
  cfg_.cred_expire_s = 120;
  cfg_.auth_ttl_s = 300;
  cfg_.auth_socket.clear();
  for (const std::string& item : ListValue(p.value)) {
    const size_t eq = item.find('=');
    // A bare path is the munge socket, in old files.
    if (eq == std::string::npos) {
      if (item.starts_with("/")) cfg_.auth_socket = item;
      continue;
    }
    const std::string name = util::ToLower(item.substr(0, eq));
    if (name == "socket") {
      cfg_.auth_socket = item.substr(eq + 1);
      continue;
    }
    int* field = name == "cred_expire" ? &cfg_.cred_expire_s : name == "ttl" ? &cfg_.auth_ttl_s : nullptr;
    if (field == nullptr) continue;
    Result<int64_t> n = util::ParseInt(item.substr(eq + 1));
    if (!n.ok() || *n < 0 || *n > kMaxInt - 1 || (field == &cfg_.auth_ttl_s && *n < 1)) {
      return BadValue(p, "", name + " must be a number of seconds");
    }
    *field = static_cast<int>(*n);
  }
  return Status::Ok();
}

std::optional<Status> Parser::SetPriority(const Pair& p) {
  PriorityConfig& pc = cfg_.priority;
  const std::string k = p.lower();
  struct Weight {
    const char* key;
    int64_t PriorityConfig::*field;
  };
  static constexpr Weight kWeights[] = {
      {"priorityweightage", &PriorityConfig::weight_age},
      {"priorityweightassoc", &PriorityConfig::weight_assoc},
      {"priorityweightfairshare", &PriorityConfig::weight_fairshare},
      {"priorityweightjobsize", &PriorityConfig::weight_job_size},
      {"priorityweightpartition", &PriorityConfig::weight_partition},
      {"priorityweightqos", &PriorityConfig::weight_qos}};
  for (const Weight& w : kWeights) {
    // Slurm keeps weights in 32 bits.
    if (k == w.key) return SetTopInt(p, &(pc.*w.field), 0, 4294967295LL);
  }
  // Durations in Slurm's time forms; a bare number is minutes.
  auto duration = [&](int64_t* field) {
    Result<int64_t> s = TimeValue(p, "");
    if (!s.ok()) return s.status();
    *field = *s == util::kUnlimited ? 0 : *s;
    return Status::Ok();
  };
  if (k == "prioritytype") {
    const std::string v = util::ToLower(p.value);
    if (v != "priority/basic" && v != "priority/multifactor") {
      return BadValue(p, "", "expected priority/basic or priority/multifactor");
    }
    pc.multifactor = v == "priority/multifactor";
    return Status::Ok();
  }
  if (k == "priorityweighttres") {
    auto weights = core::ParseTresWeights(p.value);
    if (!weights.ok()) return InvalidArgument(Where(p, "") + ": " + weights.status().message());
    pc.weight_tres = std::move(weights).value();
    pc.weight_tres_text = p.value;
    return Status::Ok();
  }
  if (k == "prioritymaxage") return duration(&pc.max_age_s);
  if (k == "prioritydecayhalflife") return duration(&pc.decay_half_life_s);
  if (k == "prioritycalcperiod") {
    MUSTER_RETURN_IF_ERROR(duration(&pc.calc_period_s));
    if (pc.calc_period_s == 0) return BadValue(p, "", "must be at least one minute");
    return Status::Ok();
  }
  if (k == "priorityfavorsmall") {
    Result<bool> b = BoolValue(p, "");
    if (!b.ok()) return b.status();
    pc.favor_small = *b;
    return Status::Ok();
  }
  if (k == "priorityflags") {
    pc.fair_tree = true;
    for (const std::string& flag : ListValue(p.value)) {
      const std::string f = util::ToUpper(flag);
      if (f == "NO_FAIR_TREE") {
        pc.fair_tree = false;
      } else if (f != "FAIR_TREE") {
        // Reported with the keys that have no effect.
        cfg_.ignored_keys.push_back(p.loc.Str() + ": " + p.key + "=" + flag);
      }
    }
    return Status::Ok();
  }
  if (k == "priorityusageresetperiod") {
    static constexpr std::pair<const char*, UsageReset> kPeriods[] = {
        {"NONE", UsageReset::kNone},       {"NOW", UsageReset::kNow},
        {"DAILY", UsageReset::kDaily},     {"WEEKLY", UsageReset::kWeekly},
        {"MONTHLY", UsageReset::kMonthly}, {"QUARTERLY", UsageReset::kQuarterly},
        {"YEARLY", UsageReset::kYearly}};
    for (const auto& [name, period] : kPeriods) {
      if (util::EqualsIgnoreCase(p.value, name)) {
        pc.usage_reset = period;
        return Status::Ok();
      }
    }
    return BadValue(p, "", "expected NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY");
  }
  return std::nullopt;
}

// The flags Muster acts on; the rest are kept for `scontrol show config`.
// A later SchedulerParameters line replaces an earlier one, as in Slurm.
Status Parser::SetSchedulerParameters(const Pair& p) {
  cfg_.scheduler_parameters = ListValue(p.value);
  cfg_.kill_invalid_depend = false;
  cfg_.enable_user_top = false;
  cfg_.max_script_size = core::kDefaultMaxScriptSize;
  cfg_.max_switch_wait_s = 300;
  cfg_.bf = BackfillConfig{};
  for (const std::string& flag : cfg_.scheduler_parameters) {
    if (util::EqualsIgnoreCase(flag, "bf_continue")) cfg_.bf.continue_after_yield = true;
    if (util::EqualsIgnoreCase(flag, "kill_invalid_depend")) cfg_.kill_invalid_depend = true;
    if (util::EqualsIgnoreCase(flag, "enable_user_top")) cfg_.enable_user_top = true;
    const size_t eq = flag.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = util::ToLower(util::Trim(std::string_view(flag).substr(0, eq)));
    const std::string_view value = util::Trim(std::string_view(flag).substr(eq + 1));
    if (name.starts_with("bf_")) {
      Status s = SetBackfillParameter(p, name, value);
      if (!s.ok()) return s;
      continue;
    }
    if (name == "max_switch_wait") {
      Result<int64_t> n = ItemInt(p, "max_switch_wait", value, 0, kMaxInt);
      if (!n.ok()) return n.status();
      cfg_.max_switch_wait_s = *n;
      continue;
    }
    if (name == "max_script_size") {
      // Up to 1 GiB: musterd holds a pending script in memory while it
      // writes it to the payload store.
      Result<int64_t> n = ItemInt(p, "max_script_size", value, 1, 1 << 30);
      if (!n.ok()) return n.status();
      cfg_.max_script_size = *n;
    }
  }
  return Status::Ok();
}

// One bf_NAME=VALUE item of SchedulerParameters. Those the planner has no
// use for (bf_yield_interval, bf_busy_nodes, ...) are kept for `scontrol
// show config` only, as every unknown item is.
Status Parser::SetBackfillParameter(const Pair& p, const std::string& name,
                                    std::string_view value) {
  BackfillConfig& bf = cfg_.bf;
  if (name == "bf_window") {
    // Minutes, up to 30 days as in Slurm.
    Result<int64_t> n = ItemInt(p, name, value, 1, 43200);
    if (!n.ok()) return n.status();
    bf.window_s = *n * 60;
  } else if (name == "bf_resolution") {
    Result<int64_t> n = ItemInt(p, name, value, 1, 3600);
    if (!n.ok()) return n.status();
    bf.resolution_s = *n;
  } else if (name == "bf_max_job_test") {
    Result<int64_t> n = ItemInt(p, name, value, 1, 1000000);
    if (!n.ok()) return n.status();
    bf.max_job_test = static_cast<int>(*n);
  } else if (name == "bf_max_job_user") {
    Result<int64_t> n = ItemInt(p, name, value, 0, 1000000);
    if (!n.ok()) return n.status();
    bf.max_job_user = static_cast<int>(*n);
  } else if (name == "bf_min_prio_reserve") {
    Result<int64_t> n = ItemInt(p, name, value, 0, UINT32_MAX);
    if (!n.ok()) return n.status();
    bf.min_prio_reserve = *n;
  } else if (name == "bf_interval") {
    Result<int64_t> n = ItemInt(p, name, value, 1, 10800);
    if (!n.ok()) return n.status();
    bf.interval_s = static_cast<int>(*n);
  }
  return Status::Ok();
}

// MusterApiParameters: see ApiLimits. Every item must be known; unset ones
// keep their defaults (a later line replaces an earlier one).
Status Parser::SetApiParameters(const Pair& p) {
  cfg_.api = ApiLimits{};
  api_body_size_.reset();
  for (const std::string& item : ListValue(p.value)) {
    const size_t eq = item.find('=');
    const std::string name = util::ToLower(util::Trim(std::string_view(item).substr(0, eq)));
    if (eq == std::string::npos) {
      return InvalidArgument(Where(p, "") + ": '" + item + "' is not name=value");
    }
    const std::string value(util::Trim(std::string_view(item).substr(eq + 1)));
    Result<int64_t> n = util::InvalidArgument("");
    if (name == "max_body_size") {
      n = ItemInt(p, name, value, 1024, int64_t{1} << 32);
      if (n.ok()) cfg_.api.max_body_size = *n;
      api_body_size_ = p;
    } else if (name == "max_header_size") {
      n = ItemInt(p, name, value, 1024, 16 << 20);
      if (n.ok()) cfg_.api.max_header_size = *n;
    } else if (name == "max_connections") {
      n = ItemInt(p, name, value, 1, 1000000);
      if (n.ok()) cfg_.api.max_connections = static_cast<int>(*n);
    } else if (name == "max_connections_per_user") {
      n = ItemInt(p, name, value, 1, 1000000);
      if (n.ok()) cfg_.api.max_connections_per_user = static_cast<int>(*n);
    } else {
      return InvalidArgument(Where(p, "") + ": unknown option '" + name +
                             "' (max_body_size, max_header_size, max_connections, "
                             "max_connections_per_user)");
    }
    if (!n.ok()) return n.status();
  }
  return Status::Ok();
}

// The body limit follows the script limit unless set; set, it must let a
// script of the largest size through.
Status Parser::CheckApiLimits() const {
  if (!api_body_size_) return Status::Ok();
  if (cfg_.api.max_body_size >= cfg_.max_script_size) return Status::Ok();
  return InvalidArgument(Where(*api_body_size_, "") + ": max_body_size=" +
                         std::to_string(cfg_.api.max_body_size) +
                         " is below SchedulerParameters max_script_size=" +
                         std::to_string(cfg_.max_script_size) +
                         ": a script of that size could not reach musterd");
}

Status Parser::SetControlHost(const Pair& p) {
  std::string host = p.value;
  std::string addr;
  size_t open = host.find('(');
  if (open != std::string::npos) {
    if (host.back() != ')' || open == 0) return BadValue(p, "", "expected host or host(addr)");
    addr = host.substr(open + 1, host.size() - open - 2);
    host = host.substr(0, open);
    if (addr.empty()) return BadValue(p, "", "expected host or host(addr)");
  }
  if (host.empty() || host.find_first_of("()") != std::string::npos) {
    return BadValue(p, "", "expected host or host(addr)");
  }
  // The first SlurmctldHost is the primary; later ones are backups.
  if (!slurmctld_host_) {
    slurmctld_host_ = p;
    cfg_.control_host = host;
    cfg_.control_addr = addr;
  } else {
    cfg_.backup_control_hosts.push_back(host);
  }
  return Status::Ok();
}

Status Parser::CheckKeys(const std::vector<Pair>& pairs, const std::string& record,
                         std::span<const std::string_view> known,
                         std::span<const std::string_view> ignored) {
  for (size_t i = 1; i < pairs.size(); ++i) {
    const std::string k = pairs[i].lower();
    if (In(ignored, k)) {
      RecordIgnored(pairs[i]);
    } else if (!In(known, k)) {
      return InvalidArgument(pairs[i].loc.Str() + ": unknown key '" + pairs[i].key + "' in " +
                             record + " line");
    }
  }
  return Status::Ok();
}

// Builds a node's hardware (all but its name) from its attributes, with
// the rules slurmctld 22.05 applies (checked against it, not the man page):
//  - Sockets is the node's total; with Boards, SocketsPerBoard multiplies
//    (the man page says Sockets means per board then, but slurmctld shows
//    Boards=2 Sockets=3 CoresPerSocket=8 as 3 sockets and 24 CPUs);
//  - CPUs defaults to Sockets*CoresPerSocket*ThreadsPerCore;
//  - without Sockets, Sockets = CPUs/(CoresPerSocket*ThreadsPerCore), so
//    CPUs=8 alone is 8 sockets of one core;
//  - CPUs may equal the sockets, cores or threads count (CPUs=cores
//    schedules cores only on a hyper-threaded node); any other value
//    contradicts the topology, which Slurm "corrects" with a log line and
//    Muster reports as an error;
//  - CPUs beats its synonym Procs, and Feature beats Features, whatever
//    their order.
Status SetTopology(const Attrs& attrs, const std::string& context, core::NodeConfig* n) {
  std::optional<int64_t> cpus, procs, boards, sockets, spb, cores, threads;
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "cpus", context, 1, 65535, &cpus));
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "procs", context, 1, 65535, &procs));
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "boards", context, 1, 65535, &boards));
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "sockets", context, 1, 65535, &sockets));
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "socketsperboard", context, 1, 65535, &spb));
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "corespersocket", context, 1, 65535, &cores));
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "threadspercore", context, 1, 65535, &threads));
  const Pair* cpus_pair = cpus ? Find(attrs, "cpus") : Find(attrs, "procs");
  if (!cpus) cpus = procs;
  if (sockets && spb) {
    return InvalidArgument(Find(attrs, "socketsperboard")->loc.Str() + ": " + context +
                           ": Sockets and SocketsPerBoard are mutually exclusive");
  }
  const int64_t c = cores.value_or(1);
  const int64_t t = threads.value_or(1);
  int64_t total_sockets = boards.value_or(1);
  if (sockets) {
    total_sockets = *sockets;
  } else if (spb) {
    total_sockets = boards.value_or(1) * *spb;
  } else if (cpus) {
    total_sockets = std::max<int64_t>(1, *cpus / (c * t));
  }
  const int64_t threads_total = total_sockets * c * t;
  if (!cpus) {
    if (threads_total > 65535) {
      return InvalidArgument(attrs.begin()->second.loc.Str() + ": " + context +
                             ": Sockets*CoresPerSocket*ThreadsPerCore=" +
                             std::to_string(threads_total) + " is over 65535 CPUs");
    }
    cpus = threads_total;
  } else if (*cpus != total_sockets && *cpus != total_sockets * c && *cpus != threads_total) {
    return InvalidArgument(
        Where(*cpus_pair, context) + "=" + cpus_pair->value +
        " does not match Sockets*CoresPerSocket*ThreadsPerCore=" + std::to_string(total_sockets) +
        "*" + std::to_string(c) + "*" + std::to_string(t) + "=" + std::to_string(threads_total));
  }
  n->cpus = static_cast<int>(*cpus);
  n->sockets = static_cast<int>(total_sockets);
  n->cores_per_socket = static_cast<int>(c);
  n->threads_per_core = static_cast<int>(t);
  return Status::Ok();
}

Result<core::NodeConfig> BuildNode(const Attrs& attrs, const std::string& context) {
  core::NodeConfig n;
  MUSTER_RETURN_IF_ERROR(SetTopology(attrs, context, &n));
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "realmemory", context, 1, kMaxInt64, &n.real_memory_mb));
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "tmpdisk", context, 0, kMaxInt64, &n.tmp_disk_mb));
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "weight", context, 0, kMaxInt, &n.weight, kMaxInt));
  std::optional<int64_t> port;
  MUSTER_RETURN_IF_ERROR(OptInt(attrs, "port", context, 1, 65535, &port));
  n.port = static_cast<int>(port.value_or(0));
  if (const Pair* p = Find(attrs, "gres")) {
    if (!p->value.empty() && !util::EqualsIgnoreCase(p->value, "(null)")) {
      Result<std::vector<core::GresSpec>> g = core::ParseNodeGres(p->value);
      if (!g.ok()) return BadValue(*p, context, g.status().message());
      n.gres = std::move(*g);
    }
  }
  const Pair* feature = Find(attrs, "feature");
  if (const Pair* p = feature != nullptr ? feature : Find(attrs, "features")) {
    n.features = ListValue(p->value);
  }
  if (const Pair* p = Find(attrs, "state")) {
    std::optional<core::NodeInitialState> state = core::ParseNodeInitialState(p->value);
    if (!state) {
      return BadValue(*p, context,
                      "expected CLOUD, DOWN, DRAIN, FAIL, FAILING, FUTURE, IDLE or UNKNOWN");
    }
    n.initial_state = *state;
  }
  return n;
}

Status Parser::HandleNodeLine(const std::vector<Pair>& pairs) {
  const Pair& head = pairs.front();
  MUSTER_RETURN_IF_ERROR(CheckKeys(pairs, "NodeName", kNodeKeys, kNodeIgnoredKeys));
  if (head.value.empty()) return BadValue(head, "");
  if (util::EqualsIgnoreCase(head.value, "ALL")) {
    return BadValue(head, "", "ALL is a reserved word");
  }
  const bool is_default = util::EqualsIgnoreCase(head.value, "DEFAULT");
  if (is_default) {
    // Per-node addresses make no sense as defaults; Slurm refuses them too.
    for (size_t i = 1; i < pairs.size(); ++i) {
      const std::string k = pairs[i].lower();
      if (k == "nodeaddr" || k == "nodehostname" || k == "bcastaddr") {
        return InvalidArgument(pairs[i].loc.Str() + ": " + pairs[i].key +
                               " is not allowed with NodeName=DEFAULT");
      }
    }
  }
  Attrs attrs = node_defaults_;
  for (size_t i = 1; i < pairs.size(); ++i) attrs[pairs[i].lower()] = pairs[i];
  const std::string context = "NodeName " + head.value;
  Result<core::NodeConfig> tmpl = BuildNode(attrs, context);
  if (!tmpl.ok()) return tmpl.status();
  if (is_default) {
    // Each DEFAULT line adds to (never resets) the earlier defaults.
    node_defaults_ = std::move(attrs);
    return Status::Ok();
  }
  Result<std::vector<std::string>> hosts = util::ExpandHostlist(head.value);
  if (!hosts.ok()) return BadValue(head, "", hosts.status().message());
  // NodeHostname and NodeAddr name one host per node, in the same order
  // (NodeName=gpu[01-04] NodeHostname=srv[1-4]).
  std::vector<std::string> hostnames, addrs;
  for (auto [key, out] : {std::pair{"nodehostname", &hostnames}, std::pair{"nodeaddr", &addrs}}) {
    const Pair* p = Find(attrs, key);
    if (p == nullptr) continue;
    Result<std::vector<std::string>> list = util::ExpandHostlist(p->value);
    if (!list.ok()) return BadValue(*p, context, list.status().message());
    if (list->size() != hosts->size()) {
      return BadValue(*p, context,
                      "names " + std::to_string(list->size()) + " hosts for " +
                                   std::to_string(hosts->size()) + " nodes");
    }
    *out = std::move(*list);
  }
  for (size_t i = 0; i < hosts->size(); ++i) {
    const std::string& host = (*hosts)[i];
    if (!ValidNodeName(host)) {
      return BadValue(head, "", "node name '" + host +
                                    "' may hold only letters, digits, '-', '_' and '.'");
    }
    if (auto it = node_index_.find(host); it != node_index_.end()) {
      return InvalidArgument(head.loc.Str() + ": NodeName: duplicate node '" + host +
                             "' (first defined at " + node_locs_[it->second].Str() + ")");
    }
    core::NodeConfig node = *tmpl;
    node.name = host;
    node.hostname = hostnames.empty() ? host : hostnames[i];
    node.addr = addrs.empty() ? node.hostname : addrs[i];
    node_index_[host] = cfg_.nodes.size();
    node_locs_.push_back(head.loc);
    cfg_.nodes.push_back(std::move(node));
  }
  return Status::Ok();
}

// OverSubscribe=NO|EXCLUSIVE|YES[:n]|FORCE[:n] in the form scontrol shows
// it: YES and FORCE carry their job count, 4 when not given (checked
// against slurmctld 22.05: OverSubscribe=FORCE shows as FORCE:4).
Result<std::string> OverSubscribeValue(const Pair& p, const std::string& context) {
  std::string v = util::ToUpper(p.value);
  std::string word = v.substr(0, v.find(':'));
  if (word == "NO" || word == "EXCLUSIVE") {
    if (word != v) return BadValue(p, context, word + " takes no count");
    return word;
  }
  if (word != "YES" && word != "FORCE") {
    return BadValue(p, context, "expected NO, EXCLUSIVE, YES[:n] or FORCE[:n]");
  }
  if (word == v) return word + ":4";
  Result<int64_t> n = util::ParseInt(v.substr(word.size() + 1));
  if (!n.ok() || *n < 1 || *n > 65535) return BadValue(p, context, "count must be 1..65535");
  return word + ":" + std::to_string(*n);
}

// Builds a partition's settings (all but its nodes) from its attributes.
Result<core::Partition> BuildPartition(const Attrs& attrs, const std::string& context) {
  core::Partition part;
  if (const Pair* p = Find(attrs, "default")) {
    Result<bool> b = BoolValue(*p, context);
    if (!b.ok()) return b.status();
    part.is_default = *b;
  }
  MUSTER_RETURN_IF_ERROR(SetTime(attrs, "maxtime", context, &part.max_time_s));
  MUSTER_RETURN_IF_ERROR(SetTime(attrs, "defaulttime", context, &part.default_time_s));
  if (const Pair* p = Find(attrs, "defaulttime");
      p && part.max_time_s != util::kUnlimited &&
      (part.default_time_s == util::kUnlimited || part.default_time_s > part.max_time_s)) {
    // slurmctld only logs this; it is a contradiction, so an error here.
    return InvalidArgument(Where(*p, context) + "=" + p->value +
                           " exceeds MaxTime=" + Find(attrs, "maxtime")->value);
  }
  if (const Pair* p = Find(attrs, "state")) {
    std::optional<core::PartitionState> state = core::ParsePartitionState(p->value);
    if (!state) return BadValue(*p, context, "expected UP, DOWN, DRAIN or INACTIVE");
    part.state = *state;
  }
  // "ALL" anywhere in an allow list means everyone, as Slurm reads it.
  for (auto [key, list] : {std::pair{"allowgroups", &part.allow_groups},
                           std::pair{"allowaccounts", &part.allow_accounts},
                           std::pair{"allowqos", &part.allow_qos}}) {
    if (const Pair* p = Find(attrs, key)) {
      *list = ListValue(p->value);
      if (ContainsIgnoreCase(*list, "ALL")) list->clear();
    }
  }
  if (const Pair* p = Find(attrs, "denyaccounts")) part.deny_accounts = ListValue(p->value);
  if (const Pair* p = Find(attrs, "denyqos")) part.deny_qos = ListValue(p->value);
  if (const Pair* p = Find(attrs, "hidden")) {
    Result<bool> b = BoolValue(*p, context);
    if (!b.ok()) return b.status();
    part.hidden = *b;
  }
  // OverSubscribe beats its old name Shared, whatever their order.
  const Pair* over = Find(attrs, "oversubscribe");
  if (const Pair* p = over != nullptr ? over : Find(attrs, "shared")) {
    Result<std::string> v = OverSubscribeValue(*p, context);
    if (!v.ok()) return v.status();
    part.oversubscribe = *v;
  }
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "prioritytier", context, 0, 65533, &part.priority_tier));
  MUSTER_RETURN_IF_ERROR(
      SetInt(attrs, "priorityjobfactor", context, 0, 65533, &part.priority_job_factor));
  // The old Priority sets both and, as slurmctld 22.05 does, beats
  // PriorityTier/PriorityJobFactor even when those are given too.
  if (Find(attrs, "priority") != nullptr) {
    MUSTER_RETURN_IF_ERROR(SetInt(attrs, "priority", context, 0, 65533, &part.priority_tier));
    part.priority_job_factor = part.priority_tier;
  }
  if (const Pair* p = Find(attrs, "tresbillingweights")) {
    auto weights = core::ParseTresWeights(p->value);
    if (!weights.ok()) return InvalidArgument(Where(*p, context) + ": " + weights.status().message());
    part.billing_weights = std::move(weights).value();
    part.billing_weights_text = p->value;
  }
  if (const Pair* p = Find(attrs, "preemptmode")) {
    std::optional<core::PreemptMode> m = core::ParsePreemptMode(p->value);
    if (!m) return BadValue(*p, context, "expected OFF, CANCEL or REQUEUE");
    part.preempt_mode = m;
  }
  if (const Pair* p = Find(attrs, "lln")) {
    Result<bool> b = BoolValue(*p, context);
    if (!b.ok()) return b.status();
    part.least_loaded = *b;
  }
  if (const Pair* p = Find(attrs, "idlegpucancel")) {
    Result<bool> b = BoolValue(*p, context);
    if (!b.ok()) return b.status();
    part.idle_gpu_cancel = *b;
  }
  int64_t grace = 0;
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "gracetime", context, 0, kMaxInt, &grace));
  part.grace_time_s = grace;
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "maxnodes", context, 0, kMaxInt, &part.max_nodes, -1));
  MUSTER_RETURN_IF_ERROR(SetInt(attrs, "minnodes", context, 0, kMaxInt, &part.min_nodes));
  if (part.max_nodes >= 0 && part.min_nodes > part.max_nodes) {
    const Pair* p = Find(attrs, "minnodes") ? Find(attrs, "minnodes") : Find(attrs, "maxnodes");
    return InvalidArgument(p->loc.Str() + ": " + context +
                           ": MinNodes=" + std::to_string(part.min_nodes) +
                           " exceeds MaxNodes=" + std::to_string(part.max_nodes));
  }
  return part;
}

Status Parser::HandlePartitionLine(const std::vector<Pair>& pairs) {
  const Pair& head = pairs.front();
  MUSTER_RETURN_IF_ERROR(CheckKeys(pairs, "PartitionName", kPartitionKeys, kPartitionIgnoredKeys));
  if (head.value.empty()) return BadValue(head, "");
  const bool is_default = util::EqualsIgnoreCase(head.value, "DEFAULT");
  Attrs attrs = partition_defaults_;
  for (size_t i = 1; i < pairs.size(); ++i) attrs[pairs[i].lower()] = pairs[i];
  const std::string context = "PartitionName " + head.value;
  Result<core::Partition> part = BuildPartition(attrs, context);
  if (!part.ok()) return part.status();
  if (is_default) {
    partition_defaults_ = std::move(attrs);
    return Status::Ok();
  }
  for (size_t i = 0; i < cfg_.partitions.size(); ++i) {
    if (cfg_.partitions[i].name == head.value) {
      return InvalidArgument(head.loc.Str() + ": PartitionName: duplicate partition '" +
                             head.value + "' (first defined at " +
                             pending_partitions_[i].loc.Str() + ")");
    }
  }
  part->name = head.value;
  PendingPartition pending{head.loc, std::nullopt};
  if (auto it = attrs.find("nodes"); it != attrs.end()) {
    pending.nodes = it->second;
    part->nodes_expr = it->second.value;
  }
  cfg_.partitions.push_back(std::move(*part));
  pending_partitions_.push_back(std::move(pending));
  return Status::Ok();
}

Status Parser::HandleNodeSetLine(const std::vector<Pair>& pairs) {
  const Pair& head = pairs.front();
  MUSTER_RETURN_IF_ERROR(CheckKeys(pairs, "NodeSet", kNodeSetKeys, {}));
  if (head.value.empty()) return BadValue(head, "");
  NodeSet set{head.loc, head.value, std::nullopt, std::nullopt};
  for (size_t i = 1; i < pairs.size(); ++i) {
    (pairs[i].lower() == "nodes" ? set.nodes : set.feature) = pairs[i];
  }
  node_sets_.push_back(std::move(set));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Finishing: forward references and whole-file checks.

// Expands a node list to node indices in config order, without duplicates.
// Items may be hostlists, "ALL" and, with allow_sets, NodeSet names.
Result<std::vector<size_t>> Parser::NodeIndices(const Pair& p, const std::string& context,
                                                bool allow_sets) const {
  std::set<size_t> found;
  if (!util::Trim(p.value).empty()) {
    Result<std::vector<std::string>> names = util::ExpandHostlist(p.value);
    if (!names.ok()) return BadValue(p, context, names.status().message());
    for (const std::string& name : *names) {
      if (util::EqualsIgnoreCase(name, "ALL")) {
        for (size_t i = 0; i < cfg_.nodes.size(); ++i) found.insert(i);
        continue;
      }
      if (auto it = node_index_.find(name); it != node_index_.end()) {
        found.insert(it->second);
        continue;
      }
      const NodeSet* set = nullptr;
      if (allow_sets) {
        for (const NodeSet& s : node_sets_) {
          if (s.name == name) set = &s;
        }
      }
      if (set == nullptr) {
        return InvalidArgument(Where(p, context) + ": unknown node '" + name + "'");
      }
      // NodeSets were resolved into NodeName-style entries first.
      Result<std::vector<size_t>> members = NodeIndices(*set->nodes, "NodeSet " + set->name, false);
      if (!members.ok()) return members.status();
      found.insert(members->begin(), members->end());
    }
  }
  return std::vector<size_t>(found.begin(), found.end());
}

// A NodeSet given by Feature= becomes the list of nodes with the feature,
// so partitions can expand every set the same way.
Status Parser::ResolveNodeSets() {
  for (NodeSet& set : node_sets_) {
    if (node_index_.count(set.name) != 0) {
      return InvalidArgument(set.loc.Str() + ": NodeSet " + set.name +
                             ": name is also a node name");
    }
    if (set.feature) {
      std::vector<std::string> members;
      for (const core::NodeConfig& n : cfg_.nodes) {
        if (ContainsIgnoreCase(n.features, set.feature->value)) members.push_back(n.name);
      }
      Pair nodes = *set.feature;
      nodes.key = "Feature";
      nodes.value = util::Join(members, ",");
      if (set.nodes) nodes.value += (nodes.value.empty() ? "" : ",") + set.nodes->value;
      set.nodes = nodes;
    }
    if (!set.nodes) {
      return InvalidArgument(set.loc.Str() + ": NodeSet " + set.name +
                             ": needs Nodes= or Feature=");
    }
    Result<std::vector<size_t>> check = NodeIndices(*set.nodes, "NodeSet " + set.name, false);
    if (!check.ok()) return check.status();
  }
  return Status::Ok();
}

Status Parser::ResolvePartitionNodes(core::Partition& part, const PendingPartition& pending) {
  if (!pending.nodes) return Status::Ok();
  Result<std::vector<size_t>> idx = NodeIndices(*pending.nodes, "PartitionName " + part.name, true);
  if (!idx.ok()) return idx.status();
  for (size_t i : *idx) part.nodes.push_back(cfg_.nodes[i].name);
  return Status::Ok();
}

Status Parser::ApplyDownNodes() {
  for (const std::vector<Pair>& pairs : down_nodes_) {
    const Pair& head = pairs.front();
    core::NodeInitialState state = core::NodeInitialState::kDown;
    for (size_t i = 1; i < pairs.size(); ++i) {
      if (pairs[i].lower() != "state") continue;
      std::optional<core::NodeInitialState> named = core::ParseNodeInitialState(pairs[i].value);
      if (!named || std::find(std::begin(kDownNodeStates), std::end(kDownNodeStates), *named) ==
                        std::end(kDownNodeStates)) {
        return BadValue(pairs[i], "DownNodes", "expected DOWN, DRAIN, FAIL, FAILING or FUTURE");
      }
      state = *named;
    }
    if (head.value.empty()) return BadValue(head, "");
    Result<std::vector<size_t>> idx = NodeIndices(head, "", false);
    if (!idx.ok()) return idx.status();
    for (size_t i : *idx) cfg_.nodes[i].initial_state = state;
  }
  return Status::Ok();
}

// Slurm refuses a node Gres= whose name is not in GresTypes.
Status Parser::CheckGresTypes() const {
  for (size_t i = 0; i < cfg_.nodes.size(); ++i) {
    for (const core::GresSpec& g : cfg_.nodes[i].gres) {
      if (!ContainsIgnoreCase(cfg_.gres_types, g.name)) {
        return InvalidArgument(node_locs_[i].Str() + ": NodeName " + cfg_.nodes[i].name +
                               ": Gres '" + g.name + "' is not listed in GresTypes");
      }
    }
  }
  return Status::Ok();
}

Status Parser::Finish() {
  if (slurmctld_host_ && control_machine_) {
    return InvalidArgument(control_machine_->loc.Str() + ": " + control_machine_->key +
                           " conflicts with " + slurmctld_host_->key + " at " +
                           slurmctld_host_->loc.Str() + " (use only SlurmctldHost)");
  }
  if (control_machine_) {
    cfg_.control_host = control_machine_->value;
    if (control_addr_) cfg_.control_addr = control_addr_->value;
  } else if (control_addr_) {
    RecordIgnored(*control_addr_);
  }
  MUSTER_RETURN_IF_ERROR(ResolveNodeSets());
  for (size_t i = 0; i < cfg_.partitions.size(); ++i) {
    MUSTER_RETURN_IF_ERROR(ResolvePartitionNodes(cfg_.partitions[i], pending_partitions_[i]));
  }
  // Several Default=YES: the last one wins, as in Slurm.
  bool seen_default = false;
  for (auto it = cfg_.partitions.rbegin(); it != cfg_.partitions.rend(); ++it) {
    if (it->is_default && seen_default) it->is_default = false;
    seen_default = seen_default || it->is_default;
  }
  MUSTER_RETURN_IF_ERROR(ApplyDownNodes());
  if (!api_body_size_) cfg_.api.max_body_size = 2 * cfg_.max_script_size + (8 << 20);
  MUSTER_RETURN_IF_ERROR(CheckApiLimits());
  return CheckGresTypes();
}

// ---------------------------------------------------------------------------
// gres.conf.

// The node's GresSpec that a gres.conf (Name, Type) record describes: the
// same name and type; without Type, the untyped entry or the only entry of
// that name. -1 when none.
int FindGres(const core::NodeConfig& node, const std::string& name, const std::string& type) {
  int only = -1;
  int count = 0;
  for (size_t i = 0; i < node.gres.size(); ++i) {
    const core::GresSpec& g = node.gres[i];
    if (!util::EqualsIgnoreCase(g.name, name)) continue;
    if (util::EqualsIgnoreCase(g.type, type)) return static_cast<int>(i);
    only = static_cast<int>(i);
    ++count;
  }
  return type.empty() && count == 1 ? only : -1;
}

std::string GresLabel(const std::string& name, const std::string& type) {
  return type.empty() ? name : name + ":" + type;
}

// One gres.conf line that describes devices.
struct GresLine {
  Loc loc;
  std::string name;
  std::string type;
  std::vector<std::string> files;
  bool multiple_files = false;  // MultipleFiles=: the files are one device's
  int64_t count = 1;
  std::optional<Pair> cores;  // Cores=, read per node (its core count)
  std::optional<std::vector<std::string>> nodes;  // NodeName=, expanded
};

// gres.conf Cores= for `node`: core ids ("0-15,32-47"), each below the
// node's Sockets x CoresPerSocket; an error naming the line otherwise.
Result<std::vector<int>> GresCores(const Pair& p, const core::NodeConfig& node) {
  Result<std::vector<int>> cores = util::ParseIndexRanges(p.value);
  if (!cores.ok()) return BadValue(p, "", cores.status().message());
  if (cores->empty()) return BadValue(p, "", "no cores");
  const int count = node.sockets * node.cores_per_socket;
  std::sort(cores->begin(), cores->end());
  if (cores->back() >= count) {
    return BadValue(p, "", "core " + std::to_string(cores->back()) + " is beyond node " + node.name +
                               ", which has " + std::to_string(count) + " cores (0-" +
                               std::to_string(count - 1) + ")");
  }
  return cores;
}

// Parses a gres.conf line; nullopt for a line without Name= (a global
// AutoDetect=off, say).
Result<std::optional<GresLine>> ParseGresLine(const std::vector<Pair>& pairs, const Loc& loc) {
  static constexpr std::string_view kKeys[] = {"name",          "type",       "file",    "count",
                                               "cores",         "corecnt",    "links",   "flags",
                                               "multiplefiles", "autodetect", "nodename"};
  Attrs attrs;
  for (const Pair& p : pairs) {
    std::string k = p.lower();
    if (!In(kKeys, k)) return InvalidArgument(loc.Str() + ": unknown key '" + p.key + "'");
    if (k == "autodetect" && !In(kGresAutoDetect, util::ToLower(p.value))) {
      return BadValue(p, "", "expected off, nvml, rsmi, oneapi or nrt");
    }
    attrs[k] = p;
  }
  const Pair* name = Find(attrs, "name");
  if (name == nullptr) {
    for (const char* k : {"type", "file", "count", "cores", "multiplefiles"}) {
      if (const Pair* p = Find(attrs, k)) {
        return InvalidArgument(loc.Str() + ": " + p->key + " without Name");
      }
    }
    return std::optional<GresLine>();
  }
  GresLine line{loc, name->value, "", {}, false, 1, std::nullopt, std::nullopt};
  if (const Pair* p = Find(attrs, "cores")) line.cores = *p;
  if (const Pair* p = Find(attrs, "type")) line.type = p->value;
  if (const Pair* p = Find(attrs, "nodename")) {
    Result<std::vector<std::string>> hosts = util::ExpandHostlist(p->value);
    if (!hosts.ok()) return BadValue(*p, "", hosts.status().message());
    line.nodes = std::move(*hosts);
  }
  // MultipleFiles= lists the several files of one device.
  const Pair* multi = Find(attrs, "multiplefiles");
  const Pair* file = Find(attrs, "file");
  if (const Pair* f = file != nullptr ? file : multi) {
    Result<std::vector<std::string>> files = util::ExpandHostlist(f->value);
    if (!files.ok() || files->empty()) {
      return BadValue(*f, "", files.ok() ? "no files" : files.status().message());
    }
    line.files = std::move(*files);
    line.multiple_files = f == multi;
    if (f == file) line.count = static_cast<int64_t>(line.files.size());
  }
  if (const Pair* c = Find(attrs, "count")) {
    Result<int64_t> n = GresCount(*c);
    if (!n.ok()) return n.status();
    if (file != nullptr && *n != line.count) {
      return InvalidArgument(loc.Str() + ": Count=" + c->value + " does not match the " +
                             std::to_string(line.count) + " devices of File=" + file->value);
    }
    line.count = *n;
  }
  return std::optional<GresLine>(std::move(line));
}

Status Parser::ApplyGresConf(std::string_view text, const std::string& abs_path) {
  // What gres.conf says about one GresSpec of one node, summed over lines
  // (a GPU node often has one line per socket with its own Cores=).
  struct Seen {
    int64_t count = 0;
    std::vector<std::string> files;
    std::vector<std::vector<std::string>> device_files;
    std::vector<std::pair<int64_t, std::vector<int>>> cores;  // (devices, Cores=) per line
    Loc first;
  };
  std::map<std::pair<size_t, int>, Seen> seen;
  auto apply = [&](const std::vector<Pair>& pairs, const Loc& loc) -> Status {
    Result<std::optional<GresLine>> parsed = ParseGresLine(pairs, loc);
    if (!parsed.ok()) return parsed.status();
    if (!parsed->has_value()) return Status::Ok();
    const GresLine& line = **parsed;
    for (size_t idx : GresTargets(line.nodes)) {
      const core::NodeConfig& node = cfg_.nodes[idx];
      int g = FindGres(node, line.name, line.type);
      if (g < 0) {
        // Lines without NodeName= describe only the nodes that have the GRES.
        if (!line.nodes) continue;
        return InvalidArgument(loc.Str() + ": " + GresLabel(line.name, line.type) + " for node " +
                               node.name + ", which has no such Gres (" + node_locs_[idx].Str() +
                               ": Gres=" + core::FormatGres(node.gres) + ")");
      }
      Seen& s = seen[{idx, g}];
      if (s.first.line == 0) s.first = loc;
      s.count += line.count;
      s.files.insert(s.files.end(), line.files.begin(), line.files.end());
      if (line.multiple_files) {
        s.device_files.push_back(line.files);
      } else {
        for (const std::string& f : line.files) s.device_files.push_back({f});
      }
      std::vector<int> cores;
      if (line.cores) {
        Result<std::vector<int>> read = GresCores(*line.cores, node);
        if (!read.ok()) return read.status();
        cores = std::move(*read);
      }
      s.cores.emplace_back(line.count, std::move(cores));
    }
    return Status::Ok();
  };
  MUSTER_RETURN_IF_ERROR(ForEachLine(text, SideFile(abs_path), apply));
  for (auto& [key, s] : seen) {
    core::NodeConfig& node = cfg_.nodes[key.first];
    core::GresSpec& spec = node.gres[key.second];
    if (s.count != spec.count) {
      return InvalidArgument(s.first.Str() + ": node " + node.name + ": gres.conf gives " +
                             std::to_string(s.count) + " " + GresLabel(spec.name, spec.type) +
                             " but Gres= says " + std::to_string(spec.count) + " (" +
                             node_locs_[key.first].Str() + ")");
    }
    spec.files = std::move(s.files);
    spec.device_files = std::move(s.device_files);
    // Per device, for GPUs (the only GRES placed by their cores).
    const bool any_cores = std::any_of(s.cores.begin(), s.cores.end(),
                                       [](const auto& line) { return !line.second.empty(); });
    if (any_cores && spec.name == "gpu") {
      for (const auto& [devices, cores] : s.cores) {
        spec.device_cores.insert(spec.device_cores.end(), static_cast<size_t>(devices), cores);
      }
    }
  }
  return Status::Ok();
}

// topology.conf: SwitchName= with Nodes= (a leaf) or Switches= (children),
// and LinkSpeed=. Every switch named once, every child switch defined, no
// node under two leaves, no switch its own ancestor.
namespace {

// cgroup.conf's keys (cgroup.conf(5) of Slurm 22.05): how each value is
// checked, and the field of the one Muster acts on. The others are taken
// and listed in ignored_keys: Muster always confines a job's memory (its
// --mem) and, on a node that is the machine itself, its CPUs.
enum class CgroupValue { kYesNo, kNumber, kPercent, kPath, kPlugin };
struct CgroupKey {
  std::string_view name;  // lower case
  CgroupValue value;
  bool CgroupConfig::*field;  // null: accepted without effect
};
constexpr std::string_view kCgroupPlugins[] = {"autodetect", "cgroup/v1", "cgroup/v2"};
constexpr CgroupKey kCgroupKeys[] = {
    {"constraindevices", CgroupValue::kYesNo, &CgroupConfig::constrain_devices},
    {"cgroupautomount", CgroupValue::kYesNo, nullptr},
    {"cgroupmountpoint", CgroupValue::kPath, nullptr},
    {"cgroupplugin", CgroupValue::kPlugin, nullptr},
    {"ignoresystemd", CgroupValue::kYesNo, nullptr},
    {"ignoresystemdonfailure", CgroupValue::kYesNo, nullptr},
    {"allowedkmemspace", CgroupValue::kNumber, nullptr},
    {"allowedramspace", CgroupValue::kPercent, nullptr},
    {"allowedswapspace", CgroupValue::kPercent, nullptr},
    {"constraincores", CgroupValue::kYesNo, nullptr},
    {"constrainkmemspace", CgroupValue::kYesNo, nullptr},
    {"constrainramspace", CgroupValue::kYesNo, nullptr},
    {"constrainswapspace", CgroupValue::kYesNo, nullptr},
    {"maxrampercent", CgroupValue::kPercent, nullptr},
    {"maxswappercent", CgroupValue::kPercent, nullptr},
    {"maxkmempercent", CgroupValue::kPercent, nullptr},
    {"memoryswappiness", CgroupValue::kPercent, nullptr},
    {"minkmemspace", CgroupValue::kNumber, nullptr},
    {"minramspace", CgroupValue::kNumber, nullptr},
    {"taskaffinity", CgroupValue::kYesNo, nullptr},
};

}  // namespace

Status Parser::ApplyCgroupConf(std::string_view text, const std::string& abs_path) {
  auto apply = [&](const std::vector<Pair>& pairs, const Loc&) -> Status {
    for (const Pair& p : pairs) {
      const std::string k = p.lower();
      const CgroupKey* key = nullptr;
      for (const CgroupKey& c : kCgroupKeys) {
        if (c.name == k) key = &c;
      }
      if (key == nullptr) return InvalidArgument(p.loc.Str() + ": unknown key '" + p.key + "'");
      switch (key->value) {
        case CgroupValue::kYesNo: {
          Result<bool> b = BoolValue(p, "");
          if (!b.ok()) return b.status();
          if (key->field != nullptr) cfg_.cgroup.*(key->field) = *b;
          break;
        }
        case CgroupValue::kNumber:
          // A size in MB, with Slurm's optional unit suffix.
          if (!util::ParseMemoryMb(p.value).ok()) return BadValue(p, "", "expected a size in megabytes");
          break;
        case CgroupValue::kPercent: {
          // Slurm takes fractions here ("AllowedRAMSpace=99.5").
          char* end = nullptr;
          const double v = std::strtod(p.value.c_str(), &end);
          if (p.value.empty() || *end != '\0' || v < 0) return BadValue(p, "", "expected a percentage");
          break;
        }
        case CgroupValue::kPath:
          if (p.value.empty() || p.value[0] != '/') return BadValue(p, "", "expected an absolute path");
          break;
        case CgroupValue::kPlugin:
          if (!In(kCgroupPlugins, util::ToLower(p.value))) {
            return BadValue(p, "", "expected autodetect, cgroup/v1 or cgroup/v2");
          }
          break;
      }
      if (key->field == nullptr) RecordIgnored(p);
    }
    return Status::Ok();
  };
  return ForEachLine(text, SideFile(abs_path), apply);
}

Status Parser::ApplyTopologyConf(std::string_view text, const std::string& abs_path) {
  std::vector<Switch>& switches = cfg_.switches;
  switches.clear();
  cfg_.leaf_of_node.clear();
  std::vector<std::pair<Loc, std::vector<std::string>>> children;  // by switch, as written
  std::map<std::string, int> by_name;
  auto add = [&](const std::vector<Pair>& pairs, const Loc& loc) -> Status {
    if (pairs.empty()) return Status::Ok();
    Switch sw;
    std::vector<std::string> kids;
    bool named = false;
    for (const Pair& pair : pairs) {
      const std::string key = util::ToLower(pair.key);
      if (key == "switchname") {
        if (pair.value.empty()) return BadValue(pair, "", "a switch needs a name");
        sw.name = pair.value;
        named = true;
      } else if (key == "nodes" || key == "switches") {
        auto names = util::ExpandHostlist(pair.value);
        if (!names.ok() || names->empty()) {
          return BadValue(pair, "", names.ok() ? "empty list" : names.status().message());
        }
        (key == "nodes" ? sw.nodes : kids) = std::move(names).value();
      } else if (key == "linkspeed") {
        sw.link_speed = pair.value;
      } else {
        return InvalidArgument(pair.loc.Str() + ": unknown key '" + pair.key +
                               "' (expected SwitchName, Switches, Nodes or LinkSpeed)");
      }
    }
    if (!named) return InvalidArgument(loc.Str() + ": a line without SwitchName=");
    if (sw.nodes.empty() == kids.empty()) {
      return InvalidArgument(loc.Str() + ": switch " + sw.name +
                             " needs either Nodes= (a leaf) or Switches=, not " +
                             (kids.empty() ? "neither" : "both"));
    }
    if (!by_name.emplace(sw.name, static_cast<int>(switches.size())).second) {
      return InvalidArgument(loc.Str() + ": switch " + sw.name + " is defined twice");
    }
    for (const std::string& node : sw.nodes) {
      if (node_index_.count(node) == 0) {
        return InvalidArgument(loc.Str() + ": switch " + sw.name + ": unknown node '" + node +
                               "'");
      }
      if (!cfg_.leaf_of_node.emplace(node, static_cast<int>(switches.size())).second) {
        return InvalidArgument(loc.Str() + ": node " + node + " is under two leaf switches (" +
                               switches[cfg_.leaf_of_node[node]].name + " and " + sw.name + ")");
      }
    }
    switches.push_back(std::move(sw));
    children.emplace_back(loc, std::move(kids));
    return Status::Ok();
  };
  MUSTER_RETURN_IF_ERROR(ForEachLine(text, SideFile(abs_path), add));
  for (size_t i = 0; i < switches.size(); ++i) {
    for (const std::string& kid : children[i].second) {
      auto it = by_name.find(kid);
      if (it == by_name.end()) {
        return InvalidArgument(children[i].first.Str() + ": switch " + switches[i].name +
                               ": unknown switch '" + kid + "'");
      }
      if (switches[it->second].parent >= 0) {
        return InvalidArgument(children[i].first.Str() + ": switch " + kid +
                               " has two parents (" + switches[switches[it->second].parent].name +
                               " and " + switches[i].name + ")");
      }
      switches[it->second].parent = static_cast<int>(i);
      switches[i].children.push_back(it->second);
    }
  }
  // Levels from the leaves up; a cycle never reaches a top switch.
  for (size_t i = 0; i < switches.size(); ++i) {
    int level = 0, at = static_cast<int>(i);
    for (size_t steps = 0; switches[at].parent >= 0; ++steps) {
      if (steps > switches.size()) {
        return InvalidArgument(children[i].first.Str() + ": switch " + switches[i].name +
                               " is its own ancestor");
      }
      at = switches[at].parent;
      switches[at].level = std::max(switches[at].level, ++level);
    }
  }
  return Status::Ok();
}

// The nodes a gres.conf line is about: those NodeName= names (nodes not in
// this configuration skipped, as one gres.conf may serve several clusters),
// else every node.
std::vector<size_t> Parser::GresTargets(
    const std::optional<std::vector<std::string>>& nodes) const {
  std::vector<size_t> out;
  if (!nodes) {
    for (size_t i = 0; i < cfg_.nodes.size(); ++i) out.push_back(i);
    return out;
  }
  for (const std::string& h : *nodes) {
    if (auto it = node_index_.find(h); it != node_index_.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API.

const core::Partition* Config::DefaultPartition() const {
  const core::Partition* found = nullptr;
  for (const core::Partition& p : partitions) {
    if (p.is_default) found = &p;
  }
  return found;
}

const core::Partition* Config::PartitionOf(const core::Job& job) const {
  if (!job.partition.empty()) return FindPartition(job.partition);
  if (!job.req.partition.empty()) return FindPartition(job.req.partition);
  return DefaultPartition();
}

core::MemoryDefaults Config::MemoryDefaultsFor(const core::Job& job) const {
  core::MemoryDefaults d;
  d.def_mem_per_cpu_mb = def_mem_per_cpu_mb;
  if (const core::Partition* part = PartitionOf(job); part != nullptr && !part->nodes.empty()) {
    if (const core::NodeConfig* node = FindNode(part->nodes.front())) {
      d.node_memory_mb = node->real_memory_mb;
    }
  }
  return d;
}

const core::Partition* Config::FindPartition(const std::string& name) const {
  for (const core::Partition& p : partitions) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool Config::HasGres(const std::string& name) const {
  if (std::find(gres_types.begin(), gres_types.end(), name) != gres_types.end()) return true;
  return std::any_of(nodes.begin(), nodes.end(), [&](const core::NodeConfig& n) {
    return std::any_of(n.gres.begin(), n.gres.end(),
                       [&](const core::GresSpec& g) { return g.name == name; });
  });
}

const core::NodeConfig* Config::FindNode(const std::string& name) const {
  for (const core::NodeConfig& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

util::Result<Config> ParseConfig(const std::string& text, const std::string& path,
                                 const std::string& gres_text, bool read_gres_file) {
  std::error_code ec;
  std::string abs = AbsolutePath(path, fs::current_path(ec).string());
  Parser parser(abs);
  MUSTER_RETURN_IF_ERROR(parser.ParseText(text, abs));
  MUSTER_RETURN_IF_ERROR(parser.Finish());
  std::string gres_path = (fs::path(abs).parent_path() / "gres.conf").string();
  if (!gres_text.empty()) {
    MUSTER_RETURN_IF_ERROR(parser.ApplyGresConf(gres_text, gres_path));
  } else if (read_gres_file && fs::exists(gres_path, ec)) {
    Result<std::string> g = ReadFile(gres_path);
    if (!g.ok()) return InvalidArgument("cannot read " + g.status().message());
    MUSTER_RETURN_IF_ERROR(parser.ApplyGresConf(*g, gres_path));
  }
  const std::string cgroup_path = (fs::path(abs).parent_path() / "cgroup.conf").string();
  if (read_gres_file && fs::exists(cgroup_path, ec)) {
    Result<std::string> c = ReadFile(cgroup_path);
    if (!c.ok()) return InvalidArgument("cannot read " + c.status().message());
    MUSTER_RETURN_IF_ERROR(parser.ApplyCgroupConf(*c, cgroup_path));
  }
  if (parser.TopologyTree()) {
    // As slurmctld, the tree needs topology.conf beside the main file.
    std::string topo_path = (fs::path(abs).parent_path() / "topology.conf").string();
    Result<std::string> t = ReadFile(topo_path);
    if (!t.ok()) {
      return InvalidArgument("TopologyPlugin=topology/tree needs " + t.status().message());
    }
    MUSTER_RETURN_IF_ERROR(parser.ApplyTopologyConf(*t, topo_path));
  }
  return parser.Take();
}

util::Result<Config> LoadConfig(const std::string& path) {
  std::error_code ec;
  std::string abs = AbsolutePath(path, fs::current_path(ec).string());
  Result<std::string> text = ReadFile(abs);
  if (!text.ok()) return InvalidArgument("cannot read " + text.status().message());
  return ParseConfig(*text, abs);
}

std::string DefaultConfigPath() {
  for (const char* var : {"MUSTER_CONF", "SLURM_CONF"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return v;
  }
  // A configless host has no /etc/muster: its agent keeps what musterd
  // served in the runtime cache.
  if (::access(kEtcConfigPath, F_OK) != 0 && ::access(kConfiglessCachePath, F_OK) == 0) {
    return kConfiglessCachePath;
  }
  return kEtcConfigPath;
}

std::string ControllerSocketPath(const Config& cfg) {
  return (fs::path(cfg.state_save_location) / "musterd.sock").string();
}

std::string AgentSpoolDir(const Config& cfg, const std::string& host) {
  std::string spool = cfg.slurmd_spool_dir;
  auto pos = spool.find("%n");
  if (pos != std::string::npos) spool.replace(pos, 2, host);
  return spool + "/" + host;
}

std::string KioskSocketPath(const Config& cfg, const std::string& host) {
  return AgentSpoolDir(cfg, host) + "/auth.sock";
}

std::string AuthKeyPath(const Config& cfg) {
  return std::filesystem::path(cfg.path).parent_path().append("slurm.key").string();
}

std::string ControllerAddress(const Config& cfg) {
  return cfg.control_addr.empty() ? cfg.control_host : cfg.control_addr;
}

std::string AgentSocketPath(const Config& cfg) {
  return (fs::path(cfg.state_save_location) / "agent.sock").string();
}

}  // namespace muster::config

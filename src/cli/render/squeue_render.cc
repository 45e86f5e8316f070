// squeue's request JSON and the rendering of the job table (in musterd,
// from live core::Job objects); its arguments are src/cli/squeue_args.cc. Formats, widths,
// sort order and messages follow Slurm 22.05 as observed; the oracle
// commands are named in squeue_render_test.cc.
#include "cli/render/render.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cli/render/format_util.h"
#include "core/array.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::render {
namespace {

using core::Job;
using core::JobState;

constexpr std::string_view kDefaultSort = "P,t,-p";

// ---------------------------------------------------------------------------
// Job states as squeue's -t accepts them. Slurm knows more states than
// Muster has; they are valid filters that match nothing. The order is that
// of squeue's "Valid job states include:" message.
struct SlurmState {
  std::string_view name;
  std::string_view short_name;
  std::optional<JobState> state;
};
constexpr SlurmState kSlurmStates[] = {
    {"PENDING", "PD", JobState::kPending},
    {"RUNNING", "R", JobState::kRunning},
    {"SUSPENDED", "S", JobState::kSuspended},
    {"COMPLETED", "CD", JobState::kCompleted},
    {"CANCELLED", "CA", JobState::kCancelled},
    {"FAILED", "F", JobState::kFailed},
    {"TIMEOUT", "TO", JobState::kTimeout},
    {"NODE_FAIL", "NF", JobState::kNodeFail},
    {"PREEMPTED", "PR", JobState::kPreempted},
    {"BOOT_FAIL", "BF", JobState::kBootFail},
    {"DEADLINE", "DL", JobState::kDeadline},
    {"OUT_OF_MEMORY", "OOM", JobState::kOutOfMemory},
    {"COMPLETING", "CG", JobState::kCompleting},
    {"CONFIGURING", "CF", std::nullopt},
    {"RESIZING", "RS", std::nullopt},
    {"RESV_DEL_HOLD", "RD", std::nullopt},
    {"REQUEUED", "RQ", std::nullopt},
    {"REQUEUE_FED", "RF", std::nullopt},
    {"REQUEUE_HOLD", "RH", std::nullopt},
    {"REVOKED", "RV", std::nullopt},
    {"SIGNALING", "SI", std::nullopt},
    {"SPECIAL_EXIT", "SE", std::nullopt},
    {"STAGE_OUT", "SO", std::nullopt},
    {"STOPPED", "ST", std::nullopt},
};

const SlurmState* FindSlurmState(std::string_view s) {
  for (const SlurmState& st : kSlurmStates) {
    if (util::EqualsIgnoreCase(s, st.name) || util::EqualsIgnoreCase(s, st.short_name)) return &st;
  }
  return nullptr;
}

util::Status InvalidStateError(const std::string& s) {
  std::vector<std::string> names;
  for (const SlurmState& st : kSlurmStates) names.emplace_back(st.name);
  return util::InvalidArgument(
      "squeue: error: Invalid job state specified: " + s +
      "\nsqueue: error: Valid job states include: " + util::Join(names, ",") + "\n");
}

// Bit per core::JobState.
using StateMask = uint32_t;
StateMask Bit(JobState s) { return StateMask{1} << static_cast<int>(s); }

// Without -t squeue shows the jobs that are not finished.
StateMask DefaultStateMask() {
  return Bit(JobState::kPending) | Bit(JobState::kRunning) | Bit(JobState::kSuspended) |
         Bit(JobState::kCompleting);
}

// ---------------------------------------------------------------------------
// Rendering context: the view plus per-call caches (a passwd lookup per
// job would dominate a 100,000-job listing).
class Ctx {
 public:
  explicit Ctx(const ClusterView& view) : view_(view) {}
  const ClusterView& view() const { return view_; }
  int64_t now() const { return view_.now; }
  std::string Cluster() const {
    return view_.config != nullptr ? view_.config->cluster_name : "cluster";
  }
  const std::string& User(const Job& job) const {
    // Neighbouring rows mostly belong to the same user.
    if (last_user_ != nullptr && last_uid_ == job.req.uid) return *last_user_;
    auto it = users_.find(job.req.uid);
    if (it == users_.end()) it = users_.emplace(job.req.uid, JobUserName(job, *view_.users)).first;
    last_uid_ = job.req.uid;
    last_user_ = &it->second;
    return it->second;
  }
  const std::string& Group(uint32_t gid) const {
    auto it = groups_.find(gid);
    if (it != groups_.end()) return it->second;
    return groups_.emplace(gid, view_.users->GroupName(gid)).first->second;
  }
  // squeue's timestamps ("N/A" for none). Jobs submitted or started
  // together share their times, so a small direct-mapped cache saves most
  // localtime(3) calls.
  const std::string& Timestamp(int64_t t) const {
    if (t <= 0) return kNa;
    TimeSlot& slot = times_[static_cast<uint64_t>(t) % times_.size()];
    if (slot.t != t) {
      slot.t = t;
      slot.text = formatter_.Format(t);
    }
    return slot.text;
  }
  const std::string& Partition(const Job& job) const {
    if (!job.partition.empty()) return job.partition;
    if (!job.req.partition.empty()) return job.req.partition;
    if (!default_partition_) default_partition_ = JobPartition(job, view_);
    return *default_partition_;
  }

 private:
  const ClusterView& view_;
  mutable std::unordered_map<uint32_t, std::string> users_;
  mutable uint32_t last_uid_ = 0;
  mutable const std::string* last_user_ = nullptr;
  mutable TimestampFormatter formatter_;
  mutable std::unordered_map<uint32_t, std::string> groups_;
  mutable std::optional<std::string> default_partition_;
  struct TimeSlot {
    int64_t t = 0;
    std::string text;
  };
  mutable std::array<TimeSlot, 512> times_;
  inline static const std::string kNa = "N/A";
};

std::string StateShort(const Job& j) { return std::string(core::ShownStateShort(j)); }
std::string StateLong(const Job& j) { return std::string(core::ShownStateName(j)); }

std::string TimeLimitText(const Job& j) {
  if (j.time_limit_s < -1) return "NOT_SET";
  return util::FormatDuration(j.time_limit_s);
}

int64_t TimeLeftSeconds(const Job& j, int64_t now) {
  if (j.time_limit_s < 0) return util::kUnlimited;
  int64_t left = j.time_limit_s - JobElapsed(j, now);
  return left < 0 ? -2 : left;  // FormatDuration prints INVALID for negatives
}

std::string ReasonList(const Job& j) {
  if (ReasonInNodelistColumn(j)) return "(" + JobReasonText(j) + ")";
  return j.nodelist;
}

std::string PriorityFloat(const Job& j) {
  return fmt::format("{:.14f}", static_cast<double>(j.priority) / 4294967295.0);
}

int64_t PendingSeconds(const Job& j, int64_t now) {
  int64_t start = j.start_time > 0 ? j.start_time : (j.state == JobState::kPending ? now : 0);
  if (start <= 0 && core::IsFinished(j.state)) start = j.end_time;
  return start > j.submit_time ? start - j.submit_time : 0;
}

// ---------------------------------------------------------------------------
// The field table: one entry per -o letter and/or -O name. Headers and
// values as squeue 22.05 prints them (oracle: `squeue -o '%all'` and
// `squeue -O <name>:40` for each name).

// %i and -O JobArrayID: "123", "123_4", "123_[5-19%4]"; squeue formats it
// into a 32-byte buffer, so a long pending part is cut to 31 characters
// without its closing bracket ("14301_[1,3,5,7,9,11,13,15,17,19").
std::string SqueueJobId(const Job& j) {
  constexpr size_t kMaxJobIdText = 31;
  std::string id = core::DisplayJobId(j);
  if (id.size() > kMaxJobIdText) id.resize(kMaxJobIdText);
  return id;
}

// %K: the task id, the pending part's folded tasks, "N/A" outside arrays.
std::string ArrayTaskText(const Job& j) {
  if (j.array_job_id == 0) return "N/A";
  if (!j.IsArrayPendingPart()) return std::to_string(j.array_task_id);
  return core::FormatArrayTasks(j.array_pending, j.array_max_running);
}

using ValueFn = std::string (*)(const Ctx&, const Job&);

struct FieldDef {
  char letter;            // -o type, 0 if none
  std::string_view name;  // -O name, empty if none
  std::string_view header;
  ValueFn value;
  // The value is a NULL string in Slurm (see AppendField): for -o, for -O.
  bool null_short = false;
  bool null_long = false;
};

#define F(body)                                   \
  [](const Ctx& c, const Job& j) -> std::string { \
    (void)c;                                      \
    (void)j;                                      \
    body                                          \
  }

const FieldDef kFields[] = {
    {'a', "Account", "ACCOUNT", F(return OrNull(j.req.account);)},
    {'b', "tres-per-node", "TRES_PER_NODE",
     F(std::string s = JobTresPerNode(j); return s.empty() ? "N/A" : s;)},
    {'b', "Gres", "TRES_PER_NODE",
     F(std::string s = JobTresPerNode(j); return s.empty() ? "N/A" : s;)},
    {'c', "MinCpus", "MIN_CPUS", F(return std::to_string(JobMinCpusNode(j));)},
    {'d', "MinTmpDisk", "MIN_TMP_DISK", F(return "0";)},
    {'e', "EndTime", "END_TIME", F(return c.Timestamp(JobDisplayEnd(j, c.now()));)},
    {'f', "Feature", "FEATURES", F(return OrNull(j.req.constraint);), false, true},
    {'g', "GroupName", "GROUP", F(return c.Group(j.req.gid);)},
    {'h', "OverSubscribe", "OVER_SUBSCRIBE", F(return j.req.exclusive ? "NO" : "OK";)},
    {'i', "", "JOBID", F(return SqueueJobId(j);)},
    {'j', "Name", "NAME", F(return j.req.name;)},
    {'k', "Comment", "COMMENT", F(return OrNull(j.req.comment);), true, true},
    {'l', "TimeLimit", "TIME_LIMIT", F(return TimeLimitText(j);)},
    {'m', "MinMemory", "MIN_MEMORY", F(return JobMinMemory(j, c.view());)},
    {'n', "ReqNodes", "REQ_NODES", F(return j.req.nodelist;)},
    {'o', "Command", "COMMAND", F(return JobCommand(j);), true, true},
    {'p', "Priority", "PRIORITY", F(return PriorityFloat(j);)},
    {'q', "QOS", "QOS", F(return core::QosName(j.req);)},
    {'r', "Reason", "REASON", F(return JobReasonText(j);)},
    {'s', "SelectJobInfo", "", F(return "";)},
    {'t', "StateCompact", "ST", F(return StateShort(j);)},
    {'u', "UserName", "USER", F(return c.User(j);)},
    {'v', "Reservation", "RESERVATION", F(return OrNull(j.req.reservation);), true, true},
    {'w', "WCKey", "WCKEY", F(return OrNull(j.req.wckey);), true, true},
    {'x', "", "EXC_NODES", F(return j.req.exclude;)},
    {'y', "Nice", "NICE", F(return std::to_string(j.req.nice);)},
    {'z', "SCT", "S:C:T", F(return "*:*:*";)},
    {'A', "", "JOBID", F(return std::to_string(j.id);)},
    {'B', "BatchHost", "EXEC_HOST", F(return j.batch_host.empty() ? "n/a" : j.batch_host;)},
    {'C', "NumCPUs", "CPUS", F(return std::to_string(j.NumCpus());)},
    {'D', "NumNodes", "NODES", F(return std::to_string(j.NumNodes());)},
    {'E', "Dependency", "DEPENDENCY", F(return OrNull(j.dependency_state);), true, true},
    {'F', "ArrayJobID", "ARRAY_JOB_ID",
     F(return std::to_string(j.array_job_id != 0 ? j.array_job_id : j.id);)},
    {'G', "GroupID", "GROUP", F(return std::to_string(j.req.gid);)},
    {'H', "Sockets", "SOCKETS_PER_NODE", F(return "*";)},
    {'I', "Cores", "CORES_PER_SOCKET", F(return "*";)},
    {'J', "Threads", "THREADS_PER_CORE", F(return "*";)},
    {'K', "ArrayTaskID", "ARRAY_TASK_ID", F(return ArrayTaskText(j);)},
    {'L', "TimeLeft", "TIME_LEFT", F(return util::FormatDuration(TimeLeftSeconds(j, c.now()));)},
    {'M', "TimeUsed", "TIME", F(return util::FormatDuration(JobElapsed(j, c.now()));)},
    {'N', "NodeList", "NODELIST", F(return j.nodelist;)},
    {'O', "Contiguous", "CONTIGUOUS", F(return "0";)},
    {'P', "Partition", "PARTITION", F(return c.Partition(j);)},
    {'Q', "PriorityLong", "PRIORITY", F(return std::to_string(j.priority);)},
    {'R', "ReasonList", "NODELIST(REASON)", F(return ReasonList(j);)},
    {'S', "StartTime", "START_TIME", F(return c.Timestamp(JobDisplayStart(j, c.now()));)},
    {'T', "State", "STATE", F(return StateLong(j);)},
    {'U', "UserID", "UID", F(return std::to_string(j.req.uid);)},
    {'V', "SubmitTime", "SUBMIT_TIME", F(return c.Timestamp(j.submit_time);)},
    {'W', "Licenses", "LICENSES", F(return "(null)";), true, true},
    {'X', "CoreSpec", "CORE_SPEC", F(return "N/A";)},
    {'Y', "SchedNodes", "SCHEDNODES",
     F(return j.state == JobState::kPending && !j.estimated_nodes.empty() ? j.estimated_nodes
                                                                          : std::string("(null)");),
     true, true},
    {'Z', "WorkDir", "WORK_DIR", F(return j.req.work_dir;)},
    // -O only.
    {0, "AccrueTime", "ACCRUE_TIME",
     F(return c.Timestamp(j.held || (j.state == JobState::kPending && j.req.begin_time > c.now())
                              ? 0
                              : j.eligible_time);)},
    {0, "admin_comment", "ADMIN_COMMENT", F(return "(null)";), false, true},
    {0, "AllocNodes", "ALLOC_NODES", F(return OrNull(j.req.submit_host);)},
    {0, "AllocSID", "ALLOC_SID", F(return "0";)},
    {0, "BatchFlag", "BATCH_FLAG", F(return "1";)},
    {0, "BurstBuffer", "BURST_BUFFER", F(return "(null)";), false, true},
    {0, "BurstBufferState", "BURST_BUFFER_STATE", F(return "(null)";), false, true},
    {0, "Cluster", "CLUSTER", F(return c.Cluster();)},
    {0, "ClusterFeature", "CLUSTER_FEATURES", F(return "(null)";), false, true},
    {0, "Container", "CONTAINER", F(return "(null)";), false, true},
    {0, "cpus-per-task", "CPUS_PER_TASK",
     F(return std::to_string(std::max(j.req.cpus_per_task, 1));)},
    {0, "cpus-per-tres", "CPUS_PER_TRES", F(return "N/A";)},
    {0, "Deadline", "DEADLINE", F(return "N/A";)},
    {0, "DelayBoot", "DELAY_BOOT", F(return "0:00";)},
    {0, "DerivedEC", "DERIVED_EC", F(return "0";)},
    {0, "EligibleTime", "ELIGIBLE_TIME", F(return c.Timestamp(j.held ? 0 : j.eligible_time);)},
    {0, "exit_code", "EXIT_CODE",
     F(return std::to_string((j.exit_code & 0xff) << 8 | (j.exit_signal & 0x7f));)},
    {0, "Explanation", "EXPLANATION", F(return JobExplanation(j);)},
    // Muster's own: the job's GPUs as the agents sample them.
    {0, "GpuUtil", "GPU_UTIL", F(return JobGpuUtilText(j);)},
    {0, "GpuIdle", "GPU_IDLE", F(return JobGpuIdleText(j, c.now());)},
    {0, "HetJobID", "HET_JOB_ID",
     F(return j.IsHetComponent() ? std::to_string(j.het_job_id) : "N/A";)},
    {0, "HetJobIDSet", "HET_JOB_ID_SET", F(return j.IsHetComponent() ? core::HetJobIdSet(j) : "N/A";)},
    {0, "HetJobOffset", "HET_JOB_OFFSET",
     F(return j.IsHetComponent() ? std::to_string(j.het_job_offset) : "N/A";)},
    {0, "JobArrayID", "JOBID", F(return SqueueJobId(j);)},
    // -O JobID is the raw id (%A), unlike %i (squeue -O JobID,JobArrayID
    // printed "14369  14369_[100-301:3]").
    {0, "JobID", "JOBID", F(return std::to_string(j.id);)},
    {0, "LastSchedEval", "LAST_SCHED_EVAL",
     F(return c.Timestamp(j.start_time > 0 ? j.start_time : j.submit_time);)},
    {0, "MaxCPUs", "MAX_CPUS", F(return std::to_string(j.NumCpus());)},
    {0, "MaxNodes", "MAX_NODES",
     F(return std::to_string(j.alloc.empty() && j.req.max_nodes > 0 ? j.req.max_nodes
                                                                    : j.NumNodes());)},
    {0, "MCSLabel", "MCSLABEL", F(return "(null)";), false, true},
    {0, "mem-per-tres", "MEM_PER_TRES", F(return "N/A";)},
    {0, "MinTime", "TIME_MIN", F(return "0:00";)},
    {0, "Network", "NETWORK", F(return "(null)";), false, true},
    {0, "NTPerNode", "NTASKS_PER_NODE", F(return std::to_string(j.req.ntasks_per_node);)},
    {0, "NumTasks", "TASKS", F(return std::to_string(j.NumTasks());)},
    {0, "Origin", "ORIGIN", F(return "NA";)},
    {0, "PendingTime", "PENDING_TIME", F(return std::to_string(PendingSeconds(j, c.now()));)},
    {0, "PreemptTime", "PREEMPT_TIME", F(return "N/A";)},
    {0, "Prefer", "PREFER", F(return "(null)";), false, true},
    {0, "Profile", "PROFILE", F(return "NotSet";)},
    {0, "Reboot", "REBOOT", F(return "0";)},
    {0, "Requeue", "REQUEUE", F(return j.req.requeue ? "1" : "0";)},
    {0, "ResizeTime", "RESIZE_TIME", F(return "N/A";)},
    {0, "RestartCnt", "RESTART_COUNT", F(return std::to_string(j.restart_count);)},
    {0, "STDERR", "STDERR", F(return JobStdErr(j);)},
    {0, "STDIN", "STDIN", F(return JobStdIn(j);)},
    {0, "STDOUT", "STDOUT", F(return JobStdOut(j);)},
    {0, "system_comment", "SYSTEM_COMMENT", F(return "(null)";), false, true},
    {0, "tres-alloc", "TRES_ALLOC", F(return JobTresString(j, c.view());)},
    {0, "tres-bind", "TRES_BIND", F(return "N/A";)},
    {0, "tres-freq", "TRES_FREQ", F(return "N/A";)},
    {0, "tres-per-job", "TRES_PER_JOB",
     F(std::string s = JobTresPerJob(j); return s.empty() ? "N/A" : s;)},
    {0, "tres-per-socket", "TRES_PER_SOCKET", F(return "N/A";)},
    {0, "tres-per-task", "TRES_PER_TASK", F(return "N/A";)},
};

#undef F

const FieldDef* FieldByLetter(char c) {
  for (const FieldDef& f : kFields) {
    if (f.letter == c) return &f;
  }
  return nullptr;
}

bool ValidLetter(char c) { return FieldByLetter(c) != nullptr; }

const FieldDef* FieldByName(std::string_view name) {
  for (const FieldDef& f : kFields) {
    if (!f.name.empty() && util::EqualsIgnoreCase(f.name, name)) return &f;
  }
  return nullptr;
}

// "%all": every letter, a-z then A-Z, separated by '|'.
std::string ExpandAll(std::string_view format) {
  if (format != "%all") return std::string(format);
  std::string out;
  for (char c = 'a'; c <= 'z'; ++c)
    out += out.empty() ? fmt::format("%{}", c) : fmt::format("|%{}", c);
  for (char c = 'A'; c <= 'Z'; ++c) out += fmt::format("|%{}", c);
  return out;
}

// A compiled output format: prefix plus columns, for -o and -O alike.
struct Column {
  const FieldDef* def = nullptr;  // null: `literal` printed as is
  std::string literal;
  int width = 0;
  bool right = false;
  bool null_ok = false;  // the def's NULL behaviour applies
  std::string suffix;
};
struct Layout {
  std::string prefix;
  std::vector<Column> columns;

  // About how many bytes a row takes: a column's width, or a guess for an
  // unbounded one. The rows' buffer is reserved from it, since growing an
  // 8 MB buffer copies it and faults its new pages in.
  size_t RowSizeGuess() const {
    constexpr size_t kUnboundedGuess = 16;
    size_t n = prefix.size() + 1;
    for (const Column& col : columns) {
      n += col.literal.size() + col.suffix.size();
      if (col.def != nullptr) n += col.width > 0 ? static_cast<size_t>(col.width) : kUnboundedGuess;
    }
    return n;
  }
};

Layout CompilePercent(std::string_view format, std::vector<std::string>* warnings) {
  PercentFormat pf = ParsePercentFormat(ExpandAll(format), &ValidLetter);
  if (warnings != nullptr) {
    for (const std::string& bad : pf.invalid) {
      warnings->push_back("squeue: error: Invalid job format specification: " + bad);
    }
  }
  Layout layout;
  layout.prefix = pf.prefix;
  for (const PercentField& f : pf.fields) {
    Column col;
    if (f.type == 0) {
      col.literal = f.literal;
    } else {
      col.def = FieldByLetter(f.type);
      col.width = f.width;
      col.right = f.right;
      col.null_ok = col.def->null_short;
      col.suffix = f.suffix;
    }
    layout.columns.push_back(std::move(col));
  }
  return layout;
}

Layout CompileLong(std::string_view format, std::vector<std::string>* warnings) {
  Layout layout;
  for (const LongField& f : ParseLongFormat(format)) {
    const FieldDef* def = FieldByName(f.name);
    if (def == nullptr) {
      if (warnings != nullptr) {
        warnings->push_back("squeue: error: Invalid job format specification: " + f.name);
      }
      continue;
    }
    Column col;
    col.def = def;
    col.width = f.width;
    col.right = f.right;
    col.null_ok = def->null_long;
    col.suffix = f.suffix;
    layout.columns.push_back(std::move(col));
  }
  return layout;
}

void AppendHeader(const Layout& layout, std::string* out) {
  out->append(layout.prefix);
  for (const Column& col : layout.columns) {
    if (col.def == nullptr) {
      out->append(col.literal);
      continue;
    }
    AppendField(out, col.def->header, col.width, col.right);
    out->append(col.suffix);
  }
  out->push_back('\n');
}

void AppendRow(const Layout& layout, const Ctx& ctx, const Job& job, std::string* out) {
  out->append(layout.prefix);
  for (const Column& col : layout.columns) {
    if (col.def == nullptr) {
      out->append(col.literal);
      continue;
    }
    std::string value = col.def->value(ctx, job);
    AppendField(out, value, col.width, col.right, col.null_ok && value == "(null)");
    out->append(col.suffix);
  }
  out->push_back('\n');
}

// ---------------------------------------------------------------------------
// Sorting (-S). squeue accepts only some letters as sort keys; 'b' is
// accepted with a warning and ignored; others are errors.
constexpr std::string_view kSortLetters = "cdefghijlmnptuvzBCDGHIJLMNOPQSTUV";

struct SortKey {
  char letter;
  bool descending;
};

util::Result<std::vector<SortKey>> ParseSort(std::string_view spec,
                                             std::vector<std::string>* warnings) {
  std::vector<SortKey> keys;
  bool descending = false;
  for (char c : spec) {
    if (c == '+') {
      descending = false;
    } else if (c == '-') {
      descending = true;
    } else if (c == ',') {
      descending = false;
    } else if (c == 'b') {
      if (warnings != nullptr) warnings->push_back("squeue: Invalid sort specification: b");
      descending = false;
    } else if (kSortLetters.find(c) != std::string_view::npos) {
      keys.push_back({c, descending});
      descending = false;
    } else {
      return util::InvalidArgument("squeue: error: Invalid sort specification: " +
                                   std::string(1, c));
    }
  }
  return keys;
}

// Sort values. Numeric keys compare as numbers; string keys compare as
// strings (byte order) and are turned into ranks before sorting, so the sort
// itself only compares integers.
bool IsStringKey(char c) {
  return std::string_view("fghjnuvzBHIJNP").find(c) != std::string_view::npos;
}

constexpr int64_t kLast = std::numeric_limits<int64_t>::max();

// squeue orders states by name (CA < CD < F < PD < R, the short and the long
// names agree on Muster's states): the rank of each state's name.
int64_t StateNameRank(JobState s, bool long_name) {
  static const auto ranks = [] {
    constexpr int kCount = static_cast<int>(JobState::kOutOfMemory) + 1;
    std::array<std::array<int64_t, kCount>, 2> out{};
    for (int form = 0; form < 2; ++form) {
      auto name = [&](int i) {
        JobState st = static_cast<JobState>(i);
        return form == 1 ? core::JobStateName(st) : core::JobStateShort(st);
      };
      for (int i = 0; i < kCount; ++i) {
        int64_t rank = 0;
        for (int k = 0; k < kCount; ++k) rank += name(k) < name(i) ? 1 : 0;
        out[form][i] = rank;
      }
    }
    return out;
  }();
  return ranks[long_name ? 1 : 0][static_cast<int>(s)];
}

int64_t SortNumber(char key, const Ctx& ctx, const Job& j) {
  int64_t now = ctx.now();
  switch (key) {
    case 'c': return JobMinCpusNode(j);
    case 'e': return JobDisplayEnd(j, now);
    case 'i': return j.id;
    case 'l': return j.time_limit_s < 0 ? kLast : j.time_limit_s;
    case 'm': return j.req.mem_per_cpu_mb > 0 ? j.req.mem_per_cpu_mb : j.req.mem_per_node_mb;
    case 'p':
    case 'Q': return j.priority;
    case 'C': return j.NumCpus();
    case 'D': return j.NumNodes();
    case 'G': return j.req.gid;
    case 'L': {
      int64_t left = TimeLeftSeconds(j, now);
      return left == util::kUnlimited ? kLast : left;
    }
    case 'M': return JobElapsed(j, now);
    case 'S': {
      // Jobs without a known start sort after those with one.
      int64_t s = JobDisplayStart(j, now);
      return s > 0 ? s : kLast;
    }
    case 'U': return j.req.uid;
    case 'V': return j.submit_time;
    case 't': return StateNameRank(j.state, false);
    case 'T': return StateNameRank(j.state, true);
    default: return 0;  // d, O: constant in Muster
  }
}

// The views point into the job, the context's caches or static storage.
std::string_view SortString(char key, const Ctx& ctx, const Job& j) {
  switch (key) {
    case 'f': return j.req.constraint;
    case 'g': return ctx.Group(j.req.gid);
    case 'h': return j.req.exclusive ? "NO" : "OK";
    case 'j': return j.req.name;
    case 'n': return j.req.nodelist;
    case 'u': return ctx.User(j);
    case 'v': return j.req.reservation;
    case 'B': return j.batch_host;
    case 'N': return j.nodelist;
    case 'P': return ctx.Partition(j);
    default: return "*";  // z, H, I, J
  }
}

bool SameString(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Numbers strings by first appearance (equal strings, equal ids) and then
// gives each id its rank among the distinct strings in byte order. Sort keys
// such as partitions and users take few distinct values: a short linear
// table beats hashing them, and the last value is checked first.
class StringRanker {
 public:
  uint32_t Add(std::string_view v) {
    if (!distinct_.empty() && SameString(v, distinct_[last_id_])) return last_id_;
    uint32_t id = UINT32_MAX;
    if (distinct_.size() <= kLinear) {
      for (size_t d = 0; d < distinct_.size(); ++d) {
        if (SameString(distinct_[d], v)) {
          id = static_cast<uint32_t>(d);
          break;
        }
      }
    } else {
      auto it = index_.find(v);
      if (it != index_.end()) id = it->second;
    }
    if (id == UINT32_MAX) {
      id = static_cast<uint32_t>(distinct_.size());
      distinct_.push_back(v);
      if (distinct_.size() > kLinear) {
        if (index_.empty()) {
          for (size_t d = 0; d < distinct_.size(); ++d) {
            index_.emplace(distinct_[d], static_cast<uint32_t>(d));
          }
        } else {
          index_.emplace(v, id);
        }
      }
    }
    last_id_ = id;
    return id;
  }
  // rank[id] for every id handed out.
  std::vector<uint32_t> Ranks() const {
    std::vector<uint32_t> by_name(distinct_.size());
    for (size_t d = 0; d < distinct_.size(); ++d) by_name[d] = static_cast<uint32_t>(d);
    std::sort(by_name.begin(), by_name.end(),
              [&](uint32_t a, uint32_t b) { return distinct_[a] < distinct_[b]; });
    std::vector<uint32_t> rank(distinct_.size());
    for (size_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = static_cast<uint32_t>(r);
    return rank;
  }
  bool IsEmptyString(uint32_t id) const { return distinct_[id].empty(); }

 private:
  static constexpr size_t kLinear = 16;
  std::vector<std::string_view> distinct_;
  std::unordered_map<std::string_view, uint32_t> index_;
  uint32_t last_id_ = 0;
};

// More sort keys than this add nothing in practice; later ones are ignored.
constexpr size_t kMaxSortKeys = 8;

// Sorts by the keys, then by job id. Slurm's ties follow slurmctld's
// internal job list order, which is not reproducible; job id is the
// deterministic stand-in.
// Collects the sort keys of the listed jobs (fed in the same pass that
// renders their rows) and returns the order in which to print them: by the
// keys, then by job id. Slurm's ties follow slurmctld's internal job list
// order, which is not reproducible; job id is the deterministic stand-in.
class Sorter {
 public:
  Sorter(std::vector<SortKey> keys, const Ctx& ctx, size_t expected)
      : keys_(std::move(keys)), ctx_(ctx) {
    if (keys_.size() > kMaxSortKeys) keys_.resize(kMaxSortKeys);
    cols_.resize(keys_.size() + 1);  // the last column is the job id
    rankers_.resize(keys_.size());
    for (std::vector<int64_t>& col : cols_) col.reserve(expected);
  }

  void Add(const Job& job) {
    if (keys_.empty()) return;
    for (size_t c = 0; c < keys_.size(); ++c) {
      char key = keys_[c].letter;
      if (IsStringKey(key)) {
        cols_[c].push_back(rankers_[c].Add(SortString(key, ctx_, job)));
      } else {
        cols_[c].push_back(SortNumber(key, ctx_, job));
      }
    }
    cols_.back().push_back(job.id);
  }

  // Indices of the added jobs, in print order.
  std::vector<uint32_t> Order(size_t n) {
    std::vector<uint32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    if (keys_.empty() || n == 0) return order;
    const size_t width = keys_.size();
    // String columns become ranks.
    for (size_t c = 0; c < width; ++c) {
      if (!IsStringKey(keys_[c].letter)) continue;
      std::vector<uint32_t> rank = rankers_[c].Ranks();
      // Jobs without nodes sort last under N.
      bool empty_last = keys_[c].letter == 'N';
      for (int64_t& v : cols_[c]) {
        uint32_t id = static_cast<uint32_t>(v);
        v = empty_last && rankers_[c].IsEmptyString(id) ? kLast : rank[id];
      }
    }
    for (size_t c = 0; c < width; ++c) {
      if (!keys_[c].descending) continue;
      for (int64_t& v : cols_[c]) v = v == kLast ? std::numeric_limits<int64_t>::min() : -v;
    }
    // When the columns' value ranges fit in 64 bits together (the default
    // "P,t,-p" does: partition and state ranks, priority, job id), sort
    // packed integers.
    std::vector<int64_t> lo(width + 1), hi(width + 1);
    std::vector<int> bits(width + 1);
    int total_bits = 0;
    for (size_t c = 0; c <= width; ++c) {
      auto [mn, mx] = std::minmax_element(cols_[c].begin(), cols_[c].end());
      lo[c] = *mn;
      hi[c] = *mx;
      bits[c] = std::bit_width(static_cast<uint64_t>(hi[c]) - static_cast<uint64_t>(lo[c]));
      total_bits += bits[c];
    }
    if (total_bits <= 64) {
      std::vector<std::pair<uint64_t, uint32_t>> packed(n);
      for (size_t i = 0; i < n; ++i) packed[i] = {0, static_cast<uint32_t>(i)};
      for (size_t c = 0; c <= width; ++c) {
        if (bits[c] == 0) continue;
        const uint64_t base = static_cast<uint64_t>(lo[c]);
        for (size_t i = 0; i < n; ++i) {
          uint64_t v = static_cast<uint64_t>(cols_[c][i]) - base;
          packed[i].first = bits[c] == 64 ? v : (packed[i].first << bits[c]) | v;
        }
      }
      // Ties (the tasks of one pending array part share its keys) keep
      // the order they were listed in: the pair's index breaks them.
      std::sort(packed.begin(), packed.end());
      for (size_t i = 0; i < n; ++i) order[i] = packed[i].second;
      return order;
    }
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      for (size_t c = 0; c <= width; ++c) {
        if (cols_[c][a] != cols_[c][b]) return cols_[c][a] < cols_[c][b];
      }
      return false;
    });
    return order;
  }

 private:
  std::vector<SortKey> keys_;
  const Ctx& ctx_;
  std::vector<std::vector<int64_t>> cols_;
  std::vector<StringRanker> rankers_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Checks for the arguments

util::Status CheckSqueueStates(const std::vector<std::string>& states) {
  for (const std::string& s : states) {
    if (util::EqualsIgnoreCase(s, "all")) continue;
    if (FindSlurmState(s) == nullptr) return InvalidStateError(s);
  }
  return util::Status::Ok();
}

void AddSqueueFormatWarnings(const SqueueRequest& req, std::vector<std::string>* warnings) {
  if (!req.format.empty()) {
    CompilePercent(req.format, warnings);
  } else {
    CompileLong(req.format_long, warnings);
  }
}

util::Status CheckSqueueSort(std::string_view spec, std::vector<std::string>* warnings) {
  return ParseSort(spec, warnings).status();
}

// ---------------------------------------------------------------------------
// JSON

nlohmann::json ToJson(const SqueueRequest& r) {
  return nlohmann::json{
      {"users", r.users},
      {"states", r.states},
      {"job_ids", r.job_ids},
      {"partitions", r.partitions},
      {"nodes", r.nodes},
      {"names", r.names},
      {"accounts", r.accounts},
      {"format", r.format},
      {"format_long", r.format_long},
      {"noheader", r.noheader},
      {"long_view", r.long_view},
      {"start", r.start},
      {"only_job_state", r.only_job_state},
      {"me", r.me},
      {"sort", r.sort},
      {"clusters", r.clusters},
      {"qos", r.qos},
      {"reservations", r.reservations},
      {"licenses", r.licenses},
      {"iterate_s", r.iterate_s},
      {"array_unfold", r.array_unfold},
      {"steps", r.steps},
      {"step_ids", r.step_ids},
  };
}

util::Result<SqueueRequest> SqueueRequestFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return util::InvalidArgument("squeue request: expected a JSON object");
  SqueueRequest r;
  try {
    auto list = [&](const char* key, std::vector<std::string>* out) {
      if (j.contains(key)) *out = j.at(key).get<std::vector<std::string>>();
    };
    auto str = [&](const char* key, std::string* out) {
      if (j.contains(key)) *out = j.at(key).get<std::string>();
    };
    auto flag = [&](const char* key, bool* out) {
      if (j.contains(key)) *out = j.at(key).get<bool>();
    };
    list("users", &r.users);
    list("states", &r.states);
    list("job_ids", &r.job_ids);
    list("partitions", &r.partitions);
    list("nodes", &r.nodes);
    list("names", &r.names);
    list("accounts", &r.accounts);
    str("format", &r.format);
    str("format_long", &r.format_long);
    flag("noheader", &r.noheader);
    flag("long_view", &r.long_view);
    flag("start", &r.start);
    flag("only_job_state", &r.only_job_state);
    flag("me", &r.me);
    flag("array_unfold", &r.array_unfold);
    flag("steps", &r.steps);
    list("step_ids", &r.step_ids);
    str("sort", &r.sort);
    list("clusters", &r.clusters);
    list("qos", &r.qos);
    list("reservations", &r.reservations);
    list("licenses", &r.licenses);
    if (j.contains("iterate_s")) r.iterate_s = j.at("iterate_s").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return util::InvalidArgument(std::string("squeue request: ") + e.what());
  }
  return r;
}

// ---------------------------------------------------------------------------
// Rendering

namespace {

// The request's job filters, checked against the view once (unknown -M
// cluster or -w node, a single -j id that names no job) and then applied
// per job. Borrows `req` and `ctx`.
class JobFilter {
 public:
  // Unknown -u users draw squeue's warning, appended to *warnings (not null).
  static util::Result<JobFilter> Make(const SqueueRequest& req, const Ctx& ctx,
                                      std::vector<std::string>* warnings) {
    JobFilter f(req, ctx);
    MUSTER_RETURN_IF_ERROR(f.Init(warnings));
    return f;
  }

  bool MatchesIds(const Job& j) const {
    return std::any_of(id_specs_.begin(), id_specs_.end(),
                       [&](const core::JobIdSpec& spec) { return core::JobIdSpecMatches(spec, j); });
  }

  // The pending tasks of a pending part that -j names by task ("-j 123_5"
  // lists "123_5", not the whole part); empty when -j names none of them.
  std::vector<int> NamedPendingTasks(const Job& j) const {
    std::vector<int> out;
    for (int t : j.array_pending) {
      for (const core::JobIdSpec& spec : id_specs_) {
        if (spec.id == j.array_job_id &&
            std::binary_search(spec.tasks.begin(), spec.tasks.end(), t)) {
          out.push_back(t);
          break;
        }
      }
    }
    return out;
  }

  bool Matches(const Job& j) const {
    if ((mask_ & Bit(j.state)) == 0) return false;
    if (!ids_.empty() && !MatchesIds(j)) return false;
    if (!req_->licenses.empty()) return false;  // no job holds licenses
    // Numeric uids first: this runs once per job of the table, so no
    // string is built here.
    if (filter_users_ && user_ids_.count(j.req.uid) == 0 &&
        (!has_user_names_ || j.req.user_name.empty() || users_.count(j.req.user_name) == 0)) {
      return false;
    }
    if (!partitions_.empty() && partitions_.count(ctx_->Partition(j)) == 0) return false;
    if (!names_.empty() && names_.count(j.req.name) == 0) return false;
    if (!accounts_.empty() && accounts_.count(util::ToLower(j.req.account)) == 0) return false;
    if (!qos_.empty() && qos_.count(util::ToLower(core::QosName(j.req))) == 0) {
      return false;
    }
    if (!reservations_.empty() && reservations_.count(j.req.reservation) == 0) return false;
    if (!nodes_.empty()) {
      return std::any_of(j.alloc.begin(), j.alloc.end(),
                         [&](const core::NodeAlloc& a) { return nodes_.count(a.node) > 0; });
    }
    return true;
  }

 private:
  JobFilter(const SqueueRequest& req, const Ctx& ctx) : req_(&req), ctx_(&ctx) {}

  util::Status Init(std::vector<std::string>* warnings) {
    const SqueueRequest& req = *req_;
    const ClusterView& view = ctx_->view();
    // -M: only this cluster exists.
    std::string cluster = ctx_->Cluster();
    for (const std::string& c : req.clusters) {
      if (c != cluster && !util::EqualsIgnoreCase(c, "all")) {
        return util::InvalidArgument(
            "squeue: error: No cluster '" + c + "' known by database.\nsqueue: error: '" + c +
            "' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr "
            "list clusters' to see available clusters.");
      }
    }
    mask_ = req.states.empty() ? (req.start ? Bit(JobState::kPending) : DefaultStateMask()) : 0;
    for (const std::string& s : req.states) {
      if (util::EqualsIgnoreCase(s, "all")) {
        mask_ = ~StateMask{0};
        continue;
      }
      const SlurmState* st = FindSlurmState(s);
      if (st == nullptr) return InvalidStateError(s);
      if (st->state) mask_ |= Bit(*st->state);
    }
    // -w: every node must exist.
    nodes_.insert(req.nodes.begin(), req.nodes.end());
    if (!nodes_.empty()) {
      std::unordered_set<std::string> known;
      for (const core::Node* n : view.nodes) known.insert(n->config.name);
      if (known.empty() && view.config != nullptr) {
        for (const core::NodeConfig& n : view.config->nodes) known.insert(n.name);
      }
      for (const std::string& n : req.nodes) {
        if (!known.empty() && known.count(n) == 0) {
          return util::InvalidArgument("squeue: error: Invalid node name " + n);
        }
      }
    }
    for (const std::string& id : req.job_ids) {
      util::Result<int64_t> n = util::ParseInt(id.substr(0, id.find_first_of("_+")));
      if (n.ok()) ids_.insert(static_cast<uint32_t>(*n));
      // A task form squeue cannot read ("123_x") selects nothing.
      if (util::Result<core::JobIdSpec> spec = core::ParseJobIdSpec(id); spec.ok()) {
        id_specs_.push_back(*std::move(spec));
      }
    }
    // squeue loads a single requested job by id and fails when it is gone.
    if (req.job_ids.size() == 1 && ids_.size() == 1) {
      uint32_t want = *ids_.begin();
      if (std::none_of(view.jobs.begin(), view.jobs.end(),
                       [&](const Job* j) { return j->id == want; })) {
        return util::NotFound("slurm_load_jobs error: Invalid job id specified");
      }
    }
    AddUsers(req.users, warnings);
    filter_users_ = !users_.empty() || req.me;
    if (req.me) users_.insert(std::to_string(view.caller_uid));
    for (const std::string& u : users_) {
      auto uid = util::ParseInt(u);
      if (uid.ok() && *uid <= UINT32_MAX) {
        user_ids_.insert(static_cast<uint32_t>(*uid));
      } else {
        has_user_names_ = true;
      }
    }
    partitions_.insert(req.partitions.begin(), req.partitions.end());
    names_.insert(req.names.begin(), req.names.end());
    for (const std::string& a : req.accounts) accounts_.insert(util::ToLower(a));
    for (const std::string& q : req.qos) qos_.insert(util::ToLower(q));
    reservations_.insert(req.reservations.begin(), req.reservations.end());
    return util::Status::Ok();
  }

  const SqueueRequest* req_;
  const Ctx* ctx_;
  StateMask mask_ = 0;
  std::unordered_set<uint32_t> ids_;
  std::vector<core::JobIdSpec> id_specs_;
  bool filter_users_ = false;
  // -u's users as uids; a name that is no user stays as written (it
  // matches no job) and draws squeue's warning, as does a number the
  // passwd database does not know, as in Slurm.
  void AddUsers(const std::vector<std::string>& users, std::vector<std::string>* warnings) {
    const util::UserDb& db = *ctx_->view().users;
    for (const std::string& u : users) {
      std::optional<uint32_t> uid = db.LookupUid(u);
      const bool unknown_number =
          uid && u == std::to_string(*uid) && db.UserName(*uid) == std::to_string(*uid);
      if (!uid || unknown_number) {
        warnings->push_back("squeue: error: Invalid user: " + u + "\n");
        users_.insert(u);
        continue;
      }
      users_.insert(std::to_string(*uid));
    }
  }

  bool has_user_names_ = false;
  std::unordered_set<uint32_t> user_ids_;
  std::unordered_set<std::string> users_, partitions_, names_, accounts_, qos_, reservations_,
      nodes_;
};

Layout RequestLayout(const SqueueRequest& req) {
  if (!req.format.empty()) return CompilePercent(req.format, nullptr);
  if (!req.format_long.empty()) return CompileLong(req.format_long, nullptr);
  std::string_view f = req.start            ? kSqueueStartFormat
                       : req.long_view      ? kSqueueLongFormat
                       : req.only_job_state ? kSqueueOnlyJobStateFormat
                                            : kSqueueDefaultFormat;
  return CompilePercent(f, nullptr);
}

// -l's first line, "Wed Dec 02 15:45:20 2026" in local time.
std::string DateLine(int64_t now) {
  std::string date = CtimeDate(now);
  return date.empty() ? date : date + "\n";
}

// How many jobs ahead the render loop asks for the memory of. Jobs are
// about 1.3 KB each and scattered over the heap; the fields a row reads sit
// on several cache lines of each, and a miss on every one of them, one job
// after another, was most of a 100,000-job squeue. Fetched ahead, the misses
// of several jobs overlap.
constexpr size_t kPrefetchAhead = 6;

void PrefetchJob(const Job& j) {
  // The lines of the fields most formats and filters read.
  __builtin_prefetch(&j.id);
  __builtin_prefetch(&j.req.uid);
  __builtin_prefetch(&j.req.min_nodes);
  __builtin_prefetch(&j.state);
  __builtin_prefetch(&j.submit_time);
  __builtin_prefetch(&j.alloc);
  __builtin_prefetch(&j.nodelist);
  __builtin_prefetch(&j.array_job_id);
}

}  // namespace

util::Result<std::string> RenderSqueue(const SqueueRequest& req, const ClusterView& view,
                                       std::vector<std::string>* warnings) {
  if (req.steps) return RenderSqueueSteps(req, view);
  Ctx ctx(view);
  std::vector<std::string> ignored;
  util::Result<JobFilter> filter = JobFilter::Make(req, ctx, warnings ? warnings : &ignored);
  if (!filter.ok()) return filter.status();
  std::string sort_spec = req.sort.empty() ? std::string(req.start ? "S" : kDefaultSort) : req.sort;
  util::Result<std::vector<SortKey>> keys = ParseSort(sort_spec, nullptr);
  if (!keys.ok()) return keys.status();
  Layout layout = RequestLayout(req);

  // One pass in the view's order filters the jobs and renders their rows
  // while each job is in cache; the sort then permutes finished rows. (Jobs
  // are about a kilobyte each: visiting 100,000 of them in sorted order
  // would be a cache and TLB miss per job.)
  Sorter sorter(*keys, ctx, view.jobs.size());
  // The header goes first into the rows' buffer, so that when the sort
  // leaves the rows in the order they were rendered (the default order of a
  // queue of equal jobs) the buffer is the reply and nothing is copied.
  std::string rows;
  rows.reserve(layout.RowSizeGuess() * view.jobs.size() + 4096);
  if (!req.noheader) {
    if (req.long_view) rows += DateLine(view.now);
    if (!req.clusters.empty()) rows += "CLUSTER: " + ctx.Cluster() + "\n";
    AppendHeader(layout, &rows);
  }
  const size_t header_size = rows.size();
  std::vector<size_t> row_start;
  row_start.reserve(view.jobs.size() + 1);
  auto add_row = [&](const Job& j) {
    row_start.push_back(rows.size());
    AppendRow(layout, ctx, j, &rows);
    sorter.Add(j);
  };
  for (size_t i = 0; i < view.jobs.size(); ++i) {
    if (i + kPrefetchAhead < view.jobs.size()) PrefetchJob(*view.jobs[i + kPrefetchAhead]);
    const Job* j = view.jobs[i];
    if (!filter->Matches(*j)) continue;
    if (!j->IsArrayPendingPart()) {
      add_row(*j);
      continue;
    }
    // A pending part prints as one line unless -r asks for one per task or
    // -j names some of its tasks; each such line is the part with that
    // task's id ("14191_1", "14191_3", ...).
    std::vector<int> tasks = filter->NamedPendingTasks(*j);
    if (tasks.empty() && req.array_unfold) tasks = j->array_pending;
    if (tasks.empty()) {
      add_row(*j);
      continue;
    }
    Job task = *j;
    task.array_pending.clear();
    for (int t : tasks) {
      task.array_task_id = t;
      add_row(task);
    }
  }
  const size_t listed = row_start.size();
  row_start.push_back(rows.size());
  std::vector<uint32_t> order = sorter.Order(listed);
  bool identity = true;
  for (size_t i = 0; i < listed && identity; ++i) identity = order[i] == i;
  if (identity) return rows;

  std::string out;
  out.reserve(rows.size());
  out.append(rows, 0, header_size);
  for (uint32_t i : order) out.append(rows, row_start[i], row_start[i + 1] - row_start[i]);
  return out;
}

}  // namespace muster::render

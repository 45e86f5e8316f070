#include "cli/render/format_util.h"

#include <fmt/format.h>

#include <time.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/array.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::render {

// ---- widths ----

void AppendAccountingCell(std::string* out, std::string_view value, int width, bool right,
                          bool header) {
  std::string s(value);
  if (static_cast<int>(s.size()) > width) {
    s = header ? s.substr(0, static_cast<size_t>(std::max(width, 0)))
               : s.substr(0, static_cast<size_t>(width > 0 ? width - 1 : 0)) + "+";
  }
  if (width > 0 && static_cast<int>(s.size()) > width) s.resize(static_cast<size_t>(width));
  const std::string pad(static_cast<size_t>(std::max<int>(0, width - static_cast<int>(s.size()))), ' ');
  *out += right ? pad + s : s + pad;
  *out += ' ';
}

void AppendParsableCell(std::string* out, std::string_view value, bool first, int parsable) {
  if (!first && parsable == 2) *out += '|';
  *out += value;
  if (parsable == 1) *out += '|';
}

std::string HelpFormatColumns(const std::vector<std::string_view>& names, int width) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += fmt::format("{:<{}}", names[i], width);
    out += (i % 4 == 3 || i + 1 == names.size()) ? '\n' : ' ';
  }
  return out;
}

std::vector<AccountingFormatItem> ParseAccountingFormat(std::string_view format) {
  std::vector<AccountingFormatItem> items;
  for (const std::string& text : util::Split(format, ',')) {
    AccountingFormatItem item;
    item.name = text;
    if (size_t pct = text.find('%'); pct != std::string::npos) {
      item.name = text.substr(0, pct);
      std::string_view w = std::string_view(text).substr(pct + 1);
      if (!w.empty() && w[0] == '-') {
        item.left = true;
        w.remove_prefix(1);
      }
      size_t digits = 0;
      item.width = ReadWidth(w, &digits);
      item.has_width = true;
    }
    items.push_back(std::move(item));
  }
  return items;
}

void AppendAccountingHeader(std::string* out, const std::vector<AccountingColumn>& cols,
                            int parsable) {
  if (parsable != 0) {
    for (size_t i = 0; i < cols.size(); ++i) AppendParsableCell(out, cols[i].name, i == 0, parsable);
    *out += '\n';
    return;
  }
  for (const AccountingColumn& c : cols) AppendAccountingCell(out, c.name, c.width, c.right, true);
  *out += '\n';
  for (const AccountingColumn& c : cols) *out += std::string(static_cast<size_t>(c.width), '-') + ' ';
  *out += '\n';
}

void AppendAccountingRow(std::string* out, const std::vector<AccountingColumn>& cols,
                         const std::vector<std::string>& values, int parsable) {
  for (size_t i = 0; i < cols.size(); ++i) {
    if (parsable != 0) {
      AppendParsableCell(out, values[i], i == 0, parsable);
    } else {
      AppendAccountingCell(out, values[i], cols[i].width, cols[i].right, false);
    }
  }
  *out += '\n';
}

void AppendField(std::string* out, std::string_view value, int width, bool right, bool null_value) {
  if (width <= 0) {
    out->append(value);
    return;
  }
  // glibc prints a NULL "%.*s" as "(null)" only when the precision allows
  // all six characters; squeue shows such narrow columns blank.
  if (null_value && width < 6) value = {};
  size_t w = static_cast<size_t>(width);
  if (value.size() > w) value = value.substr(0, w);
  size_t pad = w - value.size();
  if (right) out->append(pad, ' ');
  out->append(value);
  if (!right) out->append(pad, ' ');
}

std::string FitField(std::string_view value, int width, bool right, bool null_value) {
  std::string out;
  AppendField(&out, value, width, right, null_value);
  return out;
}

// ---- format parsing ----

int ReadWidth(std::string_view s, size_t* pos) {
  int width = 0;
  for (; *pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9'; ++*pos) {
    width = std::min(width * 10 + (s[*pos] - '0'), 100000);
  }
  return width;
}

PercentFormat ParsePercentFormat(std::string_view format, bool (*valid_type)(char)) {
  PercentFormat out;
  size_t pos = format.find('%');
  out.prefix = std::string(format.substr(0, pos));
  while (pos != std::string_view::npos) {
    // Like strtok(3): a run of delimiters separates two tokens, and empty
    // tokens are never produced.
    while (pos < format.size() && format[pos] == '%') ++pos;
    if (pos >= format.size()) break;
    size_t end = format.find('%', pos);
    std::string_view token =
        format.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end;

    PercentField field;
    size_t i = 0;
    if (i < token.size() && token[i] == '.') {
      field.right = true;
      ++i;
    }
    field.width = ReadWidth(token, &i);
    char type = i < token.size() ? token[i] : '\0';
    if (type == '\0' || !valid_type(type)) {
      out.invalid.push_back(type == '\0' ? std::string() : std::string(1, type));
      field.literal = "%" + std::string(token);
      field.width = 0;
      field.right = false;
    } else {
      field.type = type;
      field.suffix = std::string(token.substr(i + 1));
    }
    out.fields.push_back(std::move(field));
  }
  return out;
}

std::vector<LongField> ParseLongFormat(std::string_view format, int default_width) {
  std::vector<LongField> out;
  for (const std::string& item : util::Split(format, ',')) {
    LongField f;
    size_t colon = item.find(':');
    f.name = item.substr(0, colon);
    f.width = default_width;
    if (colon != std::string::npos) {
      std::string_view rest = std::string_view(item).substr(colon + 1);
      size_t i = 0;
      if (i < rest.size() && rest[i] == '.') {
        f.right = true;
        ++i;
      }
      f.width = ReadWidth(rest, &i);  // "Name:" alone means natural width
      f.suffix = std::string(rest.substr(i));
    }
    out.push_back(std::move(f));
  }
  return out;
}

// ---- values ----

namespace {

long LocalOffset(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  if (localtime_r(&tt, &tm) == nullptr) return 0;
  return tm.tm_gmtoff;
}

}  // namespace

std::string TimestampFormatter::Format(int64_t unix_seconds) {
  if (unix_seconds == 0) return "Unknown";
  constexpr int64_t kBucket = 900;
  int64_t bucket = unix_seconds - ((unix_seconds % kBucket) + kBucket) % kBucket;
  if (bucket != bucket_) {
    bucket_ = bucket;
    offset_ = LocalOffset(bucket);
    uniform_ = LocalOffset(bucket + kBucket - 1) == offset_;
  }
  if (!uniform_) return util::FormatTimestamp(unix_seconds);
  int64_t local = unix_seconds + offset_;
  int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
  int64_t secs = local - days * 86400;
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  if (y < 0 || y > 9999) return util::FormatTimestamp(unix_seconds);
  char buf[20];
  auto two = [](char* p, int64_t v) {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
  };
  two(buf, y / 100);
  two(buf + 2, y % 100);
  buf[4] = '-';
  two(buf + 5, m);
  buf[7] = '-';
  two(buf + 8, d);
  buf[10] = 'T';
  two(buf + 11, secs / 3600);
  buf[13] = ':';
  two(buf + 14, secs / 60 % 60);
  buf[16] = ':';
  two(buf + 17, secs % 60);
  return std::string(buf, 19);
}

namespace {

using core::JobState;

bool HoldsResources(JobState s) {
  return s == JobState::kRunning || s == JobState::kSuspended || s == JobState::kCompleting;
}

bool Ended(JobState s) { return s != JobState::kPending && !HoldsResources(s); }

constexpr int64_t kYearSeconds = 365 * 86400;

// What the configuration gives a job's memory; nothing without one.
core::MemoryDefaults MemoryDefaults(const core::Job& job, const ClusterView& view) {
  return view.config == nullptr ? core::MemoryDefaults{} : view.config->MemoryDefaultsFor(job);
}

std::string AbsoluteInWorkDir(const core::Job& job, const std::string& path) {
  if (path.empty() || path.front() == '/' || job.req.work_dir.empty()) return path;
  std::string dir = job.req.work_dir;
  if (dir.back() != '/') dir += '/';
  return dir + path;
}

std::string GresTres(const core::Job& job, bool per_job) {
  std::vector<std::string> parts;
  for (const core::GresRequest& g : job.req.gres) {
    if (g.per_job != per_job) continue;
    std::string s = "gres:" + g.name;
    if (!g.type.empty()) s += ":" + g.type;
    s += ":" + std::to_string(g.count);
    parts.push_back(std::move(s));
  }
  return util::Join(parts, ",");
}

}  // namespace

std::string PendingReasonText(const core::Job& job) {
  if (job.reason != core::PendingReason::kReqNodeNotAvail) {
    return std::string(core::PendingReasonName(job.reason));
  }
  // Slurm 22.05's state descriptions for this reason.
  if (job.reason_reserved) return "ReqNodeNotAvail, May be reserved for other job";
  if (job.reason_nodes.empty()) {
    return "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
           "partitions";
  }
  return "ReqNodeNotAvail, UnavailableNodes:" + job.reason_nodes;
}

std::string JobReasonText(const core::Job& job) {
  switch (job.state) {
    case JobState::kPending:
    case JobState::kCancelled:
    case JobState::kPreempted: return PendingReasonText(job);
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
      // Held while running (scontrol hold): shown until released, as Slurm.
      return job.held ? std::string(core::PendingReasonName(job.reason)) : "None";
    case JobState::kCompleted: return "None";
    case JobState::kFailed:
      if (job.reason != core::PendingReason::kNone) {
        return std::string(core::PendingReasonName(job.reason));
      }
      // Slurm 22.05: a batch script killed by a signal, or one that could
      // not be launched (bad output file), is a JobLaunchFailure; a plain
      // non-zero exit is NonZeroExitCode.
      if (job.exit_signal != 0 || !job.failure_detail.empty()) return "JobLaunchFailure";
      return "NonZeroExitCode";
    case JobState::kTimeout: return "TimeLimit";
    case JobState::kOutOfMemory: return "OutOfMemory";
    case JobState::kNodeFail:
    case JobState::kBootFail: return "NodeDown";
    case JobState::kDeadline: return "DeadLine";
  }
  return "None";
}

bool ReasonInNodelistColumn(const core::Job& job) {
  switch (job.state) {
    case JobState::kPending:
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kNodeFail:
    case JobState::kBootFail:
    case JobState::kDeadline:
    case JobState::kOutOfMemory: return true;
    default: return false;
  }
}

bool SeesHiddenPartitions(const ClusterView& view) {
  if (view.caller_uid == 0 || view.caller_admin) return true;
  return view.users->UserName(view.caller_uid) == view.config->slurm_user;
}

bool PartitionVisible(const core::Partition& part, const ClusterView& view) {
  if (SeesHiddenPartitions(view)) return true;
  if (part.hidden) return false;
  if (part.allow_groups.empty()) return true;
  for (const std::string& g : part.allow_groups) {
    if (util::EqualsIgnoreCase(g, "ALL")) return true;
    auto gid = view.users->LookupGid(g);
    if (gid && std::find(view.caller_groups.begin(), view.caller_groups.end(), *gid) !=
                   view.caller_groups.end()) {
      return true;
    }
  }
  return false;
}

std::string JobExplanation(const core::Job& job) {
  if (job.state != JobState::kPending) return "";
  if (!job.explanation.empty()) return job.explanation;
  using core::PendingReason;
  switch (job.reason) {
    case PendingReason::kNone: return "waiting for the scheduler to consider the job";
    case PendingReason::kPriority: return "higher priority jobs are queued ahead of this one";
    case PendingReason::kResources: return "waiting for resources to become free";
    case PendingReason::kJobHeldUser: return "held by its user (scontrol release to start)";
    case PendingReason::kJobHeldAdmin: return "held by an administrator";
    case PendingReason::kBeginTime: return "its --begin time has not been reached";
    case PendingReason::kReqNodeNotAvail:
      if (job.reason_reserved) return "waits for nodes it asks for (-w) that a reservation holds";
      if (job.reason_nodes.empty()) {
        return "needs more nodes than its partition has up (the others are down, drained or "
               "not responding)";
      }
      return "waits for nodes it asks for (-w or -C) that are down, drained or not "
             "responding: " + job.reason_nodes;
    case PendingReason::kPartitionDown: return "its partition is down";
    case PendingReason::kPartitionInactive: return "its partition is inactive";
    case PendingReason::kPartitionTimeLimit: return "its time limit exceeds the partition's";
    case PendingReason::kPartitionNodeLimit:
      return "its node count is outside the partition's limits";
    case PendingReason::kBadConstraints: return "no node satisfies its constraints";
    case PendingReason::kNodeDown: return "a node it needs is down";
    case PendingReason::kDependency: return "waits for the jobs it depends on";
    case PendingReason::kDependencyNeverSatisfied:
      return "its dependency can never be satisfied (scontrol update Dependency= or scancel)";
    case PendingReason::kJobArrayTaskLimit: return "its array runs as many tasks as its %N limit allows";
    case PendingReason::kReservation: return "waits for its reservation to start";
    case PendingReason::kJobRequeuedHeld: return "requeued and held (scontrol release to start)";
    case PendingReason::kQosMaxJobsPerUser:
    case PendingReason::kQosGrpJobs:
    case PendingReason::kQosMaxWall:
    case PendingReason::kQosMaxCpuPerUser:
    case PendingReason::kQosMaxMemPerUser:
    case PendingReason::kQosMaxNodePerUser:
    case PendingReason::kQosMaxGresPerUser:
    case PendingReason::kQosMaxCpuPerJob:
    case PendingReason::kQosMaxMemPerJob:
    case PendingReason::kQosMaxNodePerJob:
    case PendingReason::kQosMaxGresPerJob:
    case PendingReason::kQosGrpCpu:
    case PendingReason::kQosGrpMem:
    case PendingReason::kQosGrpNode:
    case PendingReason::kQosGrpGres:
      return "held back by a limit of its QOS " + (job.req.qos.empty() ? std::string("normal") : job.req.qos);
    case PendingReason::kAssocGrpJobs:
    case PendingReason::kAssocGrpCpu:
    case PendingReason::kAssocGrpMem:
    case PendingReason::kAssocGrpNode:
    case PendingReason::kAssocGrpGres:
    case PendingReason::kAssocMaxJobs:
    case PendingReason::kAssocMaxWall:
      return "held back by a limit of its account " + job.req.account;
  }
  return "";
}

int64_t JobElapsed(const core::Job& job, int64_t now) {
  if (job.state == JobState::kPending || job.start_time <= 0) return 0;
  if (job.state == JobState::kCompleting && job.end_time >= job.start_time) {
    return job.end_time - job.start_time;
  }
  if (HoldsResources(job.state)) return now > job.start_time ? now - job.start_time : 0;
  return job.end_time > job.start_time ? job.end_time - job.start_time : 0;
}

int64_t JobDisplayStart(const core::Job& job, int64_t now) {
  if (job.start_time > 0) return job.start_time;
  if (job.state == JobState::kPending) {
    // The later of its --begin time and the controller's estimate.
    const int64_t at = std::max(job.req.begin_time, job.estimated_start);
    return at > now ? at : 0;
  }
  if (Ended(job.state)) return job.end_time;
  return 0;
}

int64_t JobDisplayEnd(const core::Job& job, int64_t now) {
  if (Ended(job.state)) return job.end_time;
  if (job.state == JobState::kCompleting && job.end_time > 0) return job.end_time;
  int64_t start = JobDisplayStart(job, now);
  if (start <= 0) return 0;
  int64_t limit = job.time_limit_s < 0 ? kYearSeconds : job.time_limit_s;
  return start + limit;
}

std::string JobPartition(const core::Job& job, const ClusterView& view) {
  if (!job.partition.empty()) return job.partition;
  if (!job.req.partition.empty()) return job.req.partition;
  if (view.config != nullptr) {
    if (const core::Partition* p = view.config->DefaultPartition()) return p->name;
  }
  return "";
}

std::string JobUserName(const core::Job& job, const util::UserDb& users) {
  if (!job.req.user_name.empty()) return job.req.user_name;
  return users.UserName(job.req.uid);
}

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

int64_t JobMemoryTotalMb(const core::Job& job, const ClusterView& view) {
  return core::JobMemoryTotalMb(job, MemoryDefaults(job, view));
}

std::string JobTresString(const core::Job& job, const ClusterView& view) {
  return core::FormatTres(core::JobTres(job, MemoryDefaults(job, view)));
}

std::string JobTresPerNode(const core::Job& job) { return GresTres(job, false); }
std::string JobTresPerJob(const core::Job& job) { return GresTres(job, true); }

std::string JobMinMemory(const core::Job& job, const ClusterView& view) {
  const core::JobRequest& r = job.req;
  const int64_t def = view.config != nullptr ? view.config->def_mem_per_cpu_mb : 0;
  if (const int64_t per_cpu = core::MemoryPerCpuMb(r, def); per_cpu > 0) {
    return FormatMemoryMb(per_cpu);
  }
  return r.mem_whole_node || r.mem_per_gpu_mb > 0 ? "0" : FormatMemoryMb(r.mem_per_node_mb);
}

int JobMinCpusNode(const core::Job& job) {
  int cpt = job.req.cpus_per_task > 0 ? job.req.cpus_per_task : 1;
  int per_node = job.req.ntasks_per_node > 0 ? job.req.ntasks_per_node : 1;
  return cpt * per_node;
}

std::string JobStdOut(const core::Job& job) {
  std::string pattern = job.req.std_out.empty() ? std::string(core::DefaultStdOutPattern(job))
                                                 : job.req.std_out;
  return AbsoluteInWorkDir(job, core::ExpandOutputPattern(pattern, job));
}

std::string JobStdErr(const core::Job& job) {
  if (job.req.std_err.empty()) return JobStdOut(job);
  return AbsoluteInWorkDir(job, core::ExpandOutputPattern(job.req.std_err, job));
}

std::string JobStdIn(const core::Job& job) {
  if (job.req.std_in.empty()) return "/dev/null";
  return AbsoluteInWorkDir(job, core::ExpandOutputPattern(job.req.std_in, job));
}

std::string JobCommand(const core::Job& job) {
  const std::string& cmd = job.req.command;
  if (cmd.empty() || cmd == "(null)") return "(null)";
  std::string out = cmd;
  for (const std::string& a : job.req.argv) out += " " + a;
  return out;
}

std::string JobGpuUtilText(const core::Job& j) {
  if (j.gpu_sampled_s <= 0) return "N/A";
  return fmt::format("{}%", j.gpu_util_pct_s / j.gpu_sampled_s);
}

std::string JobGpuIdleText(const core::Job& j, int64_t now) {
  if (j.gpu_sampled_s <= 0) return "N/A";
  if (j.gpu_idle_since == 0) return "busy";
  static constexpr const char* kStage[] = {"idle", "flagged", "reported", "cancelled"};
  return fmt::format("{} {}", kStage[std::clamp(j.gpu_idle_stage, 0, 3)],
                     util::FormatDuration(std::max<int64_t>(0, now - j.gpu_idle_since)));
}

std::string ReasonActor(const core::Node& n, const util::UserDb& users) {
  return n.reason_actor.empty() ? users.UserName(n.reason_uid) : n.reason_actor;
}

std::string CtimeDate(int64_t t) {
  const time_t tt = static_cast<time_t>(t);
  struct tm tm;
  char buf[64];
  if (localtime_r(&tt, &tm) == nullptr ||
      strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm) == 0) {
    return "";
  }
  return buf;
}

}  // namespace muster::render

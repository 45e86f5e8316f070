// sacct: option parsing, the request's JSON form, the accounting query it
// implies and the renderer over store::JobRecord/StepRecord.
//
// Observed on Slurm 22.05.8 with slurmdbd (see sacct_render_test.cc):
//  - fixed-width columns end with one space; a value longer than its column
//    keeps width-1 characters and a '+'; most fields are right-justified,
//    JobID/JobIDRaw left (width -12). A "%N" in -o sets the width and makes
//    the column right-justified, "%-N" left-justified;
//  - -p ends every field with '|', -P separates with '|'; neither prints the
//    dashes line, -n drops the header;
//  - without -S the window starts at midnight today, unless -j is given (no
//    window at all); with -s and no -E the window ends where it starts;
//    a job matches a window when it was eligible before its end and had not
//    ended before its start;
//  - without -a/-u/-j a normal user sees only their own jobs; root (or an
//    admin) sees everybody's. PrivateData is not enforced (the oracle runs
//    PrivateData=none, where -a shows all jobs to anyone);
//  - -j N.batch prints that step only; -X prints job rows;
//  - arrays (sbatch --array=1,3,5-7%2 as 14491; tasks got raw ids 14493..,
//    the last one kept 14491): JobID "14491_1", JobIDRaw "14493", steps
//    "14491_1.batch"/"14493.batch", the pending part "14491_[5-7%2]" after
//    the tasks; -j 14491 selects every record of the array, -j 14491_3 and
//    -j 14494 (its raw id) the task, -j 14491.batch every task's batch step;
//    a task still in the pending part (-j 14506_3) selects nothing;
//  - requeued jobs: only the latest run by default, every run with -D, the
//    earlier ones REQUEUED with their own times and steps (their batch step
//    CANCELLED 0:15), or NODE_FAIL when a node failure requeued them (the
//    batch step CANCELLED with an empty ExitCode).

#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/render/format_util.h"
#include "cli/render/render.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"
#include "util/version.h"

namespace muster::render {
namespace {

// The "Slurm" member of --json's meta: the release Muster follows, split.
nlohmann::json SlurmVersionJson() {
  const std::string release(util::SlurmVersion());
  std::vector<std::string> parts = util::Split(release, '.');
  auto part = [&](size_t i) { return i < parts.size() ? std::atoi(parts[i].c_str()) : 0; };
  return {{"version", {{"major", part(0)}, {"micro", part(2)}, {"minor", part(1)}}},
          {"release", release}};
}

using store::JobRecord;
using store::StepRecord;
using util::InvalidArgument;
using util::Result;


// One output row: a job, or one of its steps.
struct Row {
  const JobRecord* job = nullptr;
  const StepRecord* step = nullptr;  // null for the job row
  int64_t now = 0;
};

// A job that ended without starting (cancelled while pending) shows its end
// as its start, as Slurm records it.
int64_t RowStart(const Row& r) {
  if (r.step) return r.step->start_time;
  return r.job->start_time > 0 ? r.job->start_time : r.job->end_time;
}
int64_t RowEnd(const Row& r) { return r.step ? r.step->end_time : r.job->end_time; }
int64_t RowElapsed(const Row& r) {
  const int64_t s = RowStart(r);
  if (s <= 0) return 0;
  const int64_t e = RowEnd(r) > 0 ? RowEnd(r) : r.now;
  return std::max<int64_t>(0, e - s);
}

std::string JobIdText(const JobRecord& j) {
  if (j.het_job_id > 0) return fmt::format("{}+{}", j.het_job_id, j.het_job_offset);
  if (j.array_task_id >= 0 && j.array_job_id > 0)
    return fmt::format("{}_{}", j.array_job_id, j.array_task_id);
  if (j.array_job_id > 0 && !j.array_pending.empty()) {
    if (j.array_max_running > 0)
      return fmt::format("{}_[{}%{}]", j.array_job_id, j.array_pending, j.array_max_running);
    return fmt::format("{}_[{}]", j.array_job_id, j.array_pending);
  }
  return std::to_string(j.job_id);
}

// A step that never reported its end (its node failed) has no exit code.
std::string ExitText(int code, int sig) {
  return code < 0 ? std::string() : fmt::format("{}:{}", code, sig);
}

std::string Timestamp(int64_t t, TimestampFormatter* tf) {
  return t > 0 ? tf->Format(t) : "Unknown";
}

// Field types that need the formatter.
struct Ctx {
  TimestampFormatter* tf;
  bool noconvert = false;  // memory in bytes

  std::string KiB(int64_t kb) const { return noconvert ? std::to_string(kb * 1024) : SacctKiloBytes(kb); }
};

struct FieldDef {
  const char* name;
  int width;  // negative: left-justified
  std::function<std::string(const Row&, Ctx&)> value;
};

std::string Blank(const Row&, Ctx&) { return ""; }

// TRESUsageIn{Ave,Max,Min,Tot} of a step. Slurm 22.05 prints "energy=0"
// for Ave/Tot of a step that was never sampled; with a sample it lists
// cpu, energy, fs/disk, mem, pages and vmem, of which Muster records cpu
// and mem, and, where the agents sampled the job's GPUs (its batch step),
// gres/gpumem and gres/gpuutil as Slurm's gpu accounting names them.
std::string UsageIn(const Row& r, const Ctx& c, bool always) {
  if (!r.step) return "";
  if (r.step->max_rss_kb < 0 && r.step->gpu_util_pct < 0) return always ? "energy=0" : "";
  std::string out = "cpu=" + SacctElapsed(r.step->total_cpu_ms / 1000) + ",energy=0";
  if (r.step->gpu_util_pct >= 0) {
    out += ",gres/gpumem=" + c.KiB(std::max<int64_t>(r.step->gpu_mem_max_bytes, 0) >> 10) +
           ",gres/gpuutil=" + std::to_string(r.step->gpu_util_pct);
  }
  if (r.step->max_rss_kb >= 0) out += ",mem=" + c.KiB(r.step->max_rss_kb);
  return out;
}
std::string UsageOut(const Row& r) { return r.step && r.step->max_rss_kb < 0 ? "energy=0" : ""; }
std::string JobOnly(const Row& r, const std::string& v) { return r.step ? "" : v; }

const std::vector<FieldDef>& Fields() {
  static const std::vector<FieldDef> kFields = {
      {"Account", 10, [](const Row& r, Ctx&) { return r.job->account; }},
      {"AdminComment", 15, Blank},
      {"AllocCPUS", 10,
       [](const Row& r, Ctx&) { return std::to_string(r.step ? r.step->ncpus : r.job->ncpus); }},
      {"AllocNodes", 10,
       [](const Row& r, Ctx&) {
         return std::to_string(r.step ? r.step->nnodes : r.job->nnodes);
       }},
      {"AllocTRES", 10,
       [](const Row& r, Ctx&) { return r.step ? r.step->alloc_tres : r.job->alloc_tres; }},
      {"AssocID", 10, Blank},
      {"AveCPU", 10, Blank},
      {"AveCPUFreq", 10, [](const Row& r, Ctx&) { return r.step ? "0" : ""; }},
      {"AveDiskRead", 14, Blank},
      {"AveDiskWrite", 14, Blank},
      {"AvePages", 10, Blank},
      {"AveRSS", 10,
       [](const Row& r, Ctx&) {
         // One sample per task; Muster records the step's peak only.
         return r.step && r.step->max_rss_kb >= 0 ? SacctKiloBytes(r.step->max_rss_kb)
                                                  : std::string();
       }},
      {"AveVMSize", 10, Blank},
      {"BlockID", 10, Blank},
      {"Cluster", 10, [](const Row& r, Ctx&) { return r.job->cluster; }},
      {"Comment", 14, [](const Row& r, Ctx&) { return JobOnly(r, r.job->comment); }},
      {"Constraints", 19, Blank},
      {"ConsumedEnergy", 14, [](const Row& r, Ctx&) { return r.step ? "0" : ""; }},
      {"ConsumedEnergyRaw", 17, [](const Row& r, Ctx&) { return r.step ? "0" : ""; }},
      {"CPUTime", 10,
       [](const Row& r, Ctx&) {
         const int n = r.step ? r.step->ncpus : r.job->ncpus;
         return SacctElapsed(RowElapsed(r) * n);
       }},
      {"CPUTimeRAW", 10,
       [](const Row& r, Ctx&) {
         const int n = r.step ? r.step->ncpus : r.job->ncpus;
         return std::to_string(RowElapsed(r) * n);
       }},
      {"DerivedExitCode", 15,
       [](const Row& r, Ctx&) {
         return JobOnly(r, ExitText(r.job->derived_exit_code, r.job->derived_exit_signal));
       }},
      {"Elapsed", 10, [](const Row& r, Ctx&) { return SacctElapsed(RowElapsed(r)); }},
      {"ElapsedRaw", 10, [](const Row& r, Ctx&) { return std::to_string(RowElapsed(r)); }},
      {"Eligible", 19,
       [](const Row& r, Ctx& c) {
         return Timestamp(r.step ? r.step->start_time : r.job->eligible_time, c.tf);
       }},
      {"End", 19, [](const Row& r, Ctx& c) { return Timestamp(RowEnd(r), c.tf); }},
      {"ExitCode", 8,
       [](const Row& r, Ctx&) {
         return r.step ? ExitText(r.step->exit_code, r.step->exit_signal)
                       : ExitText(r.job->exit_code, r.job->exit_signal);
       }},
      {"GID", 6, [](const Row& r, Ctx&) { return JobOnly(r, std::to_string(r.job->gid)); }},
      {"Group", 9, [](const Row& r, Ctx&) { return JobOnly(r, r.job->group); }},
      {"JobID", -12,
       [](const Row& r, Ctx&) {
         return r.step ? JobIdText(*r.job) + "." + r.step->step_id : JobIdText(*r.job);
       }},
      {"JobIDRaw", -12,
       [](const Row& r, Ctx&) {
         return r.step ? std::to_string(r.job->job_id) + "." + r.step->step_id
                       : std::to_string(r.job->job_id);
       }},
      {"JobName", 10, [](const Row& r, Ctx&) { return r.step ? r.step->name : r.job->name; }},
      {"Layout", 8, Blank},
      {"MaxDiskRead", 12, Blank},
      {"MaxDiskReadNode", 15, Blank},
      {"MaxDiskReadTask", 15, Blank},
      {"MaxDiskWrite", 12, Blank},
      {"MaxDiskWriteNode", 16, Blank},
      {"MaxDiskWriteTask", 16, Blank},
      {"MaxPages", 8, Blank},
      {"MaxPagesNode", 12, Blank},
      {"MaxPagesTask", 14, Blank},
      {"MaxRSS", 10,
       [](const Row& r, Ctx& c) {
         return r.step && r.step->max_rss_kb >= 0 ? c.KiB(r.step->max_rss_kb) : std::string();
       }},
      {"MaxRSSNode", 10,
       [](const Row& r, Ctx&) {
         return r.step && r.step->max_rss_kb >= 0 ? r.step->node_list : std::string();
       }},
      {"MaxRSSTask", 10,
       [](const Row& r, Ctx&) {
         return r.step && r.step->max_rss_kb >= 0 ? std::string("0") : std::string();
       }},
      {"MaxVMSize", 10, Blank},
      {"MaxVMSizeNode", 14, Blank},
      {"MaxVMSizeTask", 14, Blank},
      {"MinCPU", 10, Blank},
      {"MinCPUNode", 10, Blank},
      {"MinCPUTask", 10, Blank},
      {"NCPUS", 10,
       [](const Row& r, Ctx&) { return std::to_string(r.step ? r.step->ncpus : r.job->ncpus); }},
      {"NNodes", 8,
       [](const Row& r, Ctx&) {
         return std::to_string(r.step ? r.step->nnodes : r.job->nnodes);
       }},
      {"NodeList", 15,
       [](const Row& r, Ctx&) {
         const std::string& n = r.step ? r.step->node_list : r.job->node_list;
         return n.empty() ? std::string("None assigned") : n;
       }},
      {"NTasks", 8,
       [](const Row& r, Ctx&) { return r.step ? std::to_string(r.step->ntasks) : ""; }},
      {"Partition", 10, [](const Row& r, Ctx&) { return JobOnly(r, r.job->partition); }},
      {"QOS", 10, [](const Row& r, Ctx&) { return JobOnly(r, r.job->qos); }},
      {"Reason", 22,
       [](const Row& r, Ctx&) {
         return JobOnly(r, r.job->reason.empty() ? "None" : r.job->reason);
       }},
      {"ReqCPUFreqGov", 13, [](const Row& r, Ctx&) { return r.step ? "0" : "Unknown"; }},
      {"ReqCPUFreqMax", 13, [](const Row& r, Ctx&) { return r.step ? "0" : "Unknown"; }},
      {"ReqCPUFreqMin", 13, [](const Row& r, Ctx&) { return r.step ? "0" : "Unknown"; }},
      {"ReqCPUS", 8, [](const Row& r, Ctx&) { return JobOnly(r, std::to_string(r.job->ncpus)); }},
      {"ReqMem", 10,
       [](const Row& r, Ctx&) {
         return JobOnly(r, r.job->req_mem_mb > 0 ? FormatMemoryMb(r.job->req_mem_mb) : "0");
       }},
      {"ReqNodes", 8, [](const Row& r, Ctx&) { return JobOnly(r, std::to_string(r.job->nnodes)); }},
      {"ReqTRES", 10, [](const Row& r, Ctx&) { return JobOnly(r, r.job->req_tres); }},
      {"Reservation", 20, Blank},
      {"Restarts", 8, [](const Row& r, Ctx&) { return JobOnly(r, std::to_string(r.job->restarts)); }},
      {"Start", 19, [](const Row& r, Ctx& c) { return Timestamp(RowStart(r), c.tf); }},
      {"State", 10, [](const Row& r, Ctx&) { return r.step ? r.step->state : r.job->state; }},
      {"Submit", 19,
       [](const Row& r, Ctx& c) {
         return Timestamp(r.step ? r.step->start_time : r.job->submit_time, c.tf);
       }},
      {"Suspended", 10, [](const Row&, Ctx&) { return std::string("00:00:00"); }},
      {"SystemCPU", 10, Blank},
      {"Timelimit", 10,
       [](const Row& r, Ctx&) {
         if (r.step) return std::string();
         return r.job->time_limit_min < 0 ? std::string("UNLIMITED")
                                          : SacctElapsed(r.job->time_limit_min * 60);
       }},
      {"TimelimitRaw", 12,
       [](const Row& r, Ctx&) {
         if (r.step) return std::string();
         return r.job->time_limit_min < 0 ? std::string("UNLIMITED")
                                          : std::to_string(r.job->time_limit_min);
       }},
      {"TotalCPU", 10,
       [](const Row& r, Ctx&) {
         return SacctCpuTime(r.step ? r.step->total_cpu_ms : r.job->total_cpu_ms);
       }},
      {"TRESUsageInAve", 14, [](const Row& r, Ctx& c) { return UsageIn(r, c, true); }},
      {"TRESUsageInMax", 14, [](const Row& r, Ctx& c) { return UsageIn(r, c, false); }},
      {"TRESUsageInMaxNode", 18, Blank},
      {"TRESUsageInMaxTask", 18, Blank},
      {"TRESUsageInMin", 14, [](const Row& r, Ctx& c) { return UsageIn(r, c, false); }},
      {"TRESUsageInMinNode", 18, Blank},
      {"TRESUsageInMinTask", 18, Blank},
      {"TRESUsageInTot", 14, [](const Row& r, Ctx& c) { return UsageIn(r, c, true); }},
      {"TRESUsageOutAve", 15, [](const Row& r, Ctx&) { return UsageOut(r); }},
      {"TRESUsageOutMax", 15, Blank},
      {"TRESUsageOutMaxNode", 19, Blank},
      {"TRESUsageOutMaxTask", 19, Blank},
      {"TRESUsageOutTot", 15, [](const Row& r, Ctx&) { return UsageOut(r); }},
      {"UID", 6, [](const Row& r, Ctx&) { return JobOnly(r, std::to_string(r.job->uid)); }},
      {"User", 9, [](const Row& r, Ctx&) { return JobOnly(r, r.job->user); }},
      {"UserCPU", 10, Blank},
      {"WCKey", 10, Blank},
      {"WorkDir", 20, [](const Row& r, Ctx&) { return JobOnly(r, r.job->work_dir); }},
  };
  return kFields;
}

const FieldDef* FindField(std::string_view name) {
  for (const auto& f : Fields())
    if (util::EqualsIgnoreCase(f.name, name)) return &f;
  return nullptr;
}

struct Column {
  const FieldDef* def;
  int width;
  bool right;
};

Result<std::vector<Column>> ParseColumns(const std::string& format) {
  std::vector<Column> cols;
  for (const AccountingFormatItem& item : ParseAccountingFormat(format)) {
    const FieldDef* def = FindField(item.name);
    if (def == nullptr)
      return InvalidArgument("sacct: error: Invalid field requested: \"" + item.name + "\"");
    if (item.has_width) {
      cols.push_back({def, item.width, !item.left});
    } else {
      cols.push_back({def, std::abs(def->width), def->width > 0});
    }
  }
  return cols;
}

const std::map<std::string, std::string>& StateAbbrevs() {
  static const std::map<std::string, std::string> kStates = {
      {"BF", "BOOT_FAIL"}, {"CA", "CANCELLED"}, {"CD", "COMPLETED"}, {"DL", "DEADLINE"},
      {"F", "FAILED"},     {"NF", "NODE_FAIL"}, {"OOM", "OUT_OF_MEMORY"}, {"PD", "PENDING"},
      {"PR", "PREEMPTED"}, {"R", "RUNNING"},    {"RQ", "REQUEUED"},  {"RS", "RESIZING"},
      {"RV", "REVOKED"},   {"S", "SUSPENDED"},  {"TO", "TIMEOUT"},   {"CG", "COMPLETING"},
  };
  return kStates;
}

std::string BaseState(const std::string& state) {
  return state.substr(0, state.find(' '));
}

// Splits a -j item "N", "N_T", "N+K", "N.batch", "N_T.0", "N+K.0".
struct JobSel {
  int64_t id = 0;
  int64_t task = -1;
  int het_offset = -1;  // "+K": component K of heterogeneous job N
  std::string step;     // empty = whole job
};

Result<JobSel> ParseJobSel(const std::string& text) {
  JobSel s;
  std::string t = text;
  if (size_t dot = t.find('.'); dot != std::string::npos) {
    s.step = t.substr(dot + 1);
    t = t.substr(0, dot);
  }
  if (size_t plus = t.find('+'); plus != std::string::npos) {
    auto offset = util::ParseInt(t.substr(plus + 1));
    if (!offset.ok() || *offset < 0 || *offset > INT32_MAX) {
      return InvalidArgument("sacct: fatal: Bad job/step specified: " + text);
    }
    s.het_offset = static_cast<int>(*offset);
    t = t.substr(0, plus);
  }
  std::string task;
  bool has_task = false;
  if (size_t us = t.find('_'); us != std::string::npos) {
    has_task = true;
    task = t.substr(us + 1);
    t = t.substr(0, us);
  }
  auto id = util::ParseInt(t);
  if (!id.ok() || *id <= 0) return InvalidArgument("sacct: fatal: Bad job/step specified: " + text);
  s.id = *id;
  if (has_task) {
    // sacct 22.05 takes one index only: "14491_", "14491_x", "14491_*" and
    // "14491_[1-3]" all fail with "Bad job array element specified: 14491".
    auto tk = util::ParseInt(task);
    if (!tk.ok() || *tk < 0)
      return InvalidArgument(fmt::format("sacct: fatal: Bad job array element specified: {}", *id));
    s.task = *tk;
  }
  return s;
}

// -i/-I's "min[-max]"; nullopt when none is given or it is not one
// (CheckSacctRequest refuses those).
struct CountRange {
  int64_t min = 0;
  int64_t max = 0;
};
std::optional<CountRange> ParseCountRange(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const size_t dash = text.find('-');
  const Result<int64_t> lo = util::ParseInt(text.substr(0, dash));
  const Result<int64_t> hi =
      dash == std::string::npos ? lo : util::ParseInt(text.substr(dash + 1));
  if (!lo.ok() || !hi.ok() || *lo < 0 || *hi < *lo) return std::nullopt;
  return CountRange{*lo, *hi};
}

int64_t LocalMidnight(int64_t now) {
  time_t t = static_cast<time_t>(now);
  struct tm tm;
  localtime_r(&t, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&tm));
}

}  // namespace

std::string SacctHelpFormat() {
  std::vector<std::string_view> names;
  for (const FieldDef& f : Fields()) names.push_back(f.name);
  return HelpFormatColumns(names);
}

std::string SacctElapsed(int64_t seconds) {
  return util::FormatDurationLong(std::max<int64_t>(0, seconds));
}

std::string SacctCpuTime(int64_t ms) {
  if (ms < 0) ms = 0;
  const int64_t secs = ms / 1000;
  const int64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  if (d > 0) return fmt::format("{}-{:02d}:{:02d}:{:02d}", d, h, m, s);
  if (h > 0) return fmt::format("{:02d}:{:02d}:{:02d}", h, m, s);
  return fmt::format("{:02d}:{:02d}.{:03d}", m, s, ms % 1000);
}

std::string SacctKiloBytes(int64_t kb) {
  // Slurm's convert_num_unit in exact mode: a larger unit only when the value
  // divides evenly (322132K stays 322132K, 1048576K is 1G).
  static const char kUnits[] = "KMGTP";
  int u = 0;
  while (kb >= 1024 && kb % 1024 == 0 && u < 4) {
    kb /= 1024;
    ++u;
  }
  return fmt::format("{}{}", kb, kUnits[u]);
}

Result<int64_t> ParseSlurmTime(std::string_view text_in, int64_t now) {
  std::string text(util::Trim(text_in));
  std::string lower = util::ToLower(text);
  auto bad = [&] { return InvalidArgument("Invalid time specification (pos=0): " + text); };
  if (lower.empty()) return bad();
  if (lower.rfind("now", 0) == 0) {
    const Result<int64_t> offset = util::ParseNowOffset(lower);
    if (!offset.ok()) return bad();
    return now + *offset;
  }
  const int64_t midnight = LocalMidnight(now);
  if (lower == "today" || lower == "midnight") return midnight;
  if (lower == "noon") return midnight + 12 * 3600;
  if (lower == "tomorrow") return LocalMidnight(midnight + 36 * 3600);
  bool digits = !lower.empty();
  for (char c : lower) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits && lower.size() > 8) {  // seconds since the epoch
    const Result<int64_t> epoch = util::ParseInt(lower);
    if (!epoch.ok()) return bad();
    return *epoch;
  }
  time_t tnow = static_cast<time_t>(now);
  struct tm tm;
  localtime_r(&tnow, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  std::string date = text, clock;
  if (size_t t = text.find('T'); t != std::string::npos) {
    date = text.substr(0, t);
    clock = text.substr(t + 1);
  } else if (text.find(':') != std::string::npos) {
    date.clear();
    clock = text;
  }
  if (!date.empty()) {
    if (std::sscanf(date.c_str(), "%d-%d-%d%c", &y, &mo, &d, &tail) == 3) {
      tm.tm_year = y - 1900;
      tm.tm_mon = mo - 1;
      tm.tm_mday = d;
    } else if (int n = std::sscanf(date.c_str(), "%d/%d/%d%c", &mo, &d, &y, &tail); n == 2 || n == 3) {
      if (n == 3) tm.tm_year = (y < 100 ? y + 2000 : y) - 1900;
      tm.tm_mon = mo - 1;
      tm.tm_mday = d;
    } else if (digits && (lower.size() == 4 || lower.size() == 6)) {
      mo = std::atoi(lower.substr(0, 2).c_str());
      d = std::atoi(lower.substr(2, 2).c_str());
      if (lower.size() == 6) tm.tm_year = std::atoi(lower.substr(4, 2).c_str()) + 100;
      tm.tm_mon = mo - 1;
      tm.tm_mday = d;
    } else {
      return bad();
    }
    if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31) return bad();
  }
  if (!clock.empty()) {
    int n = std::sscanf(clock.c_str(), "%d:%d:%d%c", &h, &mi, &s, &tail);
    if (n < 2 || n > 3 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60) return bad();
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = n == 3 ? s : 0;
  }
  tm.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&tm));
}

nlohmann::json ToJson(const SacctRequest& r) {
  return {{"job_ids", r.job_ids},     {"users", r.users},
          {"accounts", r.accounts},   {"partitions", r.partitions},
          {"names", r.names},         {"states", r.states},
          {"start", r.start},         {"end", r.end},
          {"all_users", r.all_users}, {"allocations", r.allocations},
          {"duplicates", r.duplicates},
          {"parsable", r.parsable},   {"parsable2", r.parsable2},
          {"noheader", r.noheader},   {"json", r.json},
          {"format", r.format},       {"qos", r.qos},
          {"nodelist", r.nodelist},   {"groups", r.groups},
          {"nnodes", r.nnodes},       {"ncpus", r.ncpus},
          {"noconvert", r.noconvert}};
}

Result<SacctRequest> SacctRequestFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("sacct request: not an object");
  SacctRequest r;
  try {
    r.job_ids = j.value("job_ids", r.job_ids);
    r.users = j.value("users", r.users);
    r.accounts = j.value("accounts", r.accounts);
    r.partitions = j.value("partitions", r.partitions);
    r.names = j.value("names", r.names);
    r.states = j.value("states", r.states);
    r.start = j.value("start", r.start);
    r.end = j.value("end", r.end);
    r.all_users = j.value("all_users", false);
    r.allocations = j.value("allocations", false);
    r.duplicates = j.value("duplicates", false);
    r.parsable = j.value("parsable", false);
    r.parsable2 = j.value("parsable2", false);
    r.noheader = j.value("noheader", false);
    r.json = j.value("json", false);
    r.format = j.value("format", std::string(kSacctDefaultFormat));
    r.qos = j.value("qos", r.qos);
    r.nodelist = j.value("nodelist", r.nodelist);
    r.groups = j.value("groups", r.groups);
    r.nnodes = j.value("nnodes", r.nnodes);
    r.ncpus = j.value("ncpus", r.ncpus);
    r.noconvert = j.value("noconvert", false);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("sacct request: ") + e.what());
  }
  return r;
}

util::Status CheckSacctRequest(const SacctRequest& r) {
  MUSTER_RETURN_IF_ERROR(ParseColumns(r.format).status());
  for (const auto& [option, text] : {std::pair{"--nnodes", &r.nnodes}, {"--ncpus", &r.ncpus}}) {
    if (!text->empty() && !ParseCountRange(*text)) {
      return InvalidArgument(fmt::format("sacct: error: {}={}: give a count or min-max", option,
                                         *text));
    }
  }
  for (const std::string& list : r.nodelist) {
    if (!util::ExpandHostlist(list).ok()) {
      return InvalidArgument("sacct: error: --nodelist: invalid hostlist: " + list);
    }
  }
  for (const std::string& s : r.states) {
    const std::string up = util::ToUpper(s);
    if (!StateAbbrevs().count(up)) {
      bool known = false;
      for (const auto& [k, v] : StateAbbrevs()) known = known || v == up;
      if (!known) return InvalidArgument("sacct: fatal: unrecognized job state value '" + s + "'");
    }
  }
  for (const std::string* t : {&r.start, &r.end}) {
    if (t->empty()) continue;
    if (auto v = ParseSlurmTime(*t, 0); !v.ok()) return v.status();
  }
  for (const std::string& j : r.job_ids) {
    auto sel = ParseJobSel(j);
    if (!sel.ok()) return sel.status();
  }
  return util::Status::Ok();
}

// Resolves users (names or uids) to uids; unknown names match nobody.
static std::vector<uint32_t> ResolveUids(const std::vector<std::string>& names,
                                         const util::UserDb& users) {
  std::vector<uint32_t> out;
  for (const std::string& u : names) {
    if (auto uid = users.LookupUid(u)) out.push_back(*uid);
    else out.push_back(0xfffffffeu);
  }
  return out;
}

store::AccountingQuery SacctQuery(const SacctRequest& req, const util::UserDb& users, int64_t now,
                                  uint32_t caller_uid, bool is_admin) {
  store::AccountingQuery q;
  for (const std::string& j : req.job_ids)
    if (auto s = ParseJobSel(j); s.ok()) q.job_ids.push_back(s->id);
  q.uids = ResolveUids(req.users, users);
  if (q.uids.empty() && req.job_ids.empty() && !req.all_users && caller_uid != 0 && !is_admin)
    q.uids.push_back(caller_uid);
  q.accounts = req.accounts;
  q.partitions = req.partitions;
  q.names = req.names;
  int64_t start = 0, end = 0;
  if (!req.start.empty()) {
    if (auto t = ParseSlurmTime(req.start, now); t.ok()) start = *t;
  } else if (req.job_ids.empty()) {
    start = req.states.empty() ? LocalMidnight(now) : now;
  }
  if (!req.end.empty()) {
    if (auto t = ParseSlurmTime(req.end, now); t.ok()) end = *t;
  } else if (start != 0) {
    // "now" as an open end: a job that became eligible in this very second
    // is still shown (Slurm's end is exclusive at second resolution).
    end = req.states.empty() ? now + 1 : start;
  }
  q.window_start = start;
  q.window_end = end;
  q.include_steps = !req.allocations;
  q.duplicates = req.duplicates;
  return q;
}

util::Status CheckSacctUsers(const SacctRequest& req, const util::UserDb& users) {
  for (const std::string& u : req.users) {
    // A uid counts only with a passwd entry (Slurm refuses -u 99999 too).
    auto uid = users.LookupUid(u);
    if (!uid || users.UserName(*uid) == std::to_string(*uid)) {
      return InvalidArgument("sacct: error: Invalid user id: " + u);
    }
  }
  return util::Status::Ok();
}

Result<std::string> RenderSacct(const SacctRequest& req, const util::UserDb& users,
                                const std::vector<JobRecord>& jobs,
                                const std::vector<StepRecord>& steps, int64_t now,
                                uint32_t caller_uid, bool is_admin) {
  MUSTER_RETURN_IF_ERROR(CheckSacctUsers(req, users));
  auto cols_r = ParseColumns(req.format.empty() ? std::string(kSacctDefaultFormat) : req.format);
  if (!cols_r.ok()) return cols_r.status();
  const std::vector<Column>& cols = *cols_r;
  if (!req.start.empty()) {
    if (auto t = ParseSlurmTime(req.start, now); !t.ok()) return t.status();
  }
  if (!req.end.empty()) {
    if (auto t = ParseSlurmTime(req.end, now); !t.ok()) return t.status();
  }
  const store::AccountingQuery q = SacctQuery(req, users, now, caller_uid, is_admin);
  std::vector<JobSel> sels;
  for (const std::string& j : req.job_ids)
    if (auto s = ParseJobSel(j); s.ok()) sels.push_back(*s);
  std::set<std::string> states;
  for (const std::string& s : req.states) {
    const std::string up = util::ToUpper(s);
    auto it = StateAbbrevs().find(up);
    states.insert(it != StateAbbrevs().end() ? it->second : up);
  }
  auto in = [](const auto& list, const auto& v) {
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
  };
  // -N: the nodes named; -i/-I: the counts.
  std::set<std::string> nodes;
  for (const std::string& list : req.nodelist) {
    if (auto names = util::ExpandHostlist(list); names.ok()) nodes.insert(names->begin(), names->end());
  }
  auto ran_on_nodes = [&](const JobRecord& j) {
    if (nodes.empty()) return true;
    auto names = util::ExpandHostlist(j.node_list);
    return names.ok() && std::any_of(names->begin(), names->end(),
                                     [&](const std::string& n) { return nodes.contains(n); });
  };
  const std::optional<CountRange> nnodes = ParseCountRange(req.nnodes);
  const std::optional<CountRange> ncpus = ParseCountRange(req.ncpus);
  auto within = [](const std::optional<CountRange>& r, int64_t n) {
    return !r || (n >= r->min && n <= r->max);
  };
  auto in_groups = [&](const JobRecord& j) {
    return req.groups.empty() || in(req.groups, j.group) || in(req.groups, std::to_string(j.gid));
  };

  // Steps by job id (input sorted or not).
  std::multimap<int64_t, const StepRecord*> steps_of;
  for (const auto& s : steps) steps_of.emplace(s.job_id, &s);

  // Without -D only the latest run of each job id.
  std::map<int64_t, int> latest_run;
  for (const auto& j : jobs) {
    auto [it, fresh] = latest_run.emplace(j.job_id, j.restarts);
    if (!fresh) it->second = std::max(it->second, j.restarts);
  }
  std::vector<const JobRecord*> selected;
  for (const auto& j : jobs)
    if (req.duplicates || latest_run[j.job_id] == j.restarts) selected.push_back(&j);
  std::sort(selected.begin(), selected.end(), [](const JobRecord* a, const JobRecord* b) {
    return store::JobRecordLess(*a, *b);
  });

  std::string out;
  TimestampFormatter tf;
  Ctx ctx{&tf, req.noconvert};
  const int parsable = req.parsable2 ? 2 : req.parsable ? 1 : 0;
  std::vector<AccountingColumn> table;
  for (const Column& c : cols) table.push_back({c.def->name, c.width, c.right});
  if (!req.noheader && !req.json) AppendAccountingHeader(&out, table, parsable);
  nlohmann::json json_jobs = nlohmann::json::array();
  std::vector<std::string> values(cols.size());
  auto emit = [&](const Row& row) {
    for (size_t i = 0; i < cols.size(); ++i) values[i] = cols[i].def->value(row, ctx);
    AppendAccountingRow(&out, table, values, parsable);
  };
  for (const JobRecord* j : selected) {
    // The same filters as the query, so any superset of records renders right.
    if (!q.job_ids.empty() && !in(q.job_ids, j->job_id) && !in(q.job_ids, j->array_job_id) &&
        !in(q.job_ids, j->het_job_id)) {
      continue;
    }
    if (!in(q.uids, j->uid) || !in(q.accounts, j->account) || !in(q.partitions, j->partition) ||
        !in(q.names, j->name)) {
      continue;
    }
    if (!in(req.qos, j->qos) || !in_groups(*j) || !ran_on_nodes(*j) || !within(nnodes, j->nnodes) ||
        !within(ncpus, j->ncpus)) {
      continue;
    }
    if (q.window_start > 0 && j->end_time != 0 && j->end_time < q.window_start) continue;
    if (q.window_end > 0 && (j->eligible_time == 0 || j->eligible_time >= q.window_end)) continue;
    if (!states.empty() && !states.count(BaseState(j->state))) continue;
    // Which steps: all, or those the -j items name.
    bool all_steps = sels.empty();
    std::set<std::string> named;
    for (const auto& s : sels) {
      // "N" names a job, a task by its raw id, a whole array or a whole
      // heterogeneous job; "N_T" a started task (not one still in the
      // pending part); "N+K" a heterogeneous job's component.
      const bool hit =
          s.het_offset >= 0
              ? s.id == j->het_job_id && s.het_offset == j->het_job_offset
              : (s.task < 0 && (s.id == j->job_id || s.id == j->array_job_id ||
                                s.id == j->het_job_id)) ||
                    (s.task >= 0 && s.id == j->array_job_id && s.task == j->array_task_id);
      if (!hit) continue;
      if (s.step.empty()) all_steps = true;
      else named.insert(s.step);
    }
    if (!sels.empty() && !all_steps && named.empty()) continue;
    Row row{j, nullptr, now};
    std::vector<const StepRecord*> job_steps;
    auto [b, e] = steps_of.equal_range(j->job_id);
    for (auto it = b; it != e; ++it) {
      // A step of another run of the job stays with that run (-1: unknown).
      if (it->second->run >= 0 && it->second->run != j->restarts) continue;
      if (all_steps || named.count(it->second->step_id)) job_steps.push_back(it->second);
    }
    std::sort(job_steps.begin(), job_steps.end(), [](const StepRecord* x, const StepRecord* y) {
      return store::StepSortRank(x->step_id) < store::StepSortRank(y->step_id);
    });
    if (req.json) {
      json_jobs.push_back(SacctJobJson(*j, job_steps, now));
      continue;
    }
    // -j N.batch lists only the named steps, without the job's own row (as
    // sacct 22.05 does).
    if (all_steps || req.allocations) emit(row);
    if (req.allocations) continue;
    for (const StepRecord* s : job_steps) emit(Row{j, s, now});
  }
  if (req.json) {
    nlohmann::json doc = {
        {"meta",
         {{"plugin", {{"type", "openapi/dbv0.0.38"}, {"name", "Slurm OpenAPI DB v0.0.38"}}},
          {"Slurm", SlurmVersionJson()}}},
        {"errors", nlohmann::json::array()},
        {"jobs", json_jobs}};
    return doc.dump(2) + "\n";
  }
  return out;
}

namespace {

nlohmann::json ExitJson(int code, int sig) {
  if (code < 0) return {{"status", "PENDING"}, {"return_code", nullptr}};
  if (sig != 0) return {{"status", "SIGNALED"}, {"return_code", code}, {"signal", {{"signal_id", sig}}}};
  return {{"status", code == 0 ? "SUCCESS" : "FAILED"}, {"return_code", code}};
}

nlohmann::json TresJson(const std::string& tres) {
  static const std::map<std::string, int> kIds = {{"cpu", 1}, {"mem", 2}, {"energy", 3},
                                                  {"node", 4}, {"billing", 5}, {"gres/gpu", 1001}};
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& item : util::Split(tres, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string type = item.substr(0, eq), name;
    if (size_t sl = type.find('/'); sl != std::string::npos) {
      name = type.substr(sl + 1);
      type = type.substr(0, sl);
    }
    const std::string value = item.substr(eq + 1);
    int64_t count = 0;
    if (type == "mem") {
      auto mb = util::ParseMemoryMb(value);
      count = mb.ok() ? *mb : 0;
    } else {
      count = std::atoll(value.c_str());
    }
    auto it = kIds.find(item.substr(0, eq));
    out.push_back({{"type", type},
                   {"name", name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name)},
                   {"id", it != kIds.end() ? it->second : 0},
                   {"count", count}});
  }
  return out;
}

}  // namespace

nlohmann::json SacctJobJson(const JobRecord& j, const std::vector<const StepRecord*>& steps,
                            int64_t now) {
  const Row row{&j, nullptr, now};
  nlohmann::json js = nlohmann::json::array();
  for (const StepRecord* s : steps) {
    const Row sr{&j, s, now};
    js.push_back({{"nodes", {{"list", util::Split(s->node_list, ',')}, {"count", s->nnodes}, {"range", s->node_list}}},
                  {"tres", {{"allocated", TresJson(s->alloc_tres)}}},
                  {"time", {{"elapsed", RowElapsed(sr)}, {"end", s->end_time}, {"start", s->start_time}, {"suspended", 0},
                            {"total", {{"seconds", s->total_cpu_ms / 1000}, {"microseconds", s->total_cpu_ms % 1000 * 1000}}}}},
                  {"exit_code", ExitJson(s->exit_code, s->exit_signal)},
                  {"tasks", {{"count", s->ntasks}}},
                  {"state", s->state},
                  {"step", {{"job_id", j.job_id}, {"id", s->step_id}, {"name", s->name}}}});
  }
  return {{"account", j.account},
          {"comment", {{"administrator", nullptr}, {"job", j.comment.empty() ? nlohmann::json(nullptr) : nlohmann::json(j.comment)}, {"system", nullptr}}},
          {"allocation_nodes", j.nnodes},
          {"array", {{"job_id", j.array_job_id},
                     {"task_id", j.array_task_id >= 0 ? nlohmann::json(j.array_task_id) : nlohmann::json(nullptr)}}},
          {"association", {{"account", j.account}, {"cluster", j.cluster}, {"partition", nullptr}, {"user", j.user}}},
          {"cluster", j.cluster},
          {"derived_exit_code", ExitJson(j.derived_exit_code, j.derived_exit_signal)},
          {"time", {{"elapsed", RowElapsed(row)}, {"eligible", j.eligible_time}, {"end", j.end_time},
                    {"start", j.start_time}, {"submission", j.submit_time}, {"suspended", 0},
                    {"limit", j.time_limit_min},
                    {"total", {{"seconds", j.total_cpu_ms / 1000}, {"microseconds", j.total_cpu_ms % 1000 * 1000}}}}},
          {"exit_code", ExitJson(j.exit_code, j.exit_signal)},
          {"group", j.group},
          {"job_id", j.job_id},
          {"name", j.name},
          {"nodes", j.node_list.empty() ? std::string("None assigned") : j.node_list},
          {"partition", j.partition},
          {"qos", j.qos},
          {"required", {{"CPUs", j.ncpus}, {"memory", j.req_mem_mb}}},
          {"state", {{"current", BaseState(j.state)}, {"reason", j.reason.empty() ? "None" : j.reason}}},
          {"steps", js},
          {"tres", {{"allocated", TresJson(j.alloc_tres)}, {"requested", TresJson(j.req_tres)}}},
          {"user", j.user},
          {"working_directory", j.work_dir}};
}

}  // namespace muster::render

#include "sim/trace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::sim {
namespace {

using util::InvalidArgument;
using util::Result;
using util::Status;

// Counts what was assumed, by description, in the order first seen.
class Assumptions {
 public:
  void Note(std::string_view what) {
    for (auto& a : list_) {
      if (a.what == what) {
        ++a.jobs;
        return;
      }
    }
    list_.push_back({std::string(what), 1});
  }
  std::vector<TraceAssumption> Take() { return std::move(list_); }

 private:
  std::vector<TraceAssumption> list_;
};

// The error of line `line` of `name`.
Status LineError(std::string_view name, int line, std::string_view what) {
  return InvalidArgument(fmt::format("{}:{}: {}", name, line, what));
}

// A number of a trace: an integer or a decimal ("57.245"), rounded to the
// nearest whole one. Empty: nullopt.
Result<std::optional<int64_t>> ParseNumber(std::string_view text) {
  text = util::Trim(text);
  if (text.empty()) return std::optional<int64_t>();
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v) ||
      std::fabs(v) > 9.2e18) {
    return InvalidArgument(fmt::format("'{}' is not a number", text));
  }
  return std::optional<int64_t>(std::llround(v));
}

// Splits a line of whitespace-separated fields.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Calls visit(line_number, line) for each line (a last line without '\n'
// included; "\r\n" endings read as "\n").
template <typename Visit>
Status ForEachLine(std::string_view text, Visit visit) {
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t at = text.find('\n', start);
    std::string_view line = text.substr(start, at == std::string_view::npos ? at : at - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    MUSTER_RETURN_IF_ERROR(visit(++number, line));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return Status::Ok();
}

// --- SWF -------------------------------------------------------------

// The Standard Workload Format's fields (1-based, as its definition
// numbers them); -1 means unknown.
enum SwfField {
  kSwfJob = 1,
  kSwfSubmit = 2,
  kSwfRun = 4,
  kSwfAllocProcs = 5,
  kSwfReqProcs = 8,
  kSwfReqTime = 9,
  kSwfReqMemKbPerProc = 10,
  kSwfStatus = 11,
  kSwfUser = 12,
  kSwfGroup = 13,
  kSwfPartition = 16,
  kSwfFields = 18,
};
constexpr int kSwfCancelled = 5;
// Requested times of INT_MAX mean "unlimited" in some logs.
constexpr int64_t kSwfUnlimited = std::numeric_limits<int32_t>::max();

Status ParseSwf(std::string_view text, std::string_view name, std::vector<TraceJob>* jobs,
                Assumptions* assumed) {
  return ForEachLine(text, [&](int number, std::string_view line) -> Status {
    std::string_view body = util::Trim(line);
    if (body.empty() || body.front() == ';') return Status::Ok();
    std::vector<std::string_view> words = Words(body);
    if (words.size() != kSwfFields) {
      return LineError(
          name, number,
          fmt::format("an SWF record has {} fields, this one {}", +kSwfFields, words.size()));
    }
    int64_t f[kSwfFields + 1] = {};
    for (int i = 1; i <= kSwfFields; ++i) {
      auto v = ParseNumber(words[i - 1]);
      if (!v.ok() || !v->has_value()) {
        return LineError(name, number,
                         fmt::format("field {}: '{}' is not a number", i, words[i - 1]));
      }
      f[i] = **v;
    }
    if (f[kSwfSubmit] < 0) return LineError(name, number, "field 2 (submit time) is negative");
    TraceJob job;
    job.id = std::string(words[kSwfJob - 1]);
    job.line = number;
    job.submit = f[kSwfSubmit];
    job.run = std::max<int64_t>(f[kSwfRun], 0);
    if (f[kSwfReqProcs] > 0) {
      job.cpus = static_cast<int>(f[kSwfReqProcs]);
    } else if (f[kSwfAllocProcs] > 0) {
      job.cpus = static_cast<int>(f[kSwfAllocProcs]);
      assumed->Note("CPUs: the allocated processors (no requested count)");
    } else {
      job.cpus = 1;
      assumed->Note("CPUs: 1 (neither requested nor allocated processors given)");
    }
    if (f[kSwfReqTime] > 0 && f[kSwfReqTime] < kSwfUnlimited) job.time_limit = f[kSwfReqTime];
    if (f[kSwfReqMemKbPerProc] > 0) {
      job.mem_mb = std::max<int64_t>(1, f[kSwfReqMemKbPerProc] * job.cpus / 1024);
    }
    if (f[kSwfUser] > 0) job.user = fmt::format("user{}", f[kSwfUser]);
    if (f[kSwfGroup] > 0) job.account = fmt::format("group{}", f[kSwfGroup]);
    if (f[kSwfPartition] > 0) {
      assumed->Note("partition: the default (SWF numbers its partitions)");
    }
    job.ran = !(f[kSwfStatus] == kSwfCancelled && (f[kSwfRun] <= 0 || f[kSwfAllocProcs] <= 0));
    jobs->push_back(std::move(job));
    return Status::Ok();
  });
}

// --- Batsim ----------------------------------------------------------

Status ParseBatsim(std::string_view text, std::string_view name, std::vector<TraceJob>* jobs,
                   Assumptions* assumed) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument(fmt::format("{}: not a JSON document", name));
  }
  if (!doc.contains("jobs") || !doc["jobs"].is_array()) {
    return InvalidArgument(fmt::format("{}: no \"jobs\" array (not a Batsim workload)", name));
  }
  const nlohmann::json& profiles = doc.value("profiles", nlohmann::json::object());
  int index = 0;
  for (const nlohmann::json& j : doc["jobs"]) {
    ++index;
    auto where = [&](std::string_view what) {
      return InvalidArgument(fmt::format("{}: job {} (jobs[{}]): {}", name,
                                         j.is_object() && j.contains("id") ? j["id"].dump() : "?",
                                         index - 1, what));
    };
    if (!j.is_object()) return where("not an object");
    if (!j.contains("subtime") || !j["subtime"].is_number()) return where("no numeric \"subtime\"");
    if (!j.contains("res") || !j["res"].is_number_integer() || j["res"].get<int64_t>() < 1) {
      return where("\"res\" is not a positive whole number");
    }
    TraceJob job;
    job.id = j.contains("id") ? (j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump())
                              : std::to_string(index - 1);
    job.line = index;
    job.submit = std::llround(j["subtime"].get<double>());
    if (job.submit < 0) return where("\"subtime\" is negative");
    if (j.contains("walltime") && j["walltime"].is_number() && j["walltime"].get<double>() > 0) {
      job.time_limit = std::llround(std::ceil(j["walltime"].get<double>()));
    }
    std::string profile = j.value("profile", "");
    if (!profiles.contains(profile) || !profiles[profile].is_object()) {
      return where(fmt::format("profile '{}' is not among \"profiles\"", profile));
    }
    const nlohmann::json& p = profiles[profile];
    const char* key = p.contains("delay") ? "delay" : p.contains("runtime") ? "runtime" : nullptr;
    if (key == nullptr || !p[key].is_number()) {
      return where(fmt::format(
          "profile '{}' has no \"delay\" or \"runtime\" (only delay profiles replay)", profile));
    }
    job.run = std::max<int64_t>(0, std::llround(p[key].get<double>()));
    job.nodes = j["res"].get<int>();
    job.cpus = job.nodes;
    assumed->Note("resources: Batsim's \"res\" as nodes, one CPU each");
    jobs->push_back(std::move(job));
  }
  return Status::Ok();
}

// --- sacct --parsable2 -----------------------------------------------

// Slurm's timestamp "YYYY-MM-DDTHH:MM:SS", read as UTC (a dump's times are
// the site's local time; only their differences matter here, so a daylight
// saving change inside a dump shifts the jobs after it by an hour).
// "Unknown"/"None"/empty: nullopt.
Result<std::optional<int64_t>> ParseSacctTime(std::string_view text) {
  if (text.empty() || text == "Unknown" || text == "None") return std::optional<int64_t>();
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  std::string str(text);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail) != 6 ||
      mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
    return InvalidArgument(fmt::format("'{}' is not a time (YYYY-MM-DDTHH:MM:SS)", text));
  }
  using namespace std::chrono;
  sys_days day{year{y} / month{static_cast<unsigned>(mo)} / static_cast<unsigned>(d)};
  return std::optional<int64_t>(day.time_since_epoch().count() * 86400LL + h * 3600 + mi * 60 + s);
}

// The values of a TRES list ("billing=4,cpu=4,gres/gpu=2,mem=8G,node=1"),
// by name.
std::map<std::string, std::string> TresItems(std::string_view tres) {
  std::map<std::string, std::string> out;
  for (const std::string& item : util::Split(tres, ',')) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// The GPUs of a TRES list: gres/gpu, else the sum of its typed counts
// ("gres/gpu:a100=2").
int TresGpus(const std::map<std::string, std::string>& tres) {
  int64_t total = 0;
  for (const auto& [name, value] : tres) {
    auto n = util::ParseInt(value);
    if (!n.ok()) continue;
    if (name == "gres/gpu") return static_cast<int>(*n);
    if (util::StartsWith(name, "gres/gpu:")) total += *n;
  }
  return static_cast<int>(total);
}

Status ParseSacct(std::string_view text, std::string_view name, std::vector<TraceJob>* jobs,
                  Assumptions* assumed) {
  std::map<std::string, size_t> col;
  auto get = [&](const std::vector<std::string>& f, const char* key) -> std::string_view {
    auto it = col.find(key);
    return it == col.end() || it->second >= f.size() ? std::string_view() : f[it->second];
  };
  return ForEachLine(text, [&](int number, std::string_view line) -> Status {
    if (util::Trim(line).empty()) return Status::Ok();
    std::vector<std::string> f = util::Split(line, '|', /*skip_empty=*/false);
    if (col.empty()) {
      for (size_t i = 0; i < f.size(); ++i) col[std::string(f[i])] = i;
      if (!col.contains("JobID") || !col.contains("Submit")) {
        return LineError(name, number,
                         "the header of sacct --parsable2 output must name JobID and Submit "
                         "(e.g. sacct -a -X --parsable2 -o "
                         "JobID,Submit,Start,End,Elapsed,Timelimit,NCPUS,NNodes,ReqTRES,"
                         "User,Account,Partition,State)");
      }
      if (!col.contains("Elapsed") && !(col.contains("Start") && col.contains("End"))) {
        return LineError(name, number, "the header names neither Elapsed nor Start and End");
      }
      return Status::Ok();
    }
    if (f.size() != col.size()) {
      return LineError(name, number,
                       fmt::format("{} fields where the header has {}", f.size(), col.size()));
    }
    std::string_view id = get(f, "JobID");
    if (id.find('.') != std::string_view::npos) return Status::Ok();  // a step's row
    TraceJob job;
    job.id = std::string(id);
    job.line = number;
    auto field_error = [&](const char* key, const Status& st) {
      return LineError(name, number, fmt::format("{}: {}", key, st.message()));
    };
    auto submit = ParseSacctTime(get(f, "Submit"));
    if (!submit.ok()) return field_error("Submit", submit.status());
    if (!submit->has_value()) return LineError(name, number, "Submit: no time given");
    job.submit = **submit;
    auto start = ParseSacctTime(get(f, "Start"));
    if (!start.ok()) return field_error("Start", start.status());
    auto end = ParseSacctTime(get(f, "End"));
    if (!end.ok()) return field_error("End", end.status());
    std::string_view state = get(f, "State");
    job.ran = start->has_value() && !util::StartsWith(state, "PENDING");
    if (std::string_view elapsed = get(f, "Elapsed"); !elapsed.empty()) {
      auto s = util::ParseTimeLimitSeconds(elapsed);
      if (!s.ok() || *s < 0)
        return LineError(name, number, fmt::format("Elapsed: '{}' is not a duration", elapsed));
      job.run = *s;
    } else if (start->has_value() && end->has_value()) {
      job.run = std::max<int64_t>(0, **end - **start);
    }
    if (std::string_view limit = get(f, "Timelimit");
        !limit.empty() && limit != "Partition_Limit" && limit != "UNLIMITED") {
      auto s = util::ParseTimeLimitSeconds(limit);
      if (!s.ok()) return field_error("Timelimit", s.status());
      if (*s > 0) job.time_limit = *s;
    }
    std::string_view tres_text = get(f, "ReqTRES");
    if (tres_text.empty()) tres_text = get(f, "AllocTRES");
    std::map<std::string, std::string> tres = TresItems(tres_text);
    for (const char* key : {"NCPUS", "AllocCPUS", "ReqCPUS"}) {
      auto n = util::ParseInt(get(f, key));
      if (n.ok() && *n > 0) {
        job.cpus = static_cast<int>(*n);
        break;
      }
    }
    if (auto n = util::ParseInt(tres["cpu"]); job.cpus == 0 && n.ok())
      job.cpus = static_cast<int>(*n);
    if (job.cpus <= 0) {
      job.cpus = 1;
      assumed->Note("CPUs: 1 (no NCPUS, AllocCPUS, ReqCPUS or cpu TRES)");
    }
    job.gpus = TresGpus(tres);
    for (const char* key : {"NNodes", "ReqNodes", "AllocNodes"}) {
      auto n = util::ParseInt(get(f, key));
      if (n.ok() && *n > 0) {
        job.nodes = static_cast<int>(*n);
        break;
      }
    }
    if (auto mb = util::ParseMemoryMb(tres["mem"]); mb.ok()) job.mem_mb = *mb;
    job.user = std::string(get(f, "User"));
    job.account = std::string(get(f, "Account"));
    job.partition = std::string(get(f, "Partition"));
    jobs->push_back(std::move(job));
    return Status::Ok();
  });
}

// --- CSV -------------------------------------------------------------

// The column maps of the CSV traces recognised by their header.
struct KnownCsv {
  const char* trace;
  std::vector<std::string> header;  // its columns, in order
  std::map<std::string, std::string> columns;
};

const std::vector<KnownCsv>& KnownCsvs() {
  static const std::vector<KnownCsv> known = {
      {"Microsoft ITP (ElasticFlow)",
       {"job_id", "submission_time", "duration", "num_gpu"},
       {{"id", "job_id"}, {"submit", "submission_time"}, {"run", "duration"}, {"gpus", "num_gpu"}}},
      {"Alibaba GPU (cluster-trace-gpu-v2023)",
       {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
        "creation_time", "deletion_time", "scheduled_time"},
       {{"id", "name"},
        {"submit", "creation_time"},
        {"start", "scheduled_time"},
        {"end", "deletion_time"},
        {"cpu_milli", "cpu_milli"},
        {"gpus", "num_gpu"},
        {"mem_mb", "memory_mib"}}},
  };
  return known;
}

Status ParseCsv(std::string_view text, std::string_view name, const TraceOptions& options,
                std::vector<TraceJob>* jobs, Assumptions* assumed) {
  std::map<std::string, size_t> field_col;  // Muster's field -> column index
  size_t width = 0;
  std::optional<size_t> gpu_milli_col;
  const int per_gpu = options.cpus_per_gpu > 0 ? options.cpus_per_gpu : 1;
  const std::string per_gpu_note = fmt::format("CPUs: {} per GPU (--cpus-per-gpu)", per_gpu);
  return ForEachLine(text, [&](int number, std::string_view line) -> Status {
    if (util::Trim(line).empty()) return Status::Ok();
    std::vector<std::string> f = util::Split(line, ',', /*skip_empty=*/false);
    if (width == 0) {
      std::vector<std::string> header;
      for (std::string_view h : f) header.emplace_back(util::Trim(h));
      width = header.size();
      std::map<std::string, std::string> columns = options.columns;
      if (columns.empty()) {
        for (const KnownCsv& k : KnownCsvs()) {
          if (k.header == header) columns = k.columns;
        }
      }
      if (columns.empty()) {  // columns named as Muster's fields
        for (std::string_view field : kCsvFields) {
          if (std::find(header.begin(), header.end(), field) != header.end()) {
            columns[std::string(field)] = std::string(field);
          }
        }
      }
      for (const auto& [field, column] : columns) {
        if (std::find(std::begin(kCsvFields), std::end(kCsvFields), field) ==
            std::end(kCsvFields)) {
          return InvalidArgument(fmt::format("--columns: '{}' is not a field (fields: {})", field,
                                             fmt::join(kCsvFields, ", ")));
        }
        auto it = std::find(header.begin(), header.end(), column);
        if (it == header.end()) {
          return LineError(name, number,
                           fmt::format("no column '{}' (for {}) in the header", column, field));
        }
        field_col[field] = static_cast<size_t>(it - header.begin());
      }
      if (!field_col.contains("submit") ||
          !(field_col.contains("run") ||
            (field_col.contains("start") && field_col.contains("end")))) {
        return LineError(name, number,
                         "the header must give submit and run (or start and end) columns; "
                         "name them with --columns submit=COL,run=COL,...");
      }
      if (auto it = std::find(header.begin(), header.end(), "gpu_milli"); it != header.end()) {
        gpu_milli_col = static_cast<size_t>(it - header.begin());
      }
      return Status::Ok();
    }
    if (f.size() != width) {
      return LineError(name, number,
                       fmt::format("{} fields where the header has {}", f.size(), width));
    }
    std::map<std::string, std::optional<int64_t>> num;
    std::map<std::string, std::string> str;
    for (const auto& [field, idx] : field_col) {
      std::string_view v = util::Trim(f[idx]);
      if (field == "id" || field == "user" || field == "account" || field == "partition") {
        str[field] = std::string(v);
        continue;
      }
      auto n = ParseNumber(v);
      if (!n.ok())
        return LineError(name, number, fmt::format("{}: {}", field, n.status().message()));
      num[field] = *n;
    }
    TraceJob job;
    job.line = number;
    job.id = str.contains("id") && !str["id"].empty() ? str["id"] : std::to_string(number);
    if (!num["submit"]) return LineError(name, number, "submit: no value");
    job.submit = *num["submit"];
    if (job.submit < 0) return LineError(name, number, "submit: negative");
    if (num["run"]) {
      job.run = *num["run"];
    } else if (num["start"] && num["end"]) {
      job.run = *num["end"] - *num["start"];
    } else if (field_col.contains("start") && !num["start"]) {
      job.ran = false;  // never scheduled (an Alibaba pod still pending at the trace's end)
    } else {
      return LineError(name, number, "no run time (run, or start and end)");
    }
    if (job.run < 0) return LineError(name, number, "the run time is negative");
    if (num["time_limit"] && *num["time_limit"] > 0) job.time_limit = *num["time_limit"];
    if (num["gpus"]) job.gpus = static_cast<int>(std::max<int64_t>(0, *num["gpus"]));
    if (gpu_milli_col && job.gpus > 0) {
      auto milli = ParseNumber(f[*gpu_milli_col]);
      if (milli.ok() && milli->has_value() && **milli > 0 && **milli < 1000) {
        assumed->Note("GPUs: a fraction of a GPU (gpu_milli < 1000) as a whole one");
      }
    }
    if (num["cpus"]) {
      job.cpus = static_cast<int>(*num["cpus"]);
    } else if (num["cpu_milli"]) {
      job.cpus = static_cast<int>((*num["cpu_milli"] + 999) / 1000);
    }
    if (num["nodes"]) job.nodes = static_cast<int>(*num["nodes"]);
    if (num["mem_mb"]) job.mem_mb = *num["mem_mb"];
    job.user = str["user"];
    job.account = str["account"];
    job.partition = str["partition"];
    if (job.cpus <= 0) {
      job.cpus = std::max(1, job.gpus * per_gpu);
      assumed->Note(job.gpus > 0 ? std::string_view(per_gpu_note)
                                 : std::string_view("CPUs: 1 (the trace gives none)"));
    }
    jobs->push_back(std::move(job));
    return Status::Ok();
  });
}

// What every format shares: the defaults for missing fields, the order by
// submission and the origin at the first submission.
void Finish(const TraceOptions& options, Trace* trace, Assumptions* assumed) {
  // What each default says in the report, worded once for all the jobs.
  const std::string limit_note =
      options.time_limit > 0 ? fmt::format("time limit: {} (--time-limit)",
                                           util::FormatDurationLong(options.time_limit))
      : options.time_limit_factor == 1.0
          ? std::string("time limit: the run time (--time-limit, --time-limit-factor)")
          : fmt::format("time limit: the run time x {} (--time-limit-factor)",
                        options.time_limit_factor);
  const std::string user_note = fmt::format("user: {} (--user)", options.user);
  const std::string account_note = fmt::format("account: {} (--account)", options.account);
  const std::string partition_note = fmt::format("partition: {} (--partition)", options.partition);
  for (TraceJob& job : trace->jobs) {
    if (job.time_limit <= 0) {
      job.time_limit =
          options.time_limit > 0
              ? options.time_limit
              : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(job.run) *
                                                                    options.time_limit_factor)));
      assumed->Note(limit_note);
    }
    if (job.user.empty()) {
      job.user = options.user;
      assumed->Note(user_note);
    }
    if (job.account.empty() && !options.account.empty()) {
      job.account = options.account;
      assumed->Note(account_note);
    }
    if (job.partition.empty() && !options.partition.empty()) {
      job.partition = options.partition;
      assumed->Note(partition_note);
    }
    if (!job.ran) ++trace->never_started;
  }
  std::stable_sort(trace->jobs.begin(), trace->jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  if (!trace->jobs.empty()) {
    int64_t origin = trace->jobs.front().submit;
    for (TraceJob& job : trace->jobs) job.submit -= origin;
  }
  trace->assumptions = assumed->Take();
}

}  // namespace

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "swf") return TraceFormat::kSwf;
  if (name == "batsim") return TraceFormat::kBatsim;
  if (name == "sacct") return TraceFormat::kSacct;
  if (name == "csv") return TraceFormat::kCsv;
  return InvalidArgument(
      fmt::format("--format: '{}' is not a trace format (swf, batsim, sacct, csv)", name));
}

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kSwf:
      return "swf";
    case TraceFormat::kBatsim:
      return "batsim";
    case TraceFormat::kSacct:
      return "sacct";
    case TraceFormat::kCsv:
      return "csv";
  }
  return "?";
}

Result<TraceFormat> GuessTraceFormat(std::string_view path) {
  if (path.ends_with(".swf") || path.ends_with(".swf.gz")) return TraceFormat::kSwf;
  if (path.ends_with(".json") || path.ends_with(".json.gz")) return TraceFormat::kBatsim;
  if (path.ends_with(".csv") || path.ends_with(".csv.gz")) return TraceFormat::kCsv;
  return InvalidArgument(fmt::format(
      "{}: cannot tell the trace's format from its name; give --format swf|batsim|sacct|csv",
      path));
}

Result<Trace> ParseTrace(std::string_view text, std::string_view name, TraceFormat format,
                         const TraceOptions& options) {
  Trace trace;
  trace.name = std::string(name);
  trace.format = format;
  Assumptions assumed;
  Status st;
  switch (format) {
    case TraceFormat::kSwf:
      st = ParseSwf(text, name, &trace.jobs, &assumed);
      break;
    case TraceFormat::kBatsim:
      st = ParseBatsim(text, name, &trace.jobs, &assumed);
      break;
    case TraceFormat::kSacct:
      st = ParseSacct(text, name, &trace.jobs, &assumed);
      break;
    case TraceFormat::kCsv:
      st = ParseCsv(text, name, options, &trace.jobs, &assumed);
      break;
  }
  if (!st.ok()) return st;
  if (trace.jobs.empty()) return InvalidArgument(fmt::format("{}: no jobs in the trace", name));
  Finish(options, &trace, &assumed);
  return trace;
}

Result<Trace> ReadTraceFile(const std::string& path, TraceFormat format,
                            const TraceOptions& options) {
  // zlib reads plain files as they are and gzip ones uncompressed.
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return InvalidArgument(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(file, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int err = 0;
  std::string error = n < 0 ? gzerror(file, &err) : "";
  gzclose(file);
  if (n < 0) return InvalidArgument(fmt::format("{}: cannot read: {}", path, error));
  return ParseTrace(text, path, format, options);
}

}  // namespace muster::sim

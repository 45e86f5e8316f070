// Workload traces for `muster sim`: the jobs of a recorded workload, read
// from the formats sites and researchers keep them in, as one list of
// TraceJob sorted by submission.
//
// Formats (TraceFormat):
// - swf: the Standard Workload Format of the Parallel Workloads Archive
//   (18 whitespace-separated fields, ';' header lines; gzip read as is).
// - batsim: Batsim's JSON workload ({"nb_res", "jobs": [{id, subtime,
//   walltime, res, profile}], "profiles": {name: {delay|runtime}}}).
// - sacct: a site's `sacct --parsable2` output with its header line (any
//   column order; step rows are skipped), so last month's real jobs replay.
// - csv: a header line and one job a line; TraceOptions::columns maps
//   Muster's fields to the trace's columns, and the GPU traces of
//   ../shared/traces (Microsoft ITP, Alibaba) are recognised by their header.
//
// A field a trace lacks (requested time, user, partition, CPUs) is taken
// from TraceOptions, and Trace::assumptions says what was assumed for how
// many jobs. A malformed line is an error naming the file and line; no line
// is dropped silently (the jobs a trace marks as never started are kept,
// with `ran` false, and counted).
//
// Pure parsing of text, apart from ReadTraceFile, which reads the file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace muster::sim {

enum class TraceFormat { kSwf, kBatsim, kSacct, kCsv };

// "swf", "batsim", "sacct", "csv"; an error names the choices.
util::Result<TraceFormat> ParseTraceFormat(std::string_view name);
std::string_view TraceFormatName(TraceFormat format);
// The format a file's name suggests (.swf, .swf.gz, .json, .csv); sacct
// dumps (any other name) must be named with --format.
util::Result<TraceFormat> GuessTraceFormat(std::string_view path);

// One job of a trace. Times are seconds; `submit` is relative to the
// trace's first submission (0), so traces with an epoch origin and those
// counting from their start replay alike.
struct TraceJob {
  std::string id;  // as the trace names it
  int line = 0;    // where it was read (1-based; Batsim: the job's index)
  int64_t submit = 0;
  int64_t run = 0;         // the recorded run time
  int64_t time_limit = 0;  // the requested time (assumed where missing)
  int cpus = 0;            // CPUs in all
  int gpus = 0;            // GPUs in all
  int nodes = 0;           // 0: as many as the CPUs and GPUs need
  int64_t mem_mb = 0;      // 0: the partition's default
  std::string user;
  std::string account;
  std::string partition;  // empty: the default partition
  bool ran = true;        // false: the trace says it never started (cancelled while pending)
};

// What a trace lacked and what was used instead, for the run's report.
struct TraceAssumption {
  std::string what;  // "time limit: the run time"
  int jobs = 0;      // how many jobs it was applied to
};

struct Trace {
  std::string name;  // the file read
  TraceFormat format = TraceFormat::kSwf;
  std::vector<TraceJob> jobs;  // by submit, then by order in the file
  std::vector<TraceAssumption> assumptions;
  int never_started = 0;  // jobs with ran == false
};

// The fields of a CSV trace that TraceOptions::columns can map.
inline constexpr std::string_view kCsvFields[] = {
    "id",        "submit", "start", "end",    "run",  "time_limit", "cpus",
    "cpu_milli", "gpus",   "nodes", "mem_mb", "user", "account",    "partition"};

struct TraceOptions {
  // CSV only: Muster's field (kCsvFields) -> the trace's column name. The
  // run time is `run`, or `end` - `start`. Empty: recognised from the
  // header (Microsoft ITP, Alibaba, or columns named as kCsvFields).
  std::map<std::string, std::string> columns;
  // Time limit where the trace has none, seconds; 0: the run time itself
  // (a perfect estimate), times `time_limit_factor`.
  int64_t time_limit = 0;
  double time_limit_factor = 1.0;
  std::string user = "user1";  // where a trace names no user (SWF's user numbers become "user<N>")
  std::string account;         // where it names none: the user's default account
  std::string partition;       // where it names none: the default partition
  int cpus_per_gpu = 0;        // CPUs a GPU job without a CPU count asks for per GPU (0: 1 CPU)
};

// Reads `text` (the whole trace; `name` is used in errors and the report).
util::Result<Trace> ParseTrace(std::string_view text, std::string_view name, TraceFormat format,
                               const TraceOptions& options);
// Reads the file at `path` (gzip-compressed files read as they are).
util::Result<Trace> ReadTraceFile(const std::string& path, TraceFormat format,
                                  const TraceOptions& options);

}  // namespace muster::sim

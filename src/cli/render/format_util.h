// Field-width handling and value formatting shared by Muster's renderers of
// Slurm's text outputs (squeue, sinfo, scontrol show). Pure functions,
// thread-safe. Behaviour observed on Slurm 22.05 (see squeue_render_test.cc
// for the oracle commands).
//
// Width semantics (squeue -o and -O, sinfo -o):
//   width 0        the value as is, no padding, no truncation;
//   width N        left-justified: padded on the right to N, cut to N;
//   width N, right right-justified: padded on the left to N, cut to N
//                  (the cut keeps the leading N characters either way).
// Slurm's -o has no '-' flag: "%-5i" is an invalid specification there
// (see ParsePercentFormat).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "util/strings.h"
#include "cli/render/render.h"

namespace muster::render {

// Appends `value` to `out` fitted to `width` as described above. When
// `null_value` is set the value stands for a C NULL string printed by
// glibc's printf: "(null)", except that a precision below 6 prints nothing
// (Slurm passes NULL to "%.*s"; squeue -o "%3k" shows blanks, not "(nu").
void AppendField(std::string* out, std::string_view value, int width, bool right,
                 bool null_value = false);
std::string FitField(std::string_view value, int width, bool right, bool null_value = false);

// A cell of the tables of Slurm's accounting commands (sacct, sacctmgr,
// sshare), followed by a space: the value fitted to `width`, cut when
// longer to width-1 characters and a '+' (a header to the width, without
// the '+'), padded on the left when `right`.
void AppendAccountingCell(std::string* out, std::string_view value, int width, bool right,
                          bool header);
// The same tables with -p (`parsable` 1: '|' after every cell) or -P (2:
// '|' between cells).
void AppendParsableCell(std::string* out, std::string_view value, bool first, int parsable);

// -e/--helpformat of sacct and sstat: the field names, four to a line,
// each padded to 19 characters (sshare's: 17) and followed by a space or
// the newline.
std::string HelpFormatColumns(const std::vector<std::string_view>& names, int width = 19);

// One item of an accounting command's -o/--format list: "Name", or
// "Name%N" (N wide, right-justified) or "Name%-N" (left-justified); N is
// read as atoi reads it.
struct AccountingFormatItem {
  std::string name;
  int width = 0;
  bool has_width = false;
  bool left = false;
};
std::vector<AccountingFormatItem> ParseAccountingFormat(std::string_view format);

// A column of such a table, and its header (the names and a line of
// dashes; with -p/-P, `parsable` 1/2, the names alone) and rows.
struct AccountingColumn {
  std::string_view name;
  int width = 0;
  bool right = false;
};
void AppendAccountingHeader(std::string* out, const std::vector<AccountingColumn>& cols,
                            int parsable);
void AppendAccountingRow(std::string* out, const std::vector<AccountingColumn>& cols,
                         const std::vector<std::string>& values, int parsable);

// A column width in a format: the decimal digits of `s` from *pos on (none
// is 0), *pos moved past them. At most 100000, whatever is written: musterd
// pads every row to it.
int ReadWidth(std::string_view s, size_t* pos);

// One "%[.][size]type[suffix]" item of a percent format (squeue -o, sinfo -o).
struct PercentField {
  char type = 0;        // the field letter; 0 when `literal` holds the text instead
  int width = 0;        // 0 = natural width
  bool right = false;   // '.' given
  std::string suffix;   // text printed after the field
  std::string literal;  // for an invalid specification: "%" + the token, printed verbatim
};
struct PercentFormat {
  std::string prefix;  // text before the first '%'
  std::vector<PercentField> fields;
  // One entry per invalid specification: the offending character ("" at end
  // of token). squeue prints "squeue: error: Invalid job format
  // specification: <c>" for each and then goes on.
  std::vector<std::string> invalid;
};
// Splits a percent format the way Slurm does: the text is cut at every run
// of '%' characters (so "%%b" is "%b", and there is no escape for a literal
// '%'); each piece is [.][digits]<type><suffix>. A piece whose type character
// fails `valid_type` is kept as literal text "%<piece>" and reported in
// `invalid`.
PercentFormat ParsePercentFormat(std::string_view format, bool (*valid_type)(char));

// One "Name[:[.][size][suffix]]" item of a comma-separated long format
// (squeue -O, sinfo -O). Width defaults to `default_width` when no size is given.
struct LongField {
  std::string name;  // as written
  int width = 20;
  bool right = false;
  std::string suffix;
};
std::vector<LongField> ParseLongFormat(std::string_view format, int default_width = 20);

// Memory as TRES and MinMemory values print it ("1000M", "1.50G").
using util::FormatMemoryMb;

// Formats Unix times like util::FormatTimestamp ("2026-12-02T15:41:03",
// local time; 0 -> "Unknown") at a fraction of the cost, for renderers that
// print a timestamp per job: the UTC offset is looked up with localtime(3)
// once per 15-minute bucket (checked at both ends, so a DST change inside
// the bucket falls back to localtime) and the civil date is computed
// arithmetically. Not thread-safe; use one per rendering call.
class TimestampFormatter {
 public:
  std::string Format(int64_t unix_seconds);

 private:
  int64_t bucket_ = INT64_MIN;
  bool uniform_ = false;
  long offset_ = 0;
};

// Whether the caller sees Hidden=YES partitions without -a: root,
// SlurmUser and AdminUsers (Slurm's operators and administrators).
bool SeesHiddenPartitions(const ClusterView& view);
// Whether a partition is shown to the caller without -a: not Hidden=YES and
// open to one of the caller's groups (AllowGroups), unless the caller sees
// hidden partitions anyway (SeesHiddenPartitions).
bool PartitionVisible(const core::Partition& part, const ClusterView& view);

// ---- job-derived values shared by squeue and scontrol show job ----

// The reason text Slurm shows for a job (squeue %r, scontrol Reason=).
// Running-like states show "None"; failed states derive Slurm's failure
// reason (NonZeroExitCode, JobLaunchFailure, TimeLimit, ...) when the job
// carries none; pending and cancelled jobs show their recorded reason
// (PendingReasonText).
std::string JobReasonText(const core::Job& job);
// A pending reason as Slurm words it: its name, except ReqNodeNotAvail,
// which carries its nodes ("ReqNodeNotAvail, UnavailableNodes:gpu03") or,
// naming none, Slurm's description of the error.
std::string PendingReasonText(const core::Job& job);
// Whether squeue's %R shows "(reason)" rather than the node list: pending
// jobs and jobs that ended in failure (not COMPLETED, not CANCELLED).
bool ReasonInNodelistColumn(const core::Job& job);
// A short human sentence on why the job waits (squeue -O Explanation);
// empty for jobs that do not wait.
std::string JobExplanation(const core::Job& job);

// Seconds the job has run: 0 pending, now-start while it holds resources,
// end-start once finished.
int64_t JobElapsed(const core::Job& job, int64_t now);
// Start time as Slurm displays it: the real start; for a pending job held
// back by --begin the begin time; for a job that ended without starting its
// end time; 0 when unknown.
int64_t JobDisplayStart(const core::Job& job, int64_t now);
// End time as displayed: the real end once finished; start + time limit
// (a year for UNLIMITED, as slurmctld does) while running or when a start is
// known; 0 when unknown.
int64_t JobDisplayEnd(const core::Job& job, int64_t now);
// The partition name: the chosen one, else the requested one, else the
// configuration's default.
std::string JobPartition(const core::Job& job, const ClusterView& view);
// The user name: the recorded one, else the uid's from the passwd database.
std::string JobUserName(const core::Job& job, const util::UserDb& users);
// "(null)" for an empty string, the string otherwise.
std::string OrNull(const std::string& s);

// core/tres.h's totals with the view's configuration: requested (pending)
// or allocated memory, and "cpu=4,mem=4000M,node=2,billing=4[,gres/gpu=N]".
int64_t JobMemoryTotalMb(const core::Job& job, const ClusterView& view);
std::string JobTresString(const core::Job& job, const ClusterView& view);
// Slurm's TresPerNode / TresPerJob values: "gres:gpu:2", "gres:gpu:h100:8";
// empty when none.
std::string JobTresPerNode(const core::Job& job);
std::string JobTresPerJob(const core::Job& job);
// squeue %m: per-CPU or per-node minimum memory ("1000M", "2G", "0").
std::string JobMinMemory(const core::Job& job, const ClusterView& view);
// MinCPUsNode / squeue %c: cpus-per-task x ntasks-per-node.
int JobMinCpusNode(const core::Job& job);
// Expanded --output/--error/--input paths, absolute against the work dir.
std::string JobStdOut(const core::Job& job);
std::string JobStdErr(const core::Job& job);
std::string JobStdIn(const core::Job& job);
// "(null)" for --wrap jobs, else the script path and its arguments.
std::string JobCommand(const core::Job& job);

// `t` as ctime(3) writes a date, "Wed Dec 02 15:45:20 2026", in local
// time, as squeue -l, sinfo -l and sdiag head their outputs; "" when it
// cannot be converted.
std::string CtimeDate(int64_t t);

// A running job's GPUs as the agents sampled them (Muster's own squeue -O
// GpuUtil and GpuIdle, scontrol's GpuUtilization= and GpuIdle=): the mean
// utilisation so far ("37%", "N/A" before any sample), and the idle-GPU
// policy's view ("busy", or "idle 5:00", "flagged 31:10", "reported ...":
// the stage and for how long all its GPUs have been idle).
std::string JobGpuUtilText(const core::Job& j);
std::string JobGpuIdleText(const core::Job& j, int64_t now);

// Who set a node's reason, as sinfo -R's USER and scontrol's "[user@time]"
// show it: "health" for a health check's drain, else the user's name.
std::string ReasonActor(const core::Node& n, const util::UserDb& users);

}  // namespace muster::render

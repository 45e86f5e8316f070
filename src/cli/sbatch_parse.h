// sbatch's option and #SBATCH directive handling, apart from any I/O so it
// can be tested: the command line and the script's directives become one
// core::JobRequest (command-line options override directives, as in Slurm).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "util/status.h"

namespace muster::cli {

struct SbatchInvocation {
  core::JobRequest req;
  bool parsable = false;
  bool quiet = false;
  bool version = false;  // -V/--version: print the version line and stop
  bool help = false;     // -h/--help: print the help and stop
  bool usage = false;    // --usage
  // Options taken that have no effect in Muster, one line each to print
  // (cli/job_options.h).
  std::vector<std::string> warnings;
  std::string script_file;  // "" = stdin or --wrap
  std::string wrap;
  std::string export_spec = "ALL";  // --export, applied once all options are known
};

// The #SBATCH directives of a script: every "#SBATCH" line before the first
// line that is neither blank nor a comment, split into words, per component
// of a heterogeneous job ("#SBATCH hetjob" lines separate them; the older
// "packjob" adds Slurm's warning to *warnings, when not null).
std::vector<std::vector<std::string>> ExtractDirectives(const std::string& script,
                                                       std::vector<std::string>* warnings = nullptr);

// sbatch's command line per component of a heterogeneous job: the words
// between ":" words, the script and its arguments (a ":" among them
// included) in the last.
std::vector<std::vector<std::string>> SplitComponents(const std::vector<std::string>& args);

// Applies one list of options to `inv` (later calls override earlier ones,
// so directives are applied first, then the command line). Returns the
// positional arguments: the script and its arguments. Errors are sbatch's
// stderr as Slurm 22.05 prints it: "sbatch: error: <what>" for a value an
// option refuses, glibc's line and sbatch's "Try" hint for an option it
// does not know or that lacks its value. SbatchOptionExitCode is the exit
// status Slurm's sbatch gives each.
// `prog` names the command in the errors: salloc and srun (for its own
// allocation) take sbatch's options too.
util::Result<std::vector<std::string>> ApplySbatchOptions(const std::vector<std::string>& args,
                                                          SbatchInvocation* inv,
                                                          std::string_view prog = "sbatch");
// Slurm 22.05's exit status for an ApplySbatchOptions error: 1 for a count
// out of range ("Invalid numeric value"), 255 for anything else.
int SbatchOptionExitCode(const util::Status& error);

// Builds the environment the job is submitted with, for --export.
util::Status ApplyExport(const std::string& spec, const std::vector<std::string>& environ_list,
                         core::JobRequest* req);

// What a batch request (sbatch's, a crontab entry's) carries besides its
// options: where it was submitted from, its working directory there (-D,
// relative to it; else it), the submit host and the environment --export
// (inv.export_spec) selects from `environ_list`. Errors are ApplyExport's.
util::Status FinishBatchRequest(const std::string& submit_dir, const std::string& submit_host,
                                const std::vector<std::string>& environ_list,
                                SbatchInvocation* inv);

// The script --wrap generates.
std::string WrapScript(const std::string& command);

// Slurm's check that a batch script starts with "#!".
util::Status CheckScript(const std::string& script);

// Slurm's wall-clock forms (sbatch --begin, scontrol's StartTime=):
// now[{+|-}N[units]], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], today,
// tomorrow, midnight, noon, teatime; as epoch seconds.
util::Result<int64_t> ParseBeginTime(const std::string& v);

// --cpus-per-gpu with -c, or --mem-per-gpu without a GPU, in Slurm's words
// ("--cpus-per-gpu is mutually exclusive with --cpus-per-task"); the caller
// follows it with "Invalid generic resource (gres) specification".
util::Status CheckPerGpuOptions(const core::JobRequest& req);

}  // namespace muster::cli

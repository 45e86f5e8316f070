// sprio and sshare: their arguments, and their layouts of the data musterd
// returns (GET /v1/priority, GET /v1/shares; src/ctld/priority_report.cc),
// as Slurm 22.05 prints them. Pure: text in, text out.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::cli {

struct SprioOptions {
  bool help = false;
  bool usage = false;
  bool version = false;
  bool long_format = false;             // -l
  bool normalized = false;              // -n
  bool weights = false;                 // -w: the weights row instead of jobs
  bool noheader = false;                // -h
  std::string format;                   // -o (else SPRIO_FORMAT, else by the weights)
  std::vector<uint32_t> jobs;           // -j
  std::vector<std::string> users;       // -u, names or uids
  std::vector<std::string> partitions;  // -p
};

// Errors are sprio's lines: "sprio: error: Invalid job id: abc", glibc's
// option messages.
util::Result<SprioOptions> ParseSprioArgs(const std::vector<std::string>& args,
                                          const char* env_format);
std::string SprioUsage();

// Whether `type` is a field letter of sprio's -o.
bool ValidSprioField(char type);
// sprio's error lines for the invalid fields of an -o format ("sprio: error:
// Invalid job format specification: z"); it drops them and goes on. Its
// format is cut as squeue's is (cli/render/format_util.h).
std::vector<std::string> SprioFormatErrors(const std::string& format);

// The report's jobs that the options select, by job id, in the format;
// `uid_of` resolves -u names (nullopt: unknown user, which matches nothing).
// "Unable to find jobs matching user/id(s) specified\n" when -j named jobs
// and none is pending.
std::string RenderSprio(const SprioOptions& opts, const nlohmann::json& report,
                        const std::vector<std::optional<uint32_t>>& user_uids);

struct SshareOptions {
  bool help = false;
  bool version = false;
  bool helpformat = false;            // -e: the fields -o takes
  bool all = false;                   // -a: every user
  bool long_format = false;           // -l
  bool partition = false;             // -m: the Partition column too
  // -o/--format: the fields instead of the default columns (set even when
  // empty, which shows Account alone, as sshare does).
  std::optional<std::string> format;
  bool noheader = false;              // -n
  bool users_only = false;            // -U
  int parsable = 0;                   // -p 1 (trailing '|'), -P 2
  std::vector<std::string> accounts;  // -A
  std::vector<std::string> users;     // -u
};

// Errors are sshare's: glibc's option messages, "sshare: error: Invalid
// field requested: \"foo\"" for an -o field it lacks.
util::Result<SshareOptions> ParseSshareArgs(const std::vector<std::string>& args);
std::string SshareUsage();
// sshare -e/--helpformat: the fields of -o, four to a line.
std::string SshareHelpFormat();

// The rows the options select: account rows (all, or those under -A), and
// user rows of `caller` unless -a or -u say otherwise; in the columns of -o,
// else the default ones (with -l and -m's).
std::string RenderSshare(const SshareOptions& opts, const nlohmann::json& report,
                         const std::string& caller);

}  // namespace muster::cli

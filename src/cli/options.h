// A small getopt_long-like parser with Slurm's conventions: "--opt=value",
// "--opt value", "-x value", "-xvalue", unambiguous long-option prefixes,
// and "--" ending options. The Slurm commands need exact control over
// messages and over where option parsing stops (sbatch stops at the script
// name, srun at the command), which a general CLI library makes awkward.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::cli {

enum class Arg { kNone, kRequired, kOptional };

struct OptionSpec {
  char short_name = 0;     // 0 = none
  std::string long_name;   // "" = none
  Arg arg = Arg::kNone;
  // Receives the value ("" for kNone). A non-ok Status aborts parsing.
  std::function<util::Status(const std::string&)> apply;
};

struct ParseResult {
  std::vector<std::string> positional;  // from the first non-option on (when stop_at_positional)
};

// Parses `args`. With stop_at_positional, everything from the first
// non-option argument on is returned untouched (the script and its
// arguments). Errors use `prog`: "sbatch: unrecognized option '--foo'".
util::Result<ParseResult> ParseOptions(const std::string& prog, const std::vector<OptionSpec>& specs,
                                       const std::vector<std::string>& args,
                                       bool stop_at_positional);

// Splits a directive line like a shell would (quotes, backslashes), stopping
// at an unquoted '#' that starts a word.
std::vector<std::string> SplitShellWords(const std::string& line);

}  // namespace muster::cli

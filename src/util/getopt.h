// The option parser every command shares: getopt_long's rules and glibc's
// messages, which scripts and users see ("sbatch: unrecognized option
// '--foo'"): bundled short options ("-nXP"), values attached ("-j5",
// "--jobs=5") or in the next word, unique prefixes of long options, "--"
// ending options. Hand-written rather than CLI11: Slurm's commands stop at
// the script or command (sbatch, srun), and their messages must be exact.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::util {

enum class Arg { kNone, kRequired, kOptional };

struct OptionSpec {
  char short_name = 0;    // 0 = none
  std::string long_name;  // "" = none
  Arg arg = Arg::kNone;
  // Called with the value ("" when none) as the option is read; a non-ok
  // Status ends parsing with it. May be empty (read ParseResult::options).
  std::function<Status(const std::string&)> apply;
  // Entries with the same non-zero id and Arg are one option under several
  // names ("--user" and "--users"): a prefix of both is not ambiguous.
  int id = 0;
  // Arg::kOptional: a following word that does not start with '-' is the
  // value too, as squeue takes "-j 5".
  bool optional_takes_next = false;
};

// An entry a command reads back by its id (ParseResult::options).
OptionSpec IdOption(char short_name, std::string long_name, Arg arg, int id);

struct ParsedOption {
  const OptionSpec* spec = nullptr;
  std::optional<std::string> value;  // nullopt: none given
};

struct ParseResult {
  std::vector<ParsedOption> options;    // in command-line order
  std::vector<std::string> positional;  // the other words, in order
};

// Parses `args` (without argv[0]). With stop_at_positional the first word
// that is not an option and everything after it are positional (sbatch's
// script and its arguments); otherwise options and other words may mix, as
// getopt permutes them. Everything after "--" is positional. Errors are
// glibc's lines with `prog`: "squeue: option '--st' is ambiguous;
// possibilities: '--start' '--steps' '--states'", "sinfo: option requires
// an argument -- 'o'", ...
Result<ParseResult> ParseOptions(const std::string& prog, const std::vector<OptionSpec>& specs,
                                 const std::vector<std::string>& args, bool stop_at_positional);

}  // namespace muster::util

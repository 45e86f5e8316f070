// The commands' option parsing: util/getopt.h, the parser every command
// shares (named here for the commands of this folder), and the shell-like
// splitting of #SBATCH directive lines.
#pragma once

#include <string>
#include <vector>

#include "util/getopt.h"

namespace muster::cli {

using util::Arg;
using util::OptionSpec;
using util::ParseOptions;
using util::ParseResult;

// Splits a directive line like a shell would (quotes, backslashes), stopping
// at an unquoted '#' that starts a word.
std::vector<std::string> SplitShellWords(const std::string& line);

}  // namespace muster::cli

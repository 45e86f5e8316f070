// The query commands' arguments: argv (and the environment variables Slurm
// reads) into the request the CLI sends and musterd renders
// (src/cli/render/render.h holds the requests and the views). One parser
// reads every command's options (util/getopt.h). Errors carry the
// command's complete stderr text (one or more lines, without the final
// newline; a trailing "\n" means Slurm prints an empty line after it); the
// CLI prints it and exits 1.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/render/render.h"
#include "util/status.h"

namespace muster::cli {

// squeue's argv (without argv[0]) and the SQUEUE_* environment
// (SQUEUE_ACCOUNT, SQUEUE_FORMAT, SQUEUE_FORMAT2, SQUEUE_NAMES,
// SQUEUE_PARTITION, SQUEUE_QOS, SQUEUE_SORT, SQUEUE_STATES, SQUEUE_USERS,
// SLURM_CLUSTERS; the command line wins). The result has `format` or
// `format_long` resolved (default, -l, --start, -o, -O, environment), the
// states/sort that --start implies, and user names turned into uids.
util::Result<render::SqueueRequest> ParseSqueueArgs(const std::vector<std::string>& args,
                                                    const std::map<std::string, std::string>& env);
// The same, reading the environment with getenv(3).
util::Result<render::SqueueRequest> ParseSqueueArgs(const std::vector<std::string>& args);

// sinfo's argv and SINFO_FORMAT, SINFO_PARTITION, SINFO_SORT, SINFO_ALL
// from the process environment (the second form takes them as a map), e.g.
// "sinfo: invalid option -- 'z'\nTry \"sinfo --help\" for more information".
util::Result<render::SinfoRequest> ParseSinfoArgs(const std::vector<std::string>& args);
util::Result<render::SinfoRequest> ParseSinfoArgs(const std::vector<std::string>& args,
                                                  const std::map<std::string, std::string>& env);
// sinfo --help.
std::string SinfoUsage();

// sacct's argv ("sacct: error: Invalid field requested: \"Bogus\"").
util::Result<render::SacctRequest> ParseSacctArgs(const std::vector<std::string>& args);

// sreport's argv: options, then "<type> <report> [key=value...]".
util::Result<render::SreportRequest> ParseSreportArgs(const std::vector<std::string>& args);

}  // namespace muster::cli

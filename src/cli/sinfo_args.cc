// sinfo's arguments: argv and SINFO_* into the request musterd renders
// (src/cli/render/sinfo_render.cc), as Slurm 22.05's sinfo reads them.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "cli/render/render.h"
#include "util/getopt.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using render::SinfoRequest;
using util::InvalidArgument;
using util::Result;
using util::Status;

struct LongOpt {
  const char* name;
  char key;  // the short option it stands for, or a private code
  bool takes_arg;
};

// Order matters only for the "ambiguous" message, listed as sinfo lists.
constexpr LongOpt kLongOpts[] = {
    {"all", 'a', false},          {"dead", 'd', false},        {"exact", 'e', false},
    {"federation", '1', false},   {"format", 'o', true},       {"Format", 'O', true},
    {"help", '2', false},         {"hide", '3', false},        {"iterate", 'i', true},
    {"json", '4', false},         {"list-reasons", 'R', false}, {"local", '5', false},
    {"long", 'l', false},         {"Node", 'N', false},        {"nodes", 'n', true},
    {"noconvert", '6', false},    {"noheader", 'h', false},    {"partition", 'p', true},
    {"responding", 'r', false},   {"reservation", 'T', false}, {"sort", 'S', true},
    {"states", 't', true},        {"summarize", 's', false},   {"usage", '2', false},
    {"verbose", 'v', false},      {"version", 'V', false},     {"yaml", '7', false},
    {"clusters", 'M', true},
};
// The letters that are sinfo's short options (the rest of the keys are
// private codes of long-only options).
constexpr std::string_view kShortOptions = "iMnoOpStadehlNrRsTvV";

// kLongOpts as util/getopt.h's table: id = key, so --help and --usage are
// one option.
const std::vector<util::OptionSpec>& Options() {
  static const std::vector<util::OptionSpec> specs = [] {
    std::vector<util::OptionSpec> out;
    for (const LongOpt& o : kLongOpts) {
      util::OptionSpec spec;
      if (kShortOptions.find(o.key) != std::string_view::npos) spec.short_name = o.key;
      spec.long_name = o.name;
      spec.arg = o.takes_arg ? util::Arg::kRequired : util::Arg::kNone;
      spec.id = o.key;
      out.push_back(std::move(spec));
    }
    return out;
  }();
  return specs;
}

Status UsageError(const std::string& first_line) {
  return InvalidArgument(first_line + "\nTry \"sinfo --help\" for more information");
}

struct ParseState {
  SinfoRequest req;
  bool cmd_format = false;  // -o or -O on the command line
};

Status Apply(char key, const std::string& arg, ParseState* st) {
  SinfoRequest& r = st->req;
  switch (key) {
    case 'a': r.all = true; break;
    case 'd': r.dead = true; break;
    case 'e': r.exact = true; break;
    case 'h': r.noheader = true; break;
    case 'i': {
      Result<int64_t> n = util::ParseInt(arg);
      if (!n.ok() || *n <= 0) {
        return InvalidArgument("sinfo: error: invalid --iterate value: " + arg);
      }
      r.iterate_s = static_cast<int>(std::min<int64_t>(*n, 1 << 30));
      break;
    }
    case 'l': r.long_view = true; break;
    case 'M': break;  // one cluster
    case 'N': r.node_view = true; break;
    case 'n': r.nodes = arg; break;
    case 'o': r.format = arg; r.format_long.clear(); st->cmd_format = true; break;
    case 'O': r.format_long = arg; r.format.clear(); st->cmd_format = true; break;
    // "-p ''" names no partition (sinfo prints just the header).
    case 'p':
      r.partitions = arg.empty() ? std::vector<std::string>{""} : util::Split(arg, ',');
      break;
    case 'r': r.responding = true; break;
    case 'R': r.reasons = true; break;
    case 's': r.summarize = true; break;
    case 'S': r.sort = arg; break;
    case 't': {
      r.states = util::Split(arg, ',');
      MUSTER_RETURN_IF_ERROR(render::CheckSinfoStates(r.states));
      break;
    }
    case 'T': r.reservation = true; break;
    case 'v': break;
    case 'V': r.version = true; break;
    case '2': r.help = true; break;
    case '4': return InvalidArgument("sinfo: error: --json is not supported by Muster");
    case '7': return InvalidArgument("sinfo: error: --yaml is not supported by Muster");
    default: break;  // --federation, --hide, --local, --noconvert
  }
  return Status::Ok();
}

}  // namespace

Result<render::SinfoRequest> ParseSinfoArgs(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env;
  for (const char* name : {"SINFO_FORMAT", "SINFO_PARTITION", "SINFO_SORT", "SINFO_ALL"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return ParseSinfoArgs(args, env);
}

Result<render::SinfoRequest> ParseSinfoArgs(const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& env) {
  ParseState st;
  // The environment first; the command line overrides it.
  if (auto it = env.find("SINFO_ALL"); it != env.end()) st.req.all = true;
  if (auto it = env.find("SINFO_PARTITION"); it != env.end()) {
    st.req.partitions = util::Split(it->second, ',');
  }
  if (auto it = env.find("SINFO_SORT"); it != env.end()) st.req.sort = it->second;

  // Operands are ignored, as by sinfo.
  Result<util::ParseResult> parsed = util::ParseOptions("sinfo", Options(), args, false);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  for (const util::ParsedOption& o : parsed->options) {
    MUSTER_RETURN_IF_ERROR(Apply(static_cast<char>(o.spec->id), o.value.value_or(""), &st));
  }
  if (st.cmd_format && st.req.long_view) {
    return InvalidArgument(
        "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
        "Please remove one and retry.");
  }
  if (!st.cmd_format && !st.req.long_view) {
    if (auto it = env.find("SINFO_FORMAT"); it != env.end()) st.req.format = it->second;
  }
  if (!st.req.format_long.empty()) {
    MUSTER_RETURN_IF_ERROR(render::CheckSinfoFormatLong(st.req.format_long));
  }
  return st.req;
}

std::string SinfoUsage() {
  return "Usage: sinfo [OPTIONS]\n"
         "  -a, --all                 all partitions\n"
         "  -d, --dead                only non-responding nodes\n"
         "  -e, --exact               group nodes only on exactly equal configuration\n"
         "  -h, --noheader            no headers on output\n"
         "  -l, --long                long output\n"
         "  -n, --nodes=NODES         report on these nodes (hostlist)\n"
         "  -N, --Node                node-oriented format\n"
         "  -o, --format=FORMAT       format specification (%P %a %l %D %t %N ...)\n"
         "  -O, --Format=FIELDS       long format specification (Partition,NodeList,...)\n"
         "  -p, --partition=PARTS     report on these partitions\n"
         "  -r, --responding          only responding nodes\n"
         "  -R, --list-reasons        reasons nodes are down or drained\n"
         "  -s, --summarize           partition summary\n"
         "  -S, --sort=FIELDS         sort order\n"
         "  -t, --states=STATES       report on nodes in these states\n"
         "  -T, --reservation         the advance reservations instead of nodes\n"
         "  -V, --version             version\n"
         "      --help, --usage       this text\n";
}

}  // namespace muster::cli

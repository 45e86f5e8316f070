// sacct's arguments: argv into the request musterd answers from the
// accounting database (src/cli/render/sacct_render.cc), as Slurm 22.05's
// sacct reads them.
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/render/render.h"
#include "util/getopt.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using util::Result;

enum SacctOpt {
  kAccounts = 1, kAllClusters, kAllocations, kAllUsers, kArray, kBrief, kClusters, kDuplicates,
  kEndTime, kFile, kFormat, kGroup, kHelp, kHelpFormat, kJobs, kJson, kLong, kName, kNodelist,
  kNoConvert, kNoHeader, kParsable, kParsable2, kPartition, kQos, kStartTime, kState, kTruncate,
  kUser, kVersion, kWckeys, kIgnoredValue,
};

util::OptionSpec Opt(char short_name, const char* name, util::Arg arg, int id) {
  util::OptionSpec o;
  o.short_name = short_name;
  o.long_name = name;
  o.arg = arg;
  o.id = id;
  return o;
}

// Long names as sacct 22.05 spells them; a unique prefix of one works too.
const std::vector<util::OptionSpec>& Options() {
  using util::Arg;
  static const std::vector<util::OptionSpec> kOptions = {
      Opt('A', "accounts", Arg::kRequired, kAccounts),
      Opt('L', "allclusters", Arg::kNone, kAllClusters),
      Opt('X', "allocations", Arg::kNone, kAllocations),
      Opt('a', "allusers", Arg::kNone, kAllUsers),
      Opt(0, "array", Arg::kNone, kArray),
      Opt('b', "brief", Arg::kNone, kBrief),
      Opt('M', "clusters", Arg::kRequired, kClusters),
      Opt('D', "duplicates", Arg::kNone, kDuplicates),
      Opt('E', "endtime", Arg::kRequired, kEndTime),
      Opt('f', "file", Arg::kRequired, kFile),
      Opt('o', "format", Arg::kRequired, kFormat),
      Opt('g', "gid", Arg::kRequired, kGroup),
      Opt(0, "group", Arg::kRequired, kGroup),
      Opt('h', "help", Arg::kNone, kHelp),
      Opt('e', "helpformat", Arg::kNone, kHelpFormat),
      Opt('j', "jobs", Arg::kRequired, kJobs),
      Opt(0, "json", Arg::kNone, kJson),
      Opt('l', "long", Arg::kNone, kLong),
      Opt(0, "name", Arg::kRequired, kName),
      Opt('N', "nodelist", Arg::kRequired, kNodelist),
      Opt(0, "noconvert", Arg::kNone, kNoConvert),
      Opt('n', "noheader", Arg::kNone, kNoHeader),
      Opt('p', "parsable", Arg::kNone, kParsable),
      Opt('P', "parsable2", Arg::kNone, kParsable2),
      Opt('r', "partition", Arg::kRequired, kPartition),
      Opt('q', "qos", Arg::kRequired, kQos),
      Opt('S', "starttime", Arg::kRequired, kStartTime),
      Opt('s', "state", Arg::kRequired, kState),
      Opt('T', "truncate", Arg::kNone, kTruncate),
      Opt('u', "uid", Arg::kRequired, kUser),
      Opt(0, "user", Arg::kRequired, kUser),
      Opt(0, "users", Arg::kRequired, kUser),
      Opt(0, "usage", Arg::kNone, kHelp),
      Opt('V', "version", Arg::kNone, kVersion),
      Opt('W', "wckeys", Arg::kRequired, kWckeys),
      Opt('i', "", Arg::kRequired, kIgnoredValue),
      Opt('I', "", Arg::kRequired, kIgnoredValue),
  };
  return kOptions;
}

}  // namespace

Result<render::SacctRequest> ParseSacctArgs(const std::vector<std::string>& args) {
  Result<util::ParseResult> parsed = util::ParseOptions("sacct", Options(), args, false);
  if (!parsed.ok()) return parsed.status();
  render::SacctRequest r;
  std::string format;
  bool brief = false, long_view = false;
  auto list = [](const std::string& v, std::vector<std::string>* out) {
    for (auto& s : util::Split(v, ',')) out->push_back(s);
  };
  for (const util::ParsedOption& o : parsed->options) {
    const std::string v = o.value.value_or("");
    switch (o.spec->id) {
      case kAccounts: list(v, &r.accounts); break;
      case kAllocations: r.allocations = true; break;
      case kAllUsers: r.all_users = true; break;
      case kBrief: brief = true; break;
      case kDuplicates: r.duplicates = true; break;
      case kEndTime: r.end = v; break;
      case kFormat: format += (format.empty() ? "" : ",") + v; break;
      case kHelp: r.help = true; break;
      case kHelpFormat: r.helpformat = true; break;
      case kJobs: list(v, &r.job_ids); break;
      case kJson: r.json = true; break;
      case kLong: long_view = true; break;
      case kName: list(v, &r.names); break;
      case kNoHeader: r.noheader = true; break;
      case kParsable: r.parsable = true; break;
      case kParsable2: r.parsable2 = true; break;
      case kPartition: list(v, &r.partitions); break;
      case kStartTime: r.start = v; break;
      case kState: list(v, &r.states); break;
      case kUser: list(v, &r.users); break;
      case kVersion: r.version = true; break;
      default: break;  // accepted, no effect in Muster: -L -T -M -q -N -W -g -f ...
    }
  }
  // Slurm: -o replaces the list; -l and -b pick theirs when -o is absent.
  if (!format.empty()) r.format = format;
  else if (long_view) r.format = render::kSacctLongFormat;
  else if (brief) r.format = render::kSacctBriefFormat;
  else r.format = render::kSacctDefaultFormat;
  MUSTER_RETURN_IF_ERROR(render::CheckSacctRequest(r));
  return r;
}

}  // namespace muster::cli

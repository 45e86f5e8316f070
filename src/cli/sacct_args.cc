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
  kUser, kVersion, kWckeys, kUsage, kNnodes, kNcpus,
};

// Long names as sacct 22.05 spells them; a unique prefix of one works too.
const std::vector<util::OptionSpec>& Options() {
  using util::Arg;
  static const std::vector<util::OptionSpec> kOptions = {
      util::IdOption('A', "accounts", Arg::kRequired, kAccounts),
      util::IdOption('L', "allclusters", Arg::kNone, kAllClusters),
      util::IdOption('X', "allocations", Arg::kNone, kAllocations),
      util::IdOption('a', "allusers", Arg::kNone, kAllUsers),
      util::IdOption(0, "array", Arg::kNone, kArray),
      util::IdOption('b', "brief", Arg::kNone, kBrief),
      util::IdOption('M', "clusters", Arg::kRequired, kClusters),
      util::IdOption('D', "duplicates", Arg::kNone, kDuplicates),
      util::IdOption('E', "endtime", Arg::kRequired, kEndTime),
      util::IdOption('f', "file", Arg::kRequired, kFile),
      util::IdOption('o', "format", Arg::kRequired, kFormat),
      util::IdOption('g', "gid", Arg::kRequired, kGroup),
      util::IdOption(0, "group", Arg::kRequired, kGroup),
      util::IdOption('h', "help", Arg::kNone, kHelp),
      util::IdOption('e', "helpformat", Arg::kNone, kHelpFormat),
      util::IdOption('j', "jobs", Arg::kRequired, kJobs),
      util::IdOption(0, "json", Arg::kNone, kJson),
      util::IdOption('l', "long", Arg::kNone, kLong),
      util::IdOption(0, "name", Arg::kRequired, kName),
      util::IdOption('N', "nodelist", Arg::kRequired, kNodelist),
      util::IdOption(0, "noconvert", Arg::kNone, kNoConvert),
      util::IdOption('n', "noheader", Arg::kNone, kNoHeader),
      util::IdOption('p', "parsable", Arg::kNone, kParsable),
      util::IdOption('P', "parsable2", Arg::kNone, kParsable2),
      util::IdOption('r', "partition", Arg::kRequired, kPartition),
      util::IdOption('q', "qos", Arg::kRequired, kQos),
      // state before starttime: "--sta" lists them in sacct's order.
      util::IdOption('s', "state", Arg::kRequired, kState),
      util::IdOption('S', "starttime", Arg::kRequired, kStartTime),
      util::IdOption('T', "truncate", Arg::kNone, kTruncate),
      util::IdOption('u', "uid", Arg::kRequired, kUser),
      util::IdOption(0, "user", Arg::kRequired, kUser),
      util::IdOption(0, "users", Arg::kRequired, kUser),
      util::IdOption(0, "usage", Arg::kNone, kUsage),
      util::IdOption('V', "version", Arg::kNone, kVersion),
      util::IdOption('W', "wckeys", Arg::kRequired, kWckeys),
      util::IdOption('i', "nnodes", Arg::kRequired, kNnodes),
      util::IdOption('I', "ncpus", Arg::kRequired, kNcpus),
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
      case kUsage: r.usage = true; break;
      case kJobs: list(v, &r.job_ids); break;
      case kJson: r.json = true; break;
      case kLong: long_view = true; break;
      case kName: list(v, &r.names); break;
      case kNoHeader: r.noheader = true; break;
      // -p and -P: the last one given wins, as in Slurm's sacct.
      case kParsable: r.parsable = true, r.parsable2 = false; break;
      case kParsable2: r.parsable2 = true, r.parsable = false; break;
      case kPartition: list(v, &r.partitions); break;
      case kStartTime: r.start = v; break;
      case kState: list(v, &r.states); break;
      case kUser: list(v, &r.users); break;
      case kVersion: r.version = true; break;
      case kQos: list(v, &r.qos); break;
      case kNodelist: r.nodelist.push_back(v); break;
      case kGroup: list(v, &r.groups); break;
      case kNnodes: r.nnodes = v; break;
      case kNcpus: r.ncpus = v; break;
      case kNoConvert: r.noconvert = true; break;
      case kArray: break;  // array tasks are on rows of their own anyway
      case kAllClusters:
      case kClusters:
        r.warnings.push_back(
            "sacct: warning: -L/-M have no effect in Muster: one musterd is one cluster");
        break;
      case kFile:
        return util::InvalidArgument("sacct: error: --file is not supported by Muster: it reads "
                               "musterd's accounting database only");
      case kTruncate:
        return util::InvalidArgument("sacct: error: --truncate is not supported by Muster yet");
      case kWckeys:
        return util::InvalidArgument("sacct: error: --wckeys is not supported by Muster yet");
      default: break;
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

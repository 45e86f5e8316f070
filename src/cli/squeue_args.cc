// squeue's arguments: argv and the SQUEUE_* environment into the request
// musterd renders (src/cli/render/squeue_render.cc). Options, precedence
// and messages follow Slurm 22.05 as observed; the oracle commands are
// named in src/cli/render/squeue_render_test.cc.
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/render/render.h"
#include "util/getopt.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using render::SqueueRequest;

constexpr std::string_view kTryHelp = "Try \"squeue --help\" for more information";

enum OptId {
  kAccount = 1,
  kAll,
  kArray,
  kArrayUnique,
  kClusters,
  kFederation,
  kFormat,
  kFormatLong,
  kHelp,
  kHide,
  kIterate,
  kJobs,
  kJson,
  kLicenses,
  kLocal,
  kLong,
  kMe,
  kName,
  kNoConvert,
  kNodelist,
  kNoheader,
  kOnlyJobState,
  kPartition,
  kPriority,
  kQos,
  kReservation,
  kSibling,
  kSort,
  kStart,
  kStates,
  kSteps,
  kUsage,
  kUser,
  kVerbose,
  kVersion,
  kYaml,
};

using util::Arg;

// -j/--jobs and -s/--steps: an optional value, which squeue also takes
// from the next word when it is not an option ("-j 5").
util::OptionSpec OptNext(char short_name, const char* name, Arg arg, int id) {
  util::OptionSpec o = util::IdOption(short_name, name, arg, id);
  o.optional_takes_next = true;
  return o;
}

const std::vector<util::OptionSpec>& Options() {
  static const std::vector<util::OptionSpec> kOptions = {
      util::IdOption('A', "account", Arg::kRequired, kAccount),
      util::IdOption('a', "all", Arg::kNone, kAll),
      util::IdOption('r', "array", Arg::kNone, kArray),
      util::IdOption(0, "array-unique", Arg::kNone, kArrayUnique),
      util::IdOption('M', "clusters", Arg::kRequired, kClusters),
      util::IdOption(0, "federation", Arg::kNone, kFederation),
      util::IdOption('o', "format", Arg::kRequired, kFormat),
      util::IdOption('O', "Format", Arg::kRequired, kFormatLong),
      util::IdOption(0, "help", Arg::kNone, kHelp),
      util::IdOption(0, "hide", Arg::kNone, kHide),
      util::IdOption('i', "iterate", Arg::kRequired, kIterate),
      OptNext('j', "jobs", Arg::kOptional, kJobs),
      util::IdOption(0, "json", Arg::kNone, kJson),
      util::IdOption('L', "licenses", Arg::kRequired, kLicenses),
      util::IdOption(0, "local", Arg::kNone, kLocal),
      util::IdOption('l', "long", Arg::kNone, kLong),
      util::IdOption(0, "me", Arg::kNone, kMe),
      util::IdOption('n', "name", Arg::kRequired, kName),
      util::IdOption(0, "noconvert", Arg::kNone, kNoConvert),
      util::IdOption('w', "nodelist", Arg::kRequired, kNodelist),
      util::IdOption('h', "noheader", Arg::kNone, kNoheader),
      util::IdOption(0, "only-job-state", Arg::kNone, kOnlyJobState),
      util::IdOption('p', "partition", Arg::kRequired, kPartition),
      util::IdOption('P', "priority", Arg::kNone, kPriority),
      util::IdOption('q', "qos", Arg::kRequired, kQos),
      util::IdOption('R', "reservation", Arg::kRequired, kReservation),
      util::IdOption(0, "sibling", Arg::kNone, kSibling),
      util::IdOption('S', "sort", Arg::kRequired, kSort),
      util::IdOption(0, "start", Arg::kNone, kStart),
      // steps before states: glibc lists ambiguous candidates in table
      // order, and squeue says "'--start' '--steps' '--states'".
      OptNext('s', "steps", Arg::kOptional, kSteps),
      util::IdOption('t', "states", Arg::kRequired, kStates),
      util::IdOption(0, "usage", Arg::kNone, kUsage),
      util::IdOption('u', "user", Arg::kRequired, kUser),
      util::IdOption(0, "users", Arg::kRequired, kUser),
      util::IdOption('v', "verbose", Arg::kNone, kVerbose),
      util::IdOption('V', "version", Arg::kNone, kVersion),
      util::IdOption(0, "yaml", Arg::kNone, kYaml),
  };
  return kOptions;
}

std::vector<std::string> CommaList(const std::string& s) { return util::Split(s, ','); }


bool ValidJobId(const std::string& id) {
  // "N", an array form "N_M" / "N_[...]" or a heterogeneous job's
  // component "N+K"; N a positive integer.
  size_t us = id.find_first_of("_+");
  std::string base = id.substr(0, us);
  util::Result<int64_t> n = util::ParseInt(base);
  return n.ok() && *n > 0 && *n <= std::numeric_limits<uint32_t>::max();
}


// What the command line said; the environment fills what it left out.
struct CommandLine {
  SqueueRequest req;  // flags and the lists that have no environment variable
  std::optional<std::string> format, format_long, sort, states, users;
  std::optional<std::string> accounts, names, partitions, qos, clusters;
};

util::Status ApplyOption(const util::ParsedOption& o, CommandLine* cl) {
  SqueueRequest& r = cl->req;
  const std::string v = o.value.value_or("");
  switch (o.spec->id) {
    case kAccount: cl->accounts = v; break;
    case kClusters: cl->clusters = v; break;
    case kFormat:
      if (cl->format_long) {
        return util::InvalidArgument(
            "squeue: error: -o (--format) is incompatible with -O (--Format)");
      }
      cl->format = v;
      break;
    case kFormatLong:
      if (cl->format) {
        return util::InvalidArgument(
            "squeue: error: -O (--Format) is incompatible with -o (--format)");
      }
      cl->format_long = v;
      break;
    case kHelp: r.help = true; break;
    case kUsage: r.usage = true; break;
    case kVersion: r.version = true; break;
    case kIterate: {
      util::Result<int64_t> n = util::ParseInt(v);
      if (!n.ok() || *n <= 0 || *n > 1000000) {
        return util::InvalidArgument("squeue: error: --iterate=" + v + "\n");
      }
      r.iterate_s = static_cast<int>(*n);
      break;
    }
    case kJobs:
      for (const std::string& id : CommaList(v)) {
        if (!ValidJobId(id)) return util::InvalidArgument("squeue: error: Invalid job id: " + id);
        r.job_ids.push_back(id);
      }
      break;
    case kJson:
    case kYaml:
      return util::InvalidArgument(std::string("squeue: error: --") +
                                   (o.spec->id == kJson ? "json" : "yaml") +
                                   " is not supported by Muster");
    case kSteps:
      r.steps = true;
      for (const std::string& id : CommaList(v)) r.step_ids.push_back(id);
      break;
    case kLicenses: r.licenses = CommaList(v); break;
    case kLong: r.long_view = true; break;
    // --me and -u replace each other: the last one given counts.
    case kMe:
      r.me = true;
      cl->users.reset();
      break;
    case kUser:
      cl->users = v;
      r.me = false;
      break;
    case kName: cl->names = v; break;
    case kNodelist: {
      util::Result<std::vector<std::string>> hosts = util::ExpandHostlist(v);
      if (!hosts.ok() || hosts->empty()) {
        return util::InvalidArgument("squeue: error: Invalid node name " + v);
      }
      for (std::string& h : *hosts) r.nodes.push_back(std::move(h));
      break;
    }
    case kNoheader: r.noheader = true; break;
    case kOnlyJobState: r.only_job_state = true; break;
    case kPartition: cl->partitions = v; break;
    case kQos: cl->qos = v; break;
    case kReservation: r.reservations = CommaList(v); break;
    case kSort: cl->sort = v; break;
    case kStart: r.start = true; break;
    case kArray: r.array_unfold = true; break;
    case kStates: cl->states = v; break;
    default: break;  // accepted, no effect in Muster: -a -P -v --local ...
  }
  return util::Status::Ok();
}

// The output format, by squeue 22.05's precedence: -o beats --start, whose
// format beats -O; -O beats -l; -l beats SQUEUE_FORMAT, which beats
// SQUEUE_FORMAT2.
void ResolveFormat(const CommandLine& cl, const std::optional<std::string>& env_format,
                   const std::optional<std::string>& env_format_long, SqueueRequest* r) {
  if (cl.format) {
    r->format = cl.format->empty() ? "%" : *cl.format;  // "-o ''" prints empty lines
  } else if (r->steps) {
    r->format = std::string(render::kSqueueStepsFormat);
    return;
  } else if (r->start) {
    r->format = std::string(render::kSqueueStartFormat);
  } else if (cl.format_long) {
    r->format_long = cl.format_long->empty() ? "," : *cl.format_long;
  } else if (r->long_view) {
    r->format = std::string(render::kSqueueLongFormat);
  } else if (env_format) {
    r->format = *env_format;
  } else if (env_format_long) {
    r->format_long = *env_format_long;
  } else if (r->only_job_state) {
    r->format = std::string(render::kSqueueOnlyJobStateFormat);
  } else {
    r->format = std::string(render::kSqueueDefaultFormat);
  }
  // squeue warns about bad specifications before it asks for the jobs.
  render::AddSqueueFormatWarnings(*r, &r->warnings);
}

}  // namespace

util::Result<render::SqueueRequest> ParseSqueueArgs(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env) {
  util::Result<util::ParseResult> parsed = util::ParseOptions("squeue", Options(), args, false);
  if (!parsed.ok()) {
    return util::InvalidArgument(parsed.status().message() + "\n" + std::string(kTryHelp));
  }
  // squeue takes no operands (nor any after "--").
  if (!parsed->positional.empty()) {
    return util::InvalidArgument("squeue: error: Unrecognized option: " + parsed->positional[0]);
  }
  CommandLine cl;
  for (const util::ParsedOption& o : parsed->options) MUSTER_RETURN_IF_ERROR(ApplyOption(o, &cl));
  SqueueRequest r = std::move(cl.req);
  if (r.help || r.usage || r.version) return r;
  if (cl.format && r.long_view) {
    return util::InvalidArgument(
        "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
        "Please remove one and retry.");
  }

  auto from_env = [&](const char* key) -> std::optional<std::string> {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  auto pick = [&](const std::optional<std::string>& cmd, const char* key) {
    return cmd ? cmd : from_env(key);
  };
  if (auto v = pick(cl.accounts, "SQUEUE_ACCOUNT")) r.accounts = CommaList(*v);
  if (auto v = pick(cl.names, "SQUEUE_NAMES")) r.names = CommaList(*v);
  if (auto v = pick(cl.partitions, "SQUEUE_PARTITION")) r.partitions = CommaList(*v);
  if (auto v = pick(cl.qos, "SQUEUE_QOS")) r.qos = CommaList(*v);
  if (auto v = pick(cl.clusters, "SLURM_CLUSTERS")) r.clusters = CommaList(*v);
  // Users go as written: musterd looks them up (and warns of unknown ones),
  // so this binary holds no passwd code.
  if (cl.users) {
    r.users = CommaList(*cl.users);
  } else if (auto v = from_env("SQUEUE_USERS"); v && !r.me) {
    r.users = CommaList(*v);
  }
  if (auto v = pick(cl.states, "SQUEUE_STATES")) {
    r.states = CommaList(*v);
    MUSTER_RETURN_IF_ERROR(render::CheckSqueueStates(r.states));
  } else if (r.start) {
    r.states = {"PENDING"};
  }
  ResolveFormat(cl, from_env("SQUEUE_FORMAT"), from_env("SQUEUE_FORMAT2"), &r);
  // SQUEUE_SORT beats --start's "S" (squeue 22.05).
  if (auto v = pick(cl.sort, "SQUEUE_SORT")) {
    r.sort = *v;
    MUSTER_RETURN_IF_ERROR(render::CheckSqueueSort(r.sort, &r.warnings));
  }
  return r;
}

util::Result<render::SqueueRequest> ParseSqueueArgs(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env;
  for (const char* key :
       {"SQUEUE_ACCOUNT", "SQUEUE_FORMAT", "SQUEUE_FORMAT2", "SQUEUE_NAMES", "SQUEUE_PARTITION",
        "SQUEUE_QOS", "SQUEUE_SORT", "SQUEUE_STATES", "SQUEUE_USERS", "SLURM_CLUSTERS"}) {
    if (const char* v = std::getenv(key)) env[key] = v;
  }
  return ParseSqueueArgs(args, env);
}

}  // namespace muster::cli

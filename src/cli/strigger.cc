// strigger: set, list and clear triggers (core/trigger.h; musterd keeps
// them, src/ctld/triggers.cc). As Slurm 22.05's strigger: exactly one of
// --set, --get, --clear; --set prints nothing; --get prints nothing at all
// without triggers; musterd's refusals are printed as
// "slurm_set_trigger: <why>" and "slurm_clear_trigger: <why>". The events
// Muster has no counterpart for (a backup controller, slurmdbd, burst
// buffers, front-end nodes, the IDLE node state) are refused by name.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "core/trigger.h"
#include "util/getopt.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::cli {
namespace {

using nlohmann::json;

enum Opt {
  kSet = 1, kGet, kClear, kId, kJob, kNode, kUser, kOffset, kProgram, kFlags, kNoHeader, kQuiet,
  kVerbose, kVersion, kHelp, kUsage, kClusters, kEvent, kRefused,
};

struct EventOption {
  char short_name;
  const char* name;
  bool muster;  // false: refused, with `why`
  const char* why;
};

// The event options, as Slurm names them.
constexpr EventOption kEvents[] = {
    {'d', "down", true, ""},
    {'u', "up", true, ""},
    {'D', "drained", true, ""},
    {'r', "reconfig", true, ""},
    {'f', "fini", true, ""},
    {'t', "time", true, ""},
    {'A', "primary_slurmctld_resumed_operation", true, ""},
    {'b', "primary_slurmctld_resumed_control", true, ""},
    {'F', "fail", true, ""},
    {'I', "idle", false, "not supported yet"},
    {'a', "primary_slurmctld_failure", false, "there is no backup controller to notice it"},
    {'B', "backup_slurmctld_failure", false, "there is no backup controller"},
    {'c', "backup_slurmctld_resumed_operation", false, "there is no backup controller"},
    {'C', "backup_slurmctld_assumed_control", false, "there is no backup controller"},
    {'e', "primary_slurmctld_acct_buffer_full", false, "not supported yet"},
    {'g', "primary_slurmdbd_failure", false, "there is no slurmdbd: accounting is musterd's"},
    {'G', "primary_slurmdbd_resumed_operation", false,
     "there is no slurmdbd: accounting is musterd's"},
    {'h', "primary_database_failure", false, "not supported yet"},
    {'H', "primary_database_resumed_operation", false, "not supported yet"},
    {0, "burst_buffer", false, "burst buffers are not managed"},
    {0, "front_end", false, "there are no front-end nodes"},
};

std::vector<util::OptionSpec> Options() {
  using util::Arg;
  std::vector<util::OptionSpec> specs = {
      util::IdOption(0, "set", Arg::kNone, kSet),
      util::IdOption(0, "get", Arg::kNone, kGet),
      util::IdOption(0, "clear", Arg::kNone, kClear),
      util::IdOption('i', "id", Arg::kRequired, kId),
      util::IdOption('j', "jobid", Arg::kRequired, kJob),
      util::IdOption('n', "node", Arg::kOptional, kNode),
      util::IdOption(0, "user", Arg::kRequired, kUser),
      util::IdOption('o', "offset", Arg::kRequired, kOffset),
      util::IdOption('p', "program", Arg::kRequired, kProgram),
      util::IdOption(0, "flags", Arg::kRequired, kFlags),
      util::IdOption('N', "noheader", Arg::kNone, kNoHeader),
      util::IdOption('Q', "quiet", Arg::kNone, kQuiet),
      util::IdOption('v', "verbose", Arg::kNone, kVerbose),
      util::IdOption('V', "version", Arg::kNone, kVersion),
      util::IdOption(0, "help", Arg::kNone, kHelp),
      util::IdOption(0, "usage", Arg::kNone, kUsage),
      util::IdOption('M', "cluster", Arg::kRequired, kClusters),
  };
  for (const EventOption& e : kEvents) {
    specs.push_back(util::IdOption(e.short_name, e.name, Arg::kNone, e.muster ? kEvent : kRefused));
  }
  return specs;
}

constexpr char kUsageText[] =
    "Usage: strigger [--set | --get | --clear | --version] [-AbdDfiIjnNopQrtuv]\n";

constexpr char kHelpText[] = R"(Usage: strigger [--set | --get | --clear] [OPTIONS]
      --set           make a trigger
      --get           list the triggers
      --clear         remove triggers (by --id, --jobid or --user)

  -A, --primary_slurmctld_resumed_operation
                      when musterd is running again after a restart
  -b, --primary_slurmctld_resumed_control
                      when musterd has control again after a restart
  -d, --down          when a node goes DOWN
  -D, --drained       when a node is DRAINED (drain set, no job left)
  -f, --fini          when the job ends
      --flags=perm    keep the trigger after it fires
  -i, --id=#          a trigger's number
  -j, --jobid=#       the job the trigger is about
  -n, --node[=host]   the nodes the trigger is about (all by default)
  -N, --noheader      no header line
  -o, --offset=#      seconds after the event (before it, negative, for --time)
  -p, --program=path  the program to run, with its own arguments; the
                      nodes or the job id follow them
  -Q, --quiet         no messages for what could not be done
  -r, --reconfig      when the configuration is read again or a node's
                      state changes
  -t, --time          when the job reaches its time limit
  -u, --up            when a node comes back from DOWN
      --user=user     the triggers this user set
  -V, --version       the release

  Events Muster does not have: --burst_buffer, --front_end, -a, -B, -c, -C,
  -e, -F, -g, -G, -h, -H, -I [not in Muster].

Help options:
  --help              this text
  --usage             a short summary
)";

struct Args {
  int mode = 0;  // kSet, kGet, kClear
  int modes = 0;
  uint32_t id = 0;
  std::string job;
  std::optional<std::string> node;
  std::optional<std::string> user;
  int64_t offset = 0;
  std::string program;
  bool perm = false;
  bool noheader = false;
  bool quiet = false;
  std::vector<std::string> events;
};

int Fail(const std::string& message) {
  std::cerr << message << "\n";
  return 1;
}

}  // namespace

int StriggerMain(const std::vector<std::string>& argv) {
  const std::vector<util::OptionSpec> specs = Options();
  util::Result<util::ParseResult> parsed = util::ParseOptions("strigger", specs, argv, false);
  if (!parsed.ok()) return Fail(parsed.status().message());
  Args a;
  for (const util::ParsedOption& o : parsed->options) {
    const std::string v = o.value.value_or("");
    switch (o.spec->id) {
      case kSet:
      case kGet:
      case kClear:
        a.mode = o.spec->id;
        ++a.modes;
        break;
      case kId: {
        util::Result<int64_t> n = util::ParseInt(v);
        if (!n.ok() || *n <= 0 || *n > UINT32_MAX) return Fail("strigger: error: invalid --id " + v);
        a.id = static_cast<uint32_t>(*n);
        break;
      }
      case kJob: {
        util::Result<int64_t> n = util::ParseInt(v);
        if (!n.ok() || *n <= 0 || *n > UINT32_MAX) {
          return Fail("strigger: error: invalid --jobid " + v);
        }
        a.job = v;
        break;
      }
      case kNode: a.node = v.empty() ? "*" : v; break;
      case kUser: a.user = v; break;
      case kOffset: {
        util::Result<int64_t> n = util::ParseSignedInt(v);
        if (!n.ok() || *n < -1000000 || *n > 1000000) {
          return Fail("strigger: error: invalid --offset " + v);
        }
        a.offset = *n;
        break;
      }
      case kProgram: a.program = v; break;
      case kFlags:
        for (const std::string& f : util::Split(v, ',')) {
          if (!util::EqualsIgnoreCase(f, "perm")) {
            return Fail("strigger: error: Invalid --flags specification: " + f);
          }
          a.perm = true;
        }
        break;
      case kNoHeader: a.noheader = true; break;
      case kQuiet: a.quiet = true; break;
      case kVerbose: break;  // nothing more to tell
      case kVersion: return PrintVersion();
      case kHelp: std::cout << kHelpText; return 0;
      case kUsage: std::cout << kUsageText; return 0;
      case kClusters: break;  // one musterd is one cluster
      case kEvent: a.events.push_back(o.spec->long_name); break;
      case kRefused:
        for (const EventOption& e : kEvents) {
          if (o.spec->long_name == e.name) {
            return Fail(fmt::format("strigger: error: --{} is not supported by Muster: {}",
                                    e.name, e.why));
          }
        }
        break;
    }
  }
  if (a.modes != 1) {
    return Fail("strigger: error: You must use exactly one of the following options: --set, "
                "--get or --clear");
  }
  if (a.mode == kGet) {
    util::Result<Response> got = CallController("/v1/triggers", {{"op", "get"}});
    if (!got.ok()) {
      PrintCallError("strigger", got.status());
      return 1;
    }
    std::optional<uint32_t> uid;
    if (a.user) {
      uid = util::LookupUid(*a.user);
      if (!uid) return Fail("strigger: error: Invalid user: " + *a.user);
    }
    std::vector<core::Trigger> shown;
    for (const json& j : got->body.at("triggers")) {
      util::Result<core::Trigger> t = core::TriggerFromJson(j);
      if (!t.ok()) continue;
      const bool match = (a.id == 0 || t->id == a.id) && (!uid || t->uid == *uid) &&
                         (a.job.empty() || (t->resource == core::TriggerResource::kJob &&
                                            t->resource_id == a.job)) &&
                         (!a.node || *a.node == "*" ||
                          (t->resource == core::TriggerResource::kNode &&
                           t->resource_id == *a.node));
      if (match) shown.push_back(std::move(*t));
    }
    std::cout << core::RenderTriggers(shown, a.noheader);
    return 0;
  }
  if (a.mode == kClear) {
    if (a.id == 0 && a.job.empty() && !a.user) {
      return Fail("strigger: error: You must specify a --id, --jobid, or --user to clear");
    }
    json body = {{"op", "clear"}, {"id", a.id}};
    if (!a.job.empty()) body["job_id"] = std::stoul(a.job);
    if (a.user) {
      const std::optional<uint32_t> uid = util::LookupUid(*a.user);
      if (!uid) return Fail("strigger: error: Invalid user: " + *a.user);
      body["uid"] = *uid;
    }
    util::Result<Response> got = PostToController("/v1/triggers", body);
    if (!got.ok()) {
      PrintError("strigger", got.status().message());
      return 1;
    }
    if (got->status / 100 != 2) {
      if (!a.quiet) std::cerr << "slurm_clear_trigger: " << ErrorText(*got) << "\n";
      return 1;
    }
    return 0;
  }
  // --set: one event, and what it is about.
  if (a.events.empty()) {
    return Fail("strigger: error: You must specify a trigger (--down, --up, --drained, "
                "--reconfig, --time, --fini,\n--primary_slurmctld_resumed_operation or "
                "--primary_slurmctld_resumed_control)");
  }
  if (a.events.size() > 1) return Fail("strigger: error: You may specify only one trigger event");
  const std::string event = a.events.front();
  if (a.program.empty()) return Fail("strigger: error: You must specify a --program value");
  if (a.program[0] != '/') return Fail("strigger: error: The --program value must start with \"/\"");
  if (!a.job.empty() && a.node && *a.node != "*") {
    return Fail("strigger: error: --jobid and --node cannot be used together");
  }
  json trigger = {{"type", event}, {"offset", a.offset}, {"perm", a.perm},
                  {"program", a.program}};
  if (event.starts_with("primary_slurmctld")) {
    trigger["resource"] = "slurmctld";
    trigger["resource_id"] = "*";
  } else if (!a.job.empty()) {
    trigger["resource"] = "job";
    trigger["resource_id"] = a.job;
  } else if (event == "fini" || event == "time") {
    return Fail("strigger: error: You must specify a --jobid value");
  } else {
    trigger["resource"] = "node";
    trigger["resource_id"] = a.node.value_or("*");
  }
  util::Result<Response> got = PostToController("/v1/triggers", {{"op", "set"}, {"trigger", trigger}});
  if (!got.ok()) {
    PrintError("strigger", got.status().message());
    return 1;
  }
  if (got->status / 100 != 2) return Fail("slurm_set_trigger: " + ErrorText(*got));
  return 0;
}

}  // namespace muster::cli

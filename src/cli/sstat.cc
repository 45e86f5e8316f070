// sstat: the figures of running steps now. musterd asks the agents of the
// job's hosts, which read the tasks from /proc (agent/task_scanner.h);
// the table is rendered here (src/cli/render/sstat_render.h). As Slurm
// 22.05's sstat:
//  - -j is required ("You didn't give me any jobs to stat."); without a
//    step it shows the lowest-numbered running srun step (none: no row),
//    with -a every running step, the batch step first;
//  - a job that is not running: "No steps running for job N", an unknown
//    one "couldn't get steps for job N", a step not running "StepId=N.S
//    not found running."; each goes on to the next job and exits 0;
//  - the header is printed before any job is asked about.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/render/sstat_render.h"
#include "util/getopt.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using nlohmann::json;

enum SstatOpt {
  kAllSteps = 1, kFormat, kHelp, kHelpFormat, kJobs, kNoConvert, kNoHeader, kParsable,
  kParsable2, kPidFormat, kUsage, kVerbose, kVersion,
};

const std::vector<util::OptionSpec>& Options() {
  using util::Arg;
  static const std::vector<util::OptionSpec> kOptions = {
      util::IdOption('a', "allsteps", Arg::kNone, kAllSteps),
      util::IdOption('o', "format", Arg::kRequired, kFormat),
      util::IdOption(0, "fields", Arg::kRequired, kFormat),
      util::IdOption('h', "help", Arg::kNone, kHelp),
      util::IdOption('e', "helpformat", Arg::kNone, kHelpFormat),
      util::IdOption('j', "jobs", Arg::kRequired, kJobs),
      util::IdOption(0, "noconvert", Arg::kNone, kNoConvert),
      util::IdOption('n', "noheader", Arg::kNone, kNoHeader),
      util::IdOption('p', "parsable", Arg::kNone, kParsable),
      util::IdOption('P', "parsable2", Arg::kNone, kParsable2),
      util::IdOption('i', "pidformat", Arg::kNone, kPidFormat),
      util::IdOption(0, "usage", Arg::kNone, kUsage),
      util::IdOption('v', "verbose", Arg::kNone, kVerbose),
      util::IdOption('V', "version", Arg::kNone, kVersion),
  };
  return kOptions;
}

constexpr char kUsageText[] =
    "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n";

// Slurm's --help layout (a usage line, then each option), in Muster's
// words.
constexpr char kHelpText[] = R"(sstat [<OPTION>] -j <job(.stepid)>
    Valid <OPTION> values are:
      -a, --allsteps:
                   Without a step in -j, every running step of the job
                   (the batch step first), not only the lowest srun step.
      -e, --helpformat:
                   List the fields --format takes.
     -h, --help:   Print this help and exit.
     -i, --pidformat:
                   The fields JobId,Nodes,Pids: the process ids of each
                   running step on each of its nodes.
     -j, --jobs:
                   The job steps to show, <job(.step)>, a comma list; this
                   option is required (job ids alone are taken too).
                   Without a step: the lowest-numbered running srun step,
                   or every running step with --allsteps; "batch" names
                   the batch step.
     -n, --noheader:
                   Leave out the header line.
     --noconvert:  Memory in bytes, without a unit (no K, M or G).
     -o, --format:
                   The fields to show, a comma list (--helpformat lists
                   them).
     -p, --parsable: Fields separated by '|', one after the last too.
     -P, --parsable2: Fields separated by '|', none after the last.
     --usage:      Print the usage line and exit.
     -v, --verbose:
                   Accepted; nothing more is printed.
     -V, --version: Print the version and exit.

)";

// One -j item: a job and maybe a step ("batch" or a number).
struct StepSel {
  int64_t job = 0;
  std::string step;  // empty: the default (or all, with -a)
};

util::Result<std::vector<StepSel>> ParseJobs(const std::string& text) {
  std::vector<StepSel> out;
  for (const std::string& item : util::Split(text, ',')) {
    StepSel s;
    const size_t dot = item.find('.');
    const util::Result<int64_t> job = util::ParseInt(item.substr(0, dot));
    if (!job.ok() || *job <= 0 || *job > UINT32_MAX) {
      return util::InvalidArgument("Bad job/step specified: " + item);
    }
    s.job = *job;
    if (dot != std::string::npos) {
      s.step = item.substr(dot + 1);
      const util::Result<int64_t> number = util::ParseInt(s.step);
      if (s.step != core::kBatchStep && (!number.ok() || *number < 0)) {
        return util::InvalidArgument(fmt::format("Bad step specified: {}", *job));
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The rows of one job's reply from musterd: the steps `sel` names.
std::vector<render::SstatRow> RowsOf(const json& reply, const StepSel& sel, bool all_steps,
                                     std::string* error) {
  const uint32_t job = reply.at("job_id").get<uint32_t>();
  std::vector<core::TaskStats> tasks;
  for (const json& t : reply.at("tasks")) {
    util::Result<core::TaskStats> task = core::TaskStatsFromJson(t);
    if (task.ok()) tasks.push_back(std::move(*task));
  }
  // The steps shown: the named one; else all with -a; else the lowest
  // srun step.
  std::vector<json> steps;
  for (const json& s : reply.at("steps")) {
    const std::string id = s.at("step").get<std::string>();
    if (!sel.step.empty() ? id == sel.step : all_steps || id != core::kBatchStep) {
      steps.push_back(s);
    }
  }
  if (!sel.step.empty() && steps.empty()) {
    *error = fmt::format("StepId={}.{} not found running.", job, sel.step);
  }
  if (sel.step.empty() && !all_steps && steps.size() > 1) {
    auto number = [](const json& s) {
      const util::Result<int64_t> n = util::ParseInt(s.at("step").get<std::string>());
      return n.ok() ? *n : INT64_MAX;
    };
    steps = {*std::min_element(steps.begin(), steps.end(), [&](const json& a, const json& b) {
      return number(a) < number(b);
    })};
  }
  std::vector<render::SstatRow> rows;
  for (const json& s : steps) {
    const std::string id = s.at("step").get<std::string>();
    std::vector<core::TaskStats> mine;
    for (const core::TaskStats& t : tasks) {
      if (t.step == id) mine.push_back(t);
    }
    render::SstatRow row;
    row.stats = core::SummarizeStep(job, id, mine);
    row.nodelist = s.value("nodelist", "");
    row.ntasks = s.value("ntasks", 0);
    // The job's GPUs on the step's nodes, summed per node.
    const util::Result<std::vector<std::string>> nodes = util::ExpandHostlist(row.nodelist);
    for (const json& g : reply.value("gpus", json::array())) {
      const std::string node = g.at("node").get<std::string>();
      if (!nodes.ok() || std::find(nodes->begin(), nodes->end(), node) == nodes->end()) continue;
      auto it = std::find_if(row.gpus.begin(), row.gpus.end(),
                             [&](const render::SstatGpuNode& n) { return n.node == node; });
      if (it == row.gpus.end()) it = row.gpus.insert(row.gpus.end(), {node, 0, 0});
      it->utilization_pct += g.at("utilization_pct").get<int64_t>();
      it->memory_used_bytes += g.at("memory_used_bytes").get<int64_t>();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

int SstatMain(const std::vector<std::string>& args) {
  util::Result<util::ParseResult> parsed = util::ParseOptions("sstat", Options(), args, false);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n";
    return 1;
  }
  bool all_steps = false, noconvert = false, noheader = false;
  int parsable = 0;
  std::string format = render::kSstatDefaultFormat;
  std::vector<StepSel> jobs;
  for (const util::ParsedOption& o : parsed->options) {
    const std::string value = o.value.value_or("");
    switch (o.spec->id) {
      case kAllSteps: all_steps = true; break;
      case kFormat: format = value; break;
      case kHelp: std::cout << kHelpText; return 0;
      case kHelpFormat: std::cout << render::SstatHelpFormat(); return 0;
      case kJobs: {
        util::Result<std::vector<StepSel>> sel = ParseJobs(value);
        if (!sel.ok()) {
          std::cerr << "sstat: fatal: " << sel.status().message() << "\n";
          return 1;
        }
        jobs.insert(jobs.end(), sel->begin(), sel->end());
        break;
      }
      case kNoConvert: noconvert = true; break;
      case kNoHeader: noheader = true; break;
      case kParsable: parsable = 1; break;
      case kParsable2: parsable = 2; break;
      case kPidFormat: format = render::kSstatPidFormat; break;
      case kUsage: std::cout << kUsageText; return 0;
      case kVerbose: break;  // nothing more to tell
      case kVersion: return PrintVersion();
    }
  }
  // Job ids without -j, as Slurm's sstat takes them too.
  for (const std::string& word : parsed->positional) {
    util::Result<std::vector<StepSel>> sel = ParseJobs(word);
    if (!sel.ok()) {
      std::cerr << "sstat: fatal: " << sel.status().message() << "\n";
      return 1;
    }
    jobs.insert(jobs.end(), sel->begin(), sel->end());
  }
  util::Result<render::SstatTable> table = render::SstatTable::Make(format, noconvert, parsable);
  if (!table.ok()) {
    std::cerr << "sstat: error: " << table.status().message() << "\n";
    return 1;
  }
  if (jobs.empty()) {
    std::cerr << "sstat: error: You didn't give me any jobs to stat.\n";
    return 1;
  }
  if (!noheader) std::cout << table->Header() << std::flush;
  for (const StepSel& sel : jobs) {
    util::Result<Response> got = PostToController(fmt::format("/v1/jobs/{}/stats", sel.job), {});
    if (!got.ok()) {
      std::cerr << "sstat: error: " << got.status().message() << "\n";
      return 1;
    }
    if (got->status == 404) {
      std::cerr << "sstat: error: " << ErrorText(*got) << "\n";
      continue;
    }
    if (got->status == 409) {
      std::cerr << fmt::format("sstat: error: No steps running for job {}\n", sel.job);
      continue;
    }
    if (got->status / 100 != 2) {
      std::cerr << "sstat: error: " << ErrorText(*got) << "\n";
      continue;
    }
    for (const json& missing : got->body.value("missing", json::array())) {
      std::cerr << fmt::format("sstat: error: {}: its agent did not answer; its tasks are left out\n",
                               missing.get<std::string>());
    }
    std::string error;
    for (const render::SstatRow& row : RowsOf(got->body, sel, all_steps, &error)) {
      std::cout << table->Row(row);
    }
    if (!error.empty()) std::cerr << "sstat: error: " << error << "\n";
  }
  return 0;
}

}  // namespace muster::cli

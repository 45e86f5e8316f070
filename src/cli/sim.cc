// muster sim: replays a workload trace through the cluster's state machine
// (src/sim/replay.h) on the cluster a muster.conf describes, and prints the
// figures operators read; with --compare or --sweep, under several
// policies side by side. Figures go to stdout (the same inputs print the
// same bytes), progress and host-time speed to stderr.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "config/config.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "util/strings.h"

namespace muster::cli {

namespace fs = std::filesystem;

namespace {

constexpr char kUsage[] =
    "Usage: muster sim --conf FILE --trace FILE [OPTIONS]\n"
    "Replays a workload through Muster's scheduler on a virtual clock.\n"
    "\n"
    "  --conf FILE             the cluster and its policy (muster.conf; gres.conf and\n"
    "                          topology.conf beside it are read too)\n"
    "  --trace FILE            the workload (.swf, .swf.gz, Batsim .json, .csv, or sacct)\n"
    "  --format FORMAT         swf, batsim, sacct (sacct --parsable2 output) or csv;\n"
    "                          guessed from the file name otherwise\n"
    "  --out DIR               write out_jobs.csv and out_schedule.csv (Batsim's columns)\n"
    "                          there; with several policies, one folder per policy\n"
    "  --set KEY=VALUE         change a key of the configuration (repeatable)\n"
    "  --compare FILE          replay under a second configuration too, side by side\n"
    "  --sweep KEY=V1,V2,...   replay once per value of KEY, side by side\n"
    "  --time-limit SECONDS    the time limit of jobs whose trace has none\n"
    "                          (default: the job's run time)\n"
    "  --time-limit-factor X   multiplies the assumed time limits (default 1)\n"
    "  --user NAME             the user of jobs whose trace names none (default user1)\n"
    "  --account NAME          the account of jobs whose trace names none\n"
    "  --partition NAME        the partition of jobs whose trace names none\n"
    "  --cpus-per-gpu N        CPUs per GPU of GPU jobs without a CPU count\n"
    "  --column FIELD=COLUMN   CSV: read FIELD from the column named COLUMN (repeatable;\n"
    "                          fields: id submit start end run time_limit cpus cpu_milli\n"
    "                          gpus nodes mem_mb user account partition)\n"
    "  --quiet                 no progress lines\n"
    "  --every-pass            plan at every pass of the bf_interval timer, even when\n"
    "                          nothing but the time changed since the last (slower; the\n"
    "                          same outcomes: a check of the passes skipped otherwise)\n"
    "  -h, --help              this text\n";

// One policy to replay: its label and its configuration's text.
struct Policy {
  std::string label;
  std::string path;
  std::string text;
};

struct SimArgs {
  std::string conf;
  std::string trace;
  std::string format;
  std::string out;
  std::vector<std::string> sets;
  std::string compare;
  std::string sweep;
  sim::TraceOptions trace_options;
  bool quiet = false;
  bool every_pass = false;
};

int Fail(const std::string& message) {
  std::cerr << "muster sim: " << message << "\n";
  return 1;
}

util::Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return util::NotFound(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with KEY's line replaced by KEY=VALUE (or that line added): a key
// of the file's top level, never a NodeName or PartitionName line.
util::Result<std::string> WithKey(const std::string& text, const std::string& setting) {
  const size_t eq = setting.find('=');
  if (eq == std::string::npos || eq == 0) {
    return util::InvalidArgument(fmt::format("--set {}: expected KEY=VALUE", setting));
  }
  const std::string key = setting.substr(0, eq);
  if (util::EqualsIgnoreCase(key, "NodeName") || util::EqualsIgnoreCase(key, "PartitionName")) {
    return util::InvalidArgument(fmt::format(
        "--set {}: only keys of the file's top level can be set; edit the {} lines in a copy "
        "of the file and give it to --compare",
        setting, key));
  }
  std::string out;
  bool replaced = false;
  for (const std::string& line : util::Split(text, '\n')) {
    const std::string trimmed(util::Trim(line));
    const size_t at = trimmed.find('=');
    const bool same = at != std::string::npos && util::EqualsIgnoreCase(trimmed.substr(0, at), key);
    if (same && !replaced) {
      out += setting + "\n";
      replaced = true;
    } else if (!same) {
      out += line + "\n";
    }
  }
  if (!replaced) out += setting + "\n";
  return out;
}

util::Result<SimArgs> ParseArgs(const std::vector<std::string>& args) {
  SimArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& opt = args[i];
    if (opt == "--quiet") {
      a.quiet = true;
      continue;
    }
    if (opt == "--every-pass") {
      a.every_pass = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      return util::InvalidArgument(fmt::format(
          "{}: {}", opt, opt.starts_with("-") ? "needs a value" : "unexpected argument"));
    }
    const std::string& value = args[++i];
    auto number = [&](auto* field) -> util::Status {
      auto n = util::ParseInt(value);
      if (!n.ok() || *n < 0) {
        return util::InvalidArgument(
            fmt::format("{} {}: expected a number of at least 0", opt, value));
      }
      *field = static_cast<std::remove_reference_t<decltype(*field)>>(*n);
      return util::Status::Ok();
    };
    if (opt == "--conf") {
      a.conf = value;
    } else if (opt == "--trace") {
      a.trace = value;
    } else if (opt == "--format") {
      a.format = value;
    } else if (opt == "--out") {
      a.out = value;
    } else if (opt == "--set") {
      a.sets.push_back(value);
    } else if (opt == "--compare") {
      a.compare = value;
    } else if (opt == "--sweep") {
      a.sweep = value;
    } else if (opt == "--time-limit") {
      MUSTER_RETURN_IF_ERROR(number(&a.trace_options.time_limit));
    } else if (opt == "--time-limit-factor") {
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !(x > 0)) {
        return util::InvalidArgument(fmt::format("{} {}: expected a number above 0", opt, value));
      }
      a.trace_options.time_limit_factor = x;
    } else if (opt == "--user") {
      a.trace_options.user = value;
    } else if (opt == "--account") {
      a.trace_options.account = value;
    } else if (opt == "--partition") {
      a.trace_options.partition = value;
    } else if (opt == "--cpus-per-gpu") {
      MUSTER_RETURN_IF_ERROR(number(&a.trace_options.cpus_per_gpu));
    } else if (opt == "--column") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
        return util::InvalidArgument(fmt::format("--column {}: expected FIELD=COLUMN", value));
      }
      a.trace_options.columns[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      return util::InvalidArgument(fmt::format("unknown option {}", opt));
    }
  }
  if (a.conf.empty()) return util::InvalidArgument("--conf FILE is required");
  if (a.trace.empty()) return util::InvalidArgument("--trace FILE is required");
  if (!a.compare.empty() && !a.sweep.empty()) {
    return util::InvalidArgument("--compare and --sweep cannot be given together");
  }
  return a;
}

// The policies the arguments name: the configuration (with --set), then
// --compare's file (with --set too), or one per --sweep value.
util::Result<std::vector<Policy>> PoliciesOf(const SimArgs& a) {
  auto base = ReadText(a.conf);
  if (!base.ok()) return base.status();
  std::vector<Policy> policies = {{fs::path(a.conf).filename().string(), a.conf, *base}};
  if (!a.compare.empty()) {
    auto other = ReadText(a.compare);
    if (!other.ok()) return other.status();
    std::string label = fs::path(a.compare).filename().string();
    if (label == policies[0].label) label = a.compare;
    policies.push_back({label, a.compare, *other});
  }
  for (Policy& p : policies) {
    for (const std::string& setting : a.sets) {
      auto changed = WithKey(p.text, setting);
      if (!changed.ok()) return changed.status();
      p.text = *changed;
    }
  }
  if (!a.sweep.empty()) {
    const size_t eq = a.sweep.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.sweep.size()) {
      return util::InvalidArgument(fmt::format("--sweep {}: expected KEY=V1,V2,...", a.sweep));
    }
    const std::string key = a.sweep.substr(0, eq);
    const Policy base_policy = policies[0];
    policies.clear();
    for (const std::string& v : util::Split(a.sweep.substr(eq + 1), ',')) {
      auto changed = WithKey(base_policy.text, key + "=" + v);
      if (!changed.ok()) return changed.status();
      policies.push_back({key + "=" + v, base_policy.path, *changed});
    }
  }
  return policies;
}

std::string DayAndTime(int64_t seconds) {
  return fmt::format("day {} {:02}:{:02}", seconds / 86400, seconds % 86400 / 3600,
                     seconds % 3600 / 60);
}

// A folder name for a policy's label.
std::string FolderOf(const std::string& label) {
  std::string out;
  for (char c : label)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return out;
}

util::Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return util::Internal(fmt::format("cannot write {}", path.string()));
  return util::Status::Ok();
}

}  // namespace

int SimMain(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
  }
  auto parsed = ParseArgs(args);
  if (!parsed.ok()) return Fail(parsed.status().message() + "\n" + kUsage);
  const SimArgs& a = *parsed;
  auto policies = PoliciesOf(a);
  if (!policies.ok()) return Fail(policies.status().message());
  // Every configuration is checked before anything runs.
  std::vector<config::Config> configs;
  for (const Policy& p : *policies) {
    auto cfg = config::ParseConfig(p.text, p.path);
    if (!cfg.ok()) {
      return Fail(policies->size() > 1 ? fmt::format("{}: {}", p.label, cfg.status().message())
                                       : cfg.status().message());
    }
    configs.push_back(std::move(cfg).value());
  }
  util::Result<sim::TraceFormat> format =
      a.format.empty() ? sim::GuessTraceFormat(a.trace) : sim::ParseTraceFormat(a.format);
  if (!format.ok()) return Fail(format.status().message());
  auto trace = sim::ReadTraceFile(a.trace, *format, a.trace_options);
  if (!trace.ok()) return Fail(trace.status().message());

  std::cout << fmt::format("Trace {} ({}): {} jobs\n", trace->name,
                           sim::TraceFormatName(trace->format), trace->jobs.size());
  for (const sim::TraceAssumption& as : trace->assumptions) {
    std::cout << fmt::format("  assumed for {} jobs: {}\n", as.jobs, as.what);
  }
  std::vector<sim::LabelledFigures> compared;
  for (size_t k = 0; k < policies->size(); ++k) {
    const Policy& policy = (*policies)[k];
    sim::ReplayOptions options;
    options.skip_quiet_passes = !a.every_pass;
    const bool tty = isatty(STDERR_FILENO) != 0;
    if (!a.quiet) {
      options.progress = [&](const sim::Progress& p) {
        const double speed = p.host_seconds > 0 ? p.simulated_s / p.host_seconds : 0;
        std::cerr << fmt::format(
            "{}muster sim: {}: {} simulated, {} of {} jobs done, {:.0f}x real time{}",
            tty ? "\r" : "", policy.label, DayAndTime(p.simulated_s), p.jobs_done, p.jobs_total,
            speed, tty ? "\033[K" : "\n");
      };
    }
    auto result = sim::Replay(configs[k], *trace, options);
    if (tty && !a.quiet) std::cerr << "\r\033[K";
    if (!result.ok()) return Fail(fmt::format("{}: {}", policy.label, result.status().message()));
    const sim::Figures figures = sim::Summarize(result->jobs, result->size);
    std::cout << fmt::format("\nPolicy {}: {} nodes, {} CPUs, {} GPUs\n", policy.label,
                             result->size.nodes, result->size.cpus, result->size.gpus);
    if (result->associations_added > 0) {
      std::cout << fmt::format(
          "  AccountingStorageEnforce=associations: each user of the trace was given an "
          "association with the account it names (or one of its own name): {} made\n",
          result->associations_added);
    }
    if (result->not_replayed > 0) {
      std::cout << fmt::format(
          "  {} jobs the trace records as cancelled before they started were not replayed\n",
          result->not_replayed);
    }
    for (const sim::Refusal& r : result->refused) {
      std::cout << fmt::format("  {} jobs refused at submission: {} (first: {} line {})\n", r.jobs,
                               r.message, trace->name, r.first_line);
    }
    std::cout << sim::FormatFigures(figures);
    const double days = static_cast<double>(figures.makespan) / 86400;
    const double minutes = result->host_seconds / 60;
    std::cerr << fmt::format(
        "muster sim: {}: {} jobs, {} passes ({} more skipped: only the time had changed) in "
        "{:.2f} s: {:.0f} jobs/s, {:.0f} simulated days a minute, {:.0f}x real time\n",
        policy.label, result->jobs.size(), result->passes, result->skipped_passes,
        result->host_seconds,
        result->host_seconds > 0 ? result->jobs.size() / result->host_seconds : 0,
        minutes > 0 ? days / minutes : 0,
        result->host_seconds > 0 ? figures.makespan / result->host_seconds : 0);
    if (!a.out.empty()) {
      const fs::path dir =
          policies->size() > 1 ? fs::path(a.out) / FolderOf(policy.label) : fs::path(a.out);
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return Fail(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
      util::Status st = WriteFile(dir / "out_jobs.csv", sim::JobsCsv(result->jobs));
      if (st.ok()) {
        st = WriteFile(dir / "out_schedule.csv",
                       sim::ScheduleCsv(result->jobs, figures, result->size, 0));
      }
      if (!st.ok()) return Fail(st.message());
    }
    compared.push_back({policy.label, figures});
  }
  if (compared.size() > 1) std::cout << "\n" << sim::FormatComparison(compared);
  return 0;
}

}  // namespace muster::cli

#include "cli/sbatch_parse.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "cli/job_options.h"
#include "cli/options.h"
#include "core/gres.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::cli {

namespace {

util::Status Invalid(const std::string& what) {
  return util::InvalidArgument("Invalid " + what + " specification");
}

// A count from 1 to a million; nullopt otherwise.
std::optional<int> Count(const std::string& v) {
  auto n = util::ParseInt(v);
  if (!n.ok() || *n <= 0 || *n > 1000000) return std::nullopt;
  return static_cast<int>(*n);
}

// A count of -c, -n or --ntasks-per-node, refused in Slurm 22.05's words:
// 'Invalid numeric value "0" for --ntasks.'
util::Result<int> PositiveInt(const std::string& v, const std::string& option) {
  if (auto n = Count(v)) return *n;
  return util::OutOfRange("Invalid numeric value \"" + v + "\" for " + option + ".");
}

// -N's MIN[-MAX] node counts: '"x" is not a valid node count', as Slurm.
util::Result<int> NodeCount(const std::string& v) {
  if (auto n = Count(v)) return *n;
  return util::InvalidArgument("\"" + v + "\" is not a valid node count");
}

}  // namespace

util::Result<int64_t> ParseBeginTime(const std::string& v) {
  std::string s = util::ToLower(v);
  int64_t now = ::time(nullptr);
  if (util::StartsWith(s, "now")) {
    auto offset = util::ParseNowOffset(s);
    if (!offset.ok()) return Invalid("--begin");
    return now + *offset;
  }
  struct tm tm {};
  time_t t = now;
  localtime_r(&t, &tm);
  tm.tm_sec = 0;
  auto at = [&](int h, int m, int sec, bool next_day_if_past) -> int64_t {
    struct tm x = tm;
    x.tm_hour = h;
    x.tm_min = m;
    x.tm_sec = sec;
    x.tm_isdst = -1;
    int64_t r = mktime(&x);
    if (next_day_if_past && r <= now) r += 86400;
    return r;
  };
  if (s == "midnight") return at(0, 0, 0, true);
  if (s == "noon") return at(12, 0, 0, true);
  if (s == "teatime") return at(16, 0, 0, true);
  if (s == "today") return at(0, 0, 0, false);
  if (s == "tomorrow") return at(0, 0, 0, false) + 86400;
  int Y = 0, M = 0, D = 0, h = 0, m = 0, sec = 0;
  char extra = 0;
  if (sscanf(s.c_str(), "%d-%d-%dt%d:%d:%d%c", &Y, &M, &D, &h, &m, &sec, &extra) >= 5 ||
      sscanf(s.c_str(), "%d-%d-%d%c", &Y, &M, &D, &extra) == 3) {
    if (extra) return Invalid("--begin");
    struct tm x {};
    x.tm_year = Y - 1900;
    x.tm_mon = M - 1;
    x.tm_mday = D;
    x.tm_hour = h;
    x.tm_min = m;
    x.tm_sec = sec;
    x.tm_isdst = -1;
    return static_cast<int64_t>(mktime(&x));
  }
  if (sscanf(s.c_str(), "%d:%d:%d%c", &h, &m, &sec, &extra) >= 2 && !extra && h < 24 && m < 60) {
    return at(h, m, sec, true);
  }
  return Invalid("--begin");
}


std::vector<std::vector<std::string>> ExtractDirectives(const std::string& script,
                                                       std::vector<std::string>* warnings) {
  std::vector<std::vector<std::string>> components(1);
  size_t pos = 0;
  bool first = true;
  while (pos < script.size()) {
    size_t end = script.find('\n', pos);
    if (end == std::string::npos) end = script.size();
    std::string line = script.substr(pos, end - pos);
    pos = end + 1;
    if (first && util::StartsWith(line, "#!")) {
      first = false;
      continue;
    }
    first = false;
    std::string_view t = util::Trim(line);
    if (t.empty()) continue;
    if (t[0] != '#') break;  // the first command ends the directives
    if (!util::StartsWith(t, "#SBATCH")) continue;
    std::string rest(t.substr(7));
    if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t') continue;  // e.g. "#SBATCHX"
    std::vector<std::string> words = SplitShellWords(rest);
    // A line of "hetjob" alone starts the next component.
    if (words.size() == 1 && (words[0] == "hetjob" || words[0] == "packjob")) {
      if (words[0] == "packjob" && warnings != nullptr) {
        warnings->push_back("sbatch: Warning: the \"packjob\" component separator is being "
                            "deprecated. Please, use \"hetjob\" instead.");
      }
      components.emplace_back();
      continue;
    }
    for (auto& w : words) components.back().push_back(std::move(w));
  }
  return components;
}

std::vector<std::vector<std::string>> SplitComponents(const std::vector<std::string>& args) {
  std::vector<std::vector<std::string>> groups(1);
  for (const std::string& a : args) {
    if (a == ":") {
      groups.emplace_back();
    } else {
      groups.back().push_back(a);
    }
  }
  // A ":" after the script is one of its arguments: the component whose
  // options end at the script takes the rest.
  for (size_t i = 0; i + 1 < groups.size(); ++i) {
    SbatchInvocation probe;
    util::Result<std::vector<std::string>> pos = ApplySbatchOptions(groups[i], &probe);
    if (!pos.ok() || pos->empty()) continue;
    for (size_t j = i + 1; j < groups.size(); ++j) {
      groups[i].push_back(":");
      groups[i].insert(groups[i].end(), groups[j].begin(), groups[j].end());
    }
    groups.resize(i + 1);
    break;
  }
  return groups;
}

std::string WrapScript(const std::string& command) {
  return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + command + "\n";
}

util::Status CheckScript(const std::string& script) {
  if (script.empty()) return util::InvalidArgument("Batch script is empty!");
  if (!util::StartsWith(script, "#!")) {
    return util::InvalidArgument(
        "This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh");
  }
  if (script.find('\0') != std::string::npos) {
    return util::InvalidArgument("The job script contains a NULL character");
  }
  return util::Status::Ok();
}

util::Status FinishBatchRequest(const std::string& submit_dir, const std::string& submit_host,
                                const std::vector<std::string>& environ_list,
                                SbatchInvocation* inv) {
  core::JobRequest& req = inv->req;
  req.submit_dir = submit_dir;
  if (req.work_dir.empty()) {
    req.work_dir = submit_dir;
  } else if (req.work_dir[0] != '/') {
    req.work_dir = submit_dir + "/" + req.work_dir;
  }
  req.submit_host = submit_host;
  return ApplyExport(inv->export_spec, environ_list, &req);
}

util::Status ApplyExport(const std::string& spec, const std::vector<std::string>& environ_list,
                         core::JobRequest* req) {
  req->environment.clear();
  std::vector<std::string> parts = util::Split(spec, ',');
  if (parts.empty()) return Invalid("--export");
  std::string head = util::ToUpper(parts[0]);
  size_t first = 0;
  if (head == "ALL") {
    req->export_mode = core::ExportMode::kAll;
    req->environment = environ_list;
    first = 1;
  } else if (head == "NONE") {
    req->export_mode = core::ExportMode::kNone;
    first = 1;
  } else {
    req->export_mode = core::ExportMode::kList;
  }
  for (size_t i = first; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.find('=') != std::string::npos) {
      req->environment.push_back(p);
      continue;
    }
    for (const auto& kv : environ_list) {
      if (kv.size() > p.size() && kv.compare(0, p.size(), p) == 0 && kv[p.size()] == '=') {
        req->environment.push_back(kv);
      }
    }
  }
  // SLURM_* variables of the submitter always travel, as in Slurm.
  if (req->export_mode != core::ExportMode::kAll) {
    for (const auto& kv : environ_list) {
      if (util::StartsWith(kv, "SLURM_")) req->environment.push_back(kv);
    }
  }
  return util::Status::Ok();
}

util::Status CheckPerGpuOptions(const core::JobRequest& req) {
  if (req.cpus_per_gpu > 0 && req.cpus_per_task_set) {
    return util::InvalidArgument("--cpus-per-gpu is mutually exclusive with --cpus-per-task");
  }
  const bool gpus = std::any_of(req.gres.begin(), req.gres.end(),
                                [](const core::GresRequest& g) { return g.name == "gpu"; });
  if (req.mem_per_gpu_mb > 0 && !gpus) {
    return util::InvalidArgument(fmt::format(
        "Requested mem_per_tres=gres:gpu:{} but did not request any GPU.", req.mem_per_gpu_mb));
  }
  return util::Status::Ok();
}

int SbatchOptionExitCode(const util::Status& error) {
  return error.code() == util::Code::kOutOfRange ? 1 : 255;
}

util::Result<std::vector<std::string>> ApplySbatchOptions(const std::vector<std::string>& args,
                                                          SbatchInvocation* inv,
                                                          std::string_view prog) {
  core::JobRequest& r = inv->req;
  // The memory options of this pass (Slurm refuses two on one command line).
  std::set<std::string> mem_options;
  auto str = [](std::string* field) {
    return [field](const std::string& v) {
      *field = v;
      return util::Status::Ok();
    };
  };
  auto flag = [](bool* field, bool value) {
    return [field, value](const std::string&) {
      *field = value;
      return util::Status::Ok();
    };
  };
  auto positive = [](int* field, const char* what) {
    return [field, what](const std::string& v) {
      auto n = PositiveInt(v, what);
      if (!n.ok()) return n.status();
      *field = *n;
      return util::Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return util::Status::Ok(); };
  auto memory = [](int64_t* field, const char* what) {
    return [field, what](const std::string& v) {
      auto mb = util::ParseMemoryMb(v);
      if (!mb.ok()) return Invalid(what);
      *field = *mb;
      return util::Status::Ok();
    };
  };
  std::vector<OptionSpec> specs = {
      {'A', "account", Arg::kRequired, str(&r.account)},
      {'a', "array", Arg::kRequired, str(&r.array_spec)},
      {'b', "begin", Arg::kRequired,
       [&r](const std::string& v) {
         auto t = ParseBeginTime(v);
         if (!t.ok()) return t.status();
         r.begin_time = *t;
         return util::Status::Ok();
       }},
      {0, "cpus-per-gpu", Arg::kRequired, positive(&r.cpus_per_gpu, "--cpus-per-gpu")},
      {'c', "cpus-per-task", Arg::kRequired,
       [&r](const std::string& v) {
         auto n = PositiveInt(v, "--cpus-per-task");
         if (!n.ok()) return n.status();
         r.cpus_per_task = *n;
         r.cpus_per_task_set = true;
         return util::Status::Ok();
       }},
      {0, "comment", Arg::kRequired, str(&r.comment)},
      {'C', "constraint", Arg::kRequired, str(&r.constraint)},
      {'D', "chdir", Arg::kRequired, str(&r.work_dir)},
      {'d', "dependency", Arg::kRequired, str(&r.dependency)},
      {'e', "error", Arg::kRequired, str(&r.std_err)},
      {0, "exclusive", Arg::kOptional,
       [&r](const std::string& v) {
         // Slurm 22.05 takes no value, "user" or "mcs".
         if (!v.empty() && v != "user" && v != "mcs") return Invalid("--exclusive");
         r.exclusive = true;
         return util::Status::Ok();
       }},
      {0, "export", Arg::kRequired, str(&inv->export_spec)},
      {0, "get-user-env", Arg::kOptional, ignore},
      {0, "gres", Arg::kRequired,
       [&r](const std::string& v) {
         if (util::EqualsIgnoreCase(v, "none")) {
           r.gres.clear();
           return util::Status::Ok();
         }
         auto g = core::ParseGresRequest(v);
         if (!g.ok()) return util::InvalidArgument("Invalid generic resource (gres) specification");
         std::erase_if(r.gres, [](const core::GresRequest& x) { return !x.per_job; });
         for (auto& x : *g) r.gres.push_back(x);
         return util::Status::Ok();
       }},
      {'G', "gpus", Arg::kRequired,
       [&r](const std::string& v) {
         auto g = core::ParseGpuCount(v, true);
         if (!g.ok()) return util::InvalidArgument("Invalid --gpus specification");
         std::erase_if(r.gres, [](const core::GresRequest& x) { return x.name == "gpu"; });
         r.gres.push_back(*g);
         return util::Status::Ok();
       }},
      {0, "gpus-per-node", Arg::kRequired,
       [&r](const std::string& v) {
         auto g = core::ParseGpuCount(v, false);
         if (!g.ok()) return util::InvalidArgument("Invalid --gpus-per-node specification");
         std::erase_if(r.gres, [](const core::GresRequest& x) { return x.name == "gpu"; });
         r.gres.push_back(*g);
         return util::Status::Ok();
       }},
      {'H', "hold", Arg::kNone, flag(&r.hold, true)},
      {'i', "input", Arg::kRequired, str(&r.std_in)},
      {'J', "job-name", Arg::kRequired, str(&r.name)},
      {0, "kill-on-invalid-dep", Arg::kRequired,
       [&r](const std::string& v) {
         if (util::EqualsIgnoreCase(v, "yes")) {
           r.kill_invalid_dep = 1;
         } else if (util::EqualsIgnoreCase(v, "no")) {
           r.kill_invalid_dep = 0;
         } else {
           return Invalid("--kill-on-invalid-dep");
         }
         return util::Status::Ok();
       }},
      {'M', "clusters", Arg::kRequired, ignore},
      {0, "mail-type", Arg::kRequired, ignore},
      {0, "mail-user", Arg::kRequired, ignore},
      {0, "mem", Arg::kRequired,
       [&r, &mem_options](const std::string& v) {
         auto mb = util::ParseMemoryMb(v);
         if (!mb.ok()) return Invalid("--mem");
         r.mem_per_node_mb = *mb;
         r.mem_whole_node = *mb == 0;
         r.mem_per_cpu_mb = r.mem_per_gpu_mb = 0;
         mem_options.insert("mem");
         return util::Status::Ok();
       }},
      {0, "mem-per-cpu", Arg::kRequired,
       [&r, &mem_options, memory](const std::string& v) {
         MUSTER_RETURN_IF_ERROR(memory(&r.mem_per_cpu_mb, "--mem-per-cpu")(v));
         r.mem_per_node_mb = r.mem_per_gpu_mb = 0;
         r.mem_whole_node = false;
         mem_options.insert("mem-per-cpu");
         return util::Status::Ok();
       }},
      {0, "mem-per-gpu", Arg::kRequired,
       [&r, &mem_options](const std::string& v) {
         auto mb = util::ParseMemoryMb(v);
         if (!mb.ok() || *mb <= 0) return Invalid("--mem-per-gpu");
         r.mem_per_gpu_mb = *mb;
         r.mem_per_node_mb = r.mem_per_cpu_mb = 0;
         r.mem_whole_node = false;
         mem_options.insert("mem-per-gpu");
         return util::Status::Ok();
       }},
      {'N', "nodes", Arg::kRequired,
       [&r](const std::string& v) {
         auto dash = v.find('-');
         auto lo = NodeCount(v.substr(0, dash));
         if (!lo.ok()) return lo.status();
         r.min_nodes = *lo;
         r.max_nodes = *lo;
         if (dash != std::string::npos) {
           auto hi = NodeCount(v.substr(dash + 1));
           if (!hi.ok()) return hi.status();
           if (*hi < *lo) {
             return util::InvalidArgument(fmt::format(
                 "Maximum node count {} is less than minimum node count {}", *hi, *lo));
           }
           r.max_nodes = *hi;
         }
         return util::Status::Ok();
       }},
      {'n', "ntasks", Arg::kRequired, positive(&r.ntasks, "--ntasks")},
      {0, "ntasks-per-node", Arg::kRequired, positive(&r.ntasks_per_node, "--ntasks-per-node")},
      {0, "nice", Arg::kOptional,
       [&r](const std::string& v) {
         if (v.empty()) {
           r.nice = 100;
           return util::Status::Ok();
         }
         // Slurm's range; a negative value is checked against the caller
         // by musterd (only operators may raise a job's priority).
         auto n = util::ParseSignedInt(v);
         if (!n.ok()) return util::InvalidArgument("Invalid --nice value: " + v);
         if (*n < -core::kMaxNice || *n > core::kMaxNice) {
           return util::InvalidArgument("Invalid --nice value, out of range (+/- 2147483645)");
         }
         r.nice = static_cast<int>(*n);
         return util::Status::Ok();
       }},
      {'o', "output", Arg::kRequired, str(&r.std_out)},
      {0, "open-mode", Arg::kRequired,
       [&r](const std::string& v) {
         if (util::EqualsIgnoreCase(v, "append") || util::EqualsIgnoreCase(v, "a")) {
           r.open_append = true;
         } else if (util::EqualsIgnoreCase(v, "truncate") || util::EqualsIgnoreCase(v, "t")) {
           r.open_append = false;
         } else {
           return Invalid("--open-mode");
         }
         return util::Status::Ok();
       }},
      {'p', "partition", Arg::kRequired, str(&r.partition)},
      {0, "parsable", Arg::kNone, flag(&inv->parsable, true)},
      {0, "propagate", Arg::kOptional, ignore},
      {'q', "qos", Arg::kRequired, str(&r.qos)},
      {'Q', "quiet", Arg::kNone, flag(&inv->quiet, true)},
      {0, "requeue", Arg::kNone,
       [&r](const std::string&) {
         r.requeue = r.requeue_set = true;
         return util::Status::Ok();
       }},
      {0, "no-requeue", Arg::kNone,
       [&r](const std::string&) {
         r.requeue = false;
         r.requeue_set = true;
         return util::Status::Ok();
       }},
      {0, "reservation", Arg::kRequired, str(&r.reservation)},
      {0, "signal", Arg::kRequired, str(&r.signal_spec)},
      {0, "switches", Arg::kRequired,
       [&r](const std::string& v) {
         // N[@max-time]
         const size_t at = v.find('@');
         auto n = util::ParseInt(std::string_view(v).substr(0, at));
         if (!n.ok() || *n < 1 || *n > 1 << 20) return Invalid("--switches");
         r.switches = static_cast<int>(*n);
         r.switches_wait_s = -1;
         if (at != std::string::npos) {
           auto t = util::ParseTimeLimitSeconds(std::string_view(v).substr(at + 1));
           if (!t.ok() || *t < 0) return Invalid("--switches");
           r.switches_wait_s = *t;
         }
         return util::Status::Ok();
       }},
      {'t', "time", Arg::kRequired,
       [&r](const std::string& v) {
         auto t = util::ParseTimeLimitSeconds(v);
         if (!t.ok()) return Invalid("--time");
         // Slurm keeps limits in whole minutes, rounding seconds up.
         r.time_limit_s = *t < 0 ? *t : (*t + 59) / 60 * 60;
         return util::Status::Ok();
       }},
      // Checked as Slurm does; backfill does not use it yet.
      {0, "time-min", Arg::kRequired,
       [](const std::string& v) {
         return util::ParseTimeLimitSeconds(v).ok() ? util::Status::Ok() : Invalid("--time-min");
       }},
      {'v', "verbose", Arg::kNone, ignore},
      {'V', "version", Arg::kNone, flag(&inv->version, true)},
      {'w', "nodelist", Arg::kRequired, str(&r.nodelist)},
      {'x', "exclude", Arg::kRequired, str(&r.exclude)},
      {0, "wckey", Arg::kRequired, str(&r.wckey)},
      {0, "wrap", Arg::kRequired, str(&inv->wrap)},
      {'m', "distribution", Arg::kRequired, ignore},
      {'h', "help", Arg::kNone, flag(&inv->help, true)},
      {0, "usage", Arg::kNone, flag(&inv->usage, true)},
      {0, "ignore-pbs", Arg::kNone, ignore},
  };
  // What Slurm has and Muster does not do: refused or, without effect,
  // taken with a warning.
  const bool batch = prog == "sbatch" || prog == "scrontab";
  AddCatalogOptions(batch ? JobCommand::kSbatch : JobCommand::kSalloc, &specs, &inv->warnings);
  // A value an option refused (parsing stops at it, so its status is the
  // one returned) is sbatch's "error:" line; anything else is the option
  // parser's (glibc's) line, which Slurm follows with its hint.
  bool value_refused = false;
  for (OptionSpec& spec : specs) {
    if (!spec.apply) continue;
    spec.apply = [apply = std::move(spec.apply), &value_refused](const std::string& v) {
      util::Status st = apply(v);
      value_refused = !st.ok();
      return st;
    };
  }
  auto parsed = ParseOptions(std::string(prog), specs, args, true);
  if (parsed.ok() && mem_options.size() > 1) {
    return util::OutOfRange(std::string(prog) +
                            ": fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually "
                            "exclusive.");
  }
  if (!parsed.ok()) {
    if (value_refused) {
      return util::Status(parsed.status().code(),
                          std::string(prog) + ": error: " + parsed.status().message());
    }
    return util::InvalidArgument(parsed.status().message() + "\nTry \"" + std::string(prog) +
                                 " --help\" for more information");
  }
  return std::move(parsed->positional);
}

}  // namespace muster::cli

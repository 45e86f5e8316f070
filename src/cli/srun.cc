// srun inside a batch job: runs a command as a job step. musterd allocates
// the step (id, tasks per node from the job's allocation). On one host the
// tasks of the emulated nodes all live here, so srun starts them itself
// with fork/exec and each task's SLURM_* identity, inside the batch job's
// process tree (so cancelling the job reaches them); on a cluster of
// several hosts (auth/slurm) the agents of the step's nodes start them
// and stream their output back (srun_remote.h). Output goes on by whole
// lines (task_lines.h; -u as it comes, -l with the task's rank first), and
// to every sattach too (step_attach.h). Either way
// srun answers its own signals (Ctrl-C) as step_signals.h says; on one
// host each task leads a process group of its own, out of the terminal's
// reach, unless --pty gives it srun's terminal. The exit code
// is the highest task exit code. The counts srun takes from the job and
// each task's environment are in srun_env.h. In a heterogeneous job the
// step runs in one component (--het-group) or spans several (a list, or
// ':' groups), a step of each with one id (StepPart).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "cli/allocation.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/job_options.h"
#include "cli/options.h"
#include "cli/sbatch_parse.h"
#include "cli/srun_env.h"
#include "cli/srun_remote.h"
#include "cli/step_attach.h"
#include "cli/step_signals.h"
#include "cli/task_ends.h"
#include "cli/task_lines.h"
#include "config/config.h"
#include "core/job.h"
#include "core/step_messages.h"
#include "util/hostlist.h"
#include "util/hostname.h"
#include "util/rusage.h"
#include "util/slurm_time.h"
#include "util/strings.h"

extern char** environ;

namespace muster::cli {

namespace {

struct Task {
  pid_t pid = 0;
  int rank = 0;
  std::string node;
  // Pipes srun reads (its own stdout and stderr); -1 with -o/-e and --pty.
  int out_fd = -1;
  int err_fd = -1;
};

std::string ExpandTaskPattern(const std::string& pattern, const std::string& job, int step,
                              int rank, int node_id, const std::string& node) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    switch (c) {
      case 'j': out += job; break;
      case 's': out += std::to_string(step); break;
      case 't': out += std::to_string(rank); break;
      case 'n': out += std::to_string(node_id); break;
      case 'N': out += node; break;
      case '%': out += '%'; break;
      default: out += '%'; out += c;
    }
  }
  return out;
}

struct SrunOptions {
  SrunCounts counts;
  int cpus_per_task = 1;
  bool label = false;
  bool unbuffered = false;  // -u: output passed on as it comes, not by lines
  bool version = false;  // -V: print the version, run nothing
  bool help = false;     // -h/--help, --usage: print it, run nothing
  bool usage = false;
  // Options taken that have no effect in Muster (cli/job_options.h).
  std::vector<std::string> warnings;
  std::string output, error, job_name;
  // -w: the step's nodes (and the allocation's, outside one).
  std::string nodelist;
  // Only for srun's own allocation, outside one (as sbatch takes them).
  std::vector<std::string> allocation_args;
  // Of those, the options that size an allocation and that a step inside
  // one cannot take yet (--cpus-per-gpu, --mem-per-gpu, --switches).
  std::vector<std::string> new_allocation_only;
  bool quiet = false;
  bool kill_on_bad_exit = false;  // -K: the first task to fail ends the step
  int gpus_per_task = 0;          // --gpus-per-task
  int gpus_per_node = -1;         // --gres=gpu:N, --gpus-per-node; -1: all the job's
  StdinTarget input;              // -i all|none|<task id>
  bool pty = false;               // --pty
  std::string distribution;       // -m, as given
  bool cyclic = false;            // -m cyclic
  std::string export_spec;        // --export; empty: $SLURM_EXPORT_ENV, else ALL
  util::CpuBind cpu_bind;         // --cpu-bind, with -c
  bool mpi_list = false;          // --mpi=list
  bool pmix = false;              // --mpi=pmix
  bool mpi_given = false;         // --mpi given (else $SLURM_MPI_TYPE, else MpiDefault)
  std::string jobid;              // --jobid: run in that allocation
  // --het-group: the components of a heterogeneous job the step runs in
  // (empty: the first, or one per ':' group).
  std::vector<int> het_groups;
  // The command line's further ':' groups, each a component's options and
  // command (a heterogeneous step).
  std::vector<SrunOptions> more;
  bool overlap = false;           // --overlap: share CPUs other steps hold
  // Inside an allocation, the step's own: --mem (per node), --mem-per-cpu
  // (MB; 0: the job's), -t, -C (the job's nodes it may use), -G (GPUs
  // over its nodes; -1: as --gres says).
  int64_t mem_mb = 0;
  int64_t mem_per_cpu_mb = 0;
  int64_t time_limit_s = 0;  // -t: the step's (0: the job's)
  std::string constraint;
  int gpus = -1;
  std::vector<std::string> command;
};

// The MPI types srun knows (--mpi): none (OpenMPI's mpirun inside an
// allocation launches its daemons with srun and needs no more) and pmix
// (each node's launcher runs a PMIx server for the tasks; several hosts).
constexpr const char* kMpiTypes[] = {"pmix", "none"};

util::Status ParseMpi(const std::string& v, bool* list, bool* pmix) {
  if (v == "list") {
    *list = true;
    return util::Status::Ok();
  }
  *pmix = v.starts_with("pmix");  // pmix_v4: the library's version
  if (v == "none" || v == "pmix" || v == "pmix_v4") return util::Status::Ok();
  return util::InvalidArgument("srun: error: Invalid MPI type '" + v +
                               "', --mpi=list for acceptable types");
}

// --gres for a step: "gpu[:type]:N" (or "none"); the count of GPUs of each
// node the step's tasks see.
util::Result<int> ParseStepGres(const std::string& v) {
  if (v == "none") return 0;
  std::vector<std::string> parts = util::Split(v, ':');
  if (v.find(',') == std::string::npos && parts.size() >= 1 && parts.size() <= 3 &&
      parts[0] == "gpu") {
    if (parts.size() == 1) return 1;
    auto n = util::ParseInt(parts.back());
    if (n.ok() && *n >= 0 && *n <= 1024) return static_cast<int>(*n);
    if (parts.size() == 2) return 1;  // gpu:type
  }
  return util::InvalidArgument("srun: error: Invalid --gres specification: " + v +
                               " (a step takes gpu[:type][:count])");
}

// Parses srun's command line; prints the error and returns nullopt on bad
// input.
std::optional<SrunOptions> ParseSrunArgs(const std::vector<std::string>& args) {
  SrunOptions o;
  auto num = [](int* f, const char* what) {
    return [f, what](const std::string& v) {
      auto n = util::ParseInt(v.substr(0, v.find('-')));
      if (!n.ok() || *n <= 0 || *n > (1 << 30)) {
        return util::InvalidArgument(std::string("srun: error: Invalid ") + what);
      }
      *f = static_cast<int>(*n);
      return util::Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return util::Status::Ok(); };
  // An option only srun's own allocation takes, passed on as sbatch's.
  auto for_allocation = [&o](const char* flag) {
    return [&o, flag](const std::string& v) {
      o.allocation_args.insert(o.allocation_args.end(), {flag, v});
      return util::Status::Ok();
    };
  };
  auto new_allocation_only = [&o](const char* flag) {
    return [&o, flag](const std::string& v) {
      o.allocation_args.insert(o.allocation_args.end(), {flag, v});
      o.new_allocation_only.push_back(flag);
      return util::Status::Ok();
    };
  };
  // --mem, --mem-per-cpu: the step's inside an allocation; srun's own
  // allocation's outside one.
  auto memory = [&o](int64_t* field, const char* flag) {
    return [&o, field, flag](const std::string& v) {
      util::Result<int64_t> mb = util::ParseMemoryMb(v);
      if (!mb.ok() || *mb < 0) {
        return util::InvalidArgument(std::string("srun: error: Invalid ") + flag +
                                     " specification");
      }
      *field = *mb;
      o.allocation_args.insert(o.allocation_args.end(), {flag, v});
      return util::Status::Ok();
    };
  };
  auto cpu_bind = [&o](const std::string& v) {
    for (const std::string& word : util::Split(v, ',')) {
      if (word == "verbose" || word == "v") {
        o.cpu_bind.verbose = true;
      } else if (word == "cores") {
        o.cpu_bind.cores = true;
      } else if (word == "none" || word == "no" || word == "quiet" || word == "q") {
        o.cpu_bind.cores = false;
      } else {
        static const char* const kSlurmOnly[] = {"sockets", "threads", "ldoms", "rank",
                                                 "rank_ldom", "boards", "map_cpu", "mask_cpu",
                                                 "map_ldom", "mask_ldom"};
        const std::string kind = word.substr(0, word.find(':'));
        for (const char* other : kSlurmOnly) {
          if (kind == other) {
            return util::InvalidArgument("srun: error: --cpu-bind=" + word +
                                         ": Muster's srun binds to none or cores");
          }
        }
        return util::InvalidArgument("srun: error: unrecognized --cpu-bind argument \"" + word +
                                     "\"\nsrun: fatal: Failed to parse --cpu-bind= values.");
      }
    }
    return util::Status::Ok();
  };
  auto str = [](std::string* f) {
    return [f](const std::string& v) {
      *f = v;
      return util::Status::Ok();
    };
  };
  std::vector<OptionSpec> specs = {
      {'n', "ntasks", Arg::kRequired, num(&o.counts.ntasks, "--ntasks")},
      {'N', "nodes", Arg::kRequired, num(&o.counts.nodes, "node count")},
      {0, "ntasks-per-node", Arg::kRequired, num(&o.counts.ntasks_per_node, "--ntasks-per-node")},
      {'l', "label", Arg::kNone,
       [&o](const std::string&) {
         o.label = true;
         return util::Status::Ok();
       }},
      {'o', "output", Arg::kRequired, str(&o.output)},
      {'e', "error", Arg::kRequired, str(&o.error)},
      {'J', "job-name", Arg::kRequired, str(&o.job_name)},
      {0, "jobid", Arg::kRequired,
       [&o](const std::string& v) {
         if (!util::ParseInt(v).ok()) return util::InvalidArgument("srun: error: Invalid job id " + v);
         o.jobid = v;
         return util::Status::Ok();
       }},
      {0, "het-group", Arg::kRequired,
       [&o](const std::string& v) {
         // "1", "0,1", "0-2": component offsets.
         o.het_groups.clear();
         for (const std::string& item : util::Split(v, ',')) {
           const size_t dash = item.find('-');
           util::Result<int64_t> lo = util::ParseInt(item.substr(0, dash));
           util::Result<int64_t> hi =
               dash == std::string::npos ? lo : util::ParseInt(item.substr(dash + 1));
           if (!lo.ok() || !hi.ok() || *lo < 0 || *hi < *lo || *hi > 127) {
             return util::InvalidArgument("srun: error: Invalid --het-group value: " + v);
           }
           for (int64_t g = *lo; g <= *hi; ++g) o.het_groups.push_back(static_cast<int>(g));
         }
         std::sort(o.het_groups.begin(), o.het_groups.end());
         o.het_groups.erase(std::unique(o.het_groups.begin(), o.het_groups.end()),
                            o.het_groups.end());
         return util::Status::Ok();
       }},
      {'p', "partition", Arg::kRequired, for_allocation("--partition")},
      {'t', "time", Arg::kRequired,
       [&o](const std::string& v) {
         util::Result<int64_t> s = util::ParseTimeLimitSeconds(v);
         if (!s.ok()) return util::InvalidArgument("srun: error: Invalid time limit specification");
         // To the second (Slurm rounds a step's up to whole minutes);
         // UNLIMITED: the job's.
         o.time_limit_s = *s == util::kUnlimited ? 0 : *s;
         o.allocation_args.insert(o.allocation_args.end(), {"--time", v});
         return util::Status::Ok();
       }},
      {0, "mem", Arg::kRequired, memory(&o.mem_mb, "--mem")},
      {0, "mem-per-cpu", Arg::kRequired, memory(&o.mem_per_cpu_mb, "--mem-per-cpu")},
      // A step is charged to its job's account and QOS: inside an
      // allocation these are for srun's own allocation only, as in Slurm.
      {0, "cpus-per-gpu", Arg::kRequired, new_allocation_only("--cpus-per-gpu")},
      {0, "mem-per-gpu", Arg::kRequired, new_allocation_only("--mem-per-gpu")},
      {0, "switches", Arg::kRequired, new_allocation_only("--switches")},
      {'A', "account", Arg::kRequired, for_allocation("--account")},
      {'q', "qos", Arg::kRequired, for_allocation("--qos")},
      {'C', "constraint", Arg::kRequired,
       [&o](const std::string& v) {
         o.constraint = v;
         o.allocation_args.insert(o.allocation_args.end(), {"--constraint", v});
         return util::Status::Ok();
       }},
      {'G', "gpus", Arg::kRequired,
       [&o](const std::string& v) {
         // [type:]count; one type only.
         auto n = util::ParseInt(v.substr(v.rfind(':') + 1));
         if (!n.ok() || *n < 0 || *n > 1 << 20 || v.find(',') != std::string::npos) {
           return util::InvalidArgument(
               "srun: error: Unable to allocate resources: Requested node configuration is not "
               "available");
         }
         o.gpus = static_cast<int>(*n);
         o.allocation_args.insert(o.allocation_args.end(), {"--gpus", v});
         return util::Status::Ok();
       }},
      {'w', "nodelist", Arg::kRequired,
       [&o](const std::string& v) {
         o.nodelist = v;
         o.allocation_args.insert(o.allocation_args.end(), {"--nodelist", v});
         return util::Status::Ok();
       }},
      {'c', "cpus-per-task", Arg::kRequired, num(&o.cpus_per_task, "--cpus-per-task")},
      // Output is never held back: each piece goes out as it comes.
      {'u', "unbuffered", Arg::kNone,
       [&o](const std::string&) {
         o.unbuffered = true;
         return util::Status::Ok();
       }},
      {0, "cpu-bind", Arg::kRequired, cpu_bind},
      {0, "cpu_bind", Arg::kRequired, cpu_bind},
      {0, "mpi", Arg::kRequired,
       [&o](const std::string& v) {
         o.mpi_given = true;
         return ParseMpi(v, &o.mpi_list, &o.pmix);
       }},
      {0, "export", Arg::kRequired, str(&o.export_spec)},
      {0, "gres", Arg::kRequired,
       [&o](const std::string& v) {
         util::Result<int> n = ParseStepGres(v);
         if (!n.ok()) return n.status();
         o.gpus_per_node = *n;
         o.allocation_args.insert(o.allocation_args.end(), {"--gres", v});
         return util::Status::Ok();
       }},
      {0, "gpus-per-node", Arg::kRequired,
       [&o](const std::string& v) {
         auto n = util::ParseInt(v.substr(v.rfind(':') + 1));
         if (!n.ok() || *n < 0 || *n > 1024 || v.find(',') != std::string::npos) {
           return util::InvalidArgument("srun: error: Invalid --gpus-per-node specification: " + v);
         }
         o.gpus_per_node = static_cast<int>(*n);
         o.allocation_args.insert(o.allocation_args.end(), {"--gpus-per-node", v});
         return util::Status::Ok();
       }},
      {0, "gpus-per-task", Arg::kRequired,
       [&o](const std::string& v) {
         // [type:]count; one type only.
         auto n = util::ParseInt(v.substr(v.rfind(':') + 1));
         if (!n.ok() || *n <= 0 || *n > 1024 || v.find(',') != std::string::npos) {
           return util::InvalidArgument("srun: error: Invalid --gpus-per-task specification: " + v);
         }
         o.gpus_per_task = static_cast<int>(*n);
         return util::Status::Ok();
       }},
      // A step's CPUs are its own unless --overlap (Slurm 22.05's default);
      // outside an allocation --exclusive asks for whole nodes.
      {0, "exclusive", Arg::kOptional,
       [&o](const std::string& v) {
         o.overlap = false;
         o.allocation_args.push_back(v.empty() ? "--exclusive" : "--exclusive=" + v);
         return util::Status::Ok();
       }},
      {0, "overlap", Arg::kNone,
       [&o](const std::string&) {
         o.overlap = true;
         return util::Status::Ok();
       }},
      {'K', "kill-on-bad-exit", Arg::kOptional,
       [&o](const std::string& v) {
         o.kill_on_bad_exit = v.empty() || v != "0";
         return util::Status::Ok();
       }},
      {'v', "verbose", Arg::kNone, ignore},
      {'V', "version", Arg::kNone,
       [&o](const std::string&) {
         o.version = true;
         return util::Status::Ok();
       }},
      {'Q', "quiet", Arg::kNone,
       [&o](const std::string&) {
         o.quiet = true;
         return util::Status::Ok();
       }},
      {'m', "distribution", Arg::kRequired,
       [&o](const std::string& v) {
         if (!ParseDistribution(v, &o.cyclic)) {
           return util::InvalidArgument(
               v.starts_with("plane") || v.starts_with("arbitrary")
                   ? "srun: error: --distribution=" + v +
                         ": Muster's srun lays tasks out block or cyclic only"
                   : "srun: error: Invalid --distribution specification");
         }
         o.distribution = v;
         return util::Status::Ok();
       }},
      {'i', "input", Arg::kRequired,
       [&o](const std::string& v) {
         if (v == "all") {
           o.input = {StdinTarget::kAll, 0};
         } else if (v == "none") {
           o.input = {StdinTarget::kNone, 0};
         } else if (auto rank = util::ParseInt(v); rank.ok() && *rank >= 0 && *rank < (1 << 30)) {
           o.input = {StdinTarget::kRank, static_cast<int>(*rank)};
         } else {
           // Slurm also takes a file (pattern) here; Muster does not yet.
           return util::InvalidArgument("srun: error: --input=" + v +
                                        ": Muster's srun takes all, none or a task id");
         }
         return util::Status::Ok();
       }},
      {0, "pty", Arg::kNone,
       [&o](const std::string&) {
         o.pty = true;
         return util::Status::Ok();
       }},
      {'h', "help", Arg::kNone,
       [&o](const std::string&) {
         o.help = true;
         return util::Status::Ok();
       }},
      {0, "usage", Arg::kNone,
       [&o](const std::string&) {
         o.usage = true;
         return util::Status::Ok();
       }},
  };
  AddCatalogOptions(JobCommand::kSrun, &specs, &o.warnings);
  auto parsed = ParseOptions("srun", specs, args, true);
  if (!parsed.ok()) {
    const std::string& message = parsed.status().message();
    std::cerr << (message.starts_with("srun:") ? "" : "srun: error: ") << message << "\n";
    return std::nullopt;
  }
  if (o.version || o.help || o.usage) return o;
  for (const std::string& line : o.warnings) std::cerr << line << "\n";
  if (o.mpi_list) {
    std::cout << "MPI plugin types are...\n";
    for (const char* t : kMpiTypes) std::cout << "\t" << t << "\n";
    std::cout << "specific pmix plugin versions available: pmix_v4\n";
    return o;
  }
  if (parsed->positional.empty()) {
    PrintError("srun", "No command given to execute.");
    return std::nullopt;
  }
  o.command = std::move(parsed->positional);
  // "A : B": B is the next component's options and command.
  if (auto colon = std::find(o.command.begin(), o.command.end(), ":"); colon != o.command.end()) {
    const std::vector<std::string> rest(colon + 1, o.command.end());
    o.command.erase(colon, o.command.end());
    if (o.command.empty()) {
      PrintError("srun", "No command given to execute.");
      return std::nullopt;
    }
    std::optional<SrunOptions> next = ParseSrunArgs(rest);
    if (!next) return std::nullopt;
    std::vector<SrunOptions> later = std::move(next->more);
    next->more.clear();
    o.more.push_back(std::move(*next));
    for (SrunOptions& m : later) o.more.push_back(std::move(m));
  }
  if (o.pty && !::isatty(STDIN_FILENO)) {
    // As Slurm: the option is dropped, the step still runs.
    PrintError("srun", std::string("ioctl(TIOCGWINSZ): ") + std::strerror(ENOTTY));
    PrintError("srun", "Not using a pseudo-terminal, disregarding --pty option");
    o.pty = false;
  }
  if (o.input.kind == StdinTarget::kRank && o.counts.ntasks > 0 &&
      o.input.rank >= o.counts.ntasks) {
    PrintError("srun", "--input=" + std::to_string(o.input.rank) + ": there are only " +
                           std::to_string(o.counts.ntasks) + " tasks");
    return std::nullopt;
  }
  return o;
}

EnvMap CurrentEnvironment() {
  EnvMap env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

// What of srun's environment its tasks get (--export, else
// $SLURM_EXPORT_ENV, else all of it): with NONE or a list, the SLURM_*
// variables and the named ones only, as Slurm's srun.
util::Result<EnvMap> ExportedEnvironment(const SrunOptions& o, const EnvMap& env) {
  std::string spec = o.export_spec;
  if (spec.empty()) {
    auto inherited = env.find("SLURM_EXPORT_ENV");
    spec = inherited != env.end() && !inherited->second.empty() ? inherited->second : "ALL";
  }
  std::vector<std::string> list;
  for (const auto& [k, v] : env) list.push_back(k + "=" + v);
  core::JobRequest req;
  util::Status st = ApplyExport(spec, list, &req);
  if (!st.ok()) return st;
  EnvMap out;
  for (const std::string& kv : req.environment) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

unsigned CurrentUmask() {
  mode_t m = umask(0);
  umask(m);
  return static_cast<unsigned>(m);
}

StepView ToStepView(const nlohmann::json& step) {
  StepView v;
  v.step_id = step.at("step_id").get<int>();
  v.ntasks = step.at("ntasks").get<int>();
  v.nodelist = step.at("nodelist").get<std::string>();
  for (const auto& n : step.at("layout")) {
    StepNodeView node;
    node.node = n.at("node").get<std::string>();
    node.tasks = n.at("tasks").get<int>();
    node.first_task = n.at("first_task").get<int>();
    node.cpus = n.at("cpus").get<int>();
    node.gpus = n.at("gpu_indices").get<std::vector<int>>();
    node.gpu_names = n.value("gpu_names", std::vector<std::string>{});
    v.nodes.push_back(std::move(node));
  }
  return v;
}

[[noreturn]] void ExecFailed(int error_fd, int err) {
  (void)!::write(error_fd, &err, sizeof(err));
  _exit(127);
}

// The child's side of SpawnTask, between fork and exec (srun has one thread
// then: the stdin relay starts once every task has).
// Writes errno to `error_fd` (close-on-exec) when it cannot exec.
[[noreturn]] void ExecTask(char* const* argv, char* const* envp, char* pid_slot, size_t slot_size,
                           int in_fd, const char* out_path, const char* err_path, int out_pipe,
                           int err_pipe, int error_fd, const util::CpuBind& bind,
                           const std::string& node, int rank, int local_id, bool own_group) {
  auto fail = [error_fd](int err) { ExecFailed(error_fd, err); };
  if (own_group) ::setpgid(0, 0);
  if (in_fd >= 0 && ::dup2(in_fd, STDIN_FILENO) < 0) fail(errno);
  auto open_to = [&](const char* path, int target) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, target) < 0) fail(errno);
  };
  if (out_path) {
    open_to(out_path, STDOUT_FILENO);
    if (!err_path && ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) fail(errno);
  } else if (out_pipe >= 0 && ::dup2(out_pipe, STDOUT_FILENO) < 0) {
    fail(errno);
  }
  if (err_path) {
    open_to(err_path, STDERR_FILENO);
  } else if (err_pipe >= 0 && ::dup2(err_pipe, STDERR_FILENO) < 0) {
    fail(errno);
  }
  util::BindTaskCpus(bind, node, rank, local_id);
  // The task's own pid, as Slurm gives each task.
  snprintf(pid_slot, slot_size, "SLURM_TASK_PID=%d", static_cast<int>(::getpid()));
  ::execvpe(argv[0], argv, envp);
  ExecFailed(error_fd, errno);
}

// Starts one task with its environment and output redirections; a task
// that could not be started has pid -1 (the error is printed).
Task SpawnTask(const SrunOptions& o, const std::string& job_id, const StepView& step,
               size_t node_index, int local, const EnvMap& env, int in_fd) {
  const std::string& node = step.nodes[node_index].node;
  const int node_id = static_cast<int>(node_index);
  Task t;
  t.rank = step.nodes[node_index].Rank(local);
  t.node = node;
  util::CpuBind bind = o.cpu_bind;
  bind.cpus_per_task = o.cpus_per_task;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) {
    if (k != "SLURM_TASK_PID") env_strings.push_back(k + "=" + v);
  }
  char pid_slot[40] = "SLURM_TASK_PID=";
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(pid_slot);
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  std::string out_path, err_path;
  if (!o.output.empty()) {
    out_path = ExpandTaskPattern(o.output, job_id, step.step_id, t.rank, node_id, node);
  } else if (!o.pty && pipe2(out_pipe, O_CLOEXEC) != 0) {
    out_pipe[0] = out_pipe[1] = -1;
  }
  if (!o.error.empty()) {
    err_path = ExpandTaskPattern(o.error, job_id, step.step_id, t.rank, node_id, node);
  } else if (!o.pty && o.output.empty() && pipe2(err_pipe, O_CLOEXEC) != 0) {
    err_pipe[0] = err_pipe[1] = -1;
  }
  int error_pipe[2] = {-1, -1};
  int rc = pipe2(error_pipe, O_CLOEXEC) == 0 ? 0 : errno;
  if (rc == 0) {
    t.pid = fork();
    if (t.pid < 0) rc = errno;
  }
  if (rc == 0 && t.pid == 0) {
    ExecTask(argv.data(), envp.data(), pid_slot, sizeof(pid_slot), in_fd,
             out_path.empty() ? nullptr : out_path.c_str(),
             err_path.empty() ? nullptr : err_path.c_str(), out_pipe[1], err_pipe[1],
             error_pipe[1], bind, node, t.rank, local, !o.pty);
  }
  // Also here, so that srun's signals to its group cannot come first.
  if (rc == 0 && !o.pty) ::setpgid(t.pid, t.pid);
  for (int fd : {out_pipe[1], err_pipe[1], error_pipe[1]}) {
    if (fd >= 0) close(fd);
  }
  if (rc == 0) {
    // The exec error, if any: EOF (close-on-exec) means the task is running.
    int err = 0;
    ssize_t n;
    while ((n = read(error_pipe[0], &err, sizeof(err))) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof(err))) {
      rc = err;
      while (waitpid(t.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  if (error_pipe[0] >= 0) close(error_pipe[0]);
  t.out_fd = out_pipe[0];
  t.err_fd = err_pipe[0];
  if (rc != 0) {
    std::cerr << "srun: error: " << node << ": task " << t.rank << ": Unable to exec command '"
              << argv[0] << "': " << std::strerror(rc) << "\n";
    if (t.out_fd >= 0) close(t.out_fd);
    if (t.err_fd >= 0) close(t.err_fd);
    t.out_fd = t.err_fd = -1;
    t.pid = -1;
  }
  return t;
}

// The stdin of the tasks of a step on this host (-i): each task that takes
// it reads a pipe of its own, which a thread fills with srun's stdin (every
// task all of it, as Slurm broadcasts it) and with what sattach sends (to
// one task or all); the end of either closes the pipes it was for. The
// other tasks read /dev/null; under --pty task 0 reads srun's terminal
// itself.
class LocalStdin {
 public:
  LocalStdin(StdinTarget target, bool pty) : target_(target), pty_(pty) {
    null_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  ~LocalStdin() {
    if (null_ >= 0) ::close(null_);
    for (int fd : readers_) ::close(fd);
    for (const auto& [rank, fd] : writers_) ::close(fd);
  }
  LocalStdin(const LocalStdin&) = delete;
  LocalStdin& operator=(const LocalStdin&) = delete;

  // The descriptor task `rank` gets as its stdin; -1: srun's own.
  int ForTask(int rank) {
    if (!target_.Takes(rank)) return null_;
    if (pty_) return -1;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return null_;
    readers_.push_back(fds[0]);
    writers_[rank] = fds[1];
    return fds[0];
  }

  // Once every task is started: one thread reads srun's stdin, another
  // writes to the tasks (a task that stops reading is dropped, never
  // waited for; srun's own loop never waits on either).
  void Start() {
    for (int fd : readers_) ::close(fd);
    readers_.clear();
    if (writers_.empty()) return;
    std::thread(WriteToTasks, shared_, std::move(writers_)).detach();
    writers_.clear();
    std::thread([shared = shared_] {
      char buf[65536];
      ssize_t n;
      while ((n = ::read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        Push(*shared, kAllTasks, std::string(buf, static_cast<size_t>(n)));
      }
      Push(*shared, kAllTasks, {});
    }).detach();
  }

  // What sattach sent for task `rank` (kAllTasks: every one); empty: its end.
  void Feed(int rank, std::string_view data) { Push(*shared_, rank, std::string(data)); }

 private:
  static constexpr int kAllTasks = -1;
  struct Piece {
    int rank;
    std::string data;  // empty: the end
  };
  struct Shared {
    std::mutex mu;
    std::condition_variable ready;
    std::deque<Piece> pieces;
  };

  static void Push(Shared& shared, int rank, std::string data) {
    std::lock_guard lock(shared.mu);
    shared.pieces.push_back({rank, std::move(data)});
    shared.ready.notify_one();
  }

  static void WriteToTasks(std::shared_ptr<Shared> shared, std::map<int, int> writers) {
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);  // EPIPE instead
    while (!writers.empty()) {
      Piece piece;
      {
        std::unique_lock lock(shared->mu);
        shared->ready.wait(lock, [&] { return !shared->pieces.empty(); });
        piece = std::move(shared->pieces.front());
        shared->pieces.pop_front();
      }
      for (auto it = writers.begin(); it != writers.end();) {
        const bool mine = piece.rank == kAllTasks || piece.rank == it->first;
        const bool ends = mine && (piece.data.empty() || !WriteAll(it->second, piece.data));
        if (ends) {
          ::close(it->second);
          it = writers.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  // False when the task's pipe is closed (it stopped reading).
  static bool WriteAll(int fd, std::string_view data) {
    for (size_t off = 0; off < data.size();) {
      const ssize_t w = ::write(fd, data.data() + off, data.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      off += static_cast<size_t>(w);
    }
    return true;
  }

  StdinTarget target_;
  bool pty_;
  int null_ = -1;
  std::vector<int> readers_;
  std::map<int, int> writers_;  // by rank, until Start
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

std::vector<std::string> StepNodeNames(const StepView& step) {
  std::vector<std::string> names;
  for (const StepNodeView& n : step.nodes) names.push_back(n.node);
  return names;
}

// How srun runs a step's tasks on its own host.
struct LocalRun {
  std::string step_id;     // "12.0"
  bool label;              // -l
  bool unbuffered;         // -u
  bool kill_on_bad_exit;   // -K
  bool pty;                // --pty: the tasks share srun's terminal and process group
  int kill_wait_s;         // KillWait, after an abort
  int64_t time_limit_s;    // srun -t; 0: none of its own
  std::vector<std::string> nodes;  // the step's
};

// Runs the step's tasks on this host to their end, in the order they
// end: relays their output (line by line with its rank with -l) to srun's
// and every sattach's (and sattach's input to the tasks), answers
// srun's signals as across hosts (cli/step_signals.h; with --pty Ctrl-C
// and Ctrl-\ are the task's, from the terminal, as across hosts), and
// with -K ends the others (SIGTERM) when one fails, with Slurm's lines.
class LocalStep {
 public:
  LocalStep(std::vector<Task>& tasks, const LocalRun& run, AttachHub& hub, LocalStdin& input)
      : tasks_(tasks),
        run_(run),
        hub_(hub),
        input_(input),
        ends_(NodesOf(tasks), std::cerr),
        interrupts_(
            run.step_id, run.kill_wait_s, [this](int sig) { SignalTasks(sig); },
            [this] { PrintTaskStates(run_.step_id, states_); }) {
    for (const Task& t : tasks_) {
      states_[t.rank] = t.pid > 0 ? "running" : "exited abnormally";
      if (t.pid > 0) {
        ++left_;
      } else {
        // Its line was printed when it could not start.
        ends_.Ended(t.rank, "");
        exit_.code = std::max(exit_.code, 2);
        hub_.TaskEnded(t.rank, 2, 0);
      }
    }
    if (run.time_limit_s > 0) {
      interrupts_.SetTimeLimit(
          StepInterrupts::Clock::now() + std::chrono::seconds(run.time_limit_s), run.nodes);
    }
  }

  // `signals` was set up before the tasks started.
  StepExit Run(SignalCatcher& signals) {
    for (;;) {
      ReapEnded();
      ends_.Flush();
      std::vector<pollfd> fds{{signals.fd(), POLLIN, 0}};
      std::vector<std::pair<Task*, bool>> owners{{nullptr, false}};
      for (auto& t : tasks_) {
        if (t.out_fd >= 0) {
          fds.push_back({t.out_fd, POLLIN, 0});
          owners.emplace_back(&t, true);
        }
        if (t.err_fd >= 0) {
          fds.push_back({t.err_fd, POLLIN, 0});
          owners.emplace_back(&t, false);
        }
      }
      // Done once every task is reaped and its output read to the end.
      if (left_ == 0 && fds.size() == 1) break;
      const size_t first_hub = fds.size();
      hub_.AddPollFds(&fds);
      // SIGCHLD is caught too: a task's end wakes the poll.
      if (::poll(fds.data(), fds.size(), PollTimeoutMs()) < 0 && errno != EINTR) break;
      for (int sig : signals.Take()) {
        if (sig == SIGCHLD) continue;
        if (run_.pty && (sig == SIGINT || sig == SIGQUIT || sig == SIGTSTP)) continue;
        interrupts_.Handle(sig);
      }
      interrupts_.CheckDeadlines();
      for (size_t i = 1; i < first_hub; ++i) {
        if (fds[i].revents) Relay(*owners[i].first, owners[i].second);
      }
      hub_.Serve(std::span(fds).subspan(first_hub),
                 [this](int rank, std::string_view data) { input_.Feed(rank, data); });
    }
    lines_.Flush();
    ends_.Flush(/*all=*/true);
    hub_.Close();
    if (terminating_) std::cerr << "srun: Force Terminated StepId=" << run_.step_id << "\n";
    exit_.timed_out = interrupts_.timed_out();
    return exit_;
  }

 private:
  static std::map<int, std::string> NodesOf(const std::vector<Task>& tasks) {
    std::map<int, std::string> out;
    for (const Task& t : tasks) out[t.rank] = t.node;
    return out;
  }

  // The sooner of the signals' deadlines and a failed task's line.
  int PollTimeoutMs() const {
    const int a = interrupts_.PollTimeoutMs();
    const int b = ends_.PollTimeoutMs();
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
  }

  // Without --pty each task leads a process group of its own, out of the
  // terminal's reach: its whole tree gets what srun sends.
  void SignalTasks(int sig) {
    for (const Task& t : tasks_) {
      if (t.pid > 0) ::kill(run_.pty ? t.pid : -t.pid, sig);
    }
  }

  // Reaps every task that has ended, saying how, as Slurm's srun.
  void ReapEnded() {
    int status = 0;
    rusage usage{};
    pid_t pid;
    while ((pid = ::wait4(-1, &status, WNOHANG, &usage)) > 0) {
      auto t = std::find_if(tasks_.begin(), tasks_.end(), [&](const Task& x) { return x.pid == pid; });
      if (t == tasks_.end()) continue;
      --left_;
      exit_.max_rss_kb = std::max<int64_t>(exit_.max_rss_kb, usage.ru_maxrss);
      exit_.total_cpu_ms += util::CpuMillis(usage);
      std::string how;  // Slurm's words for a failure
      if (WIFEXITED(status)) {
        const int code = WEXITSTATUS(status);
        if (code != 0) how = fmt::format("Exited with exit code {}", code);
        exit_.code = std::max(exit_.code, code);
        hub_.TaskEnded(t->rank, code, 0);
      } else if (WIFSIGNALED(status)) {
        hub_.TaskEnded(t->rank, 0, WTERMSIG(status));
        how = strsignal(WTERMSIG(status));
        exit_.code = std::max(exit_.code, 128 + WTERMSIG(status));
        exit_.signal = WTERMSIG(status);
      }
      const bool bad = !how.empty();
      ends_.Ended(t->rank, how);
      states_[t->rank] = bad ? "exited abnormally" : "exited";
      t->pid = -t->pid;  // reaped
      if (bad && run_.kill_on_bad_exit && !terminating_ && left_ > 0) {
        // Slurm says which task failed before it stops the others.
        ends_.Flush(/*all=*/true);
        terminating_ = true;
        std::cerr << "srun: launch/slurm: _step_signal: Terminating StepId=" << run_.step_id
                  << "\n";
        SignalTasks(SIGTERM);
      }
    }
  }

  // What one of a task's pipes has, for srun's stdout or stderr (whole
  // lines, as Slurm's srun passes them on unless -u, with the task's rank
  // with -l) and for every sattach.
  void Relay(Task& t, bool is_out) {
    char buf[65536];
    ssize_t n = ::read(is_out ? t.out_fd : t.err_fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) return;
    if (n > 0) {
      const std::string_view data(buf, static_cast<size_t>(n));
      hub_.Output(t.rank, is_out, data);
      lines_.Write(t.rank, is_out, data, is_out ? stdout : stderr);
      return;
    }
    int& fd = is_out ? t.out_fd : t.err_fd;
    ::close(fd);
    fd = -1;
  }

  std::vector<Task>& tasks_;
  const LocalRun& run_;
  AttachHub& hub_;
  LocalStdin& input_;
  TaskLines lines_{run_.label, run_.unbuffered};
  TaskEndLines ends_;
  StepExit exit_;
  size_t left_ = 0;
  std::map<int, std::string> states_;  // by rank: running, exited, ...
  bool terminating_ = false;           // -K
  StepInterrupts interrupts_;
};

}  // namespace

// Tells musterd how the step ended, for sacct; a failure here must not
// change srun's result.
void EndStep(const Client& client, const std::string& job_id, int step_id, const StepExit& exit) {
  (void)client.Post("/v1/jobs/" + job_id + "/steps/" + std::to_string(step_id) + "/end",
                    {{"exit_code", exit.signal ? 0 : exit.code},
                     {"exit_signal", exit.signal},
                     {"timed_out", exit.timed_out},
                     {"max_rss_kb", exit.max_rss_kb},
                     {"total_cpu_ms", exit.total_cpu_ms}});
}

// Asks for srun's own allocation from its options (as sbatch would take
// them), waits for it and puts its SLURM_* variables in this process's
// environment, as if srun ran inside it.
util::Result<uint32_t> AllocateForSrun(const Client& client, const SrunOptions& options) {
  // One component per ':' group (a heterogeneous allocation).
  std::vector<const SrunOptions*> groups = {&options};
  for (const SrunOptions& m : options.more) groups.push_back(&m);
  std::vector<core::JobRequest> reqs;
  for (const SrunOptions* group : groups) {
    const SrunOptions& o = *group;
    std::vector<std::string> args;
    auto add = [&](const char* flag, const std::string& value) {
      if (!value.empty() && value != "0") args.insert(args.end(), {flag, value});
    };
    add("--nodes", std::to_string(o.counts.nodes));
    add("--ntasks", std::to_string(o.counts.ntasks));
    add("--ntasks-per-node", std::to_string(o.counts.ntasks_per_node));
    add("--cpus-per-task", o.cpus_per_task > 1 ? std::to_string(o.cpus_per_task) : "");
    args.insert(args.end(), o.allocation_args.begin(), o.allocation_args.end());
    SbatchInvocation inv;
    auto applied = ApplySbatchOptions(args, &inv, "srun");
    if (!applied.ok()) {
      std::cerr << applied.status().message() << "\n";
      return applied.status();
    }
    // Named as its step, as the oracle's srun does: -J, else the command.
    const SrunOptions& first = options;
    inv.req.name = first.job_name.empty()
                       ? first.command.front().substr(first.command.front().rfind('/') + 1)
                       : first.job_name;
    PrepareAllocationRequest(&inv.req);
    inv.req.command = first.command.front();
    reqs.push_back(std::move(inv.req));
  }
  util::Result<Allocation> alloc = RequestAllocation(client, reqs, "srun", options.quiet, false);
  if (!alloc.ok()) return alloc.status();
  EnterAllocation(*alloc);
  return alloc->job_id;
}

// Makes component `group`'s figures (SLURM_*_HET_GROUP_<group>) those of
// `env`, with their older aliases (SLURM_NODELIST, ...).
void UseHetGroup(int group, EnvMap* env) {
  const std::string suffix = "_HET_GROUP_" + std::to_string(group);
  for (std::string_view name : core::kHetGroupVariables) {
    const std::string key(name);
    auto own = env->find(key + suffix);
    if (own == env->end()) {
      env->erase(key);
    } else {
      (*env)[key] = own->second;
    }
  }
  for (const auto& [alias, of] : {std::pair{"SLURM_JOBID", "SLURM_JOB_ID"},
                                  std::pair{"SLURM_NODELIST", "SLURM_JOB_NODELIST"},
                                  std::pair{"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}}) {
    auto v = env->find(of);
    if (v != env->end()) (*env)[alias] = v->second;
  }
}

// One component's part of a step: the options it was given, the component
// it runs in (its offset and job id), that component's view of the job's
// environment, and the step musterd made there.
struct StepPart {
  SrunOptions opts;
  int group = 0;
  std::string job_id;
  EnvMap env;
  StepView step;
};

// The parts of a step: one, in component --het-group (0 by default) of a
// heterogeneous job; or one per component of --het-group's list, or per
// ':' group (the k-th in component k, unless it names its own), each in
// its component's figures (SLURM_*_HET_GROUP_<n>).
util::Result<std::vector<StepPart>> PlanStepParts(const SrunOptions& options, const EnvMap& env,
                                                  const std::string& leader_id) {
  std::vector<std::pair<int, SrunOptions>> wanted;
  auto first_group = [](const SrunOptions& o, int otherwise) {
    return o.het_groups.empty() ? otherwise : o.het_groups.front();
  };
  if (options.het_groups.size() > 1) {
    for (int g : options.het_groups) wanted.emplace_back(g, options);
  } else {
    wanted.emplace_back(first_group(options, 0), options);
    for (size_t k = 0; k < options.more.size(); ++k) {
      if (options.more[k].het_groups.size() > 1) {
        return util::InvalidArgument("--het-group names one component per ':' group");
      }
      wanted.emplace_back(first_group(options.more[k], static_cast<int>(k) + 1), options.more[k]);
    }
  }
  auto size = env.find("SLURM_HET_SIZE");
  util::Result<int64_t> components = util::ParseInt(size == env.end() ? "1" : size->second);
  std::vector<StepPart> parts;
  for (auto& [group, opts] : wanted) {
    if (!components.ok() || group >= *components) {
      return util::InvalidArgument(
          fmt::format("--het-group={}: job {} has no such component (it has {})", group, leader_id,
                      components.ok() ? *components : 1));
    }
    for (const StepPart& p : parts) {
      if (p.group == group) {
        return util::InvalidArgument(fmt::format("component {} is named twice", group));
      }
    }
    StepPart& part = parts.emplace_back();
    part.opts = std::move(opts);
    part.opts.more.clear();
    part.group = group;
    part.env = env;
    if (size != env.end()) UseHetGroup(group, &part.env);
    part.job_id = part.env["SLURM_JOB_ID"];
  }
  return parts;
}

// Makes a part's step in its component (with `step_id`, the first part's,
// for the others of a heterogeneous step) and checks its GPUs; prints why
// and returns false when it cannot (ending a step it made).
bool CreateStepPart(const Client& client, StepPart* part, std::optional<int> step_id) {
  SrunOptions* opts = &part->opts;
  const EnvMap& env = part->env;
  const std::string& job_id = part->job_id;
  // Slurm's srun checks the node count against the job before asking.
  if (const int given = opts->counts.nodes; given > 0) {
    auto have = env.find("SLURM_JOB_NUM_NODES");
    util::Result<int64_t> n = util::ParseInt(have == env.end() ? "" : have->second);
    if (n.ok() && given > *n) {
      PrintError("srun", "Only allocated " + std::to_string(*n) + " nodes asked for " +
                             std::to_string(given));
      return false;
    }
  }
  for (const std::string& w : ApplyJobDefaults(env, &opts->counts)) {
    std::cerr << "srun: Warning: " << w << "\n";
  }
  std::string step_name = opts->job_name.empty() ? opts->command.front() : opts->job_name;
  step_name = step_name.substr(step_name.rfind('/') + 1);
  nlohmann::json body = {{"ntasks", opts->counts.ntasks},
                         {"nodes", opts->counts.nodes},
                         {"ntasks_per_node", opts->counts.ntasks_per_node},
                         {"cpus_per_task", opts->cpus_per_task},
                         {"nodelist", opts->nodelist},
                         {"overlap", opts->overlap},
                         {"mem_mb", opts->mem_mb},
                         {"mem_per_cpu_mb", opts->mem_per_cpu_mb},
                         {"constraint", opts->constraint},
                         {"name", step_name},
                         {"srun_host", util::HostName()},
                         {"srun_pid", static_cast<int>(::getpid())}};
  if (step_id) body["step_id"] = *step_id;
  auto resp = client.Post("/v1/jobs/" + job_id + "/steps", body);
  // Other steps hold the CPUs this one needs: wait for them, as Slurm's
  // srun does, with its two lines.
  for (bool said = false; resp.ok() && resp->status == 409 && ErrorText(*resp) == core::kStepNodesBusy;
       said = true) {
    if (!said) {
      std::cerr << "srun: Job " << job_id << " step creation temporarily disabled, retrying ("
                << core::kStepNodesBusy << ")\n";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    resp = client.Post("/v1/jobs/" + job_id + "/steps", body);
    if (resp.ok() && resp->status == 201) std::cerr << "srun: Step created for job " << job_id << "\n";
  }
  if (!resp.ok()) {
    PrintError("srun", resp.status().message());
    return false;
  }
  if (resp->status != 201) {
    PrintError("srun", "Unable to create step for job " + job_id + ": " + ErrorText(*resp));
    return false;
  }
  StepView& step = part->step;
  step = ToStepView(resp->body);
  step.gpus_per_task = opts->gpus_per_task;
  step.distribution = opts->distribution;
  Distribute(&step, opts->cyclic);
  auto refuse = [&](const std::string& why) {
    PrintError("srun", "Unable to create step for job " + job_id + ": " + why);
    EndStep(client, job_id, step.step_id, StepExit{1, 0});
    return false;
  };
  if (opts->gpus >= 0) {
    // -G N: N GPUs over the step's nodes, the same number on each.
    size_t job_gpus = 0;
    for (const StepNodeView& n : step.nodes) job_gpus += n.gpus.size();
    const int nodes = static_cast<int>(step.nodes.size());
    if (opts->gpus > 0 && job_gpus == 0) {
      std::cerr << "srun: error: Step requested GRES but job doesn't have GRES\n";
      return refuse("Invalid generic resource (gres) specification");
    }
    if (opts->gpus % nodes != 0) {
      return refuse(fmt::format(
          "-G {} does not spread evenly over the step's {} nodes (give --gpus-per-node)",
          opts->gpus, nodes));
    }
    opts->gpus_per_node = opts->gpus / nodes;
  }
  if (opts->gpus_per_node >= 0) {
    // --gres=gpu:N: the first N of the job's GPUs on each node.
    for (StepNodeView& n : step.nodes) {
      if (static_cast<int>(n.gpus.size()) < opts->gpus_per_node) {
        return refuse(fmt::format("{} has {} GPUs of the job, not {}", n.node, n.gpus.size(),
                                  opts->gpus_per_node));
      }
      n.gpus.resize(static_cast<size_t>(opts->gpus_per_node));
    }
  }
  // Each task its own GPUs: the node must have enough for its tasks.
  for (const StepNodeView& n : step.nodes) {
    if (opts->gpus_per_task > 0 &&
        static_cast<int>(n.gpus.size()) < n.tasks * opts->gpus_per_task) {
      return refuse(fmt::format("{} has {} GPUs of the job for {} tasks of {} GPUs each", n.node,
                                n.gpus.size(), n.tasks, opts->gpus_per_task));
    }
  }
  return true;
}

// One view of every part's nodes, in order, the ranks of each part after
// the last of the one before (as Slurm numbers a heterogeneous step's
// tasks); each node knows its part.
StepView MergeParts(const std::vector<StepPart>& parts) {
  StepView all = parts.front().step;
  if (parts.size() == 1) return all;
  all.nodes.clear();
  all.ntasks = 0;
  std::vector<std::string> names;
  for (size_t k = 0; k < parts.size(); ++k) {
    for (StepNodeView node : parts[k].step.nodes) {
      node.first_task += all.ntasks;
      for (int& rank : node.ranks) rank += all.ntasks;
      node.part = static_cast<int>(k);
      names.push_back(node.node);
      all.nodes.push_back(std::move(node));
    }
    all.ntasks += parts[k].step.ntasks;
  }
  all.nodelist = util::CompressHostlist(names);
  return all;
}

// Runs the step in the allocation of this process's environment and
// returns srun's exit status.
int RunStep(SrunOptions& options, const config::Config& cfg, const Client& client) {
  const std::string leader_id = getenv("SLURM_JOB_ID");
  util::Result<std::vector<StepPart>> planned =
      PlanStepParts(options, CurrentEnvironment(), leader_id);
  if (!planned.ok()) {
    PrintError("srun", planned.status().message());
    return 1;
  }
  std::vector<StepPart>& parts = *planned;
  for (size_t k = 0; k < parts.size(); ++k) {
    const std::optional<int> step_id =
        k == 0 ? std::nullopt : std::optional<int>(parts.front().step.step_id);
    if (!CreateStepPart(client, &parts[k], step_id)) {
      for (size_t made = 0; made < k; ++made) {
        EndStep(client, parts[made].job_id, parts[made].step.step_id, StepExit{1, 0});
      }
      return 1;
    }
  }
  // The step-wide options (output, input, labels, -K, --pty, ...) are the
  // first part's.
  SrunOptions* opts = &parts.front().opts;
  const std::string& job_id = parts.front().job_id;
  const StepView step = MergeParts(parts);
  auto end_step = [&](const StepExit& exit) {
    for (const StepPart& part : parts) EndStep(client, part.job_id, step.step_id, exit);
  };
  util::Result<EnvMap> exported = ExportedEnvironment(*opts, parts.front().env);
  if (!exported.ok()) {
    PrintError("srun", exported.status().message());
    end_step(StepExit{1, 0});
    return 1;
  }
  EnvMap step_env = StepEnvironment(*exported, step, CurrentUmask());
  if (!opts->job_name.empty()) step_env["SLURM_JOB_NAME"] = opts->job_name;
  // A heterogeneous job's step knows the job by its first component's id,
  // and one over several components their nodes together, as Slurm's.
  step_env["SLURM_JOB_ID"] = step_env["SLURM_JOBID"] = leader_id;
  if (parts.size() > 1) {
    step_env["SLURM_JOB_NODELIST"] = step_env["SLURM_NODELIST"] = step.nodelist;
    step_env["SLURM_JOB_NUM_NODES"] = step_env["SLURM_NNODES"] = std::to_string(step.nodes.size());
  }
  // Where sattach finds the step, with its tasks as laid out.
  AttachHub hub;
  std::vector<std::pair<std::string, std::vector<int>>> ranks;
  for (const StepNodeView& n : step.nodes) {
    std::vector<int>& mine = ranks.emplace_back(n.node, std::vector<int>{}).second;
    for (int local = 0; local < n.tasks; ++local) mine.push_back(n.Rank(local));
  }
  hub.Register(client, job_id, step.step_id, ranks);

  // Where devices are confined (cgroup.conf ConstrainDevices), a step
  // outside a batch job on one host (salloc's shell, srun's own
  // allocation) has no job cgroup to start in, and srun, the user's,
  // cannot make one: its node's agent launches the tasks, as on a cluster
  // of hosts, into a cgroup of the step's own that refuses the other GPUs.
  const char* environment = std::getenv("ENVIRONMENT");
  const bool outside_batch = environment == nullptr || std::string_view(environment) != "BATCH";
  if (cfg.auth_type != config::AuthType::kLocal || (cfg.cgroup.constrain_devices && outside_batch)) {
    // The step's nodes may be on other hosts: their agents start the tasks.
    RemoteLaunch launch;
    launch.job_id = leader_id;
    launch.step_id = step.step_id;
    launch.argv = opts->command;
    char cwd[4096];
    launch.work_dir = ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/tmp";
    launch.label = opts->label && !opts->pty;
    launch.unbuffered = opts->unbuffered;
    launch.kill_on_bad_exit = opts->kill_on_bad_exit;
    launch.input = opts->input;
    launch.pty = opts->pty;
    launch.kill_wait_s = cfg.kill_wait_s;
    launch.cpu_bind = opts->cpu_bind;
    launch.pmix = opts->pmix;
    launch.cpu_bind.cpus_per_task = opts->cpus_per_task;
    launch.time_limit_s = opts->time_limit_s;
    for (size_t n = 0; n < step.nodes.size(); ++n) {
      const StepPart& part = parts[static_cast<size_t>(step.nodes[n].part)];
      RemoteNodeTasks node{step.nodes[n].node, part.job_id, part.opts.command, {}};
      for (int local = 0; local < step.nodes[n].tasks; ++local) {
        const int rank = step.nodes[n].Rank(local);
        std::vector<std::string> env_strings;
        for (const auto& [k, v] : TaskEnvironment(step_env, step, n, local)) {
          if (k != "SLURM_TASK_PID") env_strings.push_back(k + "=" + v);
        }
        node.tasks.emplace_back(rank, std::move(env_strings));
        const int node_id = static_cast<int>(n);
        if (!opts->output.empty()) {
          launch.out_paths[rank] = ExpandTaskPattern(opts->output, leader_id, step.step_id, rank, node_id, node.node);
        }
        if (!opts->error.empty()) {
          launch.err_paths[rank] = ExpandTaskPattern(opts->error, leader_id, step.step_id, rank, node_id, node.node);
        }
      }
      launch.nodes.push_back(std::move(node));
    }
    util::Result<StepExit> ended = RunRemoteStep(client, launch, hub);
    if (!ended.ok()) PrintError("srun", ended.status().message());
    const StepExit exit = ended.ok() ? *ended : StepExit{1, 0};
    end_step(exit);
    return exit.code;
  }

  // --pty on this host: task 0 has srun's own terminal; the others
  // neither read it nor write to it, as in Slurm.
  if (opts->pty) opts->input = {StdinTarget::kRank, 0};
  LocalStdin input(opts->input, opts->pty);
  if (opts->pmix) {
    // The PMIx server lives in the agents' launchers, which start the
    // tasks only on a cluster of several hosts.
    PrintError("srun", "--mpi=pmix needs AuthType (a cluster of hosts); on one host run mpirun "
                       "inside the allocation");
    end_step(StepExit{1, 0});
    return 1;
  }
  // How each part's tasks start: its command and CPUs, the step's output
  // files and terminal; with --pty only task 0 writes anywhere.
  std::vector<SrunOptions> spawn;
  for (const StepPart& part : parts) {
    SrunOptions& o = spawn.emplace_back(part.opts);
    o.output = opts->output;
    o.error = opts->error;
    o.pty = opts->pty;
  }
  SrunOptions quiet_task = *opts;
  quiet_task.output = quiet_task.error = "/dev/null";
  // Caught before the first task starts, so no signal in between is lost.
  // Ctrl-Z stops srun alone, as Slurm's, unless the task shares its
  // terminal (--pty): then the task has it, and srun goes on.
  std::vector<int> caught = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGCHLD};
  if (opts->pty) caught.push_back(SIGTSTP);
  SignalCatcher signals(caught);
  std::vector<Task> tasks;
  for (size_t n = 0; n < step.nodes.size(); ++n) {
    const SrunOptions& own = spawn[static_cast<size_t>(step.nodes[n].part)];
    for (int local = 0; local < step.nodes[n].tasks; ++local) {
      const int rank = step.nodes[n].Rank(local);
      tasks.push_back(SpawnTask(opts->pty && rank != 0 ? quiet_task : own, leader_id, step, n,
                                local, TaskEnvironment(step_env, step, n, local),
                                input.ForTask(rank)));
    }
  }
  input.Start();
  const LocalRun run{leader_id + "." + std::to_string(step.step_id), opts->label && !opts->pty,
                     opts->unbuffered, opts->kill_on_bad_exit, opts->pty, cfg.kill_wait_s,
                     opts->time_limit_s, StepNodeNames(step)};
  const StepExit exit = LocalStep(tasks, run, hub, input).Run(signals);
  end_step(exit);
  return exit.code;
}

int SrunMain(const std::vector<std::string>& args) {
  std::optional<SrunOptions> opts = ParseSrunArgs(args);
  if (!opts) return 1;
  if (opts->version) return PrintVersion();
  if (opts->help || opts->usage) {
    std::cout << (opts->help ? JobCommandHelp(JobCommand::kSrun) : JobCommandUsage(JobCommand::kSrun));
    return 0;
  }
  if (opts->mpi_list) return 0;
  auto cfg = config::LoadConfig(config::DefaultConfigPath());
  if (!cfg.ok()) {
    PrintError("srun", cfg.status().message());
    return 1;
  }
  if (!opts->mpi_given) {
    // As Slurm: $SLURM_MPI_TYPE, else the cluster's MpiDefault.
    const char* type = std::getenv("SLURM_MPI_TYPE");
    bool list = false;
    util::Status st = ParseMpi(type != nullptr && *type != '\0' ? type : cfg->mpi_default, &list,
                               &opts->pmix);
    if (!st.ok()) {
      std::cerr << st.message() << "\n";
      return 1;
    }
  }
  auto client = util::Result<Client>(Client::ForConfig(*cfg));
  // Outside an allocation srun first asks for one of its own, runs its
  // step in it and releases it with the step's exit code.
  std::optional<uint32_t> own_allocation;
  if ((!opts->jobid.empty() || getenv("SLURM_JOB_ID") != nullptr) &&
      !opts->new_allocation_only.empty()) {
    std::cerr << "srun: error: " << opts->new_allocation_only.front()
              << " sizes a new allocation; a step inside one takes its CPUs and memory from "
                 "-c, -n and --mem\n";
    return 1;
  }
  if (!opts->jobid.empty()) {
    // --jobid: as if inside that job (salloc --no-shell's, or any running).
    util::Result<Allocation> existing = ExistingAllocation(*client, opts->jobid, "srun");
    if (!existing.ok()) return 1;
    EnterAllocation(*existing);
  } else if (getenv("SLURM_JOB_ID") == nullptr) {
    // Its own allocation has a component per ':' group.
    const size_t components = 1 + opts->more.size();
    if (!opts->het_groups.empty() && static_cast<size_t>(opts->het_groups.back()) >= components) {
      PrintError("srun", fmt::format("--het-group={}: the allocation srun makes here has {} "
                                     "component(s), one per ':' group",
                                     opts->het_groups.back(), components));
      return 1;
    }
    util::Result<uint32_t> granted = AllocateForSrun(*client, *opts);
    if (!granted.ok()) return 1;
    own_allocation = *granted;
  }
  const int rc = RunStep(*opts, *cfg, *client);
  if (own_allocation) ReleaseAllocation(*client, *own_allocation, rc);
  return rc;
}

}  // namespace muster::cli

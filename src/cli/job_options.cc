#include "cli/job_options.h"

#include <algorithm>

#include <fmt/format.h>

namespace muster::cli {
namespace {

constexpr unsigned B = static_cast<unsigned>(JobCommand::kSbatch);
constexpr unsigned A = static_cast<unsigned>(JobCommand::kSalloc);
constexpr unsigned R = static_cast<unsigned>(JobCommand::kSrun);
constexpr unsigned BA = B | A, BR = B | R, BAR = B | A | R;
constexpr OptionState S = OptionState::kSupported;
constexpr OptionState N = OptionState::kNoEffect;
constexpr OptionState X = OptionState::kRefused;

constexpr char kRun[] = "Parallel run options";
constexpr char kConstraint[] = "Constraint options";
constexpr char kConsumable[] = "Consumable resources related options";
constexpr char kAffinity[] = "Affinity/Multi-core options";
constexpr char kGpu[] = "GPU scheduling options";
constexpr char kHelp[] = "Help options";
constexpr char kOther[] = "Other options";

}  // namespace

const std::vector<CatalogOption>& JobOptionCatalog() {
  static const std::vector<CatalogOption> kCatalog = {
      // Parallel run options.
      {B, 'a', "array", "=indexes", kRun, "a job array of these task indices (1-9:2,12%4)", S, ""},
      {BAR, 'A', "account", "=name", kRun, "charge the job to this account", S, ""},
      {BAR, 0, "bb", "=<spec>", kRun, "burst buffer request", X,
       "burst buffers are not managed"},
      {BAR, 0, "bbf", "=<file_name>", kRun, "burst buffer request from a file", X,
       "burst buffers are not managed"},
      {BA, 'b', "begin", "=time", kRun, "do not start before this time (now+1hour, 16:00)", S, ""},
      {R, 'b', "begin", "=time", kRun, "do not start before this time", X,
       "srun's own allocation starts at once; use sbatch --begin"},
      {BA, 0, "comment", "=name", kRun, "free text kept with the job", S, ""},
      {R, 0, "comment", "=name", kRun, "free text kept with the job", X,
       "srun's own allocation takes no comment yet"},
      {BAR, 0, "cpu-freq", "=min[-max[:gov]]", kRun, "CPU frequency and governor", X,
       "CPU frequencies are not controlled"},
      {BAR, 'c', "cpus-per-task", "=ncpus", kRun, "CPUs for each task", S, ""},
      {BA, 'd', "dependency", "=type:jobid[:time]", kRun,
       "start only once other jobs reach a state (afterok:12)", S, ""},
      {R, 'd', "dependency", "=type:jobid[:time]", kRun, "wait for other jobs", X,
       "srun's own allocation starts at once; use sbatch -d"},
      {BAR, 0, "deadline", "=time", kRun, "cancel the job if it cannot end before then", X,
       "deadlines are not enforced"},
      {BAR, 0, "delay-boot", "=mins", kRun, "wait before rebooting nodes for features", X,
       "nodes are never rebooted by Muster"},
      {BA, 'D', "chdir", "=directory", kRun, "the job's working directory", S, ""},
      {R, 'D', "chdir", "=directory", kRun, "the tasks' working directory", X,
       "tasks start in srun's own directory"},
      {BR, 'e', "error", "=err", kRun, "standard error to this file (%j, %x, %A, %a, %N, %t)", S,
       ""},
      {BR, 0, "export", "[=names]", kRun, "the variables the job gets (ALL, NONE, NAME=value,...)",
       S, ""},
      {B, 0, "export-file", "=file|fd", kRun, "variables for the job from a file", X,
       "use --export"},
      {BA, 0, "get-user-env", "", kRun, "load the user's login environment", N,
       "the job gets the submitting environment (--export), not a login one"},
      {BA, 0, "gid", "=group_id", kRun, "run as this group (root only)", X,
       "jobs run as their submitter"},
      {BAR, 0, "gres", "=list", kRun, "generic resources per node (gpu:h100:2)", S, ""},
      {BAR, 0, "gres-flags", "=opts", kRun, "GRES binding to the job's sockets", X,
       "GRES to socket binding is not enforced"},
      {BA, 'H', "hold", "", kRun, "submit held (scontrol release starts it)", S, ""},
      {R, 'H', "hold", "", kRun, "submit held", X, "srun's own allocation cannot wait held"},
      {B, 0, "ignore-pbs", "", kRun, "ignore #PBS and #BSUB lines", S,
       "always so: Muster reads #SBATCH lines only"},
      {BR, 'i', "input", "=in", kRun, "standard input from this file (srun: all, none or a task)",
       S, "srun takes all, none or a task id, not a file"},
      {BAR, 'J', "job-name", "=jobname", kRun, "the job's name", S, ""},
      {BAR, 'k', "no-kill", "", kRun, "keep running when one of the nodes fails", X,
       "a job on a failed node always ends (NODE_FAIL)"},
      {BAR, 'L', "licenses", "=names", kRun, "licenses the job needs", X,
       "licenses are not counted by the scheduler"},
      {BAR, 'M', "clusters", "=names", kRun, "the clusters to submit to", N,
       "one musterd is one cluster: the job goes to it"},
      {BAR, 0, "container", "=path", kRun, "an OCI bundle to run the job in", X,
       "OCI containers are not run"},
      {BA, 'm', "distribution", "=type", kRun, "how tasks are laid out (block, cyclic)", N,
       "the batch step takes none; give -m to srun inside the job"},
      {R, 'm', "distribution", "=type", kRun, "how tasks are laid out (block, cyclic)", S,
       "block and cyclic"},
      {BAR, 0, "mail-type", "=type", kRun, "mail on BEGIN, END, FAIL or ALL", N,
       "no mail is sent yet"},
      {BAR, 0, "mail-user", "=user", kRun, "who gets the mail", N, "no mail is sent yet"},
      {BAR, 0, "mcs-label", "=mcs", kRun, "MCS label", X, "MCS plugins are not offered"},
      {BAR, 'n', "ntasks", "=ntasks", kRun, "number of tasks", S, ""},
      {BA, 0, "nice", "[=value]", kRun, "lower the job's priority by this much", S, ""},
      {R, 0, "nice", "[=value]", kRun, "lower the job's priority", X,
       "srun's own allocation takes no nice value yet"},
      {B, 0, "no-requeue", "", kRun, "never requeue the job", S, ""},
      {BAR, 0, "ntasks-per-node", "=n", kRun, "tasks on each node", S, ""},
      {BAR, 'N', "nodes", "=N", kRun, "number of nodes (min[-max])", S, ""},
      {BR, 'o', "output", "=out", kRun, "standard output to this file (%j, %x, %A, %a, %N, %t)",
       S, ""},
      {BAR, 'O', "overcommit", "", kRun, "more tasks than CPUs", X,
       "every task gets its CPUs"},
      {B, 0, "open-mode", "=append|truncate", kRun, "append to the output files or truncate them",
       S, ""},
      {BAR, 'p', "partition", "=partition", kRun, "the partition(s) to run in", S, ""},
      {B, 0, "parsable", "", kRun, "print only the job id (and cluster)", S, ""},
      {BAR, 0, "power", "=flags", kRun, "power management options", X,
       "power management is not offered"},
      {BAR, 0, "priority", "=value", kRun, "the job's priority (operators)", X,
       "operators set it with scontrol update JobId=<id> Priority=<n>"},
      {BAR, 0, "profile", "=value", kRun, "profile data collection", X,
       "HDF5 profiles are not collected; see sstat and /metrics"},
      {BR, 0, "propagate", "[=rlimits]", kRun, "pass the submitter's resource limits on", N,
       "jobs get the agent's limits, not the submitter's"},
      {BAR, 'q', "qos", "=qos", kRun, "the quality of service", S, ""},
      {BAR, 'Q', "quiet", "", kRun, "print no informational messages", S, ""},
      {BAR, 0, "reboot", "", kRun, "reboot the nodes before the job", X,
       "nodes are never rebooted by Muster"},
      {B, 0, "requeue", "", kRun, "let the job be requeued", S, ""},
      {BAR, 's', "oversubscribe", "", kRun, "share nodes beyond their CPUs", X,
       "CPUs are never oversubscribed"},
      {BAR, 'S', "core-spec", "=cores", kRun, "cores kept for the system", X,
       "core specialisation is not offered"},
      {BA, 0, "signal", "=[[R][B]:]num[@time]", kRun, "a signal this long before the time limit",
       S, ""},
      {R, 0, "signal", "=[[R][B]:]num[@time]", kRun, "a signal before the time limit", X,
       "srun's own allocation takes no --signal yet"},
      {BAR, 0, "spread-job", "", kRun, "spread the job over as many nodes as it can", X,
       ""},
      {BAR, 0, "switches", "=max-switches{@max-time-to-wait}", kRun,
       "at most this many leaf switches", S, ""},
      {BAR, 0, "thread-spec", "=threads", kRun, "threads kept for the system", X,
       "thread specialisation is not offered"},
      {BAR, 't', "time", "=minutes", kRun, "time limit (minutes, HH:MM:SS, D-HH)", S, ""},
      {BA, 0, "time-min", "=minutes", kRun, "the least time the job can do with", N,
       "checked, but backfill does not shorten jobs to it yet"},
      {R, 0, "time-min", "=minutes", kRun, "the least time the job can do with", N,
       "backfill does not shorten jobs to it yet"},
      {BA, 0, "uid", "=user_id", kRun, "submit as this user (root only)", X,
       "jobs run as their submitter"},
      {BAR, 0, "use-min-nodes", "", kRun, "prefer the smaller node count of a range", X,
       ""},
      {BAR, 'v', "verbose", "", kRun, "more detail", N, "there is no more detail to print"},
      {B, 'W', "wait", "", kRun, "wait for the job to end and exit with its status", X,
       "poll squeue or sacct"},
      {R, 'W', "wait", "=sec", kRun, "end the step this long after the first task", X,
       ""},
      {BA, 0, "wckey", "=wckey", kRun, "workload characterisation key", S, ""},
      {R, 0, "wckey", "=wckey", kRun, "workload characterisation key", X,
       "srun's own allocation takes no wckey yet"},
      {B, 0, "wrap", "=command", kRun, "wrap this command line in a sh script", S, ""},
      {A, 0, "bell", "", kRun, "ring the terminal bell when the allocation starts", N,
       "salloc rings no bell"},
      {A, 0, "no-bell", "", kRun, "do not ring the bell", S, "there is never a bell"},
      {A, 'I', "immediate", "[=secs]", kRun, "give up unless resources come within secs", S, ""},
      {R, 'I', "immediate", "[=secs]", kRun, "give up unless resources come within secs", X,
       ""},
      {A, 'K', "kill-command", "[=signal]", kRun, "signal the command when the allocation ends",
       X, ""},
      {A, 0, "no-shell", "", kRun, "allocate and return, running no command", S, ""},
      {R, 0, "acctg-freq", "=<datatype>=<interval>", kRun, "sampling interval", X,
       "samples follow JobAcctGatherFrequency"},
      {R, 0, "bcast", "=<dest_path>", kRun, "copy the executable to the nodes first", X,
       ""},
      {R, 0, "bcast-exclude", "=<paths>", kRun, "libraries --send-libs leaves out", X,
       ""},
      {R, 0, "compress", "[=library]", kRun, "compress --bcast's data", X, ""},
      {R, 0, "epilog", "=program", kRun, "run a program after the step", X,
       "sites use Epilog"},
      {R, 'E', "preserve-env", "", kRun, "keep SLURM_NNODES and SLURM_NTASKS as they are", X,
       ""},
      {R, 0, "jobid", "=id", kRun, "run the step in this running job", S, ""},
      {R, 'K', "kill-on-bad-exit", "[=0|1]", kRun, "end the step when a task fails", S, ""},
      {R, 'l', "label", "", kRun, "prefix each output line with its task id", S, ""},
      {R, 0, "mpi", "=type", kRun, "MPI support (none, pmix; list)", S, ""},
      {R, 0, "multi-prog", "", kRun, "a program per task from a configuration file", X,
       ""},
      {R, 0, "overlap", "", kRun, "share the CPUs of other steps", S, ""},
      {R, 0, "het-group", "=value", kRun, "the component of a heterogeneous job to run in", S,
       "one component per step: a step over several (0,1) is not yet supported"},
      {R, 0, "prolog", "=program", kRun, "run a program before the step", X,
       "sites use Prolog"},
      {R, 0, "pty", "", kRun, "task 0 on a pseudo-terminal", S, ""},
      {R, 0, "quit-on-interrupt", "", kRun, "abort at the first Ctrl-C", X, ""},
      {R, 'r', "relative", "=n", kRun, "start at this node of the allocation", X,
       ""},
      {R, 0, "send-libs", "[=yes|no]", kRun, "copy the executable's libraries with --bcast", X,
       ""},
      {R, 0, "slurmd-debug", "=level", kRun, "the step daemon's log level", X,
       "the agent's log has no per-step level"},
      {R, 0, "task-epilog", "=program", kRun, "run a program after each task", X,
       ""},
      {R, 0, "task-prolog", "=program", kRun, "run a program before each task", X,
       ""},
      {R, 'T', "threads", "=threads", kRun, "srun's own threads", X,
       "srun's threads are not tunable"},
      {R, 'u', "unbuffered", "", kRun, "pass output on as it comes, not by whole lines", S,
       ""},
      {R, 'X', "disable-status", "", kRun, "Ctrl-C forwards SIGINT at once", X,
       ""},
      // Constraint options.
      {BAR, 0, "cluster-constraint", "=[!]list", kConstraint, "clusters with these features", X,
       "federation is not offered"},
      {BAR, 0, "contiguous", "", kConstraint, "nodes next to each other", X, ""},
      {BAR, 'C', "constraint", "=list", kConstraint, "nodes with these features (a&b, a|b)", S,
       ""},
      {BA, 'F', "nodefile", "=filename", kConstraint, "the nodes, from a file", X,
       "give the nodes with -w"},
      {BAR, 0, "mem", "=MB", kConstraint, "memory per node (K, M, G, T; 0: all of it)", S, ""},
      {BAR, 0, "mincpus", "=n", kConstraint, "at least this many CPUs per node", X,
       "ask with -c and --ntasks-per-node"},
      {BA, 0, "reservation", "=name", kConstraint, "run in this reservation", S, ""},
      {R, 0, "reservation", "=name", kConstraint, "run in this reservation", X,
       "srun's own allocation takes no reservation yet"},
      {BAR, 0, "tmp", "=MB", kConstraint, "temporary disk space per node", X,
       "nodes' TmpDisk is not scheduled"},
      {BAR, 'w', "nodelist", "=hosts...", kConstraint, "run on these nodes", S, ""},
      {BA, 'x', "exclude", "=hosts...", kConstraint, "never on these nodes", S, ""},
      {R, 'x', "exclude", "=hosts...", kConstraint, "never on these nodes", X,
       "srun's own allocation takes no exclusions yet"},
      {R, 'Z', "no-allocate", "", kConstraint, "run without an allocation (operators)", X,
       "every step runs in an allocation"},
      {BAR, 0, "network", "=type", kConstraint, "network options", X,
       "network plugins are not offered"},
      // Consumable resources related options.
      {BAR, 0, "exclusive", "[=user]", kConsumable, "the nodes to this job alone", S, ""},
      {BAR, 0, "mem-per-cpu", "=MB", kConsumable, "memory per CPU", S, ""},
      {BAR, 0, "sockets-per-node", "=S", kConsumable, "nodes with at least S sockets", X,
       ""},
      {BAR, 0, "cores-per-socket", "=C", kConsumable, "sockets with at least C cores", X,
       ""},
      {BAR, 0, "threads-per-core", "=T", kConsumable, "cores with at least T threads", X,
       ""},
      {BAR, 0, "ntasks-per-core", "=n", kConsumable, "tasks on each core", X, ""},
      {BAR, 0, "ntasks-per-socket", "=n", kConsumable, "tasks on each socket", X,
       ""},
      {BAR, 0, "ntasks-per-gpu", "=n", kConsumable, "tasks for each GPU", X, ""},
      {R, 0, "exact", "", kConsumable, "only the CPUs the step asks for", X, ""},
      {R, 0, "resv-ports", "[=count]", kConsumable, "reserve ports for the step", X,
       ""},
      // Affinity/Multi-core options.
      {BAR, 'B', "extra-node-info", "=S[:C[:T]]", kAffinity, "sockets, cores, threads per node",
       X, ""},
      {BAR, 0, "hint", "=hint", kAffinity, "compute_bound, memory_bound, nomultithread", X,
       ""},
      {R, 0, "cpu-bind", "=type", kAffinity, "bind tasks to CPUs (none, cores)", S,
       "none and cores"},
      {BA, 0, "cpu-bind", "=type", kAffinity, "bind tasks to CPUs", X, "give --cpu-bind to srun"},
      {BAR, 0, "mem-bind", "=type", kAffinity, "bind memory to NUMA nodes", X,
       ""},
      // GPU scheduling options.
      {BAR, 0, "cpus-per-gpu", "=n", kGpu, "CPUs for each GPU", S, ""},
      {BAR, 'G', "gpus", "=n", kGpu, "GPUs for the job ([type:]count)", S, ""},
      {BAR, 0, "gpu-bind", "=...", kGpu, "bind tasks to GPUs", X, ""},
      {BAR, 0, "gpu-freq", "=...", kGpu, "GPU clocks", X, "GPU clocks are not controlled"},
      {BAR, 0, "gpus-per-node", "=n", kGpu, "GPUs on each node", S, ""},
      {BAR, 0, "gpus-per-socket", "=n", kGpu, "GPUs on each socket", X, ""},
      {R, 0, "gpus-per-task", "=n", kGpu, "GPUs for each task", S, ""},
      {BA, 0, "gpus-per-task", "=n", kGpu, "GPUs for each task", X,
       "give --gpus-per-task to srun inside the job"},
      {BAR, 0, "mem-per-gpu", "=n", kGpu, "memory for each GPU", S, ""},
      // Help and other options.
      {BAR, 'h', "help", "", kHelp, "this text", S, ""},
      {BAR, 0, "usage", "", kHelp, "a short summary of the options", S, ""},
      {BR, 0, "test-only", "", kOther, "say when the job would start, submit nothing", X,
       "see squeue --start"},
      {B, 0, "kill-on-invalid-dep", "=yes|no", kOther,
       "cancel the job when its dependency can never be met", S, ""},
      {BAR, 'V', "version", "", kOther, "the release", S, ""},
  };
  return kCatalog;
}

std::string_view JobCommandName(JobCommand cmd) {
  switch (cmd) {
    case JobCommand::kSbatch: return "sbatch";
    case JobCommand::kSalloc: return "salloc";
    case JobCommand::kSrun: return "srun";
  }
  return "";
}

namespace {

bool For(const CatalogOption& o, JobCommand cmd) {
  return (o.commands & static_cast<unsigned>(cmd)) != 0;
}

// "  -A, --account=name" or "      --bb=<spec>".
std::string OptionText(const CatalogOption& o) {
  std::string head = o.short_name != 0 ? fmt::format("  -{}, ", o.short_name) : "      ";
  return head + "--" + o.long_name + o.arg;
}

constexpr const char* kGroups[] = {kRun, kConstraint, kConsumable, kAffinity, kGpu, kHelp, kOther};

}  // namespace

std::string JobCommandHelp(JobCommand cmd) {
  std::string out;
  switch (cmd) {
    case JobCommand::kSbatch: out = "Usage: sbatch [OPTIONS...] script [args...]\n"; break;
    case JobCommand::kSalloc: out = "Usage: salloc [OPTIONS...] [command [args...]]\n"; break;
    case JobCommand::kSrun: out = "Usage: srun [OPTIONS...] executable [args...]\n"; break;
  }
  for (const char* group : kGroups) {
    std::string lines;
    for (const CatalogOption& o : JobOptionCatalog()) {
      if (!For(o, cmd) || o.group != group) continue;
      std::string text = OptionText(o);
      std::string help = o.help;
      if (o.state == OptionState::kRefused) help += " [not in Muster]";
      if (o.state == OptionState::kNoEffect) help += " [no effect in Muster]";
      lines += text.size() < 30 ? fmt::format("{:<30}{}\n", text, help)
                                : fmt::format("{}\n{:<30}{}\n", text, "", help);
    }
    if (!lines.empty()) out += fmt::format("\n{}:\n{}", group, lines);
  }
  out += fmt::format(
      "\nOptions marked [not in Muster] are refused, those marked [no effect in Muster]\n"
      "are taken with a warning; docs/options.md says why for each.\n");
  return out;
}

std::string JobCommandUsage(JobCommand cmd) {
  const std::string name(JobCommandName(cmd));
  const std::string prefix = "Usage: " + name + " ";
  const std::string indent(prefix.size(), ' ');
  std::string out = prefix;
  size_t column = prefix.size();
  for (const CatalogOption& o : JobOptionCatalog()) {
    if (!For(o, cmd) || o.state != OptionState::kSupported || o.group == kHelp) continue;
    const std::string item = o.short_name != 0 && o.arg[0] == '='
                                 ? fmt::format("[-{} {}]", o.short_name, o.arg + 1)
                                 : fmt::format("[--{}{}]", o.long_name, o.arg);
    if (column + item.size() + 1 > 78 && column > prefix.size()) {
      out += "\n" + indent;
      column = indent.size();
    } else if (column > prefix.size()) {
      out += ' ';
      ++column;
    }
    out += item;
    column += item.size();
  }
  out += "\n" + indent +
         (cmd == JobCommand::kSalloc ? "[command [args...]]\n" : "executable [args...]\n");
  return out;
}

void AddCatalogOptions(JobCommand cmd, std::vector<util::OptionSpec>* specs,
                       std::vector<std::string>* warnings) {
  const std::string prog(JobCommandName(cmd));
  for (const CatalogOption& o : JobOptionCatalog()) {
    if (!For(o, cmd) || o.state == OptionState::kSupported) continue;
    const std::string name = o.long_name;
    const std::string note = o.note;
    auto warn = [warnings, line = fmt::format("{}: warning: --{} has no effect in Muster: {}",
                                              prog, name, note)] {
      if (std::find(warnings->begin(), warnings->end(), line) == warnings->end()) {
        warnings->push_back(line);
      }
    };
    auto known = std::find_if(specs->begin(), specs->end(), [&](const util::OptionSpec& s) {
      return s.long_name == name;
    });
    if (known != specs->end()) {
      // The parser checks its value; the warning comes with it.
      if (o.state == OptionState::kNoEffect) {
        known->apply = [apply = std::move(known->apply), warn](const std::string& v) {
          util::Status st = apply ? apply(v) : util::Status::Ok();
          if (st.ok()) warn();
          return st;
        };
      }
      continue;
    }
    const util::Arg arg = o.arg[0] == '\0' ? util::Arg::kNone
                          : o.arg[0] == '[' ? util::Arg::kOptional
                                            : util::Arg::kRequired;
    util::OptionSpec spec{o.short_name, name, arg, nullptr};
    if (o.state == OptionState::kRefused) {
      spec.apply = [name, note](const std::string&) {
        return util::InvalidArgument(
            note.empty() ? fmt::format("--{} is not supported by Muster yet", name)
                         : fmt::format("--{} is not supported by Muster: {}", name, note));
      };
    } else {
      spec.apply = [warn](const std::string&) {
        warn();
        return util::Status::Ok();
      };
    }
    // A short name the parser already gives another option stays its.
    if (spec.short_name != 0 &&
        std::any_of(specs->begin(), specs->end(), [&](const util::OptionSpec& s) {
          return s.short_name == spec.short_name;
        })) {
      spec.short_name = 0;
    }
    specs->push_back(std::move(spec));
  }
}

std::string JobOptionsMarkdown() {
  std::string out;
  for (JobCommand cmd : {JobCommand::kSbatch, JobCommand::kSalloc, JobCommand::kSrun}) {
    out += fmt::format("## {}\n\n| Option | State | Notes |\n| --- | --- | --- |\n",
                       JobCommandName(cmd));
    for (const CatalogOption& o : JobOptionCatalog()) {
      if (!For(o, cmd)) continue;
      const char* state = o.state == OptionState::kSupported  ? "supported"
                          : o.state == OptionState::kNoEffect ? "no effect (warns)"
                                                              : "refused";
      std::string name = o.short_name != 0 ? fmt::format("`-{}`, ", o.short_name) : "";
      name += fmt::format("`--{}`", o.long_name);
      const std::string note =
          o.state == OptionState::kRefused && o.note[0] == '\0' ? "not yet" : o.note;
      out += fmt::format("| {} | {} | {} |\n", name, state, note);
    }
    out += "\n";
  }
  return out;
}

}  // namespace muster::cli

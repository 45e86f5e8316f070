// scontrol show job|node|partition|config: the request's JSON form and the
// records as Slurm 22.05.8's scontrol prints them. A record is a list of
// lines: scontrol prints the first flush left and the rest indented by three
// spaces, then a blank line; with -o it joins them with single spaces. Keys
// Muster has no value for keep Slurm's placeholder ("N/A", "(null)") so that
// parsers splitting on Key=Value see every key they expect.

#include <sys/utsname.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/render/format_util.h"
#include "cli/render/render.h"
#include "core/array.h"
#include "core/gres.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"
#include "util/hostname.h"

namespace muster::render {
namespace {

using util::InvalidArgument;
using util::NotFound;
using util::Result;

// Joins a record's lines as scontrol does.
std::string Assemble(const std::vector<std::string>& lines, bool one_liner) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += one_liner ? " " : "\n   ";
    out += lines[i];
  }
  out += one_liner ? "\n" : "\n\n";
  return out;
}

// scontrol prints unset times as "None".
std::string TimeOrNone(int64_t t) { return t == 0 ? "None" : util::FormatTimestamp(t); }

// "gres/gpu=8,gres/nic=2" parts, summed per GRES name in the order names
// first appear.
std::vector<std::string> GresTres(const std::vector<core::GresSpec>& gres, int64_t factor = 1) {
  std::vector<std::pair<std::string, int64_t>> sums;
  for (const core::GresSpec& g : gres) {
    auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& s) { return s.first == g.name; });
    if (it == sums.end()) {
      sums.emplace_back(g.name, g.count * factor);
    } else {
      it->second += g.count * factor;
    }
  }
  std::vector<std::string> out;
  for (const auto& [name, count] : sums) out.push_back(fmt::format("gres/{}={}", name, count));
  return out;
}

struct Uname {
  std::string arch;
  std::string os;
};

Uname HostUname(const ClusterView& view) {
  Uname u{view.arch, view.os};
  if (u.arch.empty() || u.os.empty()) {
    struct utsname buf;
    if (::uname(&buf) == 0) {
      if (u.arch.empty()) u.arch = buf.machine;
      if (u.os.empty()) u.os = fmt::format("{} {} {}", buf.sysname, buf.release, buf.version);
    }
  }
  return u;
}

// ---------------------------------------------------------------------------
// Nodes

std::vector<std::string> NodeLines(const core::Node& n, const ClusterView& view, bool details) {
  const core::NodeConfig& c = n.config;
  const config::Config& cfg = *view.config;
  Uname u = HostUname(view);
  std::string features = c.features.empty() ? "(null)" : util::Join(c.features, ",");
  std::vector<std::string> parts;
  for (const core::Partition& p : cfg.partitions) {
    if (std::find(p.nodes.begin(), p.nodes.end(), c.name) != p.nodes.end()) parts.push_back(p.name);
  }

  std::vector<std::string> cfg_tres = {fmt::format("cpu={}", c.cpus),
                                       "mem=" + FormatMemoryMb(c.real_memory_mb),
                                       fmt::format("billing={}", c.cpus)};
  for (std::string& g : GresTres(c.gres)) cfg_tres.push_back(std::move(g));
  std::vector<std::string> alloc_tres;
  if (n.alloc_cpus > 0) alloc_tres.push_back(fmt::format("cpu={}", n.alloc_cpus));
  if (n.alloc_mem_mb > 0) alloc_tres.push_back(fmt::format("mem={}M", n.alloc_mem_mb));
  int gpus_used = static_cast<int>(std::count(n.gpu_used.begin(), n.gpu_used.end(), true));
  if (gpus_used > 0) alloc_tres.push_back(fmt::format("gres/gpu={}", gpus_used));

  // A node that never registered has not reported its architecture or OS.
  std::vector<std::string> lines;
  lines.push_back(n.registered
                      ? fmt::format("NodeName={} Arch={} CoresPerSocket={} ", c.name, u.arch,
                                    c.cores_per_socket)
                      : fmt::format("NodeName={} CoresPerSocket={} ", c.name, c.cores_per_socket));
  lines.push_back(fmt::format("CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad=N/A", n.alloc_cpus,
                              c.cpus, c.cpus));
  lines.push_back("AvailableFeatures=" + features);
  lines.push_back("ActiveFeatures=" + features);
  lines.push_back("Gres=" + core::FormatGres(c.gres));
  if (details) {
    lines.push_back("GresDrain=N/A");
    lines.push_back("GresUsed=" + NodeGresUsed(n, cfg));
  }
  // Port= only where the node has its own (several agents on one host).
  lines.push_back(fmt::format("NodeAddr={} NodeHostName={}{} Version={}",
                              c.addr.empty() ? c.name : c.addr,
                              c.hostname.empty() ? c.name : c.hostname,
                              c.port > 0 ? fmt::format(" Port={}", c.port) : "", view.version));
  if (n.registered) lines.push_back("OS=" + u.os + " ");
  lines.push_back(fmt::format("RealMemory={} AllocMem={} FreeMem=N/A Sockets={} Boards=1",
                              c.real_memory_mb, n.alloc_mem_mb, c.sockets));
  lines.push_back(fmt::format(
      "State={} ThreadsPerCore={} TmpDisk={} Weight={} Owner=N/A MCS_label=N/A",
      n.ScontrolState(), c.threads_per_core, c.tmp_disk_mb, c.weight));
  // The state a reboot returns it in (ASAP: RESUME), as Slurm shows it.
  if (n.reboot != core::RebootState::kNone && (n.reboot_asap || !n.reboot_next_state.empty())) {
    lines.push_back("NextState=" + (n.reboot_next_state.empty() ? std::string("RESUME") : n.reboot_next_state));
  }
  if (!parts.empty()) lines.push_back("Partitions=" + util::Join(parts, ",") + " ");
  lines.push_back(fmt::format("BootTime={} SlurmdStartTime={}", TimeOrNone(n.boot_time),
                              TimeOrNone(n.boot_time)));
  lines.push_back("LastBusyTime=" + TimeOrNone(n.last_busy));
  lines.push_back("CfgTRES=" + util::Join(cfg_tres, ","));
  lines.push_back("AllocTRES=" + util::Join(alloc_tres, ","));
  lines.push_back("CapWatts=n/a");
  lines.push_back("CurrentWatts=0 AveWatts=0");
  lines.push_back("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
  if (!n.reason.empty()) {
    lines.push_back(fmt::format("Reason={} [{}@{}]", n.reason, ReasonActor(n, *view.users),
                                util::FormatTimestamp(n.reason_time)));
  }
  // Muster's own: the running jobs here whose GPUs the idle-GPU policy
  // sees idle, with its stage and for how long;
  // the machine as detected, where it differs from the configuration, and
  // the health checks' last verdict.
  std::vector<std::string> idle;
  for (const core::Job* j : view.jobs) {
    if (j->state != core::JobState::kRunning || j->gpu_idle_since == 0) continue;
    const bool here = std::any_of(j->alloc.begin(), j->alloc.end(), [&](const core::NodeAlloc& a) {
      return a.node == n.config.name && !a.gpu_indices.empty();
    });
    if (!here) continue;
    std::string text = JobGpuIdleText(*j, view.now);
    std::replace(text.begin(), text.end(), ' ', '_');
    idle.push_back(fmt::format("{}({})", j->id, text));
  }
  if (!idle.empty()) lines.push_back("IdleGpuJobs=" + util::Join(idle, ","));
  if (!n.detected_hardware.empty()) lines.push_back("DetectedHardware=" + n.detected_hardware);
  for (const std::string& m : n.hardware_mismatches) lines.push_back("HardwareMismatch=" + m);
  if (n.health_pending) {
    lines.push_back("HealthCheck=PENDING" + (n.health_time > 0 ? " LastHealthCheck=" +
                                                                    util::FormatTimestamp(n.health_time)
                                                              : std::string()));
  } else if (n.health_time > 0) {
    std::string health = n.health_failures.empty() ? "OK" : "FAILING";
    if (!n.health_drained_by.empty()) health += " DrainedBy=" + n.health_drained_by;
    lines.push_back(fmt::format("HealthCheck={} LastHealthCheck={}", health,
                                util::FormatTimestamp(n.health_time)));
    for (const std::string& f : n.health_failures) lines.push_back("HealthFailure=" + f);
  }
  return lines;
}

Result<std::string> ShowNodes(const ShowRequest& req, const ClusterView& view) {
  std::vector<const core::Node*> nodes;
  if (req.name.empty()) {
    for (const core::Node* n : view.nodes) {
      if (n != nullptr) nodes.push_back(n);
    }
    if (nodes.empty()) return std::string("No nodes in the system\n");
    std::stable_sort(nodes.begin(), nodes.end(), [](const core::Node* a, const core::Node* b) {
      return NodeNameLess(a->config.name, b->config.name);
    });
  } else {
    Result<std::vector<std::string>> names = util::ExpandHostlist(req.name);
    std::vector<std::string> list = names.ok() ? *names : std::vector<std::string>{req.name};
    for (const std::string& name : list) {
      auto it = std::find_if(view.nodes.begin(), view.nodes.end(), [&](const core::Node* n) {
        return n != nullptr && n->config.name == name;
      });
      if (it == view.nodes.end()) return NotFound("Node " + name + " not found");
      nodes.push_back(*it);
    }
  }
  std::string out;
  for (const core::Node* n : nodes) out += Assemble(NodeLines(*n, view, req.details), req.one_liner);
  return out;
}

// ---------------------------------------------------------------------------
// Partitions

// "AllowAccounts=a,b", else "DenyAccounts=x" when only a deny list is set,
// else "AllowAccounts=ALL": slurmctld 22.05 prints one of the pair
// (scontrol update PartitionName=train AllowAccounts=ALL DenyAccounts=research
// shows "AllowGroups=ALL DenyAccounts=research AllowQos=ALL").
std::string AccessField(const std::string& what, const std::vector<std::string>& allow,
                        const std::vector<std::string>& deny) {
  if (allow.empty() && !deny.empty()) return "Deny" + what + "=" + util::Join(deny, ",");
  return "Allow" + what + "=" + (allow.empty() ? "ALL" : util::Join(allow, ","));
}

std::vector<std::string> PartitionLines(const core::Partition& p, const ClusterView& view) {
  const config::Config& cfg = *view.config;
  const core::PreemptMode preempt_default = cfg.preempt_mode;
  int64_t cpus = 0;
  int64_t mem = 0;
  std::vector<core::GresSpec> gres;
  for (const std::string& name : p.nodes) {
    for (const core::NodeConfig& nc : cfg.nodes) {
      if (nc.name != name) continue;
      cpus += nc.cpus;
      mem += nc.real_memory_mb;
      gres.insert(gres.end(), nc.gres.begin(), nc.gres.end());
      break;
    }
  }
  std::vector<std::string> tres = {fmt::format("cpu={}", cpus), "mem=" + FormatMemoryMb(mem),
                                   fmt::format("node={}", p.nodes.size()),
                                   fmt::format("billing={}", cpus)};
  for (std::string& g : GresTres(gres)) tres.push_back(std::move(g));

  std::string nodes = p.nodes.empty() ? "(null)" : util::CompressHostlist(p.nodes);
  std::string groups = p.allow_groups.empty() ? "ALL" : util::Join(p.allow_groups, ",");
  std::string def_time = p.default_time_s < 0 ? "NONE" : util::FormatDurationLong(p.default_time_s);
  std::string max_time = p.max_time_s < 0 ? "UNLIMITED" : util::FormatDurationLong(p.max_time_s);
  std::string max_nodes = p.max_nodes < 0 ? "UNLIMITED" : std::to_string(p.max_nodes);
  return {
      "PartitionName=" + p.name,
      fmt::format("AllowGroups={} {} {}", groups,
                  AccessField("Accounts", p.allow_accounts, p.deny_accounts),
                  AccessField("Qos", p.allow_qos, p.deny_qos)),
      fmt::format("AllocNodes=ALL Default={} QoS=N/A", p.is_default ? "YES" : "NO"),
      fmt::format("DefaultTime={} DisableRootJobs=NO ExclusiveUser=NO GraceTime={} Hidden={}",
                  def_time, p.grace_time_s, p.hidden ? "YES" : "NO"),
      fmt::format("MaxNodes={} MaxTime={} MinNodes={} LLN={} MaxCPUsPerNode=UNLIMITED",
                  max_nodes, max_time, p.min_nodes, p.least_loaded ? "YES" : "NO"),
      "Nodes=" + nodes,
      fmt::format("PriorityJobFactor={} PriorityTier={} RootOnly=NO ReqResv=NO OverSubscribe={}",
                  p.priority_job_factor, p.priority_tier, p.oversubscribe),
      fmt::format("OverTimeLimit=NONE PreemptMode={}",
                  core::PreemptModeName(p.preempt_mode.value_or(preempt_default))),
      fmt::format("State={} TotalCPUs={} TotalNodes={} SelectTypeParameters=NONE",
                  core::PartitionStateName(p.state), cpus, p.nodes.size()),
      "JobDefaults=(null)",
      "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED",
      "TRES=" + util::Join(tres, ","),
  };
}

Result<std::string> ShowPartitions(const ShowRequest& req, const ClusterView& view) {
  const config::Config& cfg = *view.config;
  // Observed as a plain user with train Hidden=YES: `scontrol show
  // partition` lists short only and `scontrol show partition train` says
  // "Partition train not found"; root sees both.
  std::string out;
  for (const core::Partition& p : cfg.partitions) {
    if (!req.name.empty() && p.name != req.name) continue;
    if (!req.all && !PartitionVisible(p, view)) continue;
    out += Assemble(PartitionLines(p, view), req.one_liner);
  }
  if (out.empty()) {
    if (!req.name.empty()) return NotFound("Partition " + req.name + " not found");
    return std::string("No partitions in the system\n");
  }
  return out;
}

// ---------------------------------------------------------------------------
// Jobs

Result<std::string> ShowJobs(const ShowRequest& req, const ClusterView& view) {
  std::string out;
  if (req.name.empty()) {
    for (const core::Job* j : view.jobs) {
      if (j != nullptr) out += RenderJobRecord(*j, view, req.one_liner, req.details);
    }
    if (out.empty()) return std::string("No jobs in the system\n");
    return out;
  }
  // scontrol names the failing call: the id did not parse, or the
  // controller has no such job. "123" on an array shows every record: the
  // one holding the array's id first, then its tasks by raw id descending
  // (as Slurm 22.05 printed them); "123_5" one task, also one that still
  // waits inside the array's pending part. "123" on a heterogeneous job
  // shows its components in order, "123+1" one of them.
  auto spec = core::ParseJobIdSpec(req.name);
  if (!spec.ok() || spec->id == 0) {
    return InvalidArgument("scontrol_print_job error: Invalid job id specified");
  }
  std::vector<const core::Job*> hits;
  for (const core::Job* j : view.jobs) {
    if (j == nullptr) continue;
    if (j->id == spec->id && spec->tasks.empty() && spec->het_offset < 0) {
      hits.push_back(j);
    } else if ((j->array_job_id == spec->id || j->het_job_id == spec->id) &&
               core::JobIdSpecMatches(*spec, *j)) {
      hits.push_back(j);
    }
  }
  std::sort(hits.begin(), hits.end(), [&](const core::Job* a, const core::Job* b) {
    if (a->IsHetComponent() && b->IsHetComponent()) return a->het_job_offset < b->het_job_offset;
    if ((a->id == spec->id) != (b->id == spec->id)) return a->id == spec->id;
    return a->id > b->id;
  });
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
  std::string found;
  for (const core::Job* j : hits) {
    if (j->IsArrayPendingPart() && !spec->tasks.empty()) {
      // One pending task of the part, shown as a record of its own.
      for (int t : spec->tasks) {
        if (!std::binary_search(j->array_pending.begin(), j->array_pending.end(), t)) continue;
        core::Job one = *j;
        one.array_task_id = t;
        one.array_pending.clear();
        found += RenderJobRecord(one, view, req.one_liner, req.details);
      }
      continue;
    }
    found += RenderJobRecord(*j, view, req.one_liner, req.details);
  }
  if (!found.empty()) return found;
  // A task the job does not have (one cancelled while pending included):
  // Slurm names it, on stdout (see RenderRemote).
  const bool job_exists = std::any_of(view.jobs.begin(), view.jobs.end(), [&](const core::Job* j) {
    return j != nullptr && (j->id == spec->id || j->array_job_id == spec->id);
  });
  if (!spec->tasks.empty() && job_exists) return NotFound(fmt::format("Job {} not found", req.name));
  return NotFound("slurm_load_jobs error: Invalid job id specified");
}

// ---------------------------------------------------------------------------
// Config

// How a configuration value prints.
enum class Kind {
  kPlain,     // as written
  kTyped,     // from the typed Config or the live view
  kSec,       // a number of seconds: "300 sec"
  kUsec,      // "2000 usec"
  kMin,       // "0 min"
  kNodesMin,  // "300 nodes/min"
  kPercent,   // "0 percent"
  kDuration,  // a time: "7-00:00:00"
  kUpper,     // upper case: "CR_CORE_MEMORY"
  kUser,      // "root(0)"
  kTres,      // the TRES Slurm always tracks, then the configured ones
};

struct ConfKey {
  const char* key;
  const char* value;  // what Slurm prints when the key is not set
  Kind kind;
};

// Slurm's keys in the order `scontrol show config` prints them, with
// Slurm 22.05's defaults.
constexpr ConfKey kConfKeys[] = {
    {"AccountingStorageBackupHost", "(null)", Kind::kPlain},
    {"AccountingStorageEnforce", "none", Kind::kPlain},
    {"AccountingStorageHost", "(null)", Kind::kPlain},
    {"AccountingStorageExternalHost", "(null)", Kind::kPlain},
    {"AccountingStorageParameters", "(null)", Kind::kPlain},
    {"AccountingStoragePort", "0", Kind::kPlain},
    {"AccountingStorageTRES", "cpu,mem,energy,node,billing,fs/disk,vmem,pages", Kind::kTres},
    {"AccountingStorageType", "accounting_storage/none", Kind::kPlain},
    {"AccountingStorageUser", "N/A", Kind::kPlain},
    {"AccountingStoreFlags", "(null)", Kind::kPlain},
    {"AcctGatherEnergyType", "acct_gather_energy/none", Kind::kPlain},
    {"AcctGatherFilesystemType", "acct_gather_filesystem/none", Kind::kPlain},
    {"AcctGatherInterconnectType", "acct_gather_interconnect/none", Kind::kPlain},
    {"AcctGatherNodeFreq", "0", Kind::kSec},
    {"AcctGatherProfileType", "acct_gather_profile/none", Kind::kPlain},
    {"AllowSpecResourcesUsage", "No", Kind::kPlain},
    {"AuthAltTypes", "(null)", Kind::kPlain},
    {"AuthAltParameters", "(null)", Kind::kPlain},
    {"AuthInfo", "(null)", Kind::kPlain},
    {"AuthType", "auth/munge", Kind::kPlain},
    {"BatchStartTimeout", "10", Kind::kSec},
    {"BcastExclude", "/lib,/usr/lib,/lib64,/usr/lib64", Kind::kPlain},
    {"BcastParameters", "(null)", Kind::kPlain},
    {"BOOT_TIME", "", Kind::kTyped},
    {"BurstBufferType", "(null)", Kind::kPlain},
    {"CliFilterPlugins", "(null)", Kind::kPlain},
    {"ClusterName", "", Kind::kTyped},
    {"CommunicationParameters", "(null)", Kind::kPlain},
    {"CompleteWait", "0", Kind::kSec},
    {"CoreSpecPlugin", "core_spec/none", Kind::kPlain},
    {"CpuFreqDef", "Unknown", Kind::kPlain},
    {"CpuFreqGovernors", "OnDemand,Performance,UserSpace", Kind::kPlain},
    {"CredType", "cred/munge", Kind::kPlain},
    {"DebugFlags", "(null)", Kind::kPlain},
    {"DefMemPerCPU", "", Kind::kTyped},
    {"DependencyParameters", "(null)", Kind::kPlain},
    {"DisableRootJobs", "No", Kind::kPlain},
    {"EioTimeout", "60", Kind::kPlain},
    {"EnforcePartLimits", "", Kind::kTyped},
    {"Epilog", "(null)", Kind::kPlain},
    {"EpilogMsgTime", "2000", Kind::kUsec},
    {"EpilogSlurmctld", "(null)", Kind::kPlain},
    {"ExtSensorsType", "ext_sensors/none", Kind::kPlain},
    {"ExtSensorsFreq", "0", Kind::kSec},
    {"FairShareDampeningFactor", "1", Kind::kPlain},
    {"FederationParameters", "(null)", Kind::kPlain},
    {"FirstJobId", "", Kind::kTyped},
    {"GetEnvTimeout", "2", Kind::kSec},
    {"GresTypes", "", Kind::kTyped},
    {"GpuFreqDef", "high,memory=high", Kind::kPlain},
    {"GroupUpdateForce", "1", Kind::kPlain},
    {"GroupUpdateTime", "600", Kind::kSec},
    {"HASH_VAL", "Match", Kind::kPlain},
    {"HealthCheckInterval", "0", Kind::kSec},
    {"HealthCheckNodeState", "ANY", Kind::kPlain},
    {"HealthCheckProgram", "(null)", Kind::kPlain},
    {"InactiveLimit", "0", Kind::kSec},
    {"InteractiveStepOptions", "--interactive --preserve-env --pty $SHELL", Kind::kPlain},
    {"JobAcctGatherFrequency", "30", Kind::kPlain},
    {"JobAcctGatherType", "jobacct_gather/none", Kind::kPlain},
    {"JobAcctGatherParams", "(null)", Kind::kPlain},
    {"JobCompHost", "localhost", Kind::kPlain},
    {"JobCompLoc", "/var/log/slurm_jobcomp.log", Kind::kPlain},
    {"JobCompPort", "0", Kind::kPlain},
    {"JobCompType", "jobcomp/none", Kind::kPlain},
    {"JobCompUser", "root", Kind::kPlain},
    {"JobContainerType", "job_container/none", Kind::kPlain},
    {"JobCredentialPrivateKey", "(null)", Kind::kPlain},
    {"JobCredentialPublicCertificate", "(null)", Kind::kPlain},
    {"JobDefaults", "(null)", Kind::kPlain},
    {"JobFileAppend", "0", Kind::kPlain},
    {"JobRequeue", "1", Kind::kPlain},
    {"JobSubmitPlugins", "(null)", Kind::kPlain},
    {"KillOnBadExit", "0", Kind::kPlain},
    {"KillWait", "", Kind::kTyped},
    {"LaunchParameters", "(null)", Kind::kPlain},
    {"LaunchType", "launch/slurm", Kind::kPlain},
    {"Licenses", "(null)", Kind::kPlain},
    {"LogTimeFormat", "iso8601_ms", Kind::kPlain},
    {"MailDomain", "(null)", Kind::kPlain},
    {"MailProg", "/bin/mail", Kind::kPlain},
    {"MaxArraySize", "1001", Kind::kPlain},
    {"MaxDBDMsgs", "400024", Kind::kPlain},
    {"MaxJobCount", "", Kind::kTyped},
    {"MaxJobId", "67043328", Kind::kPlain},
    {"MaxMemPerNode", "", Kind::kTyped},
    {"MaxNodeCount", "", Kind::kTyped},
    {"MaxStepCount", "40000", Kind::kPlain},
    {"MaxTasksPerNode", "512", Kind::kPlain},
    {"MCSPlugin", "mcs/none", Kind::kPlain},
    {"MCSParameters", "(null)", Kind::kPlain},
    {"MessageTimeout", "10", Kind::kSec},
    {"MinJobAge", "", Kind::kTyped},
    {"MpiDefault", "none", Kind::kPlain},
    {"MpiParams", "(null)", Kind::kPlain},
    {"MULTIPLE_SLURMD", "Yes", Kind::kPlain},
    {"NEXT_JOB_ID", "", Kind::kTyped},
    {"NodeFeaturesPlugins", "(null)", Kind::kPlain},
    {"OverTimeLimit", "0", Kind::kMin},
    {"PluginDir", "/usr/lib/x86_64-linux-gnu/slurm-wlm", Kind::kPlain},
    {"PlugStackConfig", "(null)", Kind::kPlain},
    {"PowerParameters", "(null)", Kind::kPlain},
    {"PowerPlugin", "", Kind::kPlain},
    {"PreemptMode", "OFF", Kind::kUpper},
    {"PreemptType", "preempt/none", Kind::kPlain},
    {"PreemptExemptTime", "00:00:00", Kind::kDuration},
    {"PrEpParameters", "(null)", Kind::kPlain},
    {"PrEpPlugins", "prep/script", Kind::kPlain},
    {"PriorityParameters", "(null)", Kind::kPlain},
    {"PrioritySiteFactorParameters", "(null)", Kind::kPlain},
    {"PrioritySiteFactorPlugin", "(null)", Kind::kPlain},
    {"PriorityDecayHalfLife", "7-00:00:00", Kind::kDuration},
    {"PriorityCalcPeriod", "00:05:00", Kind::kDuration},
    {"PriorityFavorSmall", "No", Kind::kPlain},
    {"PriorityFlags", "", Kind::kPlain},
    {"PriorityMaxAge", "7-00:00:00", Kind::kDuration},
    {"PriorityUsageResetPeriod", "NONE", Kind::kPlain},
    {"PriorityType", "priority/basic", Kind::kPlain},
    {"PriorityWeightAge", "0", Kind::kPlain},
    {"PriorityWeightAssoc", "0", Kind::kPlain},
    {"PriorityWeightFairShare", "0", Kind::kPlain},
    {"PriorityWeightJobSize", "0", Kind::kPlain},
    {"PriorityWeightPartition", "0", Kind::kPlain},
    {"PriorityWeightQOS", "0", Kind::kPlain},
    {"PriorityWeightTRES", "(null)", Kind::kPlain},
    {"PrivateData", "none", Kind::kPlain},
    {"ProctrackType", "proctrack/cgroup", Kind::kPlain},
    {"Prolog", "(null)", Kind::kPlain},
    {"PrologEpilogTimeout", "65534", Kind::kPlain},
    {"PrologSlurmctld", "(null)", Kind::kPlain},
    {"PrologFlags", "(null)", Kind::kPlain},
    {"PropagatePrioProcess", "0", Kind::kPlain},
    {"PropagateResourceLimits", "ALL", Kind::kPlain},
    {"PropagateResourceLimitsExcept", "(null)", Kind::kPlain},
    {"RebootProgram", "(null)", Kind::kPlain},
    {"ReconfigFlags", "(null)", Kind::kPlain},
    {"RequeueExit", "(null)", Kind::kPlain},
    {"RequeueExitHold", "(null)", Kind::kPlain},
    {"ResumeFailProgram", "(null)", Kind::kPlain},
    {"ResumeProgram", "(null)", Kind::kPlain},
    {"ResumeRate", "300", Kind::kNodesMin},
    {"ResumeTimeout", "60", Kind::kSec},
    {"ResvEpilog", "(null)", Kind::kPlain},
    {"ResvOverRun", "0", Kind::kMin},
    {"ResvProlog", "(null)", Kind::kPlain},
    {"ReturnToService", "0", Kind::kPlain},
    {"RoutePlugin", "route/default", Kind::kPlain},
    {"SchedulerParameters", "(null)", Kind::kPlain},
    {"SchedulerTimeSlice", "30", Kind::kSec},
    {"SchedulerType", "sched/backfill", Kind::kPlain},
    {"ScronParameters", "(null)", Kind::kPlain},
    {"SelectType", "select/cons_tres", Kind::kPlain},
    {"SelectTypeParameters", "CR_CORE_MEMORY", Kind::kUpper},
    {"SlurmUser", "", Kind::kTyped},
    {"SlurmctldAddr", "(null)", Kind::kPlain},
    {"SlurmctldDebug", "info", Kind::kPlain},
    {"SlurmctldHost[0]", "", Kind::kTyped},
    {"SlurmctldLogFile", "(null)", Kind::kPlain},
    {"SlurmctldPort", "", Kind::kTyped},
    {"SlurmctldSyslogDebug", "(null)", Kind::kPlain},
    {"SlurmctldPrimaryOffProg", "(null)", Kind::kPlain},
    {"SlurmctldPrimaryOnProg", "(null)", Kind::kPlain},
    {"SlurmctldTimeout", "120", Kind::kSec},
    {"SlurmctldParameters", "(null)", Kind::kPlain},
    {"SlurmdDebug", "info", Kind::kPlain},
    {"SlurmdLogFile", "(null)", Kind::kPlain},
    {"SlurmdParameters", "(null)", Kind::kPlain},
    {"SlurmdPidFile", "/var/run/slurmd.pid", Kind::kPlain},
    {"SlurmdPort", "6818", Kind::kPlain},
    {"SlurmdSpoolDir", "", Kind::kTyped},
    {"SlurmdSyslogDebug", "(null)", Kind::kPlain},
    {"SlurmdTimeout", "", Kind::kTyped},
    {"SlurmdUser", "root(0)", Kind::kUser},
    {"SlurmSchedLogFile", "(null)", Kind::kPlain},
    {"SlurmSchedLogLevel", "0", Kind::kPlain},
    {"SlurmctldPidFile", "/var/run/slurmctld.pid", Kind::kPlain},
    {"SlurmctldPlugstack", "(null)", Kind::kPlain},
    {"SLURM_CONF", "", Kind::kTyped},
    {"SLURM_VERSION", "", Kind::kTyped},
    {"SrunEpilog", "(null)", Kind::kPlain},
    {"SrunPortRange", "0-0", Kind::kPlain},
    {"SrunProlog", "(null)", Kind::kPlain},
    {"StateSaveLocation", "", Kind::kTyped},
    {"SuspendExcNodes", "(null)", Kind::kPlain},
    {"SuspendExcParts", "(null)", Kind::kPlain},
    {"SuspendProgram", "(null)", Kind::kPlain},
    {"SuspendRate", "60", Kind::kNodesMin},
    {"SuspendTime", "INFINITE", Kind::kSec},
    {"SuspendTimeout", "30", Kind::kSec},
    {"SwitchParameters", "(null)", Kind::kPlain},
    {"SwitchType", "switch/none", Kind::kPlain},
    {"TaskEpilog", "(null)", Kind::kPlain},
    {"TaskPlugin", "task/none", Kind::kPlain},
    {"TaskPluginParam", "(null type)", Kind::kPlain},
    {"TaskProlog", "(null)", Kind::kPlain},
    {"TCPTimeout", "2", Kind::kSec},
    {"TmpFS", "/tmp", Kind::kPlain},
    {"TopologyParam", "(null)", Kind::kPlain},
    {"TopologyPlugin", "topology/none", Kind::kPlain},
    {"TrackWCKey", "No", Kind::kPlain},
    {"TreeWidth", "50", Kind::kPlain},
    {"UsePam", "No", Kind::kPlain},
    {"UnkillableStepProgram", "(null)", Kind::kPlain},
    {"UnkillableStepTimeout", "60", Kind::kSec},
    {"VSizeFactor", "0", Kind::kPercent},
    {"WaitTime", "0", Kind::kSec},
    {"X11Parameters", "(null)", Kind::kPlain},
};

constexpr std::string_view kBaseTres = "cpu,mem,energy,node,billing,fs/disk,vmem,pages";

std::string UserWithUid(const std::string& name, const util::UserDb& users) {
  std::optional<uint32_t> uid = users.LookupUid(name);
  if (!uid) return name;
  return fmt::format("{}({})", users.UserName(*uid), *uid);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Shape(Kind kind, const std::string& v, const util::UserDb& users) {
  auto unit = [&](const char* u) { return AllDigits(v) ? v + " " + u : v; };
  switch (kind) {
    case Kind::kSec: return unit("sec");
    case Kind::kUsec: return unit("usec");
    case Kind::kMin: return unit("min");
    case Kind::kNodesMin: return unit("nodes/min");
    case Kind::kPercent: return unit("percent");
    case Kind::kDuration: {
      Result<int64_t> s = util::ParseTimeLimitSeconds(v);
      return s.ok() ? util::FormatDurationLong(*s) : v;
    }
    case Kind::kUpper: return util::ToUpper(v);
    case Kind::kUser: return UserWithUid(v, users);
    case Kind::kTres: {
      std::vector<std::string> items = util::Split(kBaseTres, ',');
      for (const std::string& t : util::Split(v, ',')) {
        if (std::find(items.begin(), items.end(), t) == items.end()) items.push_back(t);
      }
      return util::Join(items, ",");
    }
    default: return v;
  }
}

// Values Muster computes: the typed configuration and the controller's state.
std::pair<std::string, std::string> TypedValue(std::string_view key, const ClusterView& view) {
  const config::Config& cfg = *view.config;
  std::string k(key);
  if (key == "BOOT_TIME") return {k, util::FormatTimestamp(view.ctld_start_time)};
  if (key == "ClusterName") return {k, cfg.cluster_name};
  if (key == "DefMemPerCPU") {
    if (cfg.def_mem_per_cpu_mb > 0) return {k, std::to_string(cfg.def_mem_per_cpu_mb)};
    return {"DefMemPerNode", "UNLIMITED"};
  }
  if (key == "MaxMemPerNode") {
    if (cfg.max_mem_per_cpu_mb > 0) return {"MaxMemPerCPU", std::to_string(cfg.max_mem_per_cpu_mb)};
    return {k, "UNLIMITED"};
  }
  if (key == "EnforcePartLimits") {
    // Slurm reads YES as ALL and shows it so.
    switch (cfg.enforce_part_limits) {
      case config::EnforcePartLimits::kAll: return {k, "ALL"};
      case config::EnforcePartLimits::kAny: return {k, "ANY"};
      case config::EnforcePartLimits::kNo: return {k, "NO"};
    }
  }
  if (key == "FirstJobId") return {k, std::to_string(cfg.first_job_id)};
  if (key == "GresTypes") {
    return {k, cfg.gres_types.empty() ? "(null)" : util::Join(cfg.gres_types, ",")};
  }
  if (key == "KillWait") return {k, fmt::format("{} sec", cfg.kill_wait_s)};
  if (key == "MaxJobCount") return {k, std::to_string(cfg.max_job_count)};
  if (key == "MaxNodeCount") return {k, std::to_string(cfg.nodes.size())};
  if (key == "MinJobAge") return {k, fmt::format("{} sec", cfg.min_job_age_s)};
  if (key == "NEXT_JOB_ID") {
    int64_t next = cfg.first_job_id;
    for (const core::Job* j : view.jobs) {
      if (j != nullptr) next = std::max<int64_t>(next, int64_t{j->id} + 1);
    }
    return {k, std::to_string(next)};
  }
  if (key == "SlurmUser") return {k, UserWithUid(cfg.slurm_user, *view.users)};
  if (key == "SlurmctldHost[0]") {
    std::string host = cfg.control_host.empty() ? "(null)" : cfg.control_host;
    if (!cfg.control_addr.empty()) host += "(" + cfg.control_addr + ")";
    return {k, host};
  }
  if (key == "SlurmctldPort") return {k, std::to_string(cfg.slurmctld_port)};
  if (key == "SlurmdSpoolDir") return {k, cfg.slurmd_spool_dir};
  if (key == "SlurmdTimeout") return {k, fmt::format("{} sec", cfg.slurmd_timeout_s)};
  if (key == "SLURM_CONF") return {k, cfg.path};
  if (key == "SLURM_VERSION") return {k, view.version};
  if (key == "StateSaveLocation") return {k, cfg.state_save_location};
  return {k, ""};
}

// Raw keys the typed values above already show, and the keys of node and
// partition lines, which have their own commands.
const std::set<std::string>& ConsumedRawKeys() {
  static const std::set<std::string> keys = {
      "clustername", "defmempercpu", "defmempernode", "maxmempernode", "maxmempercpu",
      "firstjobid", "grestypes", "killwait", "maxjobcount", "minjobage", "slurmctldhost",
      "controlmachine", "controladdr", "slurmctldport", "slurmdspooldir", "slurmdtimeout",
      "slurmuser", "statesavelocation", "nodename", "partitionname", "nodeset", "downnodes",
      "frontendname", "include"};
  return keys;
}

std::string ConfigLine(const std::string& key, const std::string& value) {
  return fmt::format("{:<23} = {}\n", key, value);
}

Result<std::string> ShowConfig(const ClusterView& view) {
  const config::Config& cfg = *view.config;
  std::map<std::string, std::pair<std::string, std::string>> raw;  // lower key -> (key, value)
  for (const auto& [k, v] : cfg.raw) raw[util::ToLower(k)] = {k, v};

  std::set<std::string> shown = ConsumedRawKeys();
  for (const ConfKey& c : kConfKeys) shown.insert(util::ToLower(c.key));
  // Keys Slurm does not print (Muster's own, or ones this table lacks) go
  // where they sort, so that every configured key appears.
  std::vector<std::pair<std::string, std::string>> extra;
  for (const auto& [lower, kv] : raw) {
    if (shown.count(lower) == 0) extra.push_back(kv);
  }
  std::sort(extra.begin(), extra.end(), [](const auto& a, const auto& b) {
    return util::ToLower(a.first) < util::ToLower(b.first);
  });

  std::string out = "Configuration data as of " + util::FormatTimestamp(view.now) + "\n";
  size_t next_extra = 0;
  for (const ConfKey& c : kConfKeys) {
    std::string lower = util::ToLower(c.key);
    while (next_extra < extra.size() && util::ToLower(extra[next_extra].first) < lower) {
      out += ConfigLine(extra[next_extra].first, extra[next_extra].second);
      ++next_extra;
    }
    if (c.kind == Kind::kTyped) {
      auto [key, value] = TypedValue(c.key, view);
      out += ConfigLine(key, value);
      continue;
    }
    auto it = raw.find(lower);
    out += ConfigLine(c.key,
                      Shape(c.kind, it != raw.end() ? it->second.second : c.value, *view.users));
  }
  for (; next_extra < extra.size(); ++next_extra) {
    out += ConfigLine(extra[next_extra].first, extra[next_extra].second);
  }
  // scontrol then pings the controllers; the one rendering this is up.
  std::string host = cfg.control_host.empty() ? util::HostName() : cfg.control_host;
  out += "\nSlurmctld(primary) at " + host + " is UP\n";
  return out;
}

// topology.conf's switches, one line each: its level, link speed (1 when
// not given), every node below it, and its child switches.
Result<std::string> ShowTopology(const std::string& name, const config::Config& cfg) {
  if (cfg.switches.empty()) return InvalidArgument("No topology information available");
  std::string out;
  for (const config::Switch& sw : cfg.switches) {
    if (!name.empty() && sw.name != name) continue;
    std::vector<std::string> nodes, children;
    std::vector<const config::Switch*> stack = {&sw};
    while (!stack.empty()) {
      const config::Switch* at = stack.back();
      stack.pop_back();
      nodes.insert(nodes.end(), at->nodes.begin(), at->nodes.end());
      for (int c : at->children) stack.push_back(&cfg.switches[c]);
    }
    for (int c : sw.children) children.push_back(cfg.switches[c].name);
    out += fmt::format("SwitchName={} Level={} LinkSpeed={} Nodes={}", sw.name, sw.level,
                       sw.link_speed.empty() ? "1" : sw.link_speed,
                       util::CompressHostlist(nodes));
    if (!children.empty()) out += " Switches=" + util::CompressHostlist(children);
    out += "\n";
  }
  if (out.empty() && !name.empty()) return InvalidArgument("switch " + name + " not found");
  return out;
}

// What `scontrol show ENTITY` names, accepting scontrol's abbreviations.
enum class Entity { kJob, kNode, kPartition, kConfig, kStep, kTopology, kUnknown };

Entity ParseEntity(const std::string& what) {
  std::string w = util::ToLower(what);
  auto abbrev = [&](std::string_view full, size_t min_len) {
    return w.size() >= min_len && full.substr(0, w.size()) == w;
  };
  if (abbrev("jobs", 1) || abbrev("jobid", 4)) return Entity::kJob;
  if (abbrev("nodes", 2)) return Entity::kNode;
  if (abbrev("partitions", 2) || w == "partitionname") return Entity::kPartition;
  if (abbrev("configuration", 2)) return Entity::kConfig;
  if (abbrev("steps", 2)) return Entity::kStep;
  if (abbrev("topology", 1)) return Entity::kTopology;
  return Entity::kUnknown;
}

}  // namespace

nlohmann::json ToJson(const ShowRequest& r) {
  return nlohmann::json{{"what", r.what},
                        {"name", r.name},
                        {"one_liner", r.one_liner},
                        {"details", r.details},
                        {"all", r.all}};
}

Result<ShowRequest> ShowRequestFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("show request: expected a JSON object");
  try {
    ShowRequest r;
    r.what = j.value("what", std::string());
    r.name = j.value("name", std::string());
    r.one_liner = j.value("one_liner", false);
    r.details = j.value("details", false);
    r.all = j.value("all", false);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("show request: ") + e.what());
  }
}

Result<std::string> RenderShow(const ShowRequest& req, const ClusterView& view) {
  if (view.config == nullptr) return util::Internal("scontrol: no configuration");
  switch (ParseEntity(req.what)) {
    case Entity::kJob: return ShowJobs(req, view);
    case Entity::kNode: return ShowNodes(req, view);
    case Entity::kPartition: return ShowPartitions(req, view);
    case Entity::kConfig: return ShowConfig(view);
    case Entity::kStep: return RenderShowSteps(req.name, view);
    case Entity::kTopology: return ShowTopology(req.name, *view.config);
    case Entity::kUnknown: break;
  }
  return InvalidArgument("invalid entity:" + req.what + " for keyword:show ");
}

}  // namespace muster::render

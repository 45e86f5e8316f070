#include "core/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "util/signals.h"
#include "util/strings.h"

namespace muster::core {
namespace {

struct StateNames {
  JobState state;
  std::string_view name;
  std::string_view short_name;
};

constexpr std::array<StateNames, 13> kStates = {{
    {JobState::kPending, "PENDING", "PD"},
    {JobState::kRunning, "RUNNING", "R"},
    {JobState::kSuspended, "SUSPENDED", "S"},
    {JobState::kCompleting, "COMPLETING", "CG"},
    {JobState::kCompleted, "COMPLETED", "CD"},
    {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kFailed, "FAILED", "F"},
    {JobState::kTimeout, "TIMEOUT", "TO"},
    {JobState::kNodeFail, "NODE_FAIL", "NF"},
    {JobState::kPreempted, "PREEMPTED", "PR"},
    {JobState::kBootFail, "BOOT_FAIL", "BF"},
    {JobState::kDeadline, "DEADLINE", "DL"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
}};

const StateNames& Find(JobState s) {
  for (const StateNames& n : kStates) {
    if (n.state == s) return n;
  }
  return kStates[0];
}

// Slurm caps the zero-padding width of filename patterns at 10 digits
// ("%12j" pads to 10).
constexpr size_t kMaxPatternWidth = 10;

// What %a expands to outside job arrays (Slurm's NO_VAL - 1).
constexpr uint64_t kNoArrayTask = 4294967294;

std::string PadNumber(uint64_t n, size_t width) {
  return fmt::format("{:0{}d}", n, std::min(width, kMaxPatternWidth));
}

}  // namespace

std::string_view JobStateName(JobState s) { return Find(s).name; }
std::string_view JobStateShort(JobState s) { return Find(s).short_name; }

std::string_view ShownStateName(const Job& job) {
  return job.configuring && job.state == JobState::kRunning ? "CONFIGURING" : JobStateName(job.state);
}

std::string_view ShownStateShort(const Job& job) {
  return job.configuring && job.state == JobState::kRunning ? "CF" : JobStateShort(job.state);
}

std::optional<JobState> ParseJobState(std::string_view s) {
  for (const StateNames& n : kStates) {
    if (util::EqualsIgnoreCase(s, n.name) || util::EqualsIgnoreCase(s, n.short_name)) {
      return n.state;
    }
  }
  return std::nullopt;
}

bool IsFinished(JobState s) {
  switch (s) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
      return false;
    default:
      return true;
  }
}

std::string_view PendingReasonName(PendingReason r) {
  switch (r) {
    case PendingReason::kNone: return "None";
    case PendingReason::kPriority: return "Priority";
    case PendingReason::kResources: return "Resources";
    case PendingReason::kJobHeldUser: return "JobHeldUser";
    case PendingReason::kJobHeldAdmin: return "JobHeldAdmin";
    case PendingReason::kBeginTime: return "BeginTime";
    case PendingReason::kReqNodeNotAvail: return "ReqNodeNotAvail";
    case PendingReason::kPartitionDown: return "PartitionDown";
    case PendingReason::kPartitionInactive: return "PartitionInactive";
    case PendingReason::kPartitionTimeLimit: return "PartitionTimeLimit";
    case PendingReason::kPartitionNodeLimit: return "PartitionNodeLimit";
    case PendingReason::kBadConstraints: return "BadConstraints";
    case PendingReason::kNodeDown: return "NodeDown";
    case PendingReason::kDependency: return "Dependency";
    case PendingReason::kDependencyNeverSatisfied: return "DependencyNeverSatisfied";
    case PendingReason::kJobArrayTaskLimit: return "JobArrayTaskLimit";
    case PendingReason::kReservation: return "Reservation";
    case PendingReason::kJobRequeuedHeld: return "job_requeued_in_held_state";
    case PendingReason::kQosMaxJobsPerUser: return "QOSMaxJobsPerUserLimit";
    case PendingReason::kQosGrpJobs: return "QOSGrpJobsLimit";
    case PendingReason::kQosMaxWall: return "QOSMaxWallDurationPerJobLimit";
    case PendingReason::kQosMaxCpuPerUser: return "QOSMaxCpuPerUserLimit";
    case PendingReason::kQosMaxMemPerUser: return "QOSMaxMemoryPerUser";
    case PendingReason::kQosMaxNodePerUser: return "QOSMaxNodePerUserLimit";
    case PendingReason::kQosMaxGresPerUser: return "QOSMaxGRESPerUser";
    case PendingReason::kQosMaxCpuPerJob: return "QOSMaxCpuPerJobLimit";
    case PendingReason::kQosMaxMemPerJob: return "QOSMaxMemoryPerJob";
    case PendingReason::kQosMaxNodePerJob: return "QOSMaxNodePerJobLimit";
    case PendingReason::kQosMaxGresPerJob: return "QOSMaxGRESPerJob";
    case PendingReason::kQosGrpCpu: return "QOSGrpCpuLimit";
    case PendingReason::kQosGrpMem: return "QOSGrpMemLimit";
    case PendingReason::kQosGrpNode: return "QOSGrpNodeLimit";
    case PendingReason::kQosGrpGres: return "QOSGrpGRES";
    case PendingReason::kAssocGrpJobs: return "AssocGrpJobsLimit";
    case PendingReason::kAssocGrpCpu: return "AssocGrpCpuLimit";
    case PendingReason::kAssocGrpMem: return "AssocGrpMemLimit";
    case PendingReason::kAssocGrpNode: return "AssocGrpNodeLimit";
    case PendingReason::kAssocGrpGres: return "AssocGrpGRES";
    case PendingReason::kAssocMaxJobs: return "AssocMaxJobsLimit";
    case PendingReason::kAssocMaxWall: return "AssocMaxWallDurationPerJobLimit";
  }
  return "None";
}

std::optional<PendingReason> ParsePendingReason(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(PendingReason::kAssocMaxWall); ++i) {
    PendingReason r = static_cast<PendingReason>(i);
    if (PendingReasonName(r) == name) return r;
  }
  return std::nullopt;
}

int Job::NumNodes() const {
  if (!alloc.empty()) return static_cast<int>(alloc.size());
  return std::max(req.min_nodes, 1);
}

int Job::NumTasks() const {
  if (!alloc.empty()) {
    int tasks = 0;
    for (const NodeAlloc& a : alloc) tasks += a.tasks;
    if (tasks > 0) return tasks;
  }
  if (req.ntasks > 0) return req.ntasks;
  // Without -n Slurm starts one task per node (or --ntasks-per-node each).
  int per_node = req.ntasks_per_node > 0 ? req.ntasks_per_node : 1;
  return per_node * NumNodes();
}

int Job::NumCpus() const {
  if (!alloc.empty()) {
    int cpus = 0;
    for (const NodeAlloc& a : alloc) cpus += a.cpus;
    return cpus;
  }
  return NumTasks() * std::max(req.cpus_per_task, 1);
}

std::string Job::StateWithSuffix() const {
  std::string out(JobStateName(state));
  if (state == JobState::kCancelled && cancelled_by != UINT32_MAX) {
    out += " by " + std::to_string(cancelled_by);
  }
  return out;
}

const std::string& QosName(const JobRequest& req) {
  static const std::string kNormal = "normal";
  return req.qos.empty() ? kNormal : req.qos;
}

util::Status CheckScriptSize(size_t bytes, int64_t max_bytes, std::string* detail) {
  if (static_cast<int64_t>(bytes) <= max_bytes) return util::Status::Ok();
  *detail = fmt::format(
      "the batch script is {} bytes, over the limit of {} bytes "
      "(SchedulerParameters=max_script_size)",
      bytes, max_bytes);
  return util::InvalidArgument("Pathname of a file, directory or other parameter too long");
}

std::string ExpandOutputPattern(std::string_view pattern, const Job& job) {
  std::string out;
  // A backslash anywhere turns expansion off; the backslashes themselves
  // are dropped ("\\" leaves one), as sbatch does.
  if (pattern.find('\\') != std::string_view::npos) {
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '\\') {
        if (i + 1 < pattern.size()) out += pattern[++i];
      } else {
        out += pattern[i];
      }
    }
    return out;
  }
  std::string first_node = job.batch_host;
  if (first_node.empty() && !job.alloc.empty()) first_node = job.alloc.front().node;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    // "%[width]<code>"; the width zero-pads numeric codes only.
    size_t j = i + 1;
    size_t width = 0;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
      width = std::min<size_t>(width * 10 + static_cast<size_t>(pattern[j] - '0'), 1000);
      ++j;
    }
    std::string_view written = pattern.substr(i, j + 1 - i);
    if (j >= pattern.size()) {
      out += written;  // trailing '%' (and digits): kept
      break;
    }
    switch (pattern[j]) {
      case '%':
        if (j == i + 1) {
          out += '%';
        } else {
          out += written;
        }
        break;
      // Batch-script semantics: %J is the job id, %s "batch", %t and %n 0.
      case 'j':
      case 'J':
        out += PadNumber(job.id, width);
        break;
      case 's':
        out += "batch";
        break;
      case 't':
      case 'n':
        out += PadNumber(0, width);
        break;
      case 'x':
        out += job.req.name;
        break;
      case 'u':
        out += job.req.user_name.empty() ? std::to_string(job.req.uid) : job.req.user_name;
        break;
      case 'N':
        if (first_node.empty()) {
          out += written;  // not yet allocated
        } else {
          out += first_node;
        }
        break;
      // Array codes: %A is the array's id (the job id outside arrays), %a
      // the task id; outside arrays sbatch writes NO_VAL-1, 4294967294.
      case 'A':
        out += PadNumber(job.array_job_id != 0 ? job.array_job_id : job.id, width);
        break;
      case 'a':
        out += PadNumber(job.array_job_id != 0 && job.array_task_id >= 0
                             ? static_cast<uint64_t>(job.array_task_id)
                             : kNoArrayTask,
                         width);
        break;
      default:
        out += written;  // unknown
        break;
    }
    i = j;
  }
  return out;
}

util::Result<WarnSignal> ParseSignalSpec(const std::string& spec) {
  WarnSignal w;
  std::string s = spec;
  if (s.size() > 2 && s[1] == ':' && (s[0] == 'B' || s[0] == 'R')) {
    w.batch_only = s[0] == 'B';
    s = s.substr(2);
  }
  auto at = s.find('@');
  if (at != std::string::npos) {
    auto t = util::ParseInt(s.substr(at + 1));
    if (!t.ok()) return util::InvalidArgument("Invalid --signal specification: " + spec);
    w.time_s = static_cast<int>(*t);
    s = s.substr(0, at);
  }
  auto sig = util::ParseSignal(s);
  if (!sig) return util::InvalidArgument("Invalid --signal specification: " + spec);
  w.sig = *sig;
  return w;
}

}  // namespace muster::core

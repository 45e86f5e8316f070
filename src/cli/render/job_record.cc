// The `scontrol show job` record, Slurm 22.05's keys in Slurm's order
// (oracle: `scontrol show job N`, `scontrol -o show job N`,
// `scontrol show job -dd N`; see job_record_test.cc).
#include "cli/render/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cli/render/format_util.h"
#include "core/array.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::render {
namespace {

using core::Job;
using core::JobState;

const core::Node* FindNode(const ClusterView& view, const std::string& name) {
  for (const core::Node* n : view.nodes) {
    if (n->config.name == name) return n;
  }
  return nullptr;
}

// "gpu:h100:2" style name for `count` GPUs of `type`.
std::string GpuName(const std::string& type, int64_t count) {
  return type.empty() ? fmt::format("gpu:{}", count) : fmt::format("gpu:{}:{}", type, count);
}

// GPU indices of one node's allocation grouped by type, in index order.
std::vector<std::pair<std::string, std::vector<int>>> GpusByType(const ClusterView& view,
                                                                 const core::NodeAlloc& a) {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  const core::Node* node = FindNode(view, a.node);
  std::vector<int> idx = a.gpu_indices;
  std::sort(idx.begin(), idx.end());
  for (int i : idx) {
    std::string type = node != nullptr ? node->GpuType(i) : "";
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == type; });
    if (it == out.end()) {
      out.push_back({type, {i}});
    } else {
      it->second.push_back(i);
    }
  }
  return out;
}

// JOB_GRES=: the job's GPUs summed by type, "(null)" without any.
std::string JobGres(const ClusterView& view, const Job& job) {
  std::vector<std::pair<std::string, int64_t>> totals;
  for (const core::NodeAlloc& a : job.alloc) {
    for (const auto& [type, idx] : GpusByType(view, a)) {
      auto it = std::find_if(totals.begin(), totals.end(),
                             [&type = type](const auto& p) { return p.first == type; });
      if (it == totals.end()) {
        totals.push_back({type, static_cast<int64_t>(idx.size())});
      } else {
        it->second += static_cast<int64_t>(idx.size());
      }
    }
  }
  if (totals.empty()) return "(null)";
  std::vector<std::string> parts;
  for (const auto& [type, n] : totals) parts.push_back(GpuName(type, n));
  return util::Join(parts, ",");
}

// The per-node part after "Nodes=<hosts> ": "CPU_IDs=0-3 Mem=1000 GRES=...".
// The CPU ids the job holds there; allocations recorded before ids were
// kept show the first N.
std::string NodeDetail(const ClusterView& view, const core::NodeAlloc& a) {
  std::string cpu_ids;
  if (!a.cpu_ids.empty()) {
    cpu_ids = util::FormatIndexRanges(a.cpu_ids);
  } else if (a.cpus == 1) {
    cpu_ids = "0";
  } else if (a.cpus > 1) {
    cpu_ids = fmt::format("0-{}", a.cpus - 1);
  }
  std::vector<std::string> gres;
  for (const auto& [type, idx] : GpusByType(view, a)) {
    gres.push_back(GpuName(type, static_cast<int64_t>(idx.size())) +
                   "(IDX:" + util::FormatIndexRanges(idx) + ")");
  }
  return fmt::format("CPU_IDs={} Mem={} GRES={}", cpu_ids, a.mem_mb, util::Join(gres, ","));
}

bool Ended(JobState s) {
  return s != JobState::kPending && s != JobState::kRunning && s != JobState::kSuspended &&
         s != JobState::kCompleting;
}

// " ArrayJobId=14403 ArrayTaskId=5-7%2 ArrayTaskThrottle=2" after JobId=:
// the pending part shows its folded tasks, a task its index; the throttle
// shows on every record of a throttled array. Empty outside arrays.
std::string ArrayFields(const Job& job) {
  if (job.array_job_id == 0) return "";
  std::string tasks = job.IsArrayPendingPart()
                          ? core::FormatArrayTasks(job.array_pending, job.array_max_running)
                          : std::to_string(job.array_task_id);
  std::string out = fmt::format(" ArrayJobId={} ArrayTaskId={}", job.array_job_id, tasks);
  if (job.array_max_running > 0) out += fmt::format(" ArrayTaskThrottle={}", job.array_max_running);
  return out;
}

}  // namespace

std::string RenderJobRecord(const Job& job, const ClusterView& view, bool one_liner, bool details) {
  const core::JobRequest& r = job.req;
  const int64_t now = view.now;
  const bool pending = job.state == JobState::kPending;
  std::vector<std::string> lines;
  auto add = [&](std::string line) { lines.push_back(std::move(line)); };

  add(fmt::format("JobId={}{} JobName={}", job.id,
                  job.IsHetComponent()
                      ? fmt::format(" HetJobId={} HetJobOffset={}", job.het_job_id, job.het_job_offset)
                      : ArrayFields(job),
                  r.name));
  // A heterogeneous job's components' ids, as Slurm's line under the first.
  if (job.IsHetComponent()) add("HetJobIdSet=" + core::HetJobIdSet(job));
  add(fmt::format("UserId={}({}) GroupId={}({}) MCS_label=N/A", JobUserName(job, *view.users),
                  r.uid, view.users->GroupName(r.gid), r.gid));
  add(fmt::format("Priority={} Nice={} Account={} QOS={}", job.priority, r.nice, OrNull(r.account),
                  r.qos.empty() ? "normal" : r.qos));
  // One token: scontrol writes the spaces of a reason as underscores
  // ("Reason=ReqNodeNotAvail,_UnavailableNodes:gpu03").
  std::string reason = JobReasonText(job);
  std::replace(reason.begin(), reason.end(), ' ', '_');
  add(fmt::format("JobState={} Reason={} Dependency={}", core::ShownStateName(job), reason,
                  OrNull(job.dependency_state)));
  // Beyond Slurm: why a pending job waits, for people (an added line; the
  // value runs to the end of the line).
  if (job.state == core::JobState::kPending) add("Explanation=" + JobExplanation(job));
  add(fmt::format("Requeue={} Restarts={} BatchFlag=1 Reboot=0 ExitCode={}:{}", r.requeue ? 1 : 0,
                  job.restart_count, job.exit_code, job.exit_signal));
  if (details) add("DerivedExitCode=0:0");
  add(fmt::format("RunTime={} TimeLimit={} TimeMin=N/A",
                  util::FormatDurationLong(JobElapsed(job, now)),
                  util::FormatDurationLong(job.time_limit_s)));
  // Beyond Slurm: its GPUs as the agents sampled them, and the idle-GPU
  // policy's view of a running job.
  if (job.gpu_sampled_s > 0) {
    std::string line = fmt::format("GpuUtilization={} GpuMemMax={}", JobGpuUtilText(job),
                                   util::FormatMemoryMb(job.gpu_mem_max_bytes >> 20));
    if (job.state == core::JobState::kRunning) {
      std::string idle = JobGpuIdleText(job, now);  // one token, as Reason=
      std::replace(idle.begin(), idle.end(), ' ', '_');
      line += " GpuIdle=" + idle;
    }
    add(line);
  }

  // A held job has no eligible/accrue time; one waiting for --begin is
  // eligible at its begin time and accrues nothing yet.
  const bool waits_begin = pending && r.begin_time > now;
  int64_t eligible = job.held ? 0 : (waits_begin ? r.begin_time : job.eligible_time);
  int64_t accrue = job.held || waits_begin ? 0 : job.eligible_time;
  add(fmt::format("SubmitTime={} EligibleTime={}", util::FormatTimestamp(job.submit_time),
                  util::FormatTimestamp(eligible)));
  add(fmt::format("AccrueTime={}", util::FormatTimestamp(accrue)));
  add(fmt::format("StartTime={} EndTime={} Deadline=N/A",
                  util::FormatTimestamp(JobDisplayStart(job, now)),
                  util::FormatTimestamp(JobDisplayEnd(job, now))));
  add(fmt::format("SuspendTime=None SecsPreSuspend=0 LastSchedEval={} Scheduler=Main",
                  util::FormatTimestamp(job.start_time > 0 ? job.start_time : job.submit_time)));
  add(fmt::format("Partition={} AllocNode:Sid={}:0", JobPartition(job, view),
                  OrNull(r.submit_host)));
  add(fmt::format("ReqNodeList={} ExcNodeList={}", OrNull(r.nodelist), OrNull(r.exclude)));
  add("NodeList=" + job.nodelist);
  if (!job.batch_host.empty()) add("BatchHost=" + job.batch_host);

  // A pending job shows its node range ("6-6", "1-2"); a job that ended
  // without starting and without -n shows NumTasks=N/A.
  std::string num_nodes = std::to_string(job.NumNodes());
  // (sbatch -N 6 gives "6-6"; scontrol update NumNodes=2 sets the minimum
  // alone and shows "2".)
  if (pending && r.min_nodes > 0) {
    num_nodes = r.max_nodes > 0 ? fmt::format("{}-{}", r.min_nodes, r.max_nodes)
                                : std::to_string(r.min_nodes);
  }
  std::string num_tasks = std::to_string(job.NumTasks());
  if (Ended(job.state) && job.alloc.empty() && r.ntasks == 0) num_tasks = "N/A";
  add(fmt::format("NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={} ReqB:S:C:T=0:0:*:*", num_nodes,
                  job.NumCpus(), num_tasks, std::max(r.cpus_per_task, 1)));
  add("TRES=" + JobTresString(job, view));
  add(fmt::format("Socks/Node=* NtasksPerN:B:S:C={}:0:*:* CoreSpec=*", r.ntasks_per_node));

  if (details && !job.alloc.empty()) {
    add("JOB_GRES=" + JobGres(view, job));
    // Consecutive nodes with identical allocations share one line.
    size_t i = 0;
    while (i < job.alloc.size()) {
      std::string detail = NodeDetail(view, job.alloc[i]);
      std::vector<std::string> hosts{job.alloc[i].node};
      size_t k = i + 1;
      while (k < job.alloc.size() && NodeDetail(view, job.alloc[k]) == detail) {
        hosts.push_back(job.alloc[k].node);
        ++k;
      }
      // Two more spaces than the other lines (also in the one-line form).
      add("  Nodes=" + util::CompressHostlist(hosts) + " " + detail);
      i = k;
    }
  }

  std::string min_memory;
  if (r.mem_per_cpu_mb > 0) {
    min_memory = "MinMemoryCPU=" + FormatMemoryMb(r.mem_per_cpu_mb);
  } else if (r.mem_whole_node || r.mem_per_gpu_mb > 0) {
    min_memory = "MinMemoryNode=0";
  } else if (r.mem_per_node_mb > 0) {
    min_memory = "MinMemoryNode=" + FormatMemoryMb(r.mem_per_node_mb);
  } else if (view.config != nullptr && view.config->def_mem_per_cpu_mb > 0) {
    min_memory = "MinMemoryCPU=" + FormatMemoryMb(view.config->def_mem_per_cpu_mb);
  } else {
    min_memory = "MinMemoryNode=0";
  }
  add(fmt::format("MinCPUsNode={} {} MinTmpDiskNode=0", JobMinCpusNode(job), min_memory));
  add(fmt::format("Features={} DelayBoot=00:00:00", OrNull(r.constraint)));
  if (!r.reservation.empty()) add("Reservation=" + r.reservation);
  add(fmt::format("OverSubscribe={} Contiguous=0 Licenses=(null) Network=(null)",
                  r.exclusive ? "NO" : "OK"));
  add("Command=" + JobCommand(job));
  add("WorkDir=" + r.work_dir);
  // Slurm prints the comment with a trailing blank.
  if (!r.comment.empty()) add("Comment=" + r.comment + " ");
  add("StdErr=" + JobStdErr(job));
  add("StdIn=" + JobStdIn(job));
  add("StdOut=" + JobStdOut(job));
  add("Power=");
  if (r.cpus_per_gpu > 0) add(fmt::format("CpusPerTres=gres:gpu:{}", r.cpus_per_gpu));
  if (r.mem_per_gpu_mb > 0) add(fmt::format("MemPerTres=gres:gpu:{}", r.mem_per_gpu_mb));
  std::string per_job = JobTresPerJob(job);
  if (!per_job.empty()) add("TresPerJob=" + per_job);
  std::string per_node = JobTresPerNode(job);
  if (!per_node.empty()) add("TresPerNode=" + per_node);

  // Every line is followed by the separator, the last one included; the
  // multi-line form then closes the record with an empty line.
  const std::string_view sep = one_liner ? " " : "\n   ";
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += sep;
    out += lines[i];
  }
  out += sep;
  out += one_liner ? "\n" : "\n\n";
  return out;
}

}  // namespace muster::render

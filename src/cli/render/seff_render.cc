// seff: the efficiency summary of one job, as Slurm's contrib seff script
// (22.05) prints it. seff is not installed on the oracle host, so the layout
// follows the script's own print statements; the numbers (TotalCPU,
// MaxRSS, ReqMem) are the sacct values checked in sacct_render_test.cc.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/render/render.h"

namespace muster::render {
namespace {

// seff's kbytes2str: the largest 1024-power unit not above the value, two
// decimals; 0 prints "0.00 MB".
std::string KBytes2Str(double kb) {
  if (kb <= 0) return "0.00 MB";
  static const char* kPre[] = {"K", "M", "G", "T", "P", "E"};
  int e = static_cast<int>(std::floor(std::log(kb) / std::log(1024.0)));
  if (e < 0) e = 0;
  if (e > 5) e = 5;
  return fmt::format("{:.2f} {}B", kb / std::pow(1024.0, e), kPre[e]);
}

std::string BaseState(const std::string& s) { return s.substr(0, s.find(' ')); }

}  // namespace

std::string RenderSeff(const store::JobRecord& job, const std::vector<store::StepRecord>& steps,
                       int64_t now) {
  std::string out;
  if (job.array_task_id >= 0 && job.array_job_id > 0) {
    out += fmt::format("Job ID: {}\nArray Job ID: {}_{}\n", job.job_id, job.array_job_id,
                       job.array_task_id);
  } else {
    out += fmt::format("Job ID: {}\n", job.job_id);
  }
  out += "Cluster: " + job.cluster + "\n";
  out += "User/Group: " + job.user + "/" + (job.group.empty() ? std::to_string(job.gid) : job.group) + "\n";
  const std::string state = BaseState(job.state);
  out += fmt::format("State: {} (exit code {})\n", state, job.exit_code);
  const int nnodes = std::max(job.nnodes, 1);
  if (job.ncpus == 1) {
    out += "Cores: 1\n";
  } else {
    out += fmt::format("Nodes: {}\nCores per node: {}\n", job.nnodes, job.ncpus / nnodes);
  }
  if (state == "PENDING") return out;
  const int64_t end = job.end_time > 0 ? job.end_time : now;
  const int64_t wall = job.start_time > 0 ? std::max<int64_t>(0, end - job.start_time) : 0;
  const int64_t core_wall = wall * job.ncpus;
  const double cpu_s = static_cast<double>(job.total_cpu_ms) / 1000.0;
  const double cpu_eff = core_wall > 0 ? cpu_s / static_cast<double>(core_wall) * 100.0 : 0.0;
  // seff's time2str is sacct's Elapsed form.
  out += "CPU Utilized: " + SacctElapsed(static_cast<int64_t>(cpu_s)) + "\n";
  out += fmt::format("CPU Efficiency: {:.2f}% of {} core-walltime\n", cpu_eff,
                     SacctElapsed(core_wall));
  out += "Job Wall-clock time: " + SacctElapsed(wall) + "\n";
  int64_t max_rss = 0;
  int ntasks = 0;
  const store::StepRecord* gpu = nullptr;  // the step with the job's GPU figures
  for (const auto& s : steps) {
    if (s.job_id != job.job_id) continue;
    if (s.max_rss_kb > max_rss) max_rss = s.max_rss_kb;
    ntasks = std::max(ntasks, s.ntasks);
    if (s.gpu_util_pct >= 0) gpu = &s;
  }
  if (max_rss == 0 && job.max_rss_kb > 0) max_rss = job.max_rss_kb;
  // seff marks the figure an estimate when a step ran more than one task
  // (it multiplies the per-task maximum by the tasks).
  const double mem_kb = static_cast<double>(max_rss) * std::max(ntasks, 1);
  out += "Memory Utilized: " + KBytes2Str(mem_kb) + (ntasks > 1 ? " (estimated maximum)" : "") + "\n";
  const double alloc_kb = static_cast<double>(job.req_mem_mb) * 1024.0;
  const double mem_eff = alloc_kb > 0 ? mem_kb / alloc_kb * 100.0 : 0.0;
  out += fmt::format("Memory Efficiency: {:.2f}% of {}\n", mem_eff, KBytes2Str(alloc_kb));
  // Beyond seff: the GPUs, where the agents sampled them.
  if (gpu != nullptr) {
    out += fmt::format("GPU Utilization: {}% (mean over the job's GPUs and its run)\n",
                       gpu->gpu_util_pct);
    out += "GPU Memory Utilized: " +
           KBytes2Str(static_cast<double>(std::max<int64_t>(gpu->gpu_mem_max_bytes, 0) >> 10)) +
           " (the most one GPU held)\n";
  }
  if (state == "RUNNING")
    out += "WARNING: Efficiency statistics may be misleading for RUNNING jobs.\n";
  return out;
}

}  // namespace muster::render

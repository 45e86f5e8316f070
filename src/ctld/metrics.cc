// musterd's /metrics: the scheduler's state and counters in Prometheus'
// text exposition format (version 0.0.4). Cheap to scrape: one walk over
// the nodes and one over the jobs in the table. Names, labels and meanings
// are listed in docs/metrics.md.
#include <sys/statvfs.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ctld/controller.h"
#include "util/prom_text.h"

namespace muster::ctld {
namespace {

using core::Job;
using core::JobState;

using Family = util::PromFamily;

std::string_view IdleGpuStageName(int stage) {
  switch (stage) {
    case 0: return "idle";
    case 1: return "flagged";
    case 2: return "reported";
    default: return "cancelled";
  }
}

}  // namespace

std::string Controller::MetricsText() const {
  std::string out;
  const ServerStats::Counts& c = stats_.lifetime();

  // Jobs in the table by state and partition (finished ones until
  // MinJobAge purges them), and the pending ones by reason.
  std::map<std::pair<std::string, std::string>, int64_t> by_state, by_reason;
  for (const Job& job : cluster_.jobs()) {
    ++by_state[{std::string(core::JobStateName(job.state)), job.partition}];
    if (job.state == JobState::kPending) {
      ++by_reason[{std::string(core::PendingReasonName(job.reason)), job.partition}];
    }
  }
  Family job_states("muster_jobs", "gauge",
                    "Jobs in the controller's table by state and partition.");
  for (const auto& [key, n] : by_state) {
    job_states.Add({{"state", key.first}, {"partition", key.second}}, static_cast<double>(n));
  }
  Family pending("muster_jobs_pending", "gauge",
                 "Pending jobs by the reason they wait (squeue's REASON) and partition.");
  for (const auto& [key, n] : by_reason) {
    pending.Add({{"reason", key.first}, {"partition", key.second}}, static_cast<double>(n));
  }
  out += job_states.text();
  out += pending.text();

  // Nodes and resources per partition.
  Family node_states("muster_nodes", "gauge", "Nodes by state (sinfo's long state) and partition.");
  Family cpus("muster_cpus", "gauge", "CPUs by state (allocated, idle) and partition.");
  Family gpus("muster_gpus", "gauge", "GPUs by state (allocated, idle) and partition.");
  Family memory("muster_memory_bytes", "gauge", "Memory by state (allocated, idle) and partition.");
  Family largest("muster_largest_free_gpus_on_a_node", "gauge",
                 "The most GPUs free on one usable node of the partition: the largest "
                 "single-node GPU job that could start now.");
  Family whole("muster_free_whole_nodes", "gauge",
               "Usable nodes of the partition with nothing allocated: the largest whole-node "
               "job that could start now.");
  for (const core::Partition& part : cfg_.partitions) {
    std::map<std::string, int64_t> states;
    int64_t cpu_alloc = 0, cpu_idle = 0, gpu_alloc = 0, gpu_idle = 0, most_free = 0, idle = 0;
    double mem_alloc = 0, mem_idle = 0;
    for (const std::string& name : part.nodes) {
      const core::Node* n = cluster_.FindNode(name);
      if (n == nullptr) continue;
      ++states[n->SinfoState(true)];
      const int total_gpus = n->TotalGpus();
      const int64_t free_gpus = n->FreeGres("gpu", "");
      cpu_alloc += n->alloc_cpus;
      gpu_alloc += total_gpus - free_gpus;
      mem_alloc += static_cast<double>(n->alloc_mem_mb) * 1024 * 1024;
      // What could be given out now: only on a node that takes new work.
      const bool usable = n->registered && !n->down && !n->drain && !n->fail;
      if (!usable) continue;
      cpu_idle += n->config.cpus - n->alloc_cpus;
      gpu_idle += free_gpus;
      mem_idle += static_cast<double>(n->config.real_memory_mb - n->alloc_mem_mb) * 1024 * 1024;
      most_free = std::max(most_free, free_gpus);
      if (n->running_jobs == 0) ++idle;
    }
    for (const auto& [state, count] : states) {
      node_states.Add({{"state", state}, {"partition", part.name}}, static_cast<double>(count));
    }
    cpus.Add({{"state", "allocated"}, {"partition", part.name}}, static_cast<double>(cpu_alloc));
    cpus.Add({{"state", "idle"}, {"partition", part.name}}, static_cast<double>(cpu_idle));
    gpus.Add({{"state", "allocated"}, {"partition", part.name}}, static_cast<double>(gpu_alloc));
    gpus.Add({{"state", "idle"}, {"partition", part.name}}, static_cast<double>(gpu_idle));
    memory.Add({{"state", "allocated"}, {"partition", part.name}}, mem_alloc);
    memory.Add({{"state", "idle"}, {"partition", part.name}}, mem_idle);
    largest.Add({{"partition", part.name}}, static_cast<double>(most_free));
    whole.Add({{"partition", part.name}}, static_cast<double>(idle));
  }
  for (const Family* f : {&node_states, &cpus, &gpus, &memory, &largest, &whole}) out += f->text();

  // Each node's state, and who took it out of service: alerts are per node
  // (grouped by node in Alertmanager), and a node an operator drained for
  // maintenance silences its own (monitoring/alertmanager). One series per
  // node; the reason's text stays out (sinfo -R): it would be a label
  // without bound.
  Family node_state("muster_node_state", "gauge",
                    "1 per node: its state (sinfo's long state) and, while it is out of service, "
                    "who took it out (by: operator, health, prolog, epilog, config, "
                    "not_responding).");
  node_state.Reserve(cluster_.nodes().size() * 64);
  for (const core::Node& n : cluster_.nodes()) {
    const std::string state = n.SinfoState(true);
    const std::string_view by = core::ReasonSourceName(n.reason_source);
    if (by.empty()) {
      node_state.Add({{"node", n.config.name}, {"state", state}}, 1);
    } else {
      node_state.Add({{"node", n.config.name}, {"state", state}, {"by", by}}, 1);
    }
  }
  out += node_state.text();

  // The state directory's filesystem: a full one stops every submission.
  struct statvfs fs = {};
  if (::statvfs(cfg_.state_save_location.c_str(), &fs) == 0) {
    Family disk("muster_state_save_location_bytes", "gauge",
                "Size and free space (for unprivileged users) of the filesystem holding "
                "StateSaveLocation.");
    const double block = static_cast<double>(fs.f_frsize);
    disk.Add({{"kind", "size"}}, static_cast<double>(fs.f_blocks) * block);
    disk.Add({{"kind", "free"}}, static_cast<double>(fs.f_bavail) * block);
    out += disk.text();
  }

  // Counters since musterd started (sdiag -r does not touch them).
  auto counter = [&out](const char* name, const char* help, double value) {
    Family f(name, "counter", help);
    f.Add({}, value);
    out += f.text();
  };
  counter("muster_jobs_submitted_total", "Submissions accepted.",
          static_cast<double>(c.jobs_submitted));
  counter("muster_jobs_started_total", "Jobs started.", static_cast<double>(c.jobs_started));
  counter("muster_jobs_completed_total", "Jobs that ran and ended by themselves.",
          static_cast<double>(c.jobs_completed));
  counter("muster_jobs_canceled_total", "Jobs cancelled.", static_cast<double>(c.jobs_canceled));
  counter("muster_jobs_failed_total", "Jobs ended by a failure of the cluster (NODE_FAIL, ...).",
          static_cast<double>(c.jobs_failed));
  counter("muster_scheduler_cycles_total", "Scheduling passes.", static_cast<double>(c.cycles));
  counter("muster_scheduler_cycle_seconds_total", "Time spent in scheduling passes.",
          static_cast<double>(c.cycle_sum) / 1e6);
  counter("muster_backfill_cycles_total", "Scheduling passes that planned (backfill).",
          static_cast<double>(c.bf_cycles));
  counter("muster_backfill_cycle_seconds_total", "Time spent in passes that planned.",
          static_cast<double>(c.bf_cycle_sum) / 1e6);
  counter("muster_backfilled_jobs_total", "Jobs started past a job left waiting for resources.",
          static_cast<double>(c.backfilled_total));
  Family last("muster_scheduler_last_cycle_seconds", "gauge",
              "Duration of the last scheduling pass.");
  last.Add({}, static_cast<double>(c.last_cycle) / 1e6);
  out += last.text();
  Family queue("muster_scheduler_queue_length", "gauge",
               "Pending jobs in the queue at the last pass.");
  queue.Add({}, static_cast<double>(c.last_queue_length));
  out += queue.text();

  Family wait("muster_job_queue_wait_seconds", "histogram",
              "Time from submission to start of the jobs started.");
  int64_t cumulative = 0;
  for (size_t b = 0; b < ServerStats::kWaitBuckets.size(); ++b) {
    cumulative += c.waits[b];
    const std::string le = std::to_string(ServerStats::kWaitBuckets[b]);
    wait.Add({{"le", le}}, static_cast<double>(cumulative), "_bucket");
  }
  cumulative += c.waits.back();
  wait.Add({{"le", "+Inf"}}, static_cast<double>(cumulative), "_bucket");
  wait.Add({}, static_cast<double>(c.wait_sum), "_sum");
  wait.Add({}, static_cast<double>(cumulative), "_count");
  out += wait.text();

  Family rpcs("muster_rpc_duration_seconds", "summary",
              "RPCs served, by Slurm message type (sdiag's), and the time they took.");
  for (const ServerStats::RpcCount& r : c.by_type) {
    rpcs.Add({{"type", r.name}}, static_cast<double>(r.micros) / 1e6, "_sum");
    rpcs.Add({{"type", r.name}}, static_cast<double>(r.count), "_count");
  }
  out += rpcs.text();
  AgentSeries(&out);
  return out;
}

void Controller::AgentSeries(std::string* out) const {
  // The agents' GPU and job series, labelled with the job holding each GPU
  // now: a job's labels go when it ends.
  const auto holders = GpuHolders();
  core::LabelLookup labels;
  labels.gpu_holder = [&](const std::string& node, int index) -> std::optional<core::JobLabels> {
    auto it = holders.find({node, index});
    const Job* job = it == holders.end() ? nullptr : cluster_.jobs().Find(it->second);
    if (job == nullptr) return std::nullopt;
    return LabelsOf(*job);
  };
  labels.job = [&](uint32_t id) -> std::optional<core::JobLabels> {
    const Job* job = cluster_.jobs().Find(id);
    if (job == nullptr || job->state != JobState::kRunning) return std::nullopt;
    return LabelsOf(*job);
  };
  std::vector<const core::NodeSamples*> samples;
  for (const auto& [host, s] : samples_) samples.push_back(&s);
  core::RenderNodeSamples(samples, labels, out);

  // The idle-GPU policy's flagged jobs, and the health checks.
  Family idle("muster_job_gpu_idle_seconds", "gauge",
              "Running jobs whose GPUs are all under IdleGpuThreshold: for how long, with the "
              "policy's stage (idle, flagged, reported).");
  const int64_t now = Now();
  for (const Job& job : cluster_.jobs()) {
    if (job.state != JobState::kRunning || job.gpu_idle_since == 0) continue;
    const core::JobLabels l = LabelsOf(job);
    const std::string id = std::to_string(job.id);
    idle.Add({{"hpc_job", id},
              {"user", l.user},
              {"account", l.account},
              {"partition", l.partition},
              {"stage", IdleGpuStageName(job.gpu_idle_stage)}},
             static_cast<double>(now - job.gpu_idle_since));
  }
  *out += idle.text();
  if (!cfg_.health.enabled()) return;
  Family failing("muster_node_health_failing", "gauge",
                 "1 when the node failed a health check at its last run, by check.");
  std::map<std::string, int64_t> drained_by;
  for (const core::Node& n : cluster_.nodes()) {
    for (const std::string& f : n.health_failures) {
      failing.Add({{"node", n.config.name}, {"check", f.substr(0, f.find(':'))}}, 1);
    }
    if (!n.health_drained_by.empty()) ++drained_by[n.health_drained_by];
  }
  Family drained("muster_nodes_health_drained", "gauge",
                 "Nodes drained by a health check, by check.");
  for (const auto& [check, n] : drained_by) drained.Add({{"check", check}}, static_cast<double>(n));
  Family withheld("muster_health_drains_withheld_total", "counter",
                  "Health-check failures not drained as a shared cause "
                  "(MusterHealthMaxDrainPercent), by check.");
  for (const auto& [check, n] : health_withheld_) {
    withheld.Add({{"check", check}}, static_cast<double>(n));
  }
  *out += failing.text();
  *out += drained.text();
  *out += withheld.text();
}

}  // namespace muster::ctld

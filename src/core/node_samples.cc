#include "core/node_samples.h"

#include "util/prom_text.h"

namespace muster::core {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    GpuSample, node, index, uuid, model, pci_bus_id, driver_version, emulated, utilization_pct,
    memory_used_bytes, memory_total_bytes, temperature_c, memory_temperature_c, power_mw,
    power_limit_mw, sm_clock_mhz, sm_clock_max_mhz, throttle_reasons, ecc_volatile_corrected,
    ecc_volatile_uncorrected, ecc_aggregate_corrected, ecc_aggregate_uncorrected,
    remapped_rows_correctable, remapped_rows_uncorrectable, remapping_failed, xid_events, last_xid,
    nvlink_errors, mig_enabled)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobUsageSample, job_id, node, cpu_ms, memory_bytes,
                                                memory_peak_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FilesystemSample, node, mountpoint, device, fstype,
                                                ok, size_bytes, free_bytes, avail_bytes, files,
                                                files_free)

nlohmann::json ToJson(const NodeSamples& s) {
  return {{"time", s.time}, {"gpus", s.gpus}, {"jobs", s.jobs}, {"filesystems", s.filesystems}};
}

util::Result<NodeSamples> NodeSamplesFromJson(const nlohmann::json& j) {
  try {
    NodeSamples s;
    s.time = j.at("time").get<int64_t>();
    s.gpus = j.value("gpus", std::vector<GpuSample>{});
    s.jobs = j.value("jobs", std::vector<JobUsageSample>{});
    s.filesystems = j.value("filesystems", std::vector<FilesystemSample>{});
    return s;
  } catch (const nlohmann::json::exception& e) {
    return util::InvalidArgument(std::string("bad samples: ") + e.what());
  }
}

namespace {

using util::PromFamily;
using util::PromLabels;

// The families of the per-GPU series, in the order they are written.
struct GpuFamilies {
  PromFamily info{"muster_gpu_info", "gauge",
                  "One series per GPU with its identity (value 1): driver, PCI bus id, MIG mode."};
  PromFamily util{"muster_gpu_utilization_ratio", "gauge",
                  "Fraction of the last sample period the GPU's SMs were busy (0-1)."};
  PromFamily mem_used{"muster_gpu_memory_used_bytes", "gauge", "GPU memory in use."};
  PromFamily mem_free{"muster_gpu_memory_free_bytes", "gauge", "GPU memory free."};
  PromFamily temp{"muster_gpu_temperature_celsius", "gauge", "GPU die temperature."};
  PromFamily mem_temp{"muster_gpu_memory_temperature_celsius", "gauge",
                      "GPU memory (HBM) temperature, where the GPU reports it."};
  PromFamily power{"muster_gpu_power_watts", "gauge", "GPU power draw."};
  PromFamily power_limit{"muster_gpu_power_limit_watts", "gauge", "GPU enforced power limit."};
  PromFamily sm_clock{"muster_gpu_sm_clock_hertz", "gauge", "GPU SM clock now."};
  PromFamily sm_clock_max{"muster_gpu_sm_clock_max_hertz", "gauge", "GPU SM clock's maximum."};
  PromFamily throttle{"muster_gpu_throttle_reasons", "gauge",
                      "NVML's clocks-throttle-reason bit mask (0: not throttled)."};
  PromFamily ecc{"muster_gpu_ecc_errors", "gauge",
                 "ECC errors by type (corrected, uncorrected) and counter (volatile since the "
                 "driver loaded, aggregate over the GPU's life)."};
  PromFamily remapped{"muster_gpu_remapped_rows", "gauge",
                      "Memory rows remapped, by cause (correctable, uncorrectable)."};
  PromFamily remap_failed{"muster_gpu_row_remapping_failed", "gauge",
                          "1 when a row remapping failed: the GPU needs service."};
  PromFamily xid{"muster_gpu_xid_events", "gauge",
                 "Xid errors seen since the agent started; the label last_xid is the last code."};
  PromFamily nvlink{"muster_gpu_nvlink_errors", "gauge",
                    "NVLink replay, recovery and CRC errors over all links."};
};

// The watched filesystems' series, named as node_exporter's
// node_filesystem_* so that its users' queries carry over.
struct FilesystemFamilies {
  PromFamily size{"muster_node_filesystem_size_bytes", "gauge",
                  "Size of a watched filesystem (MusterWatchedFilesystems) as the node sees it."};
  PromFamily free{"muster_node_filesystem_free_bytes", "gauge",
                  "Free space of a watched filesystem, the blocks reserved for root included."};
  PromFamily avail{"muster_node_filesystem_avail_bytes", "gauge",
                   "Space of a watched filesystem that unprivileged users may still write."};
  PromFamily files{"muster_node_filesystem_files", "gauge", "Inodes of a watched filesystem."};
  PromFamily files_free{"muster_node_filesystem_files_free", "gauge",
                        "Free inodes of a watched filesystem."};
  PromFamily error{"muster_node_filesystem_device_error", "gauge",
                   "1 when a watched path is not a mount point, or statvfs failed or has not "
                   "answered (a hung network filesystem): its sizes are then absent."};
};

void AddFilesystem(const FilesystemSample& s, FilesystemFamilies* f) {
  const PromLabels l = {{"node", s.node},
                        {"mountpoint", s.mountpoint},
                        {"device", s.device},
                        {"fstype", s.fstype}};
  f->error.Add(l, s.ok ? 0 : 1);
  if (!s.ok) return;
  f->size.Add(l, static_cast<double>(s.size_bytes));
  f->free.Add(l, static_cast<double>(s.free_bytes));
  f->avail.Add(l, static_cast<double>(s.avail_bytes));
  f->files.Add(l, static_cast<double>(s.files));
  f->files_free.Add(l, static_cast<double>(s.files_free));
}

struct JobFamilies {
  PromFamily cpu{"muster_job_cpu_seconds_total", "counter",
                 "CPU time (user + system) of a running job on a node, from its cgroup."};
  PromFamily mem{"muster_job_memory_bytes", "gauge", "Memory a running job uses on a node."};
  PromFamily peak{"muster_job_memory_peak_bytes", "gauge",
                  "Peak memory of a running job on a node."};
};

// A GPU series' labels as name, value, name, value...: its identity, and
// the job holding it.
std::vector<std::string> Labels(const GpuSample& g, const std::optional<JobLabels>& job) {
  std::vector<std::string> kv = {"node", g.node, "gpu",   std::to_string(g.index),
                                 "uuid", g.uuid, "model", g.model};
  if (g.emulated) kv.insert(kv.end(), {"emulated", "true"});
  if (job) {
    kv.insert(kv.end(), {"hpc_job", std::to_string(job->job_id), "user", job->user, "account",
                         job->account, "partition", job->partition});
  }
  return kv;
}

PromLabels View(const std::vector<std::string>& kv) {
  PromLabels out;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) out.emplace_back(kv[i], kv[i + 1]);
  return out;
}

PromLabels With(PromLabels base, std::string_view name, std::string_view value) {
  base.emplace_back(name, value);
  return base;
}

void AddGpu(const GpuSample& g, const std::optional<JobLabels>& job, GpuFamilies* f) {
  const std::vector<std::string> kv = Labels(g, job);
  const PromLabels l = View(kv);
  // The identity without the job's labels: it outlives jobs.
  const std::vector<std::string> id_kv = Labels(g, std::nullopt);
  PromLabels id = View(id_kv);
  id.emplace_back("driver_version", g.driver_version);
  id.emplace_back("pci_bus_id", g.pci_bus_id);
  id.emplace_back("mig", g.mig_enabled ? "enabled" : "disabled");
  f->info.Add(id, 1);
  f->util.Add(l, g.utilization_pct / 100.0);
  f->mem_used.Add(l, static_cast<double>(g.memory_used_bytes));
  f->mem_free.Add(l, static_cast<double>(g.memory_total_bytes - g.memory_used_bytes));
  f->temp.Add(l, g.temperature_c);
  if (g.memory_temperature_c >= 0) f->mem_temp.Add(l, g.memory_temperature_c);
  f->power.Add(l, static_cast<double>(g.power_mw) / 1000);
  f->power_limit.Add(l, static_cast<double>(g.power_limit_mw) / 1000);
  f->sm_clock.Add(l, g.sm_clock_mhz * 1e6);
  f->sm_clock_max.Add(l, g.sm_clock_max_mhz * 1e6);
  f->throttle.Add(l, static_cast<double>(g.throttle_reasons));
  const std::pair<const char*, const char*> kinds[] = {{"corrected", "volatile"},
                                                       {"uncorrected", "volatile"},
                                                       {"corrected", "aggregate"},
                                                       {"uncorrected", "aggregate"}};
  const int64_t counts[] = {g.ecc_volatile_corrected, g.ecc_volatile_uncorrected,
                            g.ecc_aggregate_corrected, g.ecc_aggregate_uncorrected};
  for (int i = 0; i < 4; ++i) {
    f->ecc.Add(With(With(l, "type", kinds[i].first), "counter", kinds[i].second),
               static_cast<double>(counts[i]));
  }
  f->remapped.Add(With(l, "cause", "correctable"),
                  static_cast<double>(g.remapped_rows_correctable));
  f->remapped.Add(With(l, "cause", "uncorrectable"),
                  static_cast<double>(g.remapped_rows_uncorrectable));
  f->remap_failed.Add(l, g.remapping_failed ? 1 : 0);
  const std::string last = std::to_string(g.last_xid);
  f->xid.Add(With(l, "last_xid", last), static_cast<double>(g.xid_events));
  if (g.nvlink_errors >= 0) f->nvlink.Add(l, static_cast<double>(g.nvlink_errors));
}

}  // namespace

void RenderNodeSamples(const std::vector<const NodeSamples*>& samples, const LabelLookup& labels,
                       std::string* out) {
  GpuFamilies gpu;
  JobFamilies job;
  FilesystemFamilies fs;
  // A series is about 250 bytes with a job's labels: each family grows once.
  size_t gpus = 0, jobs = 0;
  for (const NodeSamples* s : samples) {
    gpus += s->gpus.size();
    jobs += s->jobs.size();
  }
  for (PromFamily* f :
       {&gpu.info, &gpu.util, &gpu.mem_used, &gpu.mem_free, &gpu.temp, &gpu.mem_temp, &gpu.power,
        &gpu.power_limit, &gpu.sm_clock, &gpu.sm_clock_max, &gpu.throttle, &gpu.remap_failed,
        &gpu.xid, &gpu.nvlink}) {
    f->Reserve(gpus * 256);
  }
  gpu.ecc.Reserve(gpus * 4 * 290);
  gpu.remapped.Reserve(gpus * 2 * 270);
  for (PromFamily* f : {&job.cpu, &job.mem, &job.peak}) f->Reserve(jobs * 160);
  out->reserve(out->size() + gpus * 24 * 256 + jobs * 3 * 160);
  for (const NodeSamples* s : samples) {
    for (const GpuSample& g : s->gpus) {
      AddGpu(g, labels.gpu_holder ? labels.gpu_holder(g.node, g.index) : std::nullopt, &gpu);
    }
    for (const FilesystemSample& f : s->filesystems) AddFilesystem(f, &fs);
    for (const JobUsageSample& u : s->jobs) {
      const std::optional<JobLabels> j = labels.job ? labels.job(u.job_id) : std::nullopt;
      if (!j) continue;  // ended: its series go with it
      const std::string id = std::to_string(j->job_id);
      const PromLabels l = {{"node", u.node},
                            {"hpc_job", id},
                            {"user", j->user},
                            {"account", j->account},
                            {"partition", j->partition}};
      job.cpu.Add(l, static_cast<double>(u.cpu_ms) / 1000);
      job.mem.Add(l, static_cast<double>(u.memory_bytes));
      job.peak.Add(l, static_cast<double>(u.memory_peak_bytes));
    }
  }
  for (const PromFamily* f :
       {&gpu.info, &gpu.util, &gpu.mem_used, &gpu.mem_free, &gpu.temp, &gpu.mem_temp, &gpu.power,
        &gpu.power_limit, &gpu.sm_clock, &gpu.sm_clock_max, &gpu.throttle, &gpu.ecc, &gpu.remapped,
        &gpu.remap_failed, &gpu.xid, &gpu.nvlink, &job.cpu, &job.mem, &job.peak, &fs.size, &fs.free,
        &fs.avail, &fs.files, &fs.files_free, &fs.error}) {
    if (!f->empty()) *out += f->text();
  }
}

}  // namespace muster::core

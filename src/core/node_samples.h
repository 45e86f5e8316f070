// What an agent measures on its nodes every JobAcctGatherFrequency seconds:
// each GPU's figures (from NVML on real hardware, made up for emulated
// GPUs) and each running job's usage from its cgroup. The agent sends them
// to musterd ("samples"), which keeps the latest per node; both render them
// as Prometheus series (RenderNodeSamples), musterd with the labels of the
// job holding each GPU. Value types and pure functions only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::core {

struct GpuSample {
  std::string node;
  int index = 0;  // the node's GPU index, as jobs see it (CUDA_VISIBLE_DEVICES)
  std::string uuid;
  std::string model;           // "NVIDIA H200"
  std::string pci_bus_id;      // "00000000:19:00.0"; empty for emulated GPUs
  std::string driver_version;  // empty for emulated GPUs
  bool emulated = false;
  // Integers only: the agents' lines carry no fractions (ParseIntegerJson).
  int utilization_pct = 0;  // SM busy over the last sample period
  int64_t memory_used_bytes = 0;
  int64_t memory_total_bytes = 0;
  int temperature_c = 0;
  int memory_temperature_c = -1;  // -1: not reported
  int64_t power_mw = 0;
  int64_t power_limit_mw = 0;
  int sm_clock_mhz = 0;
  int sm_clock_max_mhz = 0;
  uint64_t throttle_reasons = 0;  // NVML's clocks-throttle-reason bits
  // ECC error counts: volatile since the driver loaded, aggregate for the
  // GPU's life.
  int64_t ecc_volatile_corrected = 0;
  int64_t ecc_volatile_uncorrected = 0;
  int64_t ecc_aggregate_corrected = 0;
  int64_t ecc_aggregate_uncorrected = 0;
  int64_t remapped_rows_correctable = 0;
  int64_t remapped_rows_uncorrectable = 0;
  bool remapping_failed = false;
  int64_t xid_events = 0;      // Xid errors seen since the agent started
  int64_t last_xid = 0;        // the last one's code (0: none)
  int64_t nvlink_errors = -1;  // replay + recovery + CRC errors over all links; -1: none
  bool mig_enabled = false;
};

// One running job's usage on one node, from its cgroup (or, without one,
// its processes).
struct JobUsageSample {
  uint32_t job_id = 0;
  std::string node;
  int64_t cpu_ms = 0;  // user + system since the job started
  int64_t memory_bytes = 0;
  int64_t memory_peak_bytes = 0;
};

// A filesystem an operator watches (MusterWatchedFilesystems) as one node
// sees it: statvfs of its mount point. Every node an agent hosts reports
// its host's mounts.
struct FilesystemSample {
  std::string node;
  std::string mountpoint;  // as configured
  std::string device;      // the mount's source: "/dev/nvme0n1p1", "fs01:/home", "tmpfs"
  std::string fstype;      // "ext4", "nfs4", "lustre", ...
  // False when the path is not a mount point, or statvfs failed or has
  // not answered (a hung network filesystem): the sizes are then unknown.
  bool ok = false;
  int64_t size_bytes = 0;
  int64_t free_bytes = 0;   // free blocks, the reserved ones included
  int64_t avail_bytes = 0;  // what unprivileged users may still write
  int64_t files = 0;        // inodes
  int64_t files_free = 0;
};

struct NodeSamples {
  int64_t time = 0;  // when they were taken, seconds since the epoch
  std::vector<GpuSample> gpus;
  std::vector<JobUsageSample> jobs;
  std::vector<FilesystemSample> filesystems;
};

nlohmann::json ToJson(const NodeSamples& s);
util::Result<NodeSamples> NodeSamplesFromJson(const nlohmann::json& j);

// The job a series belongs to, as labels.
struct JobLabels {
  uint32_t job_id = 0;
  std::string user;
  std::string account;
  std::string partition;
};

// Which job holds GPU `index` of `node` now (nullopt: none), and the labels
// of job `id` (nullopt: unknown, as for a job that ended).
struct LabelLookup {
  std::function<std::optional<JobLabels>(const std::string& node, int index)> gpu_holder;
  std::function<std::optional<JobLabels>(uint32_t job_id)> job;
};

// The Prometheus families of `samples` (muster_gpu_*, muster_job_*,
// muster_node_filesystem_*),
// appended to `out`. A job's labels appear only while `labels` knows the
// job, so the series count stays bounded by GPUs and running jobs.
void RenderNodeSamples(const std::vector<const NodeSamples*>& samples, const LabelLookup& labels,
                       std::string* out);

}  // namespace muster::core

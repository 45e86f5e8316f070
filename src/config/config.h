// The cluster configuration: muster.conf in slurm.conf syntax, gres.conf
// beside it, Include'd files. Parsed once, at start-up, into typed structs;
// nothing else in Muster looks at the text. A real slurm.conf for the same
// cluster loads unchanged: keys Slurm has but Muster does not use are
// accepted (and listed in `ignored_keys` for a warning); unknown keys and
// bad values are errors naming file:line and the key.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/node.h"
#include "core/partition.h"
#include "util/status.h"

namespace muster::config {

struct Config {
  std::string path;  // the main file, absolute
  std::string cluster_name = "cluster";
  std::string control_host;     // SlurmctldHost, name part
  std::string control_addr;     // SlurmctldHost, (addr) part if any
  std::string state_save_location = "/var/spool/muster/ctld";
  std::string slurmd_spool_dir = "/var/spool/muster/d";
  int64_t def_mem_per_cpu_mb = 0;  // 0 = unset: a job gets the whole node's memory
  int64_t max_mem_per_cpu_mb = 0;
  int kill_wait_s = 30;
  int min_job_age_s = 300;
  int slurmd_timeout_s = 300;
  int slurmctld_port = 6817;
  std::vector<std::string> gres_types;
  std::vector<std::string> admin_users;  // user names that may act on any job/node
  int64_t max_job_count = 10000;
  int first_job_id = 1;
  std::string slurm_user = "root";

  std::vector<core::NodeConfig> nodes;  // config order
  std::vector<core::Partition> partitions;

  // Every Key=Value as written (last wins), for `scontrol show config`.
  std::map<std::string, std::string> raw;
  // Keys recognised as Slurm's but with no effect in Muster ("file:line: Key").
  std::vector<std::string> ignored_keys;

  const core::Partition* DefaultPartition() const;
  const core::Partition* FindPartition(const std::string& name) const;
  const core::NodeConfig* FindNode(const std::string& name) const;
};

// Loads a configuration file (and gres.conf in the same directory when it
// exists). Errors look like "muster.conf:12: NodeName: bad CPUs value 'x'".
util::Result<Config> LoadConfig(const std::string& path);

// Parses configuration text as if read from `path` (gres.conf is looked up
// beside `path` only when `gres_text` is empty and `read_gres_file`).
util::Result<Config> ParseConfig(const std::string& text, const std::string& path,
                                 const std::string& gres_text = {},
                                 bool read_gres_file = true);

// Finds the configuration path: MUSTER_CONF, else SLURM_CONF, else
// /etc/muster/muster.conf.
std::string DefaultConfigPath();

// The controller's unix socket, derived from the config:
// <StateSaveLocation>/musterd.sock.
std::string ControllerSocketPath(const Config& cfg);
std::string AgentSocketPath(const Config& cfg);

}  // namespace muster::config

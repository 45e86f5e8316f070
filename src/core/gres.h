// Generic resources (GRES) as Slurm names them: "gpu", "gpu:4",
// "gpu:h100:8". A node offers GresSpec entries; a job asks with
// GresRequest entries (per node, or per job for --gpus).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace muster::core {

// One kind of GRES a node has: name (e.g. "gpu"), optional type ("h100"),
// count and, from gres.conf, the device files and core binding.
struct GresSpec {
  std::string name;
  std::string type;  // empty when untyped
  int64_t count = 0;
  std::vector<std::string> files;  // /dev/nvidia0, ... in index order
  // gres.conf Cores= of each device, in index order: the core ids local
  // to it (sorted). Empty when no line gave Cores=; an empty entry when
  // its own line gave none.
  std::vector<std::vector<int>> device_cores;
  // The same files per device, in index order: File= gives each device
  // one, MultipleFiles= one device several (a MIG instance: its GPU's file
  // and its capability files). Empty when gres.conf names none.
  std::vector<std::vector<std::string>> device_files;
};

// Parses a node's Gres= value: "gpu:h100:8,gpu:a100:2,nic:1".
util::Result<std::vector<GresSpec>> ParseNodeGres(std::string_view text);

// Formats GRES specs as Slurm prints them, e.g. "gpu:h100:8"; "(null)" when empty.
std::string FormatGres(const std::vector<GresSpec>& gres);

// What a job asks for of one GRES name.
struct GresRequest {
  std::string name;  // "gpu"
  std::string type;  // "" = any type
  int64_t count = 0;
  bool per_job = false;  // --gpus=N spreads over the job's nodes
};

// Parses --gres values: "gpu:2", "gpu:h100:2", "gpu" (count 1),
// comma-separated lists. Errors name the bad token.
util::Result<std::vector<GresRequest>> ParseGresRequest(std::string_view text);

// Parses --gpus / --gpus-per-node values: "2" or "h100:2".
util::Result<GresRequest> ParseGpuCount(std::string_view text, bool per_job);

// Formats a request as Slurm's TRES-ish form: "gres/gpu:h100=2" style is for
// accounting; this gives the --gres form "gpu:h100:2".
std::string FormatGresRequest(const std::vector<GresRequest>& req);

}  // namespace muster::core

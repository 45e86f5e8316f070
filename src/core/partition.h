// A partition: a named set of nodes with limits, as PartitionName= lines
// declare it. Value type owned by the configuration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace muster::core {

struct Partition {
  std::string name;
  std::string nodes_expr;           // as written, e.g. "gpu[01-04]" or "ALL"
  std::vector<std::string> nodes;   // expanded, config order
  bool is_default = false;
  int64_t max_time_s = -1;          // -1 = UNLIMITED
  int64_t default_time_s = -1;      // -1 = not set (falls back to max_time)
  std::string state = "UP";         // UP, DOWN, DRAIN, INACTIVE
  std::vector<std::string> allow_groups;  // empty = ALL
  int priority_tier = 1;
  int priority_job_factor = 1;
  int max_nodes = -1;               // -1 = UNLIMITED
  int min_nodes = 1;
};

}  // namespace muster::core

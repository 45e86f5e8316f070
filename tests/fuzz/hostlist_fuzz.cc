// Hostlist expressions (every -w, -x, Nodes=, NodeName=). Whatever expands
// must compress back to an expression naming the same hosts; compression
// drops duplicates (util/hostlist.h), so the two are compared as sets.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "util/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  auto hosts = util::ExpandHostlist(fuzz::AsText(data, size));
  if (!hosts.ok() || hosts->size() > 4096) return 0;
  // Names with the grammar's own characters cannot be written back.
  for (const std::string& h : *hosts) {
    if (h.empty() || h.find_first_of("[],") != std::string::npos) return 0;
  }
  std::string compressed = util::CompressHostlist(*hosts);
  auto again = util::ExpandHostlist(compressed);
  if (!again.ok()) __builtin_trap();
  if (std::set<std::string>(hosts->begin(), hosts->end()) !=
      std::set<std::string>(again->begin(), again->end())) {
    __builtin_trap();
  }
  // The per-node counts of SLURM_TASKS_PER_NODE, from the same bytes.
  std::vector<int> counts;
  for (size_t i = 0; i < size; ++i) counts.push_back(data[i] % 5);
  (void)util::CompressCounts(counts);
  return 0;
}

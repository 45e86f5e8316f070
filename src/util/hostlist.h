// Hostlist expressions with Slurm's grammar: "gpu[01-16,20]", "a[1-2]b[3-4]",
// "n1,n2,rack[1-2]-node[01-04]". Expansion keeps the order written and
// zero padding (width of the lower bound); compression sorts names the way
// Slurm does (by prefix, then numerically) and folds consecutive numbers of
// equal width into ranges. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace muster::util {

// Expands a hostlist expression into host names, in the order written.
// Duplicates are kept. Errors name the offending part of the expression.
Result<std::vector<std::string>> ExpandHostlist(std::string_view expr);

// Compresses host names into the shortest Slurm-style expression, sorting
// and removing duplicates, e.g. {gpu02, gpu01, gpu03, cpu01} ->
// "cpu01,gpu[01-03]".
std::string CompressHostlist(const std::vector<std::string>& hosts);

// Slurm's compressed list of per-node counts, as in SLURM_TASKS_PER_NODE and
// SLURM_JOB_CPUS_PER_NODE: runs of equal values fold into "v(xN)", in order:
// {2,2,2,1} -> "2(x3),1".
std::string CompressCounts(const std::vector<int>& counts);

}  // namespace muster::util

// Why a job is refused at submission, beyond the refusal's Status, whose
// message is Slurm's own ("Requested node configuration is not available")
// and which sbatch prints as "Batch job submission failed: <message>".
#pragma once

#include <string>

namespace muster::sched {

struct SubmitRefusal {
  // The line Slurm's sbatch prints before "Batch job submission failed",
  // where Slurm has one (observed on the 22.05 oracle): "CPU count per node
  // can not be satisfied", "Memory specification can not be satisfied",
  // "invalid partition specified: nosuch". Empty where Slurm prints none.
  std::string slurm_line;
  // Muster's explanation, printed after Slurm's lines: the resource, what
  // was asked and the most any node offers ("cpus: requested 64 per node,
  // the most any node in partition short has is 32"). May be empty.
  std::string detail;
};

}  // namespace muster::sched

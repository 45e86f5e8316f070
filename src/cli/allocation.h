// An allocation without a batch script, for salloc and for srun outside
// one: submitted as an interactive job, waited for, and completed with the
// exit code of what ran in it. The lines on stderr are Slurm's ("salloc:
// Granted job allocation 12", "srun: job 12 queued and waiting for
// resources").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/client.h"
#include "core/job.h"
#include "util/status.h"

namespace muster::cli {

struct Allocation {
  uint32_t job_id = 0;
  std::vector<std::string> environment;  // its SLURM_* variables, "K=V"
};

// Fills what every allocation request carries (interactive, the working
// and submit directories, the submit host, the caller's environment).
void PrepareAllocationRequest(core::JobRequest* req);

// Submits `req` and waits until it runs. `prog` names the command in its
// lines; `quiet` (-Q) leaves out the informational ones, and srun, unlike
// salloc, does not say "Granted job allocation". kUnavailable when it was
// refused (the refusal printed) or ended before it ran.
// `immediate_s` (salloc -I): give up, cancelling the job, when it has not
// started within that many seconds; -1 waits as long as it takes.
// Several requests make a heterogeneous allocation (salloc or srun with
// ':'), one component each; its id is the first's.
util::Result<Allocation> RequestAllocation(const Client& client,
                                           const std::vector<core::JobRequest>& reqs,
                                           const std::string& prog, bool quiet,
                                           bool announce_grant = true, int immediate_s = -1);

// srun --jobid: the running job `job_id` as an allocation to enter.
util::Result<Allocation> ExistingAllocation(const Client& client, const std::string& job_id,
                                            const std::string& prog);

// Puts the allocation's SLURM_* variables into this process's environment,
// as if it ran inside the allocation (what it starts inherits them).
void EnterAllocation(const Allocation& alloc);

// Completes the allocation with `exit_code` (its job COMPLETED, or FAILED
// for a non-zero code).
void ReleaseAllocation(const Client& client, uint32_t job_id, int exit_code);

}  // namespace muster::cli

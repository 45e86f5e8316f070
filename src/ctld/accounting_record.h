// Converts the controller's jobs into accounting records (src/store), the
// rows sacct, seff and sreport read. Pure. Records carry the run
// (restart_count): the store keeps one row per run and closes the previous
// run as REQUEUED when a record of the next one arrives, so the controller
// just records every committed change. An array task is its own record
// (array_job_id, array_task_id); the pending part carries its tasks.
#pragma once

#include <optional>

#include "config/config.h"
#include "core/job.h"
#include "store/accounting.h"
#include "store/records.h"

namespace muster::ctld {

store::JobRecord ToJobRecord(const core::Job& job, const config::Config& cfg);
// The job's batch step (step id "batch"), for a job that has started.
store::StepRecord ToBatchStepRecord(const core::Job& job, const config::Config& cfg);

// The job's extern step (step id "extern", PrologFlags=Contain): on all
// its nodes, from its allocation to its end, COMPLETED when the job ends
// (NODE_FAIL with a node failure), as Slurm records it.
store::StepRecord ToExternStepRecord(const core::Job& job, const config::Config& cfg);

// One committed change of a job as accounting rows: the job's record and,
// once it has started, its batch step (and extern step under
// PrologFlags=Contain), with the journal record it came from.
struct AccountingChange {
  store::JobRecord job;
  std::optional<store::StepRecord> batch;
  store::Origin origin;
  std::optional<store::StepRecord> extern_step;
};
AccountingChange ToAccountingChange(const core::Job& job, const config::Config& cfg,
                                    store::Origin origin);
// Hands the change to the store (which writes on its own thread).
void RecordChange(store::AccountingStore& store, const AccountingChange& change);

}  // namespace muster::ctld

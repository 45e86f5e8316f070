// Converts the controller's jobs into accounting records (src/store), the
// rows sacct, seff and sreport read. Pure. Records carry the run
// (restart_count): the store keeps one row per run and closes the previous
// run as REQUEUED when a record of the next one arrives, so the controller
// just records every committed change. An array task is its own record
// (array_job_id, array_task_id); the pending part carries its tasks.
#pragma once

#include "config/config.h"
#include "core/job.h"
#include "store/records.h"

namespace muster::ctld {

store::JobRecord ToJobRecord(const core::Job& job, const config::Config& cfg);
// The job's batch step (step id "batch"), for a job that has started.
store::StepRecord ToBatchStepRecord(const core::Job& job, const config::Config& cfg);

}  // namespace muster::ctld

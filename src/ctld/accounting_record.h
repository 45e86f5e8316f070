// Converts the controller's jobs into accounting records (src/store), the
// rows sacct, seff and sreport read. Pure.
#pragma once

#include "config/config.h"
#include "core/job.h"
#include "store/records.h"

namespace muster::ctld {

store::JobRecord ToJobRecord(const core::Job& job, const config::Config& cfg);
// The job's batch step (step id "batch"), for a job that has started.
store::StepRecord ToBatchStepRecord(const core::Job& job, const config::Config& cfg);

}  // namespace muster::ctld

// What musterd and srun say to each other about steps, in Slurm's words.
#pragma once

namespace muster::core {

// A step cannot be created yet: other steps of the job hold the CPUs it
// needs. srun waits and asks again.
inline constexpr const char* kStepNodesBusy = "Requested nodes are busy";

}  // namespace muster::core

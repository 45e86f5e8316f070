// What musterd and srun say to each other about steps, in Slurm's words.
#pragma once

namespace muster::core {

// A step cannot be created yet: other steps of the job hold the CPUs it
// needs. srun waits and asks again.
inline constexpr const char* kStepNodesBusy = "Requested nodes are busy";

// A step's launch found no agent connected for one of its nodes (it is
// reconnecting, as after musterd's restart); nothing was sent. srun asks
// again for a while; the message goes on with the node's name.
inline constexpr const char* kStepAgentAway = "Unable to contact the agent of node ";

}  // namespace muster::core

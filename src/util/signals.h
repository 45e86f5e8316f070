// Signal names as Slurm's commands accept them: "USR1", "SIGUSR1", "10".
#pragma once

#include <optional>
#include <string>

namespace muster::util {

// Returns the signal number for a name (with or without "SIG", any case)
// or a number in 1..64; nullopt otherwise.
std::optional<int> ParseSignal(const std::string& name);

}  // namespace muster::util

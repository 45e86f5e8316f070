// Signal names as Slurm's commands accept them: "USR1", "SIGUSR1", "10".
#pragma once

#include <optional>
#include <string>

namespace muster::util {

// The highest signal number on Linux (SIGRTMAX).
inline constexpr int kMaxSignal = 64;

// Returns the signal number for a name (with or without "SIG", any case)
// or a number in 1..kMaxSignal; nullopt otherwise.
std::optional<int> ParseSignal(const std::string& name);

// scancel --signal's argument: a name as ParseSignal takes it, or any
// positive number (up to INT_MAX), as Slurm's scancel accepts `-s 99` and
// leaves the number to the controller. nullopt otherwise ("0", "BOGUS").
std::optional<int> ParseSignalArgument(const std::string& text);

}  // namespace muster::util

// Muster's version and the Slurm release whose behaviour it follows, both
// set in the top-level CMakeLists.txt (project(VERSION) and
// MUSTER_SLURM_VERSION) and nowhere else.
#pragma once

#include <string>
#include <string_view>

namespace muster::util {

// "0.1.0": the CMake project version.
std::string_view MusterVersion();

// "22.05.8": the Slurm release Muster's commands are compatible with. This
// is what tools that gate on Slurm's version read (`sbatch -V`,
// SLURM_VERSION in `scontrol show config`, Version= of a node).
std::string_view SlurmVersion();

// The line every command prints for -V/--version: "slurm 22.05.8 (muster
// 0.1.0)". Upstream Slurm prints "slurm 22.05.8", so the word "slurm" and
// the version stay first: `slurm (\d+)\.(\d+)` and `split()[1]` read
// Slurm's version from it as they would from Slurm.
std::string VersionLine();

}  // namespace muster::util

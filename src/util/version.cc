#include "util/version.h"

// Both come from src/CMakeLists.txt as compile definitions of this file only.
#ifndef MUSTER_VERSION
#error "MUSTER_VERSION is set by CMake"
#endif
#ifndef MUSTER_SLURM_VERSION
#error "MUSTER_SLURM_VERSION is set by CMake"
#endif

namespace muster::util {

std::string_view MusterVersion() { return MUSTER_VERSION; }

std::string_view SlurmVersion() { return MUSTER_SLURM_VERSION; }

std::string VersionLine() {
  return "slurm " + std::string(SlurmVersion()) + " (muster " + std::string(MusterVersion()) + ")";
}

}  // namespace muster::util

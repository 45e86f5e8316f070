// FNV-1a, the checksum of Muster's on-disk records (journal, payload store):
// cheap, and enough to tell a torn or damaged record from a whole one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace muster::util {

inline uint32_t Fnv1a32(const char* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 16777619u;
  }
  return h;
}

}  // namespace muster::util

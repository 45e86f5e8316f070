// What the libFuzzer targets share: the input as text, a scratch directory
// that lives as long as the process and files written into it.
// Header-only: each target is one translation unit.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>


namespace muster::fuzz {

// The bytes of one input as text.
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A new directory for this process, removed when it exits normally; on
// tmpfs when there is one, so the controller's syncs cost nothing.
inline const std::string& ScratchDir() {
  // Never destroyed: the exit handler that removes it runs after the
  // destructors of statics made later (the stateful targets' controllers).
  static const std::string* const dir = [] {
    const char* base = std::getenv("MUSTER_FUZZ_TMP");
    if (base == nullptr) base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    auto* made = new std::string(std::string(base) + "/muster-fuzz.XXXXXX");
    if (::mkdtemp(made->data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return made;
  }();
  return *dir;
}

inline void WriteFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) std::abort();
}

}  // namespace muster::fuzz

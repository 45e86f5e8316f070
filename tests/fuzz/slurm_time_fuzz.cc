// Slurm's time forms (--time, -S/-E, --begin), memory sizes, numbers, index
// ranges and signal names. A time limit that parses formats and parses
// back to the same seconds.
#include <cstdint>
#include <string>

#include "cli/render/render.h"
#include "fuzz_support.h"
#include "util/signals.h"
#include "util/slurm_time.h"
#include "util/strings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  std::string_view text = fuzz::AsText(data, size);
  if (auto limit = util::ParseTimeLimitSeconds(text); limit.ok() && *limit >= 0) {
    // scontrol's form is exact to the second.
    auto again = util::ParseTimeLimitSeconds(util::FormatDurationLong(*limit));
    if (!again.ok() || *again != *limit) __builtin_trap();
    (void)util::FormatDuration(*limit);
  }
  (void)render::ParseSlurmTime(text, 1'800'000'000);
  (void)util::ParseMemoryMb(text);
  (void)util::ParseInt(text);
  (void)util::ParseSignedInt(text);
  (void)util::ParseIndexRanges(text);
  (void)util::ParseSignalArgument(std::string(text));
  return 0;
}

// --array specs, job ids as users type them (scancel, scontrol, squeue -j)
// and --dependency.
#include <climits>
#include <cstdint>
#include <string>

#include "core/array.h"
#include "fuzz_support.h"
#include "sched/dependency.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  std::string_view text = fuzz::AsText(data, size);
  if (auto spec = core::ParseArraySpec(text, 1001); spec.ok()) {
    for (int t : spec->tasks) {
      if (t < 0 || t > 1000) __builtin_trap();
    }
    (void)core::FormatArrayTasks(spec->tasks, spec->max_running);
    (void)core::StatsOf(*spec);
  }
  (void)core::ParseJobIdSpec(text);
  for (const std::string& id : core::SplitJobIdList(text)) (void)core::ParseJobIdSpec(id);
  if (auto dep = sched::ParseDependency(text); !dep.ok()) {
    (void)sched::SlurmSubmitErrorText(dep.status());
  }
  return 0;
}

// A batch script as sbatch reads it: the #SBATCH directives of each
// component (hetjob lines separate them), applied as options, then the
// script check. Every option sbatch takes is reachable from the directives.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/sbatch_parse.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  const std::string script(fuzz::AsText(data, size));
  std::vector<std::string> warnings;
  for (const std::vector<std::string>& component : cli::ExtractDirectives(script, &warnings)) {
    cli::SbatchInvocation inv;
    auto positional = cli::ApplySbatchOptions(component, &inv);
    if (!positional.ok() && positional.status().message().empty()) __builtin_trap();
    if (positional.ok()) {
      (void)cli::FinishBatchRequest("/submit", "login1", {"PATH=/usr/bin", "HOME=/root", "A=b=c"},
                                    &inv);
    }
  }
  (void)cli::CheckScript(script);
  (void)cli::WrapScript(script);
  return 0;
}

// A batch script as sbatch reads it: the #SBATCH directives, applied as
// options, then the script check. Every option sbatch takes is reachable
// from the directives.
#include <cstdint>
#include <string>

#include "cli/sbatch_parse.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  const std::string script(fuzz::AsText(data, size));
  cli::SbatchInvocation inv;
  auto positional = cli::ApplySbatchOptions(cli::ExtractDirectives(script), &inv);
  if (!positional.ok() && positional.status().message().empty()) __builtin_trap();
  (void)cli::CheckScript(script);
  if (positional.ok()) {
    (void)cli::ApplyExport(inv.export_spec, {"PATH=/usr/bin", "HOME=/root", "A=b=c"}, &inv.req);
  }
  (void)cli::WrapScript(script);
  return 0;
}

// The commands' own arguments: the first byte picks the command (sbatch,
// squeue, sinfo, sacct, sreport), the rest are its arguments, one per line.
// The parsers are pure (no I/O); refusals carry the command's message.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/render/render.h"
#include "cli/sbatch_parse.h"
#include "fuzz_support.h"
#include "util/strings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  if (size == 0) return 0;
  std::vector<std::string> args =
      util::Split(fuzz::AsText(data + 1, size - 1), '\n', /*skip_empty=*/false);
  const std::map<std::string, std::string> env;
  switch (data[0] % 5) {
    case 0: {
      cli::SbatchInvocation inv;
      (void)cli::ApplySbatchOptions(args, &inv);
      break;
    }
    case 1:
      if (auto r = cli::ParseSqueueArgs(args, env); r.ok()) {
        (void)render::SqueueRequestFromJson(render::ToJson(*r));
      }
      break;
    case 2:
      if (auto r = cli::ParseSinfoArgs(args, env); r.ok()) {
        (void)render::SinfoRequestFromJson(render::ToJson(*r));
      }
      break;
    case 3:
      if (auto r = cli::ParseSacctArgs(args); r.ok()) {
        (void)render::SacctRequestFromJson(render::ToJson(*r));
      }
      break;
    case 4:
      if (auto r = cli::ParseSreportArgs(args); r.ok()) {
        (void)render::SreportRequestFromJson(render::ToJson(*r));
      }
      break;
  }
  return 0;
}

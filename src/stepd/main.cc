// muster-step <spool dir> <job id>: supervises one batch job described by
// <spool dir>/job<id>.spec (see step.h); the agent forks the same
// supervisor instead of running this binary. Exit status: 0 once the result
// is in <spool dir>/job<id>.state, whatever the job's fate; 1 when no result
// could be written; 2 for bad usage.
#include <cstdint>
#include <cstdio>
#include <optional>

#include "stepd/step.h"
#include "util/log.h"
#include "util/strings.h"

int main(int argc, char** argv) {
  std::optional<int64_t> id;
  if (argc == 3) {
    auto parsed = muster::util::ParseInt(argv[2]);
    if (parsed.ok() && *parsed >= 0 && *parsed <= UINT32_MAX) id = *parsed;
  }
  if (!id) {
    std::fprintf(stderr, "usage: muster-step <spool dir> <job id>\n");
    return 2;
  }
  muster::util::SetLogName("muster-step");
  return muster::stepd::RunStepFromSpecFile(argv[1], static_cast<uint32_t>(*id));
}

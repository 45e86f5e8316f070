// muster-step <job spool dir>: supervises one batch job (see step.h).
// Exit status: 0 once result.json is written, whatever the job's fate;
// 1 when no result could be written (spool dir unusable); 2 for bad usage.
#include <cstdio>

#include "stepd/step.h"
#include "util/log.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: muster-step <job spool dir>\n");
    return 2;
  }
  muster::util::SetLogName("muster-step");
  return muster::stepd::RunStep(argv[1]);
}

// sstat's table: one row per running step, from the figures musterd
// gathered from the agents (core::StepStats), in Slurm 22.05's fields,
// widths and formats (observed on the oracle; see sstat_render_test.cc):
//  - the accounting tables' layout (sacct's): fixed-width columns ending
//    with a space, a dashes line, -p/-P, -n; "%N" in -o sets a width;
//  - memory in KiB with a unit only where it divides evenly ("71648K",
//    "2G"), bytes without one under --noconvert; CPU times "HH:MM:SS";
//    page faults and bytes read and written as plain numbers;
//  - TRES strings: cpu, energy (always 0), fs/disk (read), the job's GPUs
//    (gres/gpumem, gres/gpuutil, by node: their TresUsageInMaxTask is -1),
//    mem, pages, vmem; out: energy, fs/disk (written). The task columns
//    print the cpu task as a time ("cpu=00:00:01" is task 1), as Slurm does.
#pragma once

#include <string>
#include <vector>

#include "core/step_stats.h"
#include "util/status.h"

namespace muster::render {

// -o's default, and -i's (--pidformat).
extern const char kSstatDefaultFormat[];
extern const char kSstatPidFormat[];

// The GPUs a step's nodes hold for its job, as last sampled: per node,
// the sum of their utilisations (percent) and of their memory in use.
struct SstatGpuNode {
  std::string node;
  int64_t utilization_pct = 0;
  int64_t memory_used_bytes = 0;
};

struct SstatRow {
  core::StepStats stats;
  std::string nodelist;  // the step's nodes as musterd knows them
  int ntasks = 0;        // its tasks as musterd knows them
  std::vector<SstatGpuNode> gpus;
};

class SstatTable {
 public:
  // `format`: the -o list (checked: "Invalid field requested").
  static util::Result<SstatTable> Make(const std::string& format, bool noconvert, int parsable);
  // The header lines, the dashes included (not under -p/-P).
  std::string Header() const;
  std::string Row(const SstatRow& row) const;

 private:
  struct Column {
    size_t field;  // in the table of fields
    int width;
    bool right;
  };
  std::vector<Column> cols_;
  bool noconvert_ = false;
  int parsable_ = 0;
};

// --helpformat: every field, four to a line, as Slurm lays them out.
std::string SstatHelpFormat();

}  // namespace muster::render

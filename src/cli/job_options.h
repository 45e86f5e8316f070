// Every option Slurm 22.05's sbatch, salloc and srun have, with what Muster
// does with each: the one table behind their --help and --usage (Slurm's
// layout: the usage line, then the same option groups, in Muster's words),
// docs/options.md, and the refusal of what Muster does not do. An option is
//   kSupported  done as Slurm does it (the note says where Muster differs);
//   kNoEffect   accepted, but it changes nothing in Muster: a warning says
//               so each time it is used, never silently;
//   kRefused    refused by name with the reason, the job not submitted.
// The parsers keep their own handling of supported options; AddCatalogOptions
// gives them the rest (job_options_test.cc checks the two agree).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/getopt.h"

namespace muster::cli {

enum class JobCommand : uint8_t { kSbatch = 1, kSalloc = 2, kSrun = 4 };

enum class OptionState { kSupported, kNoEffect, kRefused };

struct CatalogOption {
  unsigned commands;  // JobCommand bits
  char short_name;    // 0: none
  const char* long_name;
  const char* arg;    // as --help shows it after the name: "=name", "[=value]", ""
  const char* group;  // --help's group heading
  const char* help;   // one line, Muster's words
  OptionState state;
  const char* note;   // kNoEffect/kRefused: why; kSupported: how Muster differs ("" none)
};

const std::vector<CatalogOption>& JobOptionCatalog();

// The command's name, "sbatch".
std::string_view JobCommandName(JobCommand cmd);

// --help and --usage of the command.
std::string JobCommandHelp(JobCommand cmd);
std::string JobCommandUsage(JobCommand cmd);

// Adds to `specs` every catalogue option of `cmd` it does not have: a
// refused one fails with "--<name> is not supported by Muster: <note>"
// ("... by Muster yet" without a note); one without effect is taken, with
// "<prog>: warning: --<name> has no effect in Muster: <note>" added to
// `warnings` (owned by the caller, alive as long as the specs are used),
// and so is one the parser has, after its own check of the value.
void AddCatalogOptions(JobCommand cmd, std::vector<util::OptionSpec>* specs,
                       std::vector<std::string>* warnings);

// docs/options.md's tables for sbatch, salloc and srun.
std::string JobOptionsMarkdown();

}  // namespace muster::cli

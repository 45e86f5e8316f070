// --help and --usage of the commands whose options are not in the job
// options' table (cli/job_options.h): scancel, sacct, sreport, scontrol.
// Slurm's layout (the usage line first, the same groups), Muster's words;
// an option Slurm has and Muster refuses is marked "[not in Muster]".
#pragma once

#include <string>

namespace muster::cli {

std::string ScancelHelp();
std::string ScancelUsage();
std::string SacctHelp();
std::string SacctUsage();
std::string SreportHelp();
std::string ScontrolHelp();

}  // namespace muster::cli

// The multi-call `muster` binary: run as sbatch, squeue, ... through links,
// or as `muster <command> ...`.
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/commands.h"

namespace {

using Main = int (*)(const std::vector<std::string>&);

const std::map<std::string, Main>& Commands() {
  static const std::map<std::string, Main> kCommands = {
      {"sbatch", muster::cli::SbatchMain},   {"squeue", muster::cli::SqueueMain},
      {"sinfo", muster::cli::SinfoMain},     {"scancel", muster::cli::ScancelMain},
      {"scontrol", muster::cli::ScontrolMain}, {"srun", muster::cli::SrunMain},
      {"salloc", muster::cli::SallocMain},
      {"up", muster::cli::UpMain},           {"down", muster::cli::DownMain},
      {"sim", muster::cli::SimMain},
      {"sacct", muster::cli::SacctMain},     {"sreport", muster::cli::SreportMain},
      {"seff", muster::cli::SeffMain},     {"sprio", muster::cli::SprioMain},
      {"sshare", muster::cli::SshareMain},   {"sacctmgr", muster::cli::SacctmgrMain},
      {"sdiag", muster::cli::SdiagMain},     {"sstat", muster::cli::SstatMain},
      {"strigger", muster::cli::StriggerMain}, {"scrontab", muster::cli::ScrontabMain},
      {"sbcast", muster::cli::SbcastMain},   {"sattach", muster::cli::SattachMain},
  };
  return kCommands;
}

int Usage() {
  std::cerr << "usage: muster <command> [args]\n"
               "  muster up [--conf FILE] [--state-dir DIR]   start a local cluster\n"
               "  muster down [--conf FILE]                   stop it\n"
               "  muster sim --conf FILE --trace FILE [...]   replay a workload on a virtual clock\n"
               "  muster sbatch|squeue|sinfo|scancel|scontrol|srun|sacct|sreport|seff|sprio|sshare|sacctmgr|sdiag|sstat|strigger|scrontab|sbcast|sattach ...\n"
               "  muster -V|--version                         the Slurm release it follows\n"
               "The Slurm-named links beside this binary run those commands directly.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string prog = std::filesystem::path(argv[0]).filename().string();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto it = Commands().find(prog);
  if (it == Commands().end()) {
    if (args.empty()) return Usage();
    if (args[0] == "-V" || args[0] == "--version") return muster::cli::PrintVersion();
    it = Commands().find(args[0]);
    if (it == Commands().end()) return Usage();
    args.erase(args.begin());
  }
  return it->second(args);
}

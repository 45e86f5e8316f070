// Entry points of the Slurm-named commands of the multi-call `muster`
// binary. Each takes its arguments without argv[0] and returns the exit code.
#pragma once

#include <string>
#include <vector>

namespace muster::cli {

int SbatchMain(const std::vector<std::string>& args);
int SqueueMain(const std::vector<std::string>& args);
int SinfoMain(const std::vector<std::string>& args);
int ScancelMain(const std::vector<std::string>& args);
int ScontrolMain(const std::vector<std::string>& args);
// scontrol create|update|delete|show reservation (src/cli/scontrol_reservation.cc);
// `words` follow the verb.
int ReservationCommand(const std::string& verb, const std::vector<std::string>& words,
                       bool one_liner);
int SrunMain(const std::vector<std::string>& args);
int SallocMain(const std::vector<std::string>& args);
int SacctMain(const std::vector<std::string>& args);
int SreportMain(const std::vector<std::string>& args);
int SeffMain(const std::vector<std::string>& args);
int SprioMain(const std::vector<std::string>& args);
int SshareMain(const std::vector<std::string>& args);
int SdiagMain(const std::vector<std::string>& args);
int SstatMain(const std::vector<std::string>& args);
int StriggerMain(const std::vector<std::string>& args);
int ScrontabMain(const std::vector<std::string>& args);
int SbcastMain(const std::vector<std::string>& args);
int SattachMain(const std::vector<std::string>& args);
int SacctmgrMain(const std::vector<std::string>& args);
int UpMain(const std::vector<std::string>& args);
int DownMain(const std::vector<std::string>& args);
// muster sim (src/cli/sim.cc): a workload replayed on a virtual clock.
int SimMain(const std::vector<std::string>& args);

// Prints "<prog>: error: <message>" to stderr.
void PrintError(const std::string& prog, const std::string& message);

// Prints util::VersionLine() ("slurm 22.05.8 (muster 0.1.0)") for -V and
// --version; returns 0, the exit code.
int PrintVersion();

}  // namespace muster::cli

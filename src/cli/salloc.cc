// salloc: obtains an allocation and runs a command in it on this host (the
// user's shell when none is given), with the allocation's SLURM_*
// variables; the allocation is released when the command exits, and
// salloc exits with its status. Options are sbatch's.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/allocation.h"
#include "cli/commands.h"
#include "cli/sbatch_parse.h"
#include "config/config.h"

namespace muster::cli {

namespace {

// ApplySbatchOptions speaks as sbatch; salloc's lines say salloc.
std::string AsSalloc(std::string message) {
  for (size_t at = 0; (at = message.find("sbatch", at)) != std::string::npos; at += 6) {
    message.replace(at, 6, "salloc");
  }
  return message;
}

int RunCommand(const std::vector<std::string>& command, const std::vector<std::string>& slurm_env) {
  for (const std::string& kv : slurm_env) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) ::setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // While the command runs, salloc waits for it and nothing else: Ctrl-C
  // is the command's to handle.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGQUIT, SIG_DFL);
    ::execvp(argv[0], argv.data());
    std::cerr << "salloc: error: " << argv[0] << ": " << std::strerror(errno) << "\n";
    ::_exit(127);
  }
  if (pid < 0) return 1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int SallocMain(const std::vector<std::string>& args) {
  SbatchInvocation inv;
  auto positional = ApplySbatchOptions(args, &inv);
  if (!positional.ok()) {
    std::cerr << AsSalloc(positional.status().message()) << "\n";
    return SbatchOptionExitCode(positional.status());
  }
  if (inv.version) return PrintVersion();
  auto cfg = config::LoadConfig(config::DefaultConfigPath());
  if (!cfg.ok()) {
    PrintError("salloc", cfg.status().message());
    return 1;
  }
  core::JobRequest& req = inv.req;
  if (req.name.empty()) req.name = "interactive";
  PrepareAllocationRequest(&req);
  std::vector<std::string> command = *positional;
  if (command.empty()) {
    const char* shell = std::getenv("SHELL");
    command = {shell != nullptr && *shell != '\0' ? shell : "/bin/sh"};
  }
  req.command = command.front();
  const Client client = Client::ForConfig(*cfg);
  util::Result<Allocation> alloc = RequestAllocation(client, req, "salloc", inv.quiet);
  if (!alloc.ok()) return 1;
  const int rc = RunCommand(command, alloc->environment);
  if (!inv.quiet) std::cerr << "salloc: Relinquishing job allocation " << alloc->job_id << "\n";
  ReleaseAllocation(client, alloc->job_id, rc);
  return rc;
}

}  // namespace muster::cli

// salloc: obtains an allocation and runs a command in it on this host (the
// user's shell when none is given), with the allocation's SLURM_*
// variables; the allocation is released when the command exits, and
// salloc exits with its status. Options are sbatch's.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/allocation.h"
#include "cli/commands.h"
#include "cli/job_options.h"
#include "cli/sbatch_parse.h"
#include "config/config.h"
#include "util/strings.h"

namespace muster::cli {

namespace {

// Runs the command and waits for it; if the allocation ends meanwhile
// (cancelled, out of time), says so and ends the command, as Slurm does.
int RunCommand(const Client& client, uint32_t job_id, const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // While the command runs, Ctrl-C is the command's to handle.
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
  const std::string target = "/v1/jobs/" + std::to_string(job_id) + "/allocation";
  auto next_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  bool revoked = false;
  int status = 0;
  for (;;) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (revoked || std::chrono::steady_clock::now() < next_check) continue;
    next_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    auto state = client.Get(target);
    if (state.ok() && state->status == 200 && state->body.value("state", "") != "RUNNING") {
      std::cerr << "salloc: Job allocation " << job_id << " has been revoked.\n";
      ::kill(pid, SIGTERM);
      revoked = true;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int SallocMain(const std::vector<std::string>& all_args) {
  // salloc's own options; the rest are sbatch's.
  bool no_shell = false;
  int immediate_s = -1;
  std::vector<std::string> args;
  for (size_t i = 0; i < all_args.size(); ++i) {
    const std::string& a = all_args[i];
    if (a == "--") {
      args.insert(args.end(), all_args.begin() + static_cast<ptrdiff_t>(i), all_args.end());
      break;
    }
    std::string seconds;
    if (a == "--no-shell") {
      no_shell = true;
      continue;
    }
    if (a == "--no-bell") continue;  // there is never a bell
    if (a == "-I" || a == "--immediate") {
      immediate_s = 0;
      continue;
    }
    if (a.starts_with("--immediate=")) seconds = a.substr(12);
    if (a.starts_with("-I") && a.size() > 2 && a[2] != '-') seconds = a.substr(2);
    if (seconds.empty()) {
      args.push_back(a);
      continue;
    }
    util::Result<int64_t> n = util::ParseInt(seconds);
    if (!n.ok() || *n < 0 || *n > 1000000) {
      PrintError("salloc", "Invalid --immediate value: " + seconds);
      return 1;
    }
    immediate_s = static_cast<int>(*n);
  }
  // A heterogeneous allocation's components are separated by ':' (as
  // sbatch's); the command comes last.
  const std::vector<std::vector<std::string>> groups = SplitComponents(args);
  std::vector<SbatchInvocation> components(groups.size());
  util::Result<std::vector<std::string>> positional = std::vector<std::string>{};
  for (size_t k = 0; k < groups.size(); ++k) {
    positional = ApplySbatchOptions(groups[k], &components[k], "salloc");
    if (!positional.ok()) {
      std::cerr << positional.status().message() << "\n";
      return SbatchOptionExitCode(positional.status());
    }
  }
  SbatchInvocation& inv = components.front();
  if (inv.version) return PrintVersion();
  if (inv.help || inv.usage) {
    std::cout << (inv.help ? JobCommandHelp(JobCommand::kSalloc)
                           : JobCommandUsage(JobCommand::kSalloc));
    return 0;
  }
  auto cfg = config::LoadConfig(config::DefaultConfigPath());
  if (!cfg.ok()) {
    PrintError("salloc", cfg.status().message());
    return 1;
  }
  std::vector<std::string> command = *positional;
  if (command.empty()) {
    const char* shell = std::getenv("SHELL");
    command = {shell != nullptr && *shell != '\0' ? shell : "/bin/sh"};
  }
  std::vector<core::JobRequest> reqs;
  for (SbatchInvocation& component : components) {
    for (const std::string& line : component.warnings) std::cerr << line << "\n";
    core::JobRequest& req = component.req;
    if (util::Status per_gpu = CheckPerGpuOptions(req); !per_gpu.ok()) {
      PrintError("salloc", per_gpu.message());
      PrintError("salloc", "Invalid generic resource (gres) specification");
      return 1;
    }
    if (req.name.empty()) req.name = no_shell ? "no-shell" : "interactive";
    PrepareAllocationRequest(&req);
    req.command = command.front();
    reqs.push_back(std::move(req));
  }
  const Client client = Client::ForConfig(*cfg);
  util::Result<Allocation> alloc =
      RequestAllocation(client, reqs, "salloc", inv.quiet, true, immediate_s);
  if (!alloc.ok()) return 1;
  // --no-shell: the allocation stays, to be used with srun --jobid and
  // ended with scancel.
  if (no_shell) return 0;
  EnterAllocation(*alloc);
  const int rc = RunCommand(client, alloc->job_id, command);
  if (!inv.quiet) std::cerr << "salloc: Relinquishing job allocation " << alloc->job_id << "\n";
  ReleaseAllocation(client, alloc->job_id, rc);
  return rc;
}

}  // namespace muster::cli

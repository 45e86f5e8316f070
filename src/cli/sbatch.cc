// sbatch: submit a batch script (Slurm-compatible).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/sbatch_parse.h"
#include "core/json.h"
#include "util/users.h"
#include "util/version.h"

extern char** environ;

namespace muster::cli {

void PrintError(const std::string& prog, const std::string& message) {
  std::cerr << prog << ": error: " << message << "\n";
}

int PrintVersion() {
  std::cout << util::VersionLine() << "\n";
  return 0;
}

namespace {

// SBATCH_* input variables sit between directives and the command line.
std::vector<std::string> EnvOptions() {
  static const std::pair<const char*, const char*> kVars[] = {
      {"SBATCH_ACCOUNT", "--account"},     {"SBATCH_PARTITION", "--partition"},
      {"SBATCH_TIMELIMIT", "--time"},      {"SBATCH_JOB_NAME", "--job-name"},
      {"SBATCH_QOS", "--qos"},             {"SBATCH_EXPORT", "--export"},
      {"SBATCH_GRES", "--gres"},           {"SBATCH_GPUS", "--gpus"},
      {"SBATCH_GPUS_PER_NODE", "--gpus-per-node"}, {"SBATCH_MEM_PER_CPU", "--mem-per-cpu"},
      {"SBATCH_MEM_PER_NODE", "--mem"},    {"SBATCH_RESERVATION", "--reservation"},
      {"SBATCH_WCKEY", "--wckey"},         {"SBATCH_SIGNAL", "--signal"},
  };
  std::vector<std::string> out;
  for (auto& [var, opt] : kVars) {
    const char* v = getenv(var);
    if (v && *v) out.push_back(std::string(opt) + "=" + v);
  }
  if (getenv("SBATCH_EXCLUSIVE")) out.push_back("--exclusive");
  if (getenv("SBATCH_REQUEUE")) out.push_back("--requeue");
  return out;
}

}  // namespace

int SbatchMain(const std::vector<std::string>& args) {
  // First pass over the command line only to find the script.
  SbatchInvocation probe;
  auto positional = ApplySbatchOptions(args, &probe);
  if (!positional.ok()) {
    std::cerr << positional.status().message() << "\n"
              << "Try \"sbatch --help\" for more information\n";
    return 1;
  }
  if (probe.version) return PrintVersion();
  std::string script;
  std::string script_name;
  if (!probe.wrap.empty()) {
    if (!positional->empty()) {
      PrintError("sbatch", "Script arguments not permitted with --wrap option");
      return 1;
    }
    script = WrapScript(probe.wrap);
    script_name = "wrap";
  } else if (!positional->empty()) {
    std::ifstream in(positional->front(), std::ios::binary);
    if (!in) {
      PrintError("sbatch", "Unable to open file " + positional->front());
      return 1;
    }
    script.assign(std::istreambuf_iterator<char>(in), {});
    script_name = std::filesystem::path(positional->front()).filename().string();
  } else {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    script = ss.str();
    script_name = "sbatch";
  }
  util::Status ok = CheckScript(script);
  if (!ok.ok()) {
    PrintError("sbatch", ok.message());
    return 1;
  }

  SbatchInvocation inv;
  for (const auto& pass : {ExtractDirectives(script), EnvOptions(), args}) {
    auto pos = ApplySbatchOptions(pass, &inv);
    if (!pos.ok()) {
      std::cerr << pos.status().message() << "\n";
      return 1;
    }
  }
  core::JobRequest& req = inv.req;
  req.script = std::move(script);
  if (positional->size() > 1) req.argv.assign(positional->begin() + 1, positional->end());
  req.command = positional->empty() ? "(null)"
                                    : std::filesystem::absolute(positional->front()).string();
  if (req.name.empty()) req.name = script_name;
  char cwd[4096];
  std::string here = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
  req.submit_dir = here;
  if (req.work_dir.empty()) {
    req.work_dir = here;
  } else if (req.work_dir[0] != '/') {
    req.work_dir = here + "/" + req.work_dir;
  }
  req.submit_host = util::HostName();
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  util::Status ex = ApplyExport(inv.export_spec, env, &req);
  if (!ex.ok()) {
    PrintError("sbatch", ex.message());
    return 1;
  }

  auto client = Client::Connect();
  if (!client.ok()) {
    PrintError("sbatch", client.status().message());
    return 1;
  }
  auto resp = client->Post("/v1/jobs", nlohmann::json(req));
  if (!resp.ok()) {
    PrintError("sbatch", "Batch job submission failed: " + resp.status().message());
    return 1;
  }
  if (resp->status != 201) {
    PrintError("sbatch", "Batch job submission failed: " + ErrorText(*resp));
    if (resp->body.is_object() && resp->body.contains("detail")) {
      PrintError("sbatch", resp->body["detail"].get<std::string>());
    }
    return 1;
  }
  uint32_t id = resp->body.at("job_id").get<uint32_t>();
  if (inv.parsable) {
    std::cout << id << "\n";
  } else if (!inv.quiet) {
    std::cout << "Submitted batch job " << id << "\n";
  }
  return 0;
}

}  // namespace muster::cli

// sbatch: submit a batch script (Slurm-compatible).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/job_options.h"
#include "cli/sbatch_parse.h"
#include "core/json.h"
#include "util/hostname.h"
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

// Slurm's sbatch checks GRES names against the configuration itself and
// prints this one line, without "Batch job submission failed" (observed:
// --gres=nic:1 where GresTypes=gpu); musterd checks again for API callers.
util::Status CheckGresNames(const core::JobRequest& req, const config::Config& cfg) {
  for (const core::GresRequest& g : req.gres) {
    if (g.count == 0 || cfg.HasGres(g.name)) continue;
    return util::InvalidArgument("gres/" + g.name + ": not a GRES of this cluster");
  }
  return util::Status::Ok();
}

// A refused submission, as Slurm prints it: its own line where it has one
// ("CPU count per node can not be satisfied"), then "Batch job submission
// failed: <message>", then Muster's explanation (the resource and the most
// a node offers).
void PrintRefusal(const Response& resp) {
  const nlohmann::json& body = resp.body;
  if (body.is_object() && body.contains("slurm_line")) {
    PrintError("sbatch", body["slurm_line"].get<std::string>());
  }
  PrintError("sbatch", "Batch job submission failed: " + ErrorText(resp));
  if (body.is_object() && body.contains("detail")) {
    PrintError("sbatch", body["detail"].get<std::string>());
  }
}

}  // namespace

int SbatchMain(const std::vector<std::string>& args) {
  // A heterogeneous job's components are separated by ":" on the command
  // line (and "#SBATCH hetjob" in the script); the script comes last.
  const std::vector<std::vector<std::string>> groups = SplitComponents(args);
  // First pass over the command line only to find the script.
  SbatchInvocation probe;
  util::Result<std::vector<std::string>> positional = std::vector<std::string>{};
  for (const std::vector<std::string>& group : groups) {
    positional = ApplySbatchOptions(group, &probe);
    if (!positional.ok()) {
      std::cerr << positional.status().message() << "\n";
      return SbatchOptionExitCode(positional.status());
    }
  }
  if (probe.version) return PrintVersion();
  if (probe.help || probe.usage) {
    std::cout << (probe.help ? JobCommandHelp(JobCommand::kSbatch)
                             : JobCommandUsage(JobCommand::kSbatch));
    return 0;
  }
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
  auto cfg = config::LoadConfig(config::DefaultConfigPath());
  if (!cfg.ok()) {
    PrintError("sbatch", cfg.status().message());
    return 1;
  }
  // Checked here too, so that a script over the limit is refused with
  // Slurm's message before it is sent (musterd checks it again).
  std::string too_large;
  util::Status size = core::CheckScriptSize(script.size(), cfg->max_script_size, &too_large);
  if (!size.ok()) {
    PrintError("sbatch", "Batch job submission failed: " + size.message());
    PrintError("sbatch", too_large);
    return 1;
  }

  // Each component: its directives, the SBATCH_* variables, then its part
  // of the command line.
  std::vector<std::string> separator_warnings;
  const std::vector<std::vector<std::string>> directives = ExtractDirectives(script, &separator_warnings);
  for (const std::string& line : separator_warnings) std::cerr << line << "\n";
  std::vector<SbatchInvocation> components(std::max(directives.size(), groups.size()));
  for (size_t k = 0; k < components.size(); ++k) {
    const std::vector<std::string> none;
    for (const auto& pass : {k < directives.size() ? directives[k] : none, EnvOptions(),
                             k < groups.size() ? groups[k] : none}) {
      auto pos = ApplySbatchOptions(pass, &components[k]);
      if (!pos.ok()) {
        std::cerr << pos.status().message() << "\n";
        return SbatchOptionExitCode(pos.status());
      }
    }
    for (const std::string& line : components[k].warnings) std::cerr << line << "\n";
    const core::JobRequest& req = components[k].req;
    if (util::Status per_gpu = CheckPerGpuOptions(req); !per_gpu.ok()) {
      PrintError("sbatch", per_gpu.message());
      PrintError("sbatch", "Invalid generic resource (gres) specification");
      return 1;
    }
    if (util::Status gres = CheckGresNames(req, *cfg); !gres.ok()) {
      PrintError("sbatch", "Invalid generic resource (gres) specification");
      PrintError("sbatch", gres.message());
      return 1;
    }
  }
  SbatchInvocation& inv = components.front();
  core::JobRequest& req = inv.req;
  req.script = std::move(script);
  if (positional->size() > 1) req.argv.assign(positional->begin() + 1, positional->end());
  req.command = positional->empty() ? "(null)"
                                    : std::filesystem::absolute(positional->front()).string();
  if (req.name.empty()) req.name = script_name;
  char cwd[4096];
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  util::Status ex =
      FinishBatchRequest(getcwd(cwd, sizeof(cwd)) ? cwd : "/", util::HostName(), env, &inv);
  if (!ex.ok()) {
    PrintError("sbatch", ex.message());
    return 1;
  }

  nlohmann::json body = req;
  for (size_t k = 1; k < components.size(); ++k) body["hetjob"].push_back(components[k].req);
  Client client = Client::ForConfig(*cfg);
  auto resp = client.Post("/v1/jobs", body);
  if (!resp.ok()) {
    PrintError("sbatch", "Batch job submission failed: " + resp.status().message());
    return 1;
  }
  if (resp->status != 201) {
    PrintRefusal(*resp);
    return 1;
  }
  uint32_t id = resp->body.at("job_id").get<uint32_t>();
  auto any = [&](bool SbatchInvocation::*flag) {
    return std::any_of(components.begin(), components.end(),
                       [&](const SbatchInvocation& c) { return c.*flag; });
  };
  if (any(&SbatchInvocation::parsable)) {
    std::cout << id << "\n";
  } else if (!any(&SbatchInvocation::quiet)) {
    std::cout << "Submitted batch job " << id << "\n";
  }
  return 0;
}

}  // namespace muster::cli

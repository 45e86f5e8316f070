#include "cli/allocation.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/json.h"
#include "util/hostname.h"

extern char** environ;

namespace muster::cli {

void PrepareAllocationRequest(core::JobRequest* req) {
  req->interactive = true;
  char cwd[4096];
  const std::string here = ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/";
  req->submit_dir = here;
  if (req->work_dir.empty()) req->work_dir = here;
  req->submit_host = util::HostName();
  for (char** e = environ; *e != nullptr; ++e) req->environment.emplace_back(*e);
}

util::Result<Allocation> RequestAllocation(const Client& client,
                                           const std::vector<core::JobRequest>& reqs,
                                           const std::string& prog, bool quiet,
                                           bool announce_grant, int immediate_s) {
  nlohmann::json body = reqs.front();
  for (size_t k = 1; k < reqs.size(); ++k) body["hetjob"].push_back(reqs[k]);
  auto resp = client.Post("/v1/jobs", body);
  if (!resp.ok()) {
    PrintError(prog, "Job submit/allocate failed: " + resp.status().message());
    return resp.status();
  }
  if (resp->status != 201) {
    if (resp->body.is_object() && resp->body.contains("slurm_line")) {
      PrintError(prog, resp->body["slurm_line"].get<std::string>());
    }
    PrintError(prog, "Job submit/allocate failed: " + ErrorText(*resp));
    return util::Unavailable(ErrorText(*resp));
  }
  Allocation alloc;
  alloc.job_id = resp->body.at("job_id").get<uint32_t>();
  const std::string id = std::to_string(alloc.job_id);
  bool said_pending = false;
  bool said_configuring = false;
  // -I alone: a second for the scheduler, and Slurm's words for busy nodes.
  const bool at_once = immediate_s == 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(at_once ? 1 : immediate_s);
  for (auto wait = std::chrono::milliseconds(20);;
       wait = std::min(wait * 2, std::chrono::milliseconds(500))) {
    auto state = client.Get("/v1/jobs/" + id + "/allocation");
    if (!state.ok() || state->status != 200) {
      const std::string why = state.ok() ? ErrorText(*state) : state.status().message();
      PrintError(prog, "Unable to confirm allocation for job " + id + ": " + why);
      return util::Unavailable(why);
    }
    const std::string s = state->body.value("state", "");
    if (s == "RUNNING") {
      alloc.environment = state->body.value("environment", std::vector<std::string>{});
      if (!quiet) {
        if (said_pending) std::cerr << prog << ": job " << id << " has been allocated resources\n";
        if (announce_grant && !said_configuring) {
          std::cerr << prog << ": Granted job allocation " << id << "\n";
        }
        if (said_configuring) std::cerr << prog << ": Nodes are ready for job\n";
      }
      return alloc;
    }
    if (s == "CONFIGURING") {
      // Its nodes run their Prolog first (PrologFlags=Alloc).
      if (!said_configuring && !quiet) {
        if (announce_grant) std::cerr << prog << ": Granted job allocation " << id << "\n";
        std::cerr << prog << ": Waiting for resource configuration\n";
      }
      said_configuring = true;
      std::this_thread::sleep_for(wait);
      continue;
    }
    if (s != "PENDING") {
      PrintError(prog, "Job allocation " + id + " has been revoked.");
      return util::Unavailable("job " + id + " is " + s);
    }
    if (immediate_s >= 0 && std::chrono::steady_clock::now() >= give_up) {
      (void)client.Post("/v1/jobs/cancel", {{"job_ids", {id}}});
      if (at_once) PrintError(prog, "Unable to allocate resources: Requested nodes are busy");
      std::cerr << prog << ": Job allocation " << id << " has been revoked.\n";
      if (!at_once) PrintError(prog, "Unable to allocate resources: Connection timed out");
      return util::Unavailable("job " + id + " did not start within " +
                               std::to_string(immediate_s) + " s");
    }
    if (!said_pending && !quiet && !at_once) {
      if (prog == "salloc") std::cerr << prog << ": Pending job allocation " << id << "\n";
      std::cerr << prog << ": job " << id << " queued and waiting for resources\n";
      said_pending = true;
    }
    std::this_thread::sleep_for(wait);
  }
}

util::Result<Allocation> ExistingAllocation(const Client& client, const std::string& job_id,
                                            const std::string& prog) {
  auto state = client.Get("/v1/jobs/" + job_id + "/allocation");
  std::string why = !state.ok() ? state.status().message()
                    : state->status != 200 ? ErrorText(*state)
                    : state->body.value("state", "") != "RUNNING"
                        ? "Job/step already completing or completed"
                        : "";
  if (!why.empty()) {
    PrintError(prog, "Unable to confirm allocation for job " + job_id + ": " + why);
    return util::Unavailable(why);
  }
  Allocation alloc;
  alloc.job_id = static_cast<uint32_t>(std::stoul(job_id));
  alloc.environment = state->body.value("environment", std::vector<std::string>{});
  return alloc;
}

void EnterAllocation(const Allocation& alloc) {
  for (const std::string& kv : alloc.environment) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) ::setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
  }
}

void ReleaseAllocation(const Client& client, uint32_t job_id, int exit_code) {
  (void)client.Post("/v1/jobs/" + std::to_string(job_id) + "/allocation",
                    {{"exit_code", exit_code}});
}

}  // namespace muster::cli

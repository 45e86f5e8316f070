// sacctmgr: lists from GET /v1/accounts; changes through POST /v1/accounts,
// shown first and committed when -i is given or the operator says yes, as
// Slurm's sacctmgr asks.
#include <poll.h>
#include <unistd.h>

#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/sacctmgr_views.h"
#include "config/config.h"

namespace muster::cli {
namespace {

// "y" typed within 30 s, as Slurm gives.
bool AskToCommit() {
  std::cout << "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): "
            << std::flush;
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (::poll(&p, 1, 30000) <= 0) return false;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

void PrintLines(const nlohmann::json& lines) {
  for (const auto& l : lines) std::cout << l.get<std::string>() << "\n";
}

}  // namespace

int SacctmgrMain(const std::vector<std::string>& args) {
  auto cmd = ParseSacctmgrArgs(args);
  if (!cmd.ok()) {
    std::cerr << cmd.status().message() << "\n";
    return 1;
  }
  if (cmd->version) return PrintVersion();
  if (cmd->help) {
    std::cout << SacctmgrUsage();
    return 0;
  }
  auto cfg = config::LoadConfig(config::DefaultConfigPath());
  if (!cfg.ok()) {
    PrintError("sacctmgr", cfg.status().message());
    return 1;
  }
  const Client client = Client::ForConfig(*cfg);
  if (cmd->action == "list") {
    auto resp = client.Get("/v1/accounts");
    if (!resp.ok() || resp->status / 100 != 2) {
      PrintCallError("sacctmgr", resp.ok() ? util::Unavailable(ErrorText(*resp)) : resp.status());
      return 1;
    }
    const nlohmann::json cluster = {
        {"name", cfg->cluster_name},
        {"host", cfg->control_addr.empty() ? cfg->control_host : cfg->control_addr},
        {"port", cfg->slurmctld_port}};
    auto text = RenderSacctmgrList(*cmd, resp->body, cluster);
    if (!text.ok()) {
      std::cerr << text.status().message() << "\n";
      return 1;
    }
    std::cout << *text;
    return 0;
  }
  auto resp = client.Post("/v1/accounts", SacctmgrRequest(*cmd, cmd->immediate));
  if (!resp.ok() || resp->status / 100 != 2) {
    if (resp.ok() && !IsTransportRefusal(*resp)) {
      std::cerr << " " << ErrorText(*resp) << "\n";
    } else {
      PrintCallError("sacctmgr", resp.ok() ? util::Unavailable(ErrorText(*resp)) : resp.status());
    }
    return 1;
  }
  PrintLines(resp->body.value("lines", nlohmann::json::array()));
  if (!resp->body.value("changed", false)) return 1;
  if (cmd->immediate) return 0;
  if (!AskToCommit()) {
    std::cout << " Changes Discarded\n";
    return 0;
  }
  auto committed = client.Post("/v1/accounts", SacctmgrRequest(*cmd, true));
  if (!committed.ok() || committed->status / 100 != 2) {
    std::cerr << " Error committing changes: "
              << (committed.ok() ? ErrorText(*committed) : committed.status().message()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace muster::cli

// sprio and sshare: ask musterd for the data (GET /v1/priority, /v1/shares)
// and lay it out here (cli/priority_views.h).
#include <cstdlib>
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/priority_views.h"
#include "util/users.h"

namespace muster::cli {
namespace {

util::Result<Response> Fetch(const std::string& target) {
  auto client = Client::Connect();
  if (!client.ok()) return client.status();
  auto resp = client->Get(target);
  if (!resp.ok()) return resp.status();
  if (resp->status / 100 != 2) return util::Unavailable(ErrorText(*resp));
  return resp;
}

}  // namespace

int SprioMain(const std::vector<std::string>& args) {
  auto opts = ParseSprioArgs(args, std::getenv("SPRIO_FORMAT"));
  if (!opts.ok()) {
    std::cerr << opts.status().message() << "\n";
    if (opts.status().message().find("error:") == std::string::npos) {
      std::cerr << "Try \"sprio --help\" for more information\n";
    }
    return 1;
  }
  if (opts->version) return PrintVersion();
  if (opts->help || opts->usage) {
    std::cout << SprioUsage();
    return 0;
  }
  for (const std::string& line : SprioFormatErrors(opts->format)) std::cerr << line << "\n";
  auto resp = Fetch("/v1/priority");
  if (!resp.ok()) {
    PrintCallError("sprio", resp.status());
    return 1;
  }
  if (!resp->body.value("multifactor", false)) {
    PrintError("sprio",
               "You are not running a supported priority plugin (priority/basic): "
               "sprio needs PriorityType=priority/multifactor");
    return 1;
  }
  std::vector<std::optional<uint32_t>> uids;
  for (const std::string& u : opts->users) uids.push_back(util::LookupUid(u));
  std::cout << RenderSprio(*opts, resp->body, uids);
  return 0;
}

int SshareMain(const std::vector<std::string>& args) {
  auto opts = ParseSshareArgs(args);
  if (!opts.ok()) {
    std::cerr << opts.status().message() << "\n";
    return 1;
  }
  if (opts->version) return PrintVersion();
  if (opts->help) {
    std::cout << SshareUsage();
    return 0;
  }
  if (opts->helpformat) {
    std::cout << SshareHelpFormat();
    return 0;
  }
  auto resp = Fetch("/v1/shares");
  if (!resp.ok()) {
    PrintCallError("sshare", resp.status());
    return 1;
  }
  std::cout << RenderSshare(*opts, resp->body, util::UserName(getuid()));
  return 0;
}

}  // namespace muster::cli

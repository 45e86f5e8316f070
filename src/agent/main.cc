// muster-agent: hosts nodes on this machine for musterd.
//   muster-agent [--conf FILE] [--host NAME] [--nodes HOSTLIST] [-V|--version]
//                [--conf-server HOST[:PORT] [--key-file FILE] [--conf-cache DIR]]
// With --conf-server the configuration comes from musterd (configless):
// the key (auth/slurm) is --key-file, /etc/muster/slurm.key by default;
// without one, munge authenticates.
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <span>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "agent/agent.h"
#include "agent/configless.h"
#include "auth/service.h"
#include "config/config.h"
#include "util/clock.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/reexec.h"
#include "util/systemd_notify.h"
#include "util/users.h"
#include "util/version.h"

namespace {

// argv's strings as the kernel laid them out, back to back; only argv[0]'s
// when they are not.
std::span<char> CommandLineArea(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr) return {};
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) end = argv[i] + std::strlen(argv[i]) + 1;
  return {argv[0], end};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace muster;
  std::string conf_path;
  agent::AgentOptions opts;
  opts.host = util::HostName();
  std::string nodes;
  agent::ConfiglessOptions configless;
  configless.key_file = "/etc/muster/slurm.key";
  configless.cache_dir = config::kConfiglessCacheDir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--conf" || a == "-f") && i + 1 < argc) {
      conf_path = argv[++i];
    } else if (a == "--host" && i + 1 < argc) {
      opts.host = argv[++i];
    } else if (a == "--nodes" && i + 1 < argc) {
      nodes = argv[++i];
    } else if (a == "--conf-server" && i + 1 < argc) {
      configless.server = argv[++i];
    } else if (a == "--key-file" && i + 1 < argc) {
      configless.key_file = argv[++i];
    } else if (a == "--conf-cache" && i + 1 < argc) {
      configless.cache_dir = argv[++i];
    } else if (a == "-V" || a == "--version") {
      std::cout << util::VersionLine() << "\n";
      return 0;
    } else {
      std::cerr << "usage: muster-agent [--conf FILE] [--host NAME] [--nodes HOSTLIST] "
                   "[--conf-server HOST[:PORT] [--key-file FILE] [--conf-cache DIR]] "
                   "[-V|--version]\n";
      return 2;
    }
  }
  util::SetLogName("muster-agent");
  if (!configless.server.empty()) {
    if (!conf_path.empty()) {
      std::cerr << "muster-agent: error: --conf and --conf-server exclude each other\n";
      return 2;
    }
    configless.host = opts.host;
    auto fetched = agent::FetchConfiguration(configless);
    if (!fetched.ok()) {
      std::cerr << "muster-agent: error: " << fetched.status().message() << "\n";
      return 1;
    }
    conf_path = *fetched;
    util::LogInfo("configuration from {} in {}", configless.server, conf_path);
  }
  if (conf_path.empty()) conf_path = config::DefaultConfigPath();
  auto cfg = config::LoadConfig(conf_path);
  if (!cfg.ok()) {
    std::cerr << "muster-agent: error: " << cfg.status().message() << "\n";
    return 1;
  }
  if (!nodes.empty()) {
    auto list = util::ExpandHostlist(nodes);
    if (!list.ok()) {
      std::cerr << "muster-agent: error: --nodes: " << list.status().message() << "\n";
      return 1;
    }
    for (const auto& n : *list) {
      if (!cfg->FindNode(n)) {
        std::cerr << "muster-agent: error: --nodes: node " << n << " is not in " << cfg->path << "\n";
        return 1;
      }
    }
    opts.nodes = *list;
  }
  opts.cmdline = CommandLineArea(argc, argv);
  static util::RealClock clock;
  if (cfg->auth_type != config::AuthType::kLocal) {
    // A configless agent's key is not beside its cached configuration.
    auto auth = auth::ServiceAuth::Create(*cfg, clock,
                                          configless.server.empty() ? "" : configless.key_file);
    if (!auth.ok()) {
      std::cerr << "muster-agent: error: " << auth.status().message() << "\n";
      return 1;
    }
    opts.auth = std::move(*auth);
  }
  ::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  bool restart = false;
  opts.on_reconfigure = [&] {
    restart = true;
    io.stop();
  };
  agent::Agent agent(io, *cfg, opts);
  boost::asio::signal_set stop(io, SIGTERM, SIGINT);
  stop.async_wait([&](boost::system::error_code, int) {
    util::LogInfo("stopping; running steps go on and are reattached at the next start");
    io.stop();
  });
  agent.Start();
  // Under systemd (Type=notify): ready once its listeners are open; it
  // reaches musterd on its own from here, again and again if need be.
  util::NotifySystemd("READY=1");
  io.run();
  if (restart) {
    // In place, with the same arguments: a configless agent fetches the
    // new configuration, the others read their file again; running steps
    // are reattached as after any restart.
    util::Status st = util::ReexecSelf(argv);
    util::LogError("{}", st.message());
    return 1;
  }
  return 0;
}

// musterd: the controller daemon. Thin: loads the configuration, recovers
// state, serves the API and the agent socket on one event loop.
//   musterd [--conf FILE] [--validate] [-V|--version]
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>

#include "api/http.h"
#include "api/line_conn.h"
#include "auth/service.h"
#include "config/config.h"
#include "ctld/api_handlers.h"
#include "ctld/controller.h"
#include "ctld/loop_time.h"
#include "ctld/remote_hosts.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/reexec.h"
#include "util/systemd_notify.h"
#include "util/version.h"

namespace {

namespace asio = boost::asio;
using namespace muster;

void AcceptAgents(asio::local::stream_protocol::acceptor& acceptor, ctld::Controller& ctl) {
  acceptor.async_accept([&](boost::system::error_code ec, asio::local::stream_protocol::socket s) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      ctl.AcceptAgent(
          std::make_shared<api::LineConn>(api::LineConn::Socket(std::move(s)), "local agent"));
    }
    AcceptAgents(acceptor, ctl);
  });
}

int Usage() {
  std::cerr << "usage: musterd [--conf FILE] [--validate] [-V|--version]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string conf_path;
  bool validate = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--conf" || a == "-f") && i + 1 < argc) {
      conf_path = argv[++i];
    } else if (a.rfind("--conf=", 0) == 0) {
      conf_path = a.substr(7);
    } else if (a == "--validate") {
      validate = true;
    } else if (a == "-V" || a == "--version") {
      std::cout << util::VersionLine() << "\n";
      return 0;
    } else if (a == "-D") {
      // Foreground is the only mode; accepted for slurmctld compatibility.
    } else {
      return Usage();
    }
  }
  if (conf_path.empty()) conf_path = config::DefaultConfigPath();
  util::SetLogName("musterd");
  auto cfg = config::LoadConfig(conf_path);
  if (!cfg.ok()) {
    std::cerr << "musterd: error: " << cfg.status().message() << "\n";
    return 1;
  }
  for (const auto& k : cfg->ignored_keys) {
    util::LogWarn("{}: accepted but has no effect in Muster", k);
  }
  util::RealClock clock;
  std::unique_ptr<auth::ServiceAuth> service_auth;
  if (cfg->auth_type != config::AuthType::kLocal) {
    auto loaded = auth::ServiceAuth::Create(*cfg, clock);
    if (loaded.ok()) {
      service_auth = std::move(*loaded);
    } else if (validate && loaded.status().code() == util::Code::kUnavailable) {
      // munged not running here is no fault of the file being checked
      // (a configuration is often checked on another machine).
      util::LogWarn("{}", loaded.status().message());
    } else {
      std::cerr << "musterd: error: " << loaded.status().message() << "\n";
      return 1;
    }
  }
  if (validate) {
    std::cout << "musterd: configuration " << cfg->path << " is valid (" << cfg->nodes.size()
              << " nodes, " << cfg->partitions.size() << " partitions)\n";
    return 0;
  }
  ::signal(SIGPIPE, SIG_IGN);

  asio::io_context io;
  ctld::LoopTimeSystem time(io);
  ctld::Controller ctl(io, *cfg, time);
  util::Status st = ctl.Recover();
  if (!st.ok()) {
    util::LogError("{}", st.message());
    return 1;
  }
  std::string sock = config::ControllerSocketPath(ctl.config());
  // A reply leaves only once what the request changed is on disk.
  api::HttpServerOptions options;
  options.limits = ctl.config().api;
  // Operators are never refused for too many connections, so they can act
  // while a user floods the socket.
  options.exempt = [&ctl](uid_t uid) { return ctl.IsAdmin(uid); };
  if (service_auth != nullptr) options.remote_auth = service_auth->ForApiRequests();
  auto server = api::HttpServer::Listen(
      io, sock,
      [&](const api::HttpRequest& r, api::Respond respond) {
        ctld::ServeApiRequest(ctl, r, std::move(respond));
      },
      std::move(options));
  if (!server.ok()) {
    util::LogError("{}", server.status().message());
    return 1;
  }
  std::string agent_sock = config::AgentSocketPath(ctl.config());
  ::unlink(agent_sock.c_str());
  asio::local::stream_protocol::acceptor agents(io);
  boost::system::error_code ec;
  agents.open(asio::local::stream_protocol(), ec);
  if (!ec) agents.bind(asio::local::stream_protocol::endpoint(agent_sock), ec);
  if (!ec) agents.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    util::LogError("cannot listen on {}: {}", agent_sock, ec.message());
    return 1;
  }
  AcceptAgents(agents, ctl);
  if (ctl.config().enable_configless) {
    util::Result<std::map<std::string, std::string>> files = ctld::ConfiglessFiles(ctl.config());
    if (!files.ok()) {
      util::LogError("{}", files.status().message());
      return 1;
    }
    ctl.ServeConfiguration(std::move(*files));
  }
  auto remote = ctld::ServeOtherHosts(io, ctl, **server, service_auth.get());
  if (!remote.ok()) {
    util::LogError("{}", remote.status().message());
    return 1;
  }
  // MusterMetricsAddress: /metrics for Prometheus, and nothing else, to
  // anyone who can reach the address.
  std::unique_ptr<api::PublicHttpServer> metrics;
  if (ctl.config().metrics_port > 0) {
    auto listening = api::PublicHttpServer::Listen(
        io, ctl.config().metrics_host, ctl.config().metrics_port,
        api::MetricsOnlyHandler([&ctl] { return ctl.MetricsText(); }),
        ctl.config().api);
    if (!listening.ok()) {
      util::LogError("MusterMetricsAddress: {}", listening.status().message());
      return 1;
    }
    metrics = std::move(*listening);
  }

  {
    std::ofstream pid(ctl.config().state_save_location + "/musterd.pid");
    pid << getpid() << "\n";
  }
  auto stop = [&] {
    util::Status saved = ctl.Save();
    if (!saved.ok()) util::LogError("{}", saved.message());
    (*server)->Close();
    if (metrics) metrics->Close();
    agents.close();
    if (*remote) (*remote)->Close();
    io.stop();
  };
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](boost::system::error_code, int sig) {
    util::LogInfo("signal {}: saving state and stopping", sig);
    stop();
  });
  // scontrol reconfigure: once the reply and the agents' messages are out,
  // the state is saved and musterd restarts in place on the new file.
  bool restart = false;
  asio::steady_timer restart_timer(io);
  ctl.SetRestartHook([&] {
    restart = true;
    restart_timer.expires_after(std::chrono::milliseconds(200));
    restart_timer.async_wait([&](boost::system::error_code ec) {
      if (!ec) stop();
    });
  });
  util::LogInfo("musterd {} serving cluster {} on {}", util::MusterVersion(),
                ctl.config().cluster_name, sock);
  // Under systemd (Type=notify): ready once every listener is open.
  util::NotifySystemd("READY=1\nSTATUS=serving cluster " + ctl.config().cluster_name);
  io.run();
  ::unlink(sock.c_str());
  ::unlink(agent_sock.c_str());
  if (restart) {
    util::LogInfo("restarting on {}", ctl.config().path);
    util::Status st = util::ReexecSelf(argv);
    util::LogError("{}", st.message());
    return 1;
  }
  std::error_code fs_ec;
  std::filesystem::remove(ctl.config().state_save_location + "/musterd.pid", fs_ec);
  return 0;
}

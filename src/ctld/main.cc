// musterd: the controller daemon. Thin: loads the configuration, recovers
// state, serves the API and the agent socket on one event loop.
//   musterd [--conf FILE] [--validate] [-V|--version]
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "api/http.h"
#include "api/line_conn.h"
#include "api/tcp_listener.h"
#include "auth/service.h"
#include "auth/signed_lines.h"
#include "config/config.h"
#include "ctld/api_handlers.h"
#include "ctld/controller.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/version.h"

namespace {

namespace asio = boost::asio;
using namespace muster;

void AcceptAgents(asio::local::stream_protocol::acceptor& acceptor, ctld::Controller& ctl) {
  acceptor.async_accept([&](boost::system::error_code ec, asio::local::stream_protocol::socket s) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) ctl.AcceptAgent(std::make_shared<api::LineConn>(api::LineConn::Socket(std::move(s)), "local agent"));
    AcceptAgents(acceptor, ctl);
  });
}

// What another host opened on SlurmctldPort: the agent protocol (signed
// lines, "MUSTER1:..."; an unsigned one, '{', is answered with its
// refusal) or an API request over HTTP. Told apart by the first byte; a
// connection that sends nothing for 10 s is closed.
void Dispatch(asio::io_context& io, api::LineConn::Socket socket, std::string peer,
              ctld::Controller& ctl, api::HttpServer& api, const auth::ServiceAuth& auth) {
  auto conn = std::make_shared<api::LineConn::Socket>(std::move(socket));
  auto first = std::make_shared<char>(0);
  auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::seconds(10));
  timer->async_wait([conn](boost::system::error_code ec) {
    if (!ec) conn->close(ec);
  });
  conn->async_receive(
      asio::buffer(first.get(), 1), asio::socket_base::message_peek,
      [&ctl, &api, &auth, conn, first, timer, peer](boost::system::error_code ec, size_t n) {
        timer->cancel();
        if (ec || n == 0) return;
        if (*first == 'M' || *first == '{') {
          ctl.AcceptAgent(std::make_shared<api::LineConn>(
              std::move(*conn), "agent at " + peer,
              auth.ForConnection(auth::kToAgent, auth::kToController)));
        } else {
          api.ServeRemote(std::move(*conn), peer);
        }
      });
}

// Under AuthType=auth/slurm or auth/munge, agents and commands on other
// hosts reach musterd over TCP on SlurmctldPort, proving every message with
// the shared key or munge. Null, and nothing listens, on a single-host
// cluster (AuthType unset).
util::Result<std::unique_ptr<api::TcpListener>> ServeOtherHosts(asio::io_context& io,
                                                                ctld::Controller& ctl,
                                                                api::HttpServer& api,
                                                                const auth::ServiceAuth* auth) {
  const config::Config& cfg = ctl.config();
  if (auth == nullptr) return std::unique_ptr<api::TcpListener>();
  auto listener = api::TcpListener::Listen(
      io, cfg.slurmctld_port,
      [&io, &ctl, &api, auth](api::LineConn::Socket socket, std::string peer) {
        Dispatch(io, std::move(socket), std::move(peer), ctl, api, *auth);
      });
  if (listener.ok()) {
    util::LogInfo("serving agents and commands of other hosts on TCP port {} ({})",
                  cfg.slurmctld_port,
                  cfg.auth_type == config::AuthType::kMunge ? "auth/munge" : "auth/slurm");
  }
  return listener;
}

// What configless agents get (SlurmctldParameters=enable_configless): the
// main file and gres.conf beside it, as read at start. Included files are
// not sent, so a configuration with Include cannot be served.
util::Result<std::map<std::string, std::string>> ConfiglessFiles(const config::Config& cfg) {
  std::map<std::string, std::string> files;
  const std::filesystem::path main_file(cfg.path);
  for (const char* name : {"muster.conf", "gres.conf"}) {
    const std::filesystem::path path =
        std::string(name) == "muster.conf" ? main_file : main_file.parent_path() / name;
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    files[name] = text.str();
  }
  std::istringstream lines(files["muster.conf"]);
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(" \t");
    if (start != std::string::npos && line.compare(start, 8, "Include ") == 0) {
      return util::FailedPrecondition(
          cfg.path + ": SlurmctldParameters=enable_configless cannot serve a configuration "
                     "that uses Include (put it in one file)");
    }
  }
  return files;
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
    if (!loaded.ok()) {
      std::cerr << "musterd: error: " << loaded.status().message() << "\n";
      return 1;
    }
    service_auth = std::move(*loaded);
  }
  if (validate) {
    std::cout << "musterd: configuration " << cfg->path << " is valid (" << cfg->nodes.size()
              << " nodes, " << cfg->partitions.size() << " partitions)\n";
    return 0;
  }
  ::signal(SIGPIPE, SIG_IGN);

  asio::io_context io;
  ctld::Controller ctl(io, *cfg, clock);
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
        // Moved, never copied: a squeue of 100,000 jobs is 8 MB (two
        // copies of it were half of that squeue's time in musterd).
        ctl.AfterCommit([respond, reply = ctld::HandleApiRequest(ctl, r)]() mutable {
          respond(std::move(reply));
        });
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
    util::Result<std::map<std::string, std::string>> files = ConfiglessFiles(ctl.config());
    if (!files.ok()) {
      util::LogError("{}", files.status().message());
      return 1;
    }
    ctl.ServeConfiguration(std::move(*files));
  }
  auto remote = ServeOtherHosts(io, ctl, **server, service_auth.get());
  if (!remote.ok()) {
    util::LogError("{}", remote.status().message());
    return 1;
  }

  {
    std::ofstream pid(ctl.config().state_save_location + "/musterd.pid");
    pid << getpid() << "\n";
  }
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](boost::system::error_code, int sig) {
    util::LogInfo("signal {}: saving state and stopping", sig);
    util::Status saved = ctl.Save();
    if (!saved.ok()) util::LogError("{}", saved.message());
    (*server)->Close();
    agents.close();
    if (*remote) (*remote)->Close();
    io.stop();
  });
  util::LogInfo("musterd {} serving cluster {} on {}", util::MusterVersion(),
                ctl.config().cluster_name, sock);
  io.run();
  ::unlink(sock.c_str());
  ::unlink(agent_sock.c_str());
  std::error_code fs_ec;
  std::filesystem::remove(ctl.config().state_save_location + "/musterd.pid", fs_ec);
  return 0;
}

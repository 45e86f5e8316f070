#include "ctld/remote_hosts.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/asio/steady_timer.hpp>

#include "auth/signed_lines.h"
#include "util/log.h"

namespace muster::ctld {

namespace asio = boost::asio;

namespace {

// What another host opened on SlurmctldPort: the agent protocol (signed
// lines, "MUSTER1:..."; an unsigned one, '{', is answered with its
// refusal) or an API request over HTTP. Told apart by the first byte; a
// connection that sends nothing for 10 s is closed.
void Dispatch(asio::io_context& io, api::LineConn::Socket socket, std::string peer, Controller& ctl,
              api::HttpServer& api, const auth::ServiceAuth& auth) {
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

}  // namespace

util::Result<std::unique_ptr<api::TcpListener>> ServeOtherHosts(asio::io_context& io,
                                                                Controller& ctl,
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

util::Result<std::map<std::string, std::string>> ConfiglessFiles(const config::Config& cfg) {
  std::map<std::string, std::string> files;
  const std::filesystem::path main_file(cfg.path);
  for (const char* name : {"muster.conf", "gres.conf", "cgroup.conf"}) {
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
          cfg.path +
          ": SlurmctldParameters=enable_configless cannot serve a configuration "
          "that uses Include (put it in one file)");
    }
  }
  return files;
}

}  // namespace muster::ctld

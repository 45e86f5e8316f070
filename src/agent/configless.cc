#include "agent/configless.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "auth/service.h"
#include "auth/signed_lines.h"
#include "config/config.h"
#include "util/clock.h"
#include "util/log.h"

namespace muster::agent {

namespace asio = boost::asio;
using Tcp = asio::ip::tcp;

namespace {

util::Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return util::Unavailable(fmt::format("cannot write {}", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return util::Unavailable(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return util::Status::Ok();
}

}  // namespace

util::Result<std::string> FetchConfiguration(const ConfiglessOptions& o) {
  std::string host = o.server;
  int port = 6817;
  if (const size_t colon = o.server.rfind(':'); colon != std::string::npos) {
    host = o.server.substr(0, colon);
    port = std::atoi(o.server.c_str() + colon + 1);
    if (port <= 0 || port > 65535) {
      return util::InvalidArgument("--conf-server " + o.server + ": the port must be 1..65535");
    }
  }
  // What authenticates the exchange before any configuration is known: the
  // key when it is there, else munge at its default socket.
  config::Config boot;
  boot.auth_type =
      ::access(o.key_file.c_str(), F_OK) == 0 ? config::AuthType::kSlurm : config::AuthType::kMunge;
  static util::RealClock clock;
  auto auth = auth::ServiceAuth::Create(boot, clock, o.key_file);
  if (!auth.ok()) return auth.status();
  std::shared_ptr<api::LineAuth> lines =
      (*auth)->ForConnection(auth::kToController, auth::kToAgent);

  const std::string where = fmt::format("--conf-server {}:{}", host, port);
  asio::io_context io;
  Tcp::socket socket(io);
  boost::system::error_code ec;
  Tcp::resolver resolver(io);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(o.connect_wait_s);
  for (bool said = false;; said = true) {
    auto endpoints = resolver.resolve(host, std::to_string(port), ec);
    if (!ec) asio::connect(socket, endpoints, ec);
    if (!ec) break;
    if (std::chrono::steady_clock::now() >= give_up) {
      return util::Unavailable(fmt::format("{}: cannot connect: {}", where, ec.message()));
    }
    if (!said) util::LogWarn("{}: cannot connect ({}); trying again", where, ec.message());
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // A controller that never answers must not hang the agent's start.
  timeval timeout{30, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  const nlohmann::json request = {{"type", "config_request"}, {"host", o.host}};
  util::Result<std::string> sealed = lines->Seal(request.dump());
  if (!sealed.ok()) return sealed.status();
  asio::write(socket, asio::buffer(*sealed + "\n"), ec);
  asio::streambuf in(64 << 20);
  size_t n = ec ? 0 : asio::read_until(socket, in, '\n', ec);
  if (ec) return util::Unavailable(fmt::format("{}: no answer: {}", where, ec.message()));
  std::string line(asio::buffers_begin(in.data()), asio::buffers_begin(in.data()) + n - 1);
  if (line.starts_with("ERROR ")) {
    return util::PermissionDenied(fmt::format("{}: refused: {}", where, line.substr(6)));
  }
  util::Result<std::string> opened = lines->Open(line);
  if (!opened.ok()) return util::PermissionDenied(where + ": " + opened.status().message());
  const nlohmann::json reply = nlohmann::json::parse(*opened, nullptr, false);
  if (!reply.is_object() || reply.value("type", "") != "config") {
    return util::Unavailable(where + ": an unexpected answer");
  }
  if (reply.contains("error")) {
    return util::FailedPrecondition(where + ": " + reply["error"].get<std::string>());
  }
  std::error_code fs_ec;
  std::filesystem::create_directories(o.cache_dir, fs_ec);
  if (fs_ec) {
    return util::Unavailable(fmt::format("cannot create {}: {}", o.cache_dir, fs_ec.message()));
  }
  for (const auto& [name, text] : reply.at("files").items()) {
    // Only plain names: the server does not choose where files go.
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
      return util::Unavailable(where + ": refusing a file named '" + name + "'");
    }
    MUSTER_RETURN_IF_ERROR(
        WriteFile(std::filesystem::path(o.cache_dir) / name, text.get<std::string>()));
  }
  return (std::filesystem::path(o.cache_dir) / "muster.conf").string();
}

}  // namespace muster::agent

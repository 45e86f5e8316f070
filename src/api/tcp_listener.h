// The TCP side of a daemon that serves other hosts: accepts connections on
// a port and hands each one on with its peer's address. Runs on the
// caller's io_context; owned by the daemon's main.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "api/line_conn.h"
#include "util/status.h"

namespace muster::api {

class TcpListener {
 public:
  using OnConnection = std::function<void(LineConn::Socket socket, std::string peer_address)>;

  // Listens on every address of this host at `port` (0: any free port,
  // which port() then gives).
  static util::Result<std::unique_ptr<TcpListener>> Listen(boost::asio::io_context& io, int port,
                                                           OnConnection on_connection);
  int port() const { return acceptor_.local_endpoint().port(); }
  void Close();

 private:
  TcpListener(boost::asio::io_context& io, OnConnection on_connection)
      : acceptor_(io), retry_(io), on_connection_(std::move(on_connection)) {}
  void Accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  OnConnection on_connection_;
};

}  // namespace muster::api

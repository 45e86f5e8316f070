#include "api/tcp_listener.h"

#include <fmt/format.h>

#include "util/log.h"

namespace muster::api {

namespace asio = boost::asio;
using Tcp = asio::ip::tcp;

util::Result<std::unique_ptr<TcpListener>> TcpListener::Listen(asio::io_context& io, int port,
                                                               OnConnection on_connection) {
  std::unique_ptr<TcpListener> l(new TcpListener(io, std::move(on_connection)));
  boost::system::error_code ec;
  const Tcp::endpoint any(Tcp::v4(), static_cast<unsigned short>(port));
  l->acceptor_.open(any.protocol(), ec);
  // A restarted daemon binds again at once, past its old connections'
  // TIME_WAIT.
  if (!ec) l->acceptor_.set_option(Tcp::acceptor::reuse_address(true), ec);
  if (!ec) l->acceptor_.bind(any, ec);
  if (!ec) l->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return util::Unavailable(fmt::format("cannot listen on TCP port {}: {}", port, ec.message()));
  }
  l->Accept();
  return l;
}

void TcpListener::Accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, Tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec == asio::error::no_descriptors || ec.value() == ENFILE) {
      // Out of descriptors: accepting again at once would spin.
      util::LogWarn("TCP: accept: {}; pausing new connections for 100 ms", ec.message());
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](boost::system::error_code tec) {
        if (!tec) Accept();
      });
      return;
    }
    if (!ec) {
      socket.set_option(Tcp::no_delay(true), ec);
      LineConn::Socket generic(std::move(socket));
      std::string peer = PeerAddress(generic);
      on_connection_(std::move(generic), std::move(peer));
    }
    Accept();
  });
}

void TcpListener::Close() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  retry_.cancel();
}

}  // namespace muster::api

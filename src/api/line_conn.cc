#include "api/line_conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "core/json.h"
#include "util/log.h"

namespace muster::api {

namespace asio = boost::asio;
using Tcp = asio::ip::tcp;

namespace {

constexpr std::string_view kErrorPrefix = "ERROR ";

}  // namespace

void LineConn::Start(OnMessage on_message, OnClose on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  ReadMore();
}

void LineConn::ReadMore() {
  asio::async_read_until(socket_, in_, '\n',
                         [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                           if (ec == asio::error::not_found) {
                             util::LogWarn("{}: a line over {} bytes; closing the connection",
                                           self->peer_, self->in_.max_size());
                           }
                           if (ec) {
                             self->Fail();
                             return;
                           }
                           std::string line(asio::buffers_begin(self->in_.data()),
                                            asio::buffers_begin(self->in_.data()) + n - 1);
                           self->in_.consume(n);
                           self->OnLine(std::move(line));
                           if (!self->closed_ && !self->refusing_) self->ReadMore();
                         });
}

void LineConn::OnLine(std::string line) {
  if (auth_ != nullptr) {
    if (line.starts_with(kErrorPrefix)) {
      util::LogError("{} refused this connection: {}", peer_, line.substr(kErrorPrefix.size()));
      refused_ = true;
      Fail();
      return;
    }
    util::Result<std::string> opened = auth_->Open(line);
    if (!opened.ok()) {
      util::LogError("{}: refused a message: {}", peer_, opened.status().message());
      Refuse(opened.status().message());
      return;
    }
    line = std::move(*opened);
  }
  nlohmann::json msg = core::ParseIntegerJson(line);
  if (msg.is_discarded() || !msg.is_object()) {
    util::LogWarn("{}: dropping a malformed message", peer_);
  } else if (on_message_) {
    on_message_(msg);
  }
}

void LineConn::Refuse(const std::string& why) {
  refusing_ = refused_ = true;
  std::string line = std::string(kErrorPrefix) + why;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  out_.push_back(line + "\n");
  if (!writing_) WriteMore();
}

void LineConn::Send(const nlohmann::json& message) {
  if (closed_ || refusing_) return;
  std::string text = message.dump();
  if (auth_ != nullptr) {
    util::Result<std::string> sealed = auth_->Seal(text);
    if (!sealed.ok()) {
      // Nothing unsigned ever leaves: the connection ends, and with it
      // whatever the peer waits for, so neither side waits forever.
      util::LogError("{}: cannot sign a message: {}; closing", peer_, sealed.status().message());
      Fail();
      return;
    }
    text = std::move(*sealed);
  }
  text += '\n';
  out_.push_back(std::move(text));
  if (!writing_) WriteMore();
}

void LineConn::WriteMore() {
  if (out_.empty()) {
    writing_ = false;
    // The reason is out: the peer can read it before the close.
    if (refusing_) Fail();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_.front()),
                    [self = shared_from_this()](boost::system::error_code ec, size_t) {
                      if (ec) {
                        self->Fail();
                        return;
                      }
                      self->out_.pop_front();
                      self->WriteMore();
                    });
}

void LineConn::Fail() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
  if (on_close_) {
    auto cb = std::move(on_close_);
    on_close_ = nullptr;
    cb();
  }
}

void LineConn::Close() { Fail(); }

util::Result<LineConn::Socket> ConnectUnix(asio::io_context& io, const std::string& path) {
  asio::local::stream_protocol::socket socket(io);
  boost::system::error_code ec;
  socket.connect(asio::local::stream_protocol::endpoint(path), ec);
  if (ec) return util::Unavailable("cannot connect to " + path + ": " + ec.message());
  return LineConn::Socket(std::move(socket));
}

util::Result<LineConn::Socket> ConnectTcp(asio::io_context& io, const std::string& host, int port) {
  Tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return util::Unavailable(fmt::format("cannot resolve {}: {}", host, ec.message()));
  Tcp::socket socket(io);
  asio::connect(socket, endpoints, ec);
  if (ec) return util::Unavailable(fmt::format("cannot connect to {}:{}: {}", host, port, ec.message()));
  socket.set_option(Tcp::no_delay(true), ec);
  return LineConn::Socket(std::move(socket));
}

std::string PeerAddress(const LineConn::Socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const sockaddr* sa = ep.data();
  char text[INET6_ADDRSTRLEN] = "";
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    return fmt::format("{}:{}", text, ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    return fmt::format("[{}]:{}", text, ntohs(in6->sin6_port));
  }
  return "local";
}

}  // namespace muster::api

// A connection carrying newline-delimited JSON messages in both directions,
// used between musterd and muster-agent, over a unix socket on one host or
// TCP between hosts. Asynchronous on one io_context: Send() queues, the
// on_message callback runs for each complete line and on_close once when
// the peer goes away. Owned through shared_ptr.
//
// Between hosts every line is sealed by a LineAuth (auth/signed_lines.h):
// a line that does not open (bad signature, expired, replayed) is logged
// with the reason, answered with one "ERROR <reason>" line and the
// connection closed; a peer that receives such a line logs it and closes.
// A line longer than the bound closes the connection too.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/streambuf.hpp>
#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::api {

// How the lines of a connection between hosts prove who sent them.
class LineAuth {
 public:
  virtual ~LineAuth() = default;
  // The line to send for `message` (no newline in either), or why it
  // cannot be sealed (munged not running).
  virtual util::Result<std::string> Seal(std::string_view message) = 0;
  // The message in a received `line`, if the line proves its sender; else
  // PermissionDenied saying why.
  virtual util::Result<std::string> Open(std::string_view line) = 0;
};

class LineConn : public std::enable_shared_from_this<LineConn> {
 public:
  // Unix sockets and TCP alike.
  using Socket = boost::asio::generic::stream_protocol::socket;
  using OnMessage = std::function<void(const nlohmann::json&)>;
  using OnClose = std::function<void()>;

  // The longest line read: a launch carries a batch script (at most
  // max_script_size, 4 MiB by default) JSON-escaped, and its environment.
  static constexpr size_t kDefaultMaxLine = 64 << 20;

  // `peer` names the other end in log lines ("agent at 10.0.0.2:40312");
  // `auth` is null on a unix socket (the kernel vouches for the peer).
  explicit LineConn(Socket socket, std::string peer = "peer", std::shared_ptr<LineAuth> auth = nullptr,
                    size_t max_line = kDefaultMaxLine)
      : socket_(std::move(socket)),
        in_(max_line),
        peer_(std::move(peer)),
        auth_(std::move(auth)) {}

  // Starts reading; must be called once, after the callbacks are set.
  void Start(OnMessage on_message, OnClose on_close);
  void Send(const nlohmann::json& message);
  void Close();
  Socket& socket() { return socket_; }
  const std::string& peer() const { return peer_; }
  // Whether it ended over authentication (either side refused the other).
  bool refused() const { return refused_; }

 private:
  void ReadMore();
  void OnLine(std::string line);
  // Tells the peer why it is refused, then closes.
  void Refuse(const std::string& why);
  void WriteMore();
  void Fail();

  Socket socket_;
  boost::asio::streambuf in_;
  const std::string peer_;
  std::shared_ptr<LineAuth> auth_;
  std::deque<std::string> out_;
  bool writing_ = false;
  bool closed_ = false;
  bool refusing_ = false;  // an ERROR line is on its way; nothing more is read
  bool refused_ = false;
  OnMessage on_message_;
  OnClose on_close_;
};

// Connects to a unix socket synchronously.
util::Result<LineConn::Socket> ConnectUnix(boost::asio::io_context& io, const std::string& path);
// Connects to host:port over TCP synchronously (names resolved through the
// system's resolver: /etc/hosts first on a cluster).
util::Result<LineConn::Socket> ConnectTcp(boost::asio::io_context& io, const std::string& host,
                                          int port);
// "10.0.0.2:40312" for a connected TCP socket; "local" for a unix one.
std::string PeerAddress(const LineConn::Socket& socket);

}  // namespace muster::api

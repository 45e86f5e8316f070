// A connection carrying newline-delimited JSON messages in both directions,
// used between musterd and muster-agent. Asynchronous on one io_context:
// Send() queues, the on_message callback runs for each complete line and
// on_close once when the peer goes away. Owned through shared_ptr.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/streambuf.hpp>
#include <nlohmann/json.hpp>

#include "util/status.h"

namespace muster::api {

class LineConn : public std::enable_shared_from_this<LineConn> {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;
  using OnMessage = std::function<void(const nlohmann::json&)>;
  using OnClose = std::function<void()>;

  explicit LineConn(Socket socket) : socket_(std::move(socket)) {}

  // Starts reading; must be called once, after the callbacks are set.
  void Start(OnMessage on_message, OnClose on_close);
  void Send(const nlohmann::json& message);
  void Close();
  Socket& socket() { return socket_; }

 private:
  void ReadMore();
  void WriteMore();
  void Fail();

  Socket socket_;
  boost::asio::streambuf in_;
  std::deque<std::string> out_;
  bool writing_ = false;
  bool closed_ = false;
  OnMessage on_message_;
  OnClose on_close_;
};

// Connects to a unix socket synchronously.
util::Result<LineConn::Socket> ConnectUnix(boost::asio::io_context& io, const std::string& path);

}  // namespace muster::api

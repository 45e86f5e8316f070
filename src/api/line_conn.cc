#include "api/line_conn.h"

#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include "core/json.h"
#include "util/log.h"

namespace muster::api {

namespace asio = boost::asio;

void LineConn::Start(OnMessage on_message, OnClose on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  ReadMore();
}

void LineConn::ReadMore() {
  asio::async_read_until(socket_, in_, '\n',
                         [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                           if (ec) {
                             self->Fail();
                             return;
                           }
                           std::string line(asio::buffers_begin(self->in_.data()),
                                            asio::buffers_begin(self->in_.data()) + n - 1);
                           self->in_.consume(n);
                           nlohmann::json msg = core::ParseIntegerJson(line);
                           if (msg.is_discarded() || !msg.is_object()) {
                             util::LogWarn("dropping malformed message from peer");
                           } else if (self->on_message_) {
                             self->on_message_(msg);
                           }
                           if (!self->closed_) self->ReadMore();
                         });
}

void LineConn::Send(const nlohmann::json& message) {
  if (closed_) return;
  out_.push_back(message.dump() + "\n");
  if (!writing_) WriteMore();
}

void LineConn::WriteMore() {
  if (out_.empty()) {
    writing_ = false;
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
  socket_.close(ec);
  if (on_close_) {
    auto cb = std::move(on_close_);
    on_close_ = nullptr;
    cb();
  }
}

void LineConn::Close() { Fail(); }

util::Result<LineConn::Socket> ConnectUnix(asio::io_context& io, const std::string& path) {
  LineConn::Socket socket(io);
  boost::system::error_code ec;
  socket.connect(asio::local::stream_protocol::endpoint(path), ec);
  if (ec) return util::Unavailable("cannot connect to " + path + ": " + ec.message());
  return socket;
}

}  // namespace muster::api

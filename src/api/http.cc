#include "api/http.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "util/log.h"

namespace muster::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Unix = asio::local::stream_protocol;

constexpr size_t kReadChunkBytes = 16 << 10;

PeerCred ReadPeerCred(int fd) {
  PeerCred out;
  struct ucred cred {};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    out.uid = cred.uid;
    out.gid = cred.gid;
    out.pid = cred.pid;
  }
  return out;
}

// One accepted connection: read a request, answer it, repeat while the
// client keeps the connection alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Unix::socket socket, const HttpHandler& handler)
      : socket_(std::move(socket)), handler_(handler) {
    peer_ = ReadPeerCred(socket_.native_handle());
    // Beast reads 512 bytes at a time into an empty buffer: an sbatch
    // request (its environment, a few KiB) took five recv+epoll rounds.
    buffer_.reserve(kReadChunkBytes);
  }

  void Start() { ReadRequest(); }

 private:
  void ReadRequest() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    parser_->header_limit(64 * 1024);
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset) {
      return;
    }
    if (ec) {
      HttpResponse reply;
      reply.status = 400;
      reply.body = nlohmann_error(std::string("malformed request: ") + ec.message());
      Write(std::move(reply), false);
      return;
    }
    const auto& req = parser_->get();
    bool keep_alive = req.keep_alive();
    HttpRequest in;
    in.method = std::string(req.method_string());
    in.target = std::string(req.target());
    in.body = req.body();
    in.peer = peer_;
    handler_(in, [self = shared_from_this(), keep_alive](HttpResponse reply) {
      self->Write(std::move(reply), keep_alive);
    });
  }

  void Write(HttpResponse reply, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<http::status>(reply.status));
    res->set(http::field::content_type, reply.content_type);
    res->keep_alive(keep_alive);
    res->body() = std::move(reply.body);
    res->prepare_payload();
    http::async_write(socket_, *res,
                      [self = shared_from_this(), res, keep_alive](beast::error_code wec, size_t) {
                        if (!wec && keep_alive) self->ReadRequest();
                      });
  }

  static std::string nlohmann_error(const std::string& text) {
    std::string out = "{\"error\":\"";
    for (char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
    return out + "\"}";
  }

  Unix::socket socket_;
  const HttpHandler& handler_;
  PeerCred peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

class UnixHttpServer final : public HttpServer {
 public:
  UnixHttpServer(asio::io_context& io, HttpHandler handler)
      : acceptor_(io), handler_(std::move(handler)) {}

  util::Status Open(const std::string& path) {
    ::unlink(path.c_str());
    beast::error_code ec;
    acceptor_.open(Unix(), ec);
    if (!ec) acceptor_.bind(Unix::endpoint(path), ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return util::Unavailable("cannot listen on " + path + ": " + ec.message());
    ::chmod(path.c_str(), 0666);
    Accept();
    return util::Status::Ok();
  }

  void Close() override {
    beast::error_code ec;
    acceptor_.close(ec);
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, Unix::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) std::make_shared<Session>(std::move(socket), handler_)->Start();
      Accept();
    });
  }

  Unix::acceptor acceptor_;
  HttpHandler handler_;
};

}  // namespace

util::Result<std::unique_ptr<HttpServer>> HttpServer::Listen(asio::io_context& io,
                                                             const std::string& socket_path,
                                                             HttpHandler handler) {
  auto server = std::make_unique<UnixHttpServer>(io, std::move(handler));
  util::Status st = server->Open(socket_path);
  if (!st.ok()) return st;
  return std::unique_ptr<HttpServer>(std::move(server));
}

util::Result<HttpResponse> HttpCall(const std::string& socket_path, const std::string& method,
                                    const std::string& target, const std::string& body) {
  asio::io_context io;
  Unix::socket socket(io);
  beast::error_code ec;
  socket.connect(Unix::endpoint(socket_path), ec);
  if (ec) {
    return util::Unavailable("Unable to contact slurm controller (connect failure): " +
                             socket_path + ": " + ec.message());
  }
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "musterd");
  req.set(http::field::content_type, "application/json");
  req.keep_alive(false);
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req, ec);
  if (ec) return util::Unavailable("sending to musterd failed: " + ec.message());
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(1ull << 31);
  http::read(socket, buffer, parser, ec);
  if (ec) return util::Unavailable("reading from musterd failed: " + ec.message());
  HttpResponse out;
  out.status = static_cast<int>(parser.get().result_int());
  out.body = std::move(parser.get().body());
  return out;
}

}  // namespace muster::api

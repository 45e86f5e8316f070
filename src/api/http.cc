#include "api/http.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/conn_limiter.h"
#include "api/kiosk.h"
#include "util/log.h"

namespace muster::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Unix = asio::local::stream_protocol;
using Tcp = asio::ip::tcp;
using Socket = LineConn::Socket;

constexpr size_t kReadChunkBytes = 16 << 10;
constexpr char kWarningField[] = "Muster-Warning";
// How much of a reply's body the client hands on at a time.
constexpr size_t kReplyPieceBytes = 256 << 10;

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

// A JSON error reply; `limit`/`key` name the bound that refused the
// request and the MusterApiParameters item that sets it.
HttpResponse ErrorReply(int status, const std::string& message, int64_t limit = 0,
                        const std::string& key = {}) {
  nlohmann::json body = {{"error", message}};
  if (!key.empty()) {
    body["limit"] = limit;
    body["key"] = "MusterApiParameters=" + key;
  }
  HttpResponse reply;
  reply.status = status;
  reply.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return reply;
}

// A warning line as a header carries it, and as the client reads it back:
// what a user typed may be in it, so nothing that could end the header
// (control bytes become '?'), and no spaces at either end.
std::string AsHeaderValue(std::string line) {
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  const size_t first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  line.erase(line.find_last_not_of(" \t") + 1);
  line.erase(0, first);
  return line;
}

bool PeerWentAway(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

// The key a remote peer's connections are counted under: its IPv4
// address, or a hash of an IPv6 one.
uid_t AddressKey(const Socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return 0;
  if (ep.data()->sa_family == AF_INET) {
    return ntohl(reinterpret_cast<const sockaddr_in*>(ep.data())->sin_addr.s_addr);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(ep.data());
  return static_cast<uid_t>(std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(&in6->sin6_addr), sizeof(in6->sin6_addr))));
}

// Accepts connections on `acceptor` until it is closed, handing each to
// `serve`. Out of file descriptors, accepting again at once would spin: it
// pauses 100 ms instead, the backlog waiting while connections close.
// `what` names the listener in log lines (a literal).
template <typename Acceptor, typename Serve>
void AcceptConnections(Acceptor& acceptor, asio::steady_timer& retry, const char* what,
                       Serve serve) {
  acceptor.async_accept(
      [&acceptor, &retry, what, serve](beast::error_code ec,
                                       typename Acceptor::protocol_type::socket socket) mutable {
        if (ec == asio::error::operation_aborted) return;
        if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
            ec.value() == ENFILE) {
          util::LogWarn("{}: accept: {}; pausing new connections for 100 ms", what, ec.message());
          retry.expires_after(std::chrono::milliseconds(100));
          retry.async_wait([&acceptor, &retry, what, serve](beast::error_code tec) {
            if (!tec) AcceptConnections(acceptor, retry, what, serve);
          });
          return;
        }
        if (!ec) serve(std::move(socket));
        AcceptConnections(acceptor, retry, what, serve);
      });
}

// One accepted connection: read a request, answer it, repeat while the
// client keeps the connection alive. The header is read first, so that an
// oversized body is refused from its Content-Length before any of it is
// read, and so that a client waiting on "Expect: 100-continue" is told to
// go on.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `remote_auth` set: a connection from another host, whose requests
  // each prove their sender (`peer` is then unknown until they do).
  Session(Socket socket, PeerCred peer, const HttpHandler& handler,
          const config::ApiLimits& limits, ConnectionLimiter::Slot slot,
          std::shared_ptr<RequestAuth> remote_auth = nullptr, std::string remote_name = {})
      : socket_(std::move(socket)),
        handler_(handler),
        peer_(peer),
        remote_auth_(std::move(remote_auth)),
        remote_name_(std::move(remote_name)),
        max_header_(static_cast<uint32_t>(limits.max_header_size)),
        max_body_(static_cast<uint64_t>(limits.max_body_size)),
        slot_(std::move(slot)) {
    // Beast reads 512 bytes at a time into an empty buffer: an sbatch
    // request (its environment, a few KiB) took five recv+epoll rounds.
    buffer_.reserve(kReadChunkBytes);
  }

  void Start() { ReadHeader(); }

  // Answers without reading anything, then closes (a connection over the
  // limits).
  void Refuse(HttpResponse reply) { Write(std::move(reply), false); }

 private:
  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(max_header_);
    parser_->body_limit(max_body_);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (PeerWentAway(ec)) return;
    if (ec) {
      Fail(ec);
      return;
    }
    if (!parser_->is_done() &&
        beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(socket_, asio::buffer(kContinue),
                        [self = shared_from_this()](beast::error_code wec, size_t) {
                          if (!wec) self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  // A request that cannot be served: answered, then the connection closed
  // without reading what is left of it.
  void Fail(const beast::error_code& ec) {
    if (ec == http::error::header_limit) {
      Write(ErrorReply(431,
                       fmt::format("request headers are over the API's limit of {} bytes "
                                   "(MusterApiParameters max_header_size)",
                                   max_header_),
                       max_header_, "max_header_size"),
            false);
      return;
    }
    if (ec == http::error::body_limit) {
      // The fields are stored as they are parsed: Content-Length is there
      // even though the parser stopped at it.
      std::string size;
      const auto length = parser_->get()[http::field::content_length];
      if (!length.empty()) size = " of " + std::string(length) + " bytes";
      Write(ErrorReply(413,
                       fmt::format("request body{} is over the API's limit of {} bytes "
                                   "(MusterApiParameters max_body_size)",
                                   size, max_body_),
                       static_cast<int64_t>(max_body_), "max_body_size"),
            false);
      return;
    }
    Write(ErrorReply(400, "malformed request: " + ec.message()), false);
  }

  void OnRead(beast::error_code ec) {
    if (PeerWentAway(ec)) return;
    if (ec) {
      Fail(ec);
      return;
    }
    auto& req = parser_->get();
    bool keep_alive = req.keep_alive();
    HttpRequest in;
    in.method = std::string(req.method_string());
    in.target = std::string(req.target());
    in.body = std::move(req.body());
    in.peer = peer_;
    if (remote_auth_ != nullptr) {
      util::Result<PeerCred> who = Authenticate(in);
      if (!who.ok()) {
        util::LogError("API request from {}: refused: {}", remote_name_, who.status().message());
        Write(ErrorReply(401, "Authentication failure: " + who.status().message()), false);
        return;
      }
      in.peer = *who;
    }
    handler_(in, [self = shared_from_this(), keep_alive](HttpResponse reply) {
      self->Write(std::move(reply), keep_alive);
    });
  }

  util::Result<PeerCred> Authenticate(const HttpRequest& in) {
    if (!RequestCredential()) {
      return util::PermissionDenied("no credential (Authorization: Muster ...)");
    }
    return remote_auth_->Verify(*RequestCredential(),
                                RequestSigningText(in.method, in.target, in.body));
  }

  // The credential in the header of the request being read, if it has one.
  std::optional<std::string_view> RequestCredential() const {
    if (!parser_) return std::nullopt;
    const auto field = parser_->get()[http::field::authorization];
    std::string_view header(field.data(), field.size());
    if (!header.starts_with(kCredentialScheme)) return std::nullopt;
    header.remove_prefix(sizeof(kCredentialScheme) - 1);
    return header;
  }

  // Over TCP, musterd's credential for `reply` to the request read last.
  // A reply that cannot be signed (munged away) goes without one: the
  // client refuses it, saying so, rather than wait for nothing.
  void SignReply(const HttpResponse& reply, http::response<http::string_body>& res) {
    std::string_view answers;
    if (!ReplyAnswersConnection(reply.status, reply.retry_after_s)) {
      answers = RequestCredential().value_or("");
    }
    util::Result<std::string> credential = remote_auth_->SignReply(
        ReplySigningText(answers, reply.status, reply.warnings, reply.body));
    if (!credential.ok()) {
      util::LogError("API reply to {}: cannot sign it: {}", remote_name_,
                     credential.status().message());
      return;
    }
    res.set(kReplyCredentialField, *credential);
  }

  void Write(HttpResponse reply, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<http::status>(reply.status));
    res->set(http::field::content_type, reply.content_type);
    if (reply.retry_after_s > 0) {
      res->set(http::field::retry_after, std::to_string(reply.retry_after_s));
    }
    for (std::string& line : reply.warnings) {
      line = AsHeaderValue(std::move(line));
      res->insert(kWarningField, line);
    }
    if (remote_auth_ != nullptr) SignReply(reply, *res);
    res->keep_alive(keep_alive);
    WidenSendBuffer(reply.body.size());
    res->body() = std::move(reply.body);
    res->prepare_payload();
    http::async_write(socket_, *res,
                      [self = shared_from_this(), res, keep_alive](beast::error_code wec, size_t) {
                        if (!wec && keep_alive) {
                          self->ReadHeader();
                          return;
                        }
                        // Done with this connection: what the peer still
                        // sends is not read.
                        beast::error_code ignored;
                        self->socket_.shutdown(Socket::shutdown_both, ignored);
                      });
  }

  // A long reply (squeue of 100,000 jobs: 8 MB) leaves in a few rounds
  // instead of one per 200 KiB, each waiting for the client to drain the
  // socket (as far as net.core.wmem_max lets; best effort).
  void WidenSendBuffer(size_t bytes) {
    constexpr size_t kDefaultSendBuffer = 208 << 10;
    constexpr size_t kMostSendBuffer = 4 << 20;
    if (bytes <= kDefaultSendBuffer) return;
    int size = static_cast<int>(std::min(bytes, kMostSendBuffer));
    (void)::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }

  Socket socket_;
  const HttpHandler& handler_;
  const PeerCred peer_;
  const std::shared_ptr<RequestAuth> remote_auth_;
  const std::string remote_name_;
  const uint32_t max_header_;
  const uint64_t max_body_;
  ConnectionLimiter::Slot slot_;  // released when the session ends
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

class UnixHttpServer final : public HttpServer {
 public:
  UnixHttpServer(asio::io_context& io, HttpHandler handler, HttpServerOptions options)
      : acceptor_(io),
        retry_timer_(io),
        handler_(std::move(handler)),
        limits_(options.limits),
        limiter_(ConnectionLimiter::Create(limits_.max_connections,
                                           limits_.max_connections_per_user,
                                           std::move(options.exempt))),
        remote_auth_(std::move(options.remote_auth)),
        // Other hosts' connections are counted per address: their users
        // are known only once each request proves itself.
        remote_limiter_(ConnectionLimiter::Create(limits_.max_connections,
                                                  limits_.max_connections_per_user, nullptr)) {}

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
    retry_timer_.cancel();
  }

  void ServeRemote(Socket socket, const std::string& peer) override {
    if (remote_auth_ == nullptr) return;  // closed with the socket
    const uid_t key = AddressKey(socket);
    ConnectionLimiter::Slot slot;
    // "10.0.0.2:40312": the host, not the port, holds the connections.
    const std::string host = peer.substr(0, peer.rfind(':'));
    util::Status admitted = remote_limiter_->Admit(key, &slot, host);
    auto session = std::make_shared<Session>(std::move(socket), PeerCred{}, handler_, limits_,
                                             std::move(slot), remote_auth_, peer);
    if (admitted.ok()) {
      session->Start();
      return;
    }
    util::LogWarn("API: refusing a connection from {}: {}", peer, admitted.message());
    Refuse(*session, *remote_limiter_, key, admitted);
  }

 private:
  void Accept() {
    AcceptConnections(acceptor_, retry_timer_, "API",
                      [this](Unix::socket socket) { Serve(std::move(socket)); });
  }

  void Refuse(Session& session, const ConnectionLimiter& limiter, uid_t key,
              const util::Status& admitted) {
    const bool per_user = limiter.open_of(key) >= limits_.max_connections_per_user;
    HttpResponse reply =
        ErrorReply(503, admitted.message(),
                   per_user ? limits_.max_connections_per_user : limits_.max_connections,
                   per_user ? "max_connections_per_user" : "max_connections");
    reply.retry_after_s = 1;
    session.Refuse(std::move(reply));
  }

  void Serve(Unix::socket socket) {
    PeerCred peer = ReadPeerCred(socket.native_handle());
    ConnectionLimiter::Slot slot;
    util::Status admitted = limiter_->Admit(peer.uid, &slot);
    auto session = std::make_shared<Session>(Socket(std::move(socket)), peer, handler_, limits_,
                                             std::move(slot));
    if (admitted.ok()) {
      session->Start();
      return;
    }
    Refuse(*session, *limiter_, peer.uid, admitted);
  }

  Unix::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  HttpHandler handler_;
  const config::ApiLimits limits_;
  std::shared_ptr<ConnectionLimiter> limiter_;
  std::shared_ptr<RequestAuth> remote_auth_;
  std::shared_ptr<ConnectionLimiter> remote_limiter_;
};

class PublicTcpServer final : public PublicHttpServer {
 public:
  PublicTcpServer(asio::io_context& io, HttpHandler handler, config::ApiLimits limits)
      : acceptor_(io),
        retry_timer_(io),
        handler_(std::move(handler)),
        limits_(limits),
        limiter_(ConnectionLimiter::Create(limits_.max_connections,
                                           limits_.max_connections_per_user, nullptr)) {}

  util::Status Open(const std::string& address, int port) {
    beast::error_code ec;
    const std::string where = fmt::format("{}:{}", address, port);
    const asio::ip::address ip = asio::ip::make_address(address, ec);
    if (ec) return util::InvalidArgument(where + ": not an IP address");
    const asio::ip::tcp::endpoint endpoint(ip, static_cast<uint16_t>(port));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return util::Unavailable("cannot listen on " + where + ": " + ec.message());
    Accept();
    return util::Status::Ok();
  }

  void Close() override {
    beast::error_code ec;
    acceptor_.close(ec);
    retry_timer_.cancel();
  }

 private:
  void Accept() {
    AcceptConnections(acceptor_, retry_timer_, "metrics",
                      [this](asio::ip::tcp::socket socket) { Serve(Socket(std::move(socket))); });
  }

  void Serve(Socket socket) {
    const uid_t key = AddressKey(socket);
    ConnectionLimiter::Slot slot;
    util::Status admitted = limiter_->Admit(key, &slot, "a scraper");
    auto session = std::make_shared<Session>(std::move(socket), PeerCred{}, handler_, limits_,
                                             std::move(slot));
    if (admitted.ok()) {
      session->Start();
      return;
    }
    HttpResponse reply = ErrorReply(503, admitted.message());
    reply.retry_after_s = 1;
    session->Refuse(std::move(reply));
  }

  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  HttpHandler handler_;
  const config::ApiLimits limits_;
  std::shared_ptr<ConnectionLimiter> limiter_;
};

}  // namespace

util::Result<std::unique_ptr<PublicHttpServer>> PublicHttpServer::Listen(
    asio::io_context& io, const std::string& address, int port, HttpHandler handler,
    config::ApiLimits limits) {
  auto server = std::make_unique<PublicTcpServer>(io, std::move(handler), limits);
  util::Status st = server->Open(address, port);
  if (!st.ok()) return st;
  return std::unique_ptr<PublicHttpServer>(std::move(server));
}

util::Result<std::unique_ptr<HttpServer>> HttpServer::Listen(asio::io_context& io,
                                                             const std::string& socket_path,
                                                             HttpHandler handler,
                                                             HttpServerOptions options) {
  auto server = std::make_unique<UnixHttpServer>(io, std::move(handler), std::move(options));
  util::Status st = server->Open(socket_path);
  if (!st.ok()) return st;
  return std::unique_ptr<HttpServer>(std::move(server));
}

std::string RequestSigningText(std::string_view method, std::string_view target,
                               std::string_view body) {
  std::string text;
  text.reserve(method.size() + target.size() + body.size() + 2);
  text.append(method).append(1, ' ').append(target).append(1, '\n').append(body);
  return text;
}

std::string ReplySigningText(std::string_view request_credential, int status,
                             const std::vector<std::string>& warnings, std::string_view body) {
  std::string text = fmt::format("{}\n{}\n{}\n", request_credential, status, warnings.size());
  for (const std::string& line : warnings) text.append(line).append(1, '\n');
  text.append(body);
  return text;
}

namespace {

// musterd restarting in place (scontrol reconfigure) is away for a moment:
// its socket is gone, or its port refuses. A connection that never opened
// carried nothing, so trying again is safe for any request.
constexpr auto kRestartWait = std::chrono::seconds(3);

bool MayBeRestarting(const beast::error_code& ec) {
  return ec == asio::error::connection_refused || ec == asio::error::not_found ||
         ec == boost::system::errc::no_such_file_or_directory;
}

util::Result<Socket> ConnectUnixApi(asio::io_context& io, const std::string& path) {
  Unix::socket socket(io);
  beast::error_code ec;
  const auto give_up = std::chrono::steady_clock::now() + kRestartWait;
  for (;;) {
    socket.connect(Unix::endpoint(path), ec);
    if (!ec || !MayBeRestarting(ec) || std::chrono::steady_clock::now() >= give_up) break;
    socket.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (ec) {
    return util::Unavailable("Unable to contact slurm controller (connect failure): " + path +
                             ": " + ec.message());
  }
  return Socket(std::move(socket));
}

// A numeric address only: the static commands carry no resolver (the
// credential service resolved the name).
util::Result<Socket> ConnectTcpApi(asio::io_context& io, const KioskGrant& grant) {
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(grant.address, ec);
  Tcp::socket socket(io);
  const auto give_up = std::chrono::steady_clock::now() + kRestartWait;
  while (!ec) {
    socket.connect(Tcp::endpoint(address, static_cast<unsigned short>(grant.port)), ec);
    if (!ec || !MayBeRestarting(ec) || std::chrono::steady_clock::now() >= give_up) break;
    socket.close();
    ec.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (ec) {
    return util::Unavailable(fmt::format(
        "Unable to contact slurm controller (connect failure): {}:{}: {}", grant.address,
        grant.port, ec.message()));
  }
  socket.set_option(Tcp::no_delay(true), ec);
  return Socket(std::move(socket));
}

// Whether `reply`, read over TCP, is musterd's answer to the request
// signed with `request_credential`: its Muster-Credential must be
// musterd's, over exactly it, as this host's credential service finds.
util::Status CheckReply(const std::string& kiosk_path, std::string_view request_credential,
                        std::string_view reply_credential, const HttpResponse& reply) {
  if (reply_credential.empty()) {
    return util::PermissionDenied(
        "Protocol authentication error: the controller's reply carries no credential "
        "(is it Muster's musterd, under the same AuthType?)");
  }
  if (ReplyAnswersConnection(reply.status, reply.retry_after_s)) request_credential = {};
  util::Status verified = KioskVerifyReply(
      kiosk_path, std::string(reply_credential),
      ReplySigningText(request_credential, reply.status, reply.warnings, reply.body));
  if (verified.code() == util::Code::kPermissionDenied) {
    return util::PermissionDenied("Protocol authentication error: the controller's reply was "
                                  "refused: " +
                                  verified.message());
  }
  return verified;
}

}  // namespace

util::Result<HttpResponse> HttpCall(const std::string& socket_path, const std::string& method,
                                    const std::string& target, const std::string& body,
                                    const BodySink& sink) {
  Endpoint endpoint;
  endpoint.unix_path = socket_path;
  return HttpCall(endpoint, method, target, body, sink);
}

util::Result<HttpResponse> HttpCall(const Endpoint& endpoint, const std::string& method,
                                    const std::string& target, const std::string& body,
                                    const BodySink& sink) {
  std::string credential;
  asio::io_context io;
  util::Result<Socket> connected = util::Unavailable("");
  if (!endpoint.unix_path.empty()) {
    connected = ConnectUnixApi(io, endpoint.unix_path);
  } else {
    util::Result<KioskGrant> grant =
        KioskSign(endpoint.kiosk_path, RequestSigningText(method, target, body));
    if (!grant.ok()) return grant.status();
    credential = std::move(grant->credential);
    connected = ConnectTcpApi(io, *grant);
  }
  if (!connected.ok()) return connected.status();
  Socket& socket = *connected;
  beast::error_code ec;
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "musterd");
  req.set(http::field::content_type, "application/json");
  if (!credential.empty()) req.set(http::field::authorization, kCredentialScheme + credential);
  req.keep_alive(false);
  req.body() = body;
  req.prepare_payload();
  beast::error_code write_ec;
  http::write(socket, req, write_ec);
  // The server may have answered and stopped reading (too many
  // connections, a body over its limit): its reply is still there to read.
  beast::flat_buffer buffer;
  // Beast reads at most what the buffer holds (at least 512 bytes, at most
  // 64 KiB a call): a squeue of 100,000 jobs (8 MB) took 16,000 reads from
  // an empty one.
  buffer.reserve(64 << 10);
  constexpr uint64_t kMostReplyBytes = 1ull << 31;
  auto failed = [&]() {
    if (write_ec) return util::Unavailable("sending to musterd failed: " + write_ec.message());
    return util::Unavailable("reading from musterd failed: " + ec.message());
  };
  // The header first; the body's parser (gathered or in pieces) takes over
  // from it.
  http::response_parser<http::empty_body> head;
  head.body_limit(kMostReplyBytes);
  http::read_header(socket, buffer, head, ec);
  if (ec) return failed();
  HttpResponse out;
  out.status = static_cast<int>(head.get().result_int());
  auto retry = head.get().find(http::field::retry_after);
  if (retry != head.get().end()) {
    out.retry_after_s = std::atoi(std::string(retry->value()).c_str());
  }
  auto [first_warning, end_warnings] = head.get().equal_range(kWarningField);
  for (auto it = first_warning; it != end_warnings; ++it) out.warnings.emplace_back(it->value());
  const bool remote = !credential.empty();
  if (sink == nullptr || out.status / 100 != 2 || remote) {
    const auto reply_credential = head.get()[kReplyCredentialField];
    http::response_parser<http::string_body> parser(std::move(head));
    parser.body_limit(kMostReplyBytes);
    http::read(socket, buffer, parser, ec);
    if (ec && !parser.is_done()) return failed();
    out.body = std::move(parser.get().body());
    if (!remote) return out;
    util::Status trusted = CheckReply(endpoint.kiosk_path, credential,
                                      {reply_credential.data(), reply_credential.size()}, out);
    if (!trusted.ok()) return trusted;
    if (sink != nullptr && out.status / 100 == 2) {
      sink(out, out.body);
      out.body.clear();
    }
    return out;
  }
  http::response_parser<http::buffer_body> parser(std::move(head));
  parser.body_limit(kMostReplyBytes);
  // One piece buffer for every piece, left uninitialised: only the pages
  // the first pieces fill ever fault in (a short reply touches one).
  auto piece = std::make_unique_for_overwrite<char[]>(kReplyPieceBytes);
  while (!parser.is_done()) {
    parser.get().body().data = piece.get();
    parser.get().body().size = kReplyPieceBytes;
    http::read(socket, buffer, parser, ec);
    if (ec == http::error::need_buffer) ec = {};  // the piece is full
    if (ec) return failed();
    const size_t got = kReplyPieceBytes - parser.get().body().size;
    if (got > 0) sink(out, std::string_view(piece.get(), got));
  }
  return out;
}

HttpHandler MetricsOnlyHandler(std::function<std::string()> text) {
  return [text = std::move(text)](const HttpRequest& r, Respond respond) {
    HttpResponse reply;
    if (r.method == "GET" && r.target.substr(0, r.target.find('?')) == "/metrics") {
      reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
      reply.body = text();
    } else {
      reply.status = 404;
      reply.content_type = "text/plain; charset=utf-8";
      reply.body = "only /metrics is served here\n";
    }
    respond(std::move(reply));
  };
}

}  // namespace muster::api

// HTTP/1.1 over a unix socket, the transport of Muster's API, and over TCP
// from other hosts. The server runs on the caller's io_context (one thread:
// all handlers run on the controller's event loop). On the unix socket it
// learns each peer's uid/gid from the kernel (SO_PEERCRED), the local
// authentication; over TCP each request carries a credential in its
// Authorization header ("Muster <credential>", signed by the client host's
// credential service over RequestSigningText) and the uid/gid are the
// credential's, never the body's. A request without a good one gets 401.
// Every reply over TCP carries musterd's own credential in its
// Muster-Credential header, over ReplySigningText (which names the
// request's credential, so a reply answers exactly one request); the
// client has its host's credential service check it and takes no reply
// without a good one. Requests are bounded
// (config::ApiLimits, MusterApiParameters): headers over max_header_size
// get 431, a body over max_body_size 413 (from Content-Length, before any
// of the body is read, or as a chunked body grows), and the connection is
// closed without reading the rest; a connection over the per-uid or total
// count gets 503 before anything is read. Malformed requests get 400,
// never a crash.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "api/line_conn.h"
#include "config/config.h"
#include "util/status.h"

namespace muster::api {

struct PeerCred {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = 0;
};

struct HttpRequest {
  std::string method;  // "GET", "POST"
  std::string target;  // "/v1/jobs?x=y"
  std::string body;
  PeerCred peer;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Retry-After (seconds); 0 = none. The server sets it on its 503 for too
  // many connections, which the CLI retries.
  int retry_after_s = 0;
  // Lines the command prints to stderr before the body ("squeue: error:
  // Invalid user: bob"), each without its newline; sent as one
  // Muster-Warning header each, in order, control bytes as '?'.
  std::vector<std::string> warnings;
};

// Handlers answer through `respond`, at once or later (musterd answers a
// state change only once it is on disk). `respond` must be called exactly
// once, on the server's io_context.
using Respond = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(const HttpRequest&, Respond respond)>;

// The text a request's credential signs: its method, target and body.
std::string RequestSigningText(std::string_view method, std::string_view target,
                               std::string_view body);
constexpr char kCredentialScheme[] = "Muster ";

// The text a reply's credential signs: the credential of the request it
// answers (empty when the reply refuses its connection or request before
// reading it; ReplyAnswersConnection), its status, its warnings (as the
// client reads them: no control bytes, no spaces at either end) and its
// body.
std::string ReplySigningText(std::string_view request_credential, int status,
                             const std::vector<std::string>& warnings, std::string_view body);
// Whether a reply refuses before its request is read, so it names none:
// 431 (headers too large) and 503 with Retry-After (too many connections).
inline bool ReplyAnswersConnection(int status, int retry_after_s) {
  return status == 431 || (status == 503 && retry_after_s > 0);
}
constexpr char kReplyCredentialField[] = "Muster-Credential";

// The authentication of requests that came over TCP, and of the replies
// to them.
class RequestAuth {
 public:
  virtual ~RequestAuth() = default;
  // Who sent the request whose RequestSigningText is `text`, if
  // `credential` proves it; else PermissionDenied saying why.
  virtual util::Result<PeerCred> Verify(std::string_view credential, std::string_view text) = 0;
  // musterd's credential for the reply whose ReplySigningText is `text`.
  virtual util::Result<std::string> SignReply(std::string_view text) = 0;
};

struct HttpServerOptions {
  config::ApiLimits limits;
  // Operators, never refused for the connection counts (empty: nobody).
  std::function<bool(uid_t)> exempt;
  // Requests over TCP (ServeRemote) are checked with this; null: none are
  // served.
  std::shared_ptr<RequestAuth> remote_auth;
};

// Listens on `socket_path` (removing a stale socket file first, mode 0666 so
// every local user can reach it) and serves `handler` on `io`.
class HttpServer {
 public:
  static util::Result<std::unique_ptr<HttpServer>> Listen(boost::asio::io_context& io,
                                                          const std::string& socket_path,
                                                          HttpHandler handler,
                                                          HttpServerOptions options = {});
  virtual ~HttpServer() = default;
  virtual void Close() = 0;
  // Serves one connection another host opened over TCP (accepted by a
  // TcpListener): every request must carry a credential remote_auth
  // accepts. `peer` ("10.0.0.2:40312") names it in log lines; connections
  // are counted per peer address.
  virtual void ServeRemote(LineConn::Socket socket, const std::string& peer) = 0;
};

// Serves `handler` over plain TCP at `address` (an IP address):`port` to anyone, without
// credentials: every request's peer is unknown (uid -1). Only for what any
// host may read, as a monitoring system scrapes it (musterd's /metrics for
// Prometheus). Connections are limited as the API's, per peer address.
class PublicHttpServer {
 public:
  static util::Result<std::unique_ptr<PublicHttpServer>> Listen(boost::asio::io_context& io,
                                                                const std::string& address,
                                                                int port,
                                                                HttpHandler handler,
                                                                config::ApiLimits limits);
  virtual ~PublicHttpServer() = default;
  virtual void Close() = 0;
};

// A PublicHttpServer's handler that answers GET /metrics with `text()` in
// Prometheus' text format, and 404 to anything else.
HttpHandler MetricsOnlyHandler(std::function<std::string()> text);

// Where a client reaches musterd: its unix socket on the controller's
// host, else TCP, each request signed and each reply checked by this
// host's credential service (api/kiosk.h), which also names the
// controller's address.
struct Endpoint {
  std::string unix_path;
  std::string kiosk_path;
};

// A blocking one-shot client: connects, sends one request, reads the reply.
// A reply the server sent before it stopped reading (413, 503) is returned
// even when sending the rest of the request failed. Over TCP, a reply
// without musterd's good credential is kPermissionDenied, saying why.
//
// With `sink`, a 2xx reply's body is handed to it in pieces as they arrive
// (and the returned body is empty) instead of being gathered: a squeue of
// 100,000 jobs is 8 MB, and gathering it cost a page fault per 4 KiB of it
// (a third of that squeue's time) before its first byte could go on. Each
// call also sees the reply's head (status, warnings; no body). Other
// replies (errors, in JSON) are gathered as without it, and so is every
// reply over TCP, which is handed on only once its credential is checked.
using BodySink = std::function<void(const HttpResponse& head, std::string_view piece)>;
util::Result<HttpResponse> HttpCall(const Endpoint& endpoint, const std::string& method,
                                    const std::string& target, const std::string& body,
                                    const BodySink& sink = nullptr);
// The same, to a unix socket.
util::Result<HttpResponse> HttpCall(const std::string& socket_path, const std::string& method,
                                    const std::string& target, const std::string& body,
                                    const BodySink& sink = nullptr);

}  // namespace muster::api

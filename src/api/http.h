// HTTP/1.1 over a unix socket, the transport of Muster's API. The server
// runs on the caller's io_context (one thread: all handlers run on the
// controller's event loop) and learns each peer's uid/gid from the kernel
// (SO_PEERCRED), which is the local authentication. Requests are bounded
// (kMaxBodyBytes) and malformed ones are answered with 400, never a crash.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "util/status.h"

namespace muster::api {

inline constexpr size_t kMaxBodyBytes = 64 << 20;

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
};

// Handlers answer through `respond`, at once or later (musterd answers a
// state change only once it is on disk). `respond` must be called exactly
// once, on the server's io_context.
using Respond = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(const HttpRequest&, Respond respond)>;

// Listens on `socket_path` (removing a stale socket file first, mode 0666 so
// every local user can reach it) and serves `handler` on `io`.
class HttpServer {
 public:
  static util::Result<std::unique_ptr<HttpServer>> Listen(boost::asio::io_context& io,
                                                          const std::string& socket_path,
                                                          HttpHandler handler);
  virtual ~HttpServer() = default;
  virtual void Close() = 0;
};

// A blocking one-shot client: connects, sends one request, reads the reply.
util::Result<HttpResponse> HttpCall(const std::string& socket_path, const std::string& method,
                                    const std::string& target, const std::string& body);

}  // namespace muster::api

// The API's HTTP framing: the input is what a client writes on the socket,
// all of it, then it stops writing. The server (small limits, so 413 and
// 431 are near) answers or closes; it never crashes and never hangs.
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "api/http.h"
#include "fuzz_support.h"

namespace {

struct Server {
  Server() : path(muster::fuzz::ScratchDir() + "/http.sock") {
    muster::api::HttpServerOptions options;
    options.limits.max_header_size = 2048;
    options.limits.max_body_size = 16384;
    options.limits.max_connections = 8;
    options.limits.max_connections_per_user = 4;
    auto s = muster::api::HttpServer::Listen(
        io, path,
        [](const muster::api::HttpRequest& r, muster::api::Respond respond) {
          muster::api::HttpResponse reply;
          reply.body = "{\"target\":" + std::to_string(r.target.size()) +
                       ",\"body\":" + std::to_string(r.body.size()) + "}";
          respond(reply);
        },
        options);
    if (!s.ok()) __builtin_trap();
    server = std::move(*s);
  }
  boost::asio::io_context io;
  std::string path;
  std::unique_ptr<muster::api::HttpServer> server;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server server;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, server.path.c_str(), sizeof(addr.sun_path) - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    __builtin_trap();
  }
  size_t sent = 0;
  bool write_open = true;
  bool peer_closed = false;
  char buf[65536];
  // Each round: write what the socket takes, let the server run, read what
  // it answered. A server that neither reads nor answers for many rounds
  // in a row has hung.
  for (int idle = 0; idle < 200 && !peer_closed;) {
    bool progress = false;
    if (write_open && sent < size) {
      ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        progress = true;
      } else if (n < 0 && errno != EAGAIN) {
        write_open = false;  // the server closed its side (413, 431)
      }
    }
    if (write_open && sent == size) {
      ::shutdown(fd, SHUT_WR);
      write_open = false;
      progress = true;
    }
    if (server.io.poll() > 0) progress = true;
    server.io.restart();
    for (;;) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n > 0) {
        progress = true;
        continue;
      }
      if (n == 0 || (n < 0 && errno != EAGAIN)) peer_closed = true;
      break;
    }
    idle = progress ? 0 : idle + 1;
    if (!progress) ::usleep(100);
  }
  if (!peer_closed) __builtin_trap();  // all of the request was sent and the server kept the socket
  ::close(fd);
  // Let the server see the close before the next connection counts.
  for (int i = 0; i < 4; ++i) {
    server.io.poll();
    server.io.restart();
  }
  return 0;
}

#include "api/kiosk.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "util/send_all.h"

namespace muster::api {
namespace {

// One exchange with the kiosk: sends `parts` in order, returns its reply
// line ("OK ..."; "ERROR why" as kPermissionDenied).
util::Result<std::string> Ask(const std::string& socket_path,
                              std::initializer_list<std::string_view> parts) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return util::Unavailable("credential service socket path too long: " + socket_path);
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return util::Unavailable(fmt::format(
        "Unable to contact slurm controller (no credential service on this host: {}: {}; is "
        "muster-agent running here?)",
        socket_path, std::strerror(err)));
  }
  bool sent = true;
  for (std::string_view part : parts) sent = sent && util::SendAll(fd, part);
  std::string reply;
  if (sent) {
    char buf[1024];
    while (reply.find('\n') == std::string::npos && reply.size() < 64 << 10) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  const size_t nl = reply.find('\n');
  if (nl == std::string::npos) {
    return util::Unavailable("the credential service at " + socket_path + " did not answer");
  }
  reply.resize(nl);
  if (reply.starts_with("ERROR ")) {
    return util::PermissionDenied("credential service: " + reply.substr(6));
  }
  return reply;
}

}  // namespace

util::Result<KioskGrant> KioskSign(const std::string& socket_path, const std::string& text) {
  util::Result<std::string> reply =
      Ask(socket_path, {fmt::format("SIGN {}\n", text.size()), text});
  if (!reply.ok()) return reply.status();
  KioskGrant grant;
  char address[64] = "";
  char credential[256] = "";
  if (std::sscanf(reply->c_str(), "OK %63s %d %255s", address, &grant.port, credential) != 3) {
    return util::Unavailable("the credential service at " + socket_path + " answered '" + *reply +
                             "'");
  }
  grant.address = address;
  grant.credential = credential;
  return grant;
}

util::Status KioskVerifyReply(const std::string& socket_path, const std::string& credential,
                              const std::string& text) {
  util::Result<std::string> reply =
      Ask(socket_path,
          {fmt::format("VERIFY {} {}\n", credential.size(), text.size()), credential, text});
  if (!reply.ok()) return reply.status();
  if (*reply != "OK") {
    return util::Unavailable("the credential service at " + socket_path + " answered '" + *reply +
                             "'");
  }
  return util::Status::Ok();
}

}  // namespace muster::api

#include "auth/kiosk_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "api/kiosk.h"
#include "util/log.h"

namespace muster::auth {

namespace asio = boost::asio;
using Unix = asio::local::stream_protocol;

// One request ("SIGN <length>\n" and the text, or "VERIFY <length>
// <length>\n", the credential and the text), then the reply and the close.
class KioskServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(KioskServer& server, Unix::socket socket)
      : server_(server), socket_(std::move(socket)), in_(64 << 10) {}

  void Start() {
    asio::async_read_until(socket_, in_, '\n',
                           [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                             if (!ec) self->OnHead(n);
                           });
  }

 private:
  void OnHead(size_t n) {
    std::string head(asio::buffers_begin(in_.data()), asio::buffers_begin(in_.data()) + n - 1);
    in_.consume(n);
    size_t length = 0;
    char extra = 0;
    if (std::sscanf(head.c_str(), "SIGN %zu%c", &length, &extra) == 1) {
      verify_ = false;
    } else if (std::sscanf(head.c_str(), "VERIFY %zu %zu%c", &credential_length_, &length,
                           &extra) == 2 &&
               credential_length_ <= kMaxCredential) {
      verify_ = true;
    } else {
      Reply("ERROR expected 'SIGN <length>' or 'VERIFY <length> <length>'");
      return;
    }
    if (length > api::kMaxKioskText) {
      Reply(fmt::format("ERROR a request of {} bytes is over {}", length, api::kMaxKioskText));
      return;
    }
    if (verify_) length += credential_length_;  // both bounded: no overflow
    text_.assign(asio::buffers_begin(in_.data()),
                 asio::buffers_begin(in_.data()) + std::min(length, in_.size()));
    in_.consume(in_.size());
    const size_t have = text_.size();
    text_.resize(length);
    asio::async_read(socket_, asio::buffer(text_.data() + have, length - have),
                     [self = shared_from_this()](boost::system::error_code ec, size_t) {
                       if (ec) return;
                       if (self->verify_) {
                         self->OnReply();
                       } else {
                         self->OnText();
                       }
                     });
  }

  // A reply of musterd's to check: text_ is its credential, then its text.
  void OnReply() {
    const std::string_view all = text_;
    util::Status verified = server_.auth_->VerifyApiReply(all.substr(0, credential_length_),
                                                          all.substr(credential_length_));
    if (!verified.ok()) {
      util::LogError("credentials: refused a reply of the controller: {}", verified.message());
      Reply("ERROR " + verified.message());
      return;
    }
    Reply("OK");
  }

  void OnText() {
    struct ucred cred {};
    socklen_t len = sizeof(cred);
    if (::getsockopt(socket_.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      Reply("ERROR cannot tell who is asking");
      return;
    }
    util::Result<std::string> address = server_.ControllerAddress();
    if (!address.ok()) {
      Reply("ERROR " + address.status().message());
      return;
    }
    util::Result<std::string> credential =
        server_.auth_->SignApiRequest({cred.uid, cred.gid}, text_);
    if (!credential.ok()) {
      Reply("ERROR " + credential.status().message());
      return;
    }
    Reply(fmt::format("OK {} {} {}", *address, server_.port_, *credential));
  }

  void Reply(std::string line) {
    reply_ = std::move(line) + "\n";
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this()](boost::system::error_code, size_t) {});
  }

  // Far more than a credential of either scheme takes.
  static constexpr size_t kMaxCredential = 4096;

  KioskServer& server_;
  Unix::socket socket_;
  asio::streambuf in_;
  bool verify_ = false;
  size_t credential_length_ = 0;
  std::string text_;
  std::string reply_;
};

util::Result<std::unique_ptr<KioskServer>> KioskServer::Listen(
    asio::io_context& io, const std::string& socket_path, std::shared_ptr<const ServiceAuth> auth,
    std::string controller_host, int port) {
  std::unique_ptr<KioskServer> server(
      new KioskServer(io, std::move(auth), std::move(controller_host), port));
  boost::system::error_code ec;
  // Another agent of this host serving it already keeps it; only a stale
  // socket is replaced.
  Unix::socket probe(io);
  probe.connect(Unix::endpoint(socket_path), ec);
  if (!ec) {
    return util::FailedPrecondition(
        fmt::format("credentials on {} are served by another agent already", socket_path));
  }
  ::unlink(socket_path.c_str());
  ec.clear();
  server->acceptor_.open(Unix(), ec);
  if (!ec) server->acceptor_.bind(Unix::endpoint(socket_path), ec);
  if (!ec) server->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return util::Unavailable(
        fmt::format("cannot serve credentials on {}: {}", socket_path, ec.message()));
  }
  ::chmod(socket_path.c_str(), 0666);
  struct stat st {};
  if (::stat(socket_path.c_str(), &st) == 0) server->inode_ = st.st_ino;
  server->path_ = socket_path;
  server->Accept();
  return server;
}

KioskServer::~KioskServer() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  // Only our own socket: a later agent may have replaced a stale one.
  struct stat st {};
  if (!path_.empty() && ::stat(path_.c_str(), &st) == 0 && st.st_ino == inode_) {
    ::unlink(path_.c_str());
  }
}

void KioskServer::Accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, Unix::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) std::make_shared<Session>(*this, std::move(socket))->Start();
    Accept();
  });
}

util::Result<std::string> KioskServer::ControllerAddress() {
  if (!resolved_.empty()) return resolved_;
  asio::ip::tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto results = resolver.resolve(controller_host_, std::to_string(port_), ec);
  if (ec || results.empty()) {
    return util::Unavailable(fmt::format("cannot resolve the controller {}: {}", controller_host_,
                                         ec ? ec.message() : "no address"));
  }
  resolved_ = results.begin()->endpoint().address().to_string();
  return resolved_;
}

}  // namespace muster::auth

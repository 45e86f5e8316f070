// A host's credential service (api/kiosk.h has the protocol): signs the API
// requests of local commands for the uid and gid the kernel names, so that
// commands on any host of an auth/slurm cluster reach musterd over TCP
// without reading the key. muster-agent runs it on every host it is
// started on, a login host included. Runs on the agent's io_context.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "auth/service.h"
#include "util/status.h"

namespace muster::auth {

class KioskServer {
 public:
  // Listens on `socket_path` (mode 0666: every local user may ask for a
  // credential of their own); FailedPrecondition when another agent of this
  // host serves it. Requests name musterd at `controller_host` (resolved
  // here) and `port`.
  static util::Result<std::unique_ptr<KioskServer>> Listen(boost::asio::io_context& io,
                                                           const std::string& socket_path,
                                                           std::shared_ptr<const ServiceAuth> auth,
                                                           std::string controller_host, int port);
  ~KioskServer();

 private:
  class Session;
  KioskServer(boost::asio::io_context& io, std::shared_ptr<const ServiceAuth> auth,
              std::string controller_host, int port)
      : io_(io),
        acceptor_(io),
        auth_(std::move(auth)),
        controller_host_(std::move(controller_host)),
        port_(port) {}
  void Accept();
  // The controller's numeric address; resolved once, again after a failure.
  util::Result<std::string> ControllerAddress();

  boost::asio::io_context& io_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::string path_;
  ino_t inode_ = 0;  // of the socket file bound at path_
  std::shared_ptr<const ServiceAuth> auth_;
  std::string controller_host_;
  int port_;
  std::string resolved_;
};

}  // namespace muster::auth

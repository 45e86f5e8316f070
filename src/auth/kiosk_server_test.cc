// A command's round trip over TCP, as on a login host: the host's kiosk
// signs the request, musterd's API server checks it and signs its reply,
// and the kiosk checks that before the command takes it. Real sockets, an
// io_context thread serving both sides.
#include "auth/kiosk_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <gtest/gtest.h>

#include "api/http.h"
#include "api/tcp_listener.h"
#include "auth/service.h"
#include "util/clock.h"

namespace muster::auth {
namespace {

std::string LongBody() {
  std::string body;
  for (int i = 0; body.size() < (1 << 20); ++i) body += std::to_string(i) + " a line\n";
  return body;
}

// A musterd whose replies are signed however the test says.
class ReplySigner final : public api::RequestAuth {
 public:
  ReplySigner(std::shared_ptr<api::RequestAuth> real,
              std::function<util::Result<std::string>(std::string_view)> sign)
      : real_(std::move(real)), sign_(std::move(sign)) {}
  util::Result<api::PeerCred> Verify(std::string_view credential, std::string_view text) override {
    return real_->Verify(credential, text);
  }
  util::Result<std::string> SignReply(std::string_view text) override { return sign_(text); }

 private:
  std::shared_ptr<api::RequestAuth> real_;
  std::function<util::Result<std::string>(std::string_view)> sign_;
};

class KioskRoundTripTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/muster-kiosk-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    cfg_.auth_type = config::AuthType::kSlurm;
    // The key's owner must be root or SlurmUser: make SlurmUser whoever
    // runs the test.
    if (const passwd* pw = ::getpwuid(::geteuid())) cfg_.slurm_user = pw->pw_name;
    auth_ = MakeAuth("key", "a key of at least sixteen bytes");
    endpoint_.kiosk_path = dir_ + "/kiosk.sock";
  }

  void TearDown() override {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
    listener_.reset();
    server_.reset();
    kiosk_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::shared_ptr<ServiceAuth> MakeAuth(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    {
      std::ofstream(path) << bytes;
    }
    std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
    auto auth = ServiceAuth::Create(cfg_, clock_, path);
    EXPECT_TRUE(auth.ok()) << auth.status().message();
    return auth.ok() ? std::shared_ptr<ServiceAuth>(std::move(*auth)) : nullptr;
  }

  // musterd's API on TCP, checking requests with `auth_` and signing its
  // replies with `remote_auth`; the kiosk of this "login host" uses
  // `auth_` too.
  void Start(std::shared_ptr<api::RequestAuth> remote_auth, config::ApiLimits limits = {}) {
    api::HttpServerOptions options;
    options.remote_auth = std::move(remote_auth);
    options.limits = limits;
    auto server = api::HttpServer::Listen(
        io_, dir_ + "/api.sock",
        [](const api::HttpRequest& req, api::Respond respond) {
          api::HttpResponse r;
          r.content_type = "text/plain";
          r.body = req.target == "/long" ? LongBody() : "uid " + std::to_string(req.peer.uid);
          r.warnings = {"squeue: error: a warning  "};
          respond(std::move(r));
        },
        options);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
    auto listener = api::TcpListener::Listen(
        io_, 0, [this](api::LineConn::Socket socket, std::string peer) {
          server_->ServeRemote(std::move(socket), peer);
        });
    ASSERT_TRUE(listener.ok()) << listener.status().message();
    listener_ = std::move(*listener);
    auto kiosk = KioskServer::Listen(io_, endpoint_.kiosk_path, auth_, "127.0.0.1",
                                     listener_->port());
    ASSERT_TRUE(kiosk.ok()) << kiosk.status().message();
    kiosk_ = std::move(*kiosk);
    thread_ = std::thread([this] { io_.run(); });
  }

  util::Result<api::HttpResponse> Get(const std::string& target,
                                      const api::BodySink& sink = nullptr) {
    return api::HttpCall(endpoint_, "GET", target, "", sink);
  }

  std::string dir_;
  config::Config cfg_;
  util::RealClock clock_;
  std::shared_ptr<ServiceAuth> auth_;
  api::Endpoint endpoint_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::unique_ptr<api::HttpServer> server_;
  std::unique_ptr<api::TcpListener> listener_;
  std::unique_ptr<KioskServer> kiosk_;
  std::thread thread_;
};

TEST_F(KioskRoundTripTest, SignedRepliesReachTheCommandWholeAndInPieces) {
  Start(auth_->ForApiRequests());
  auto reply = Get("/who");
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(reply->status, 200);
  // The uid is the credential's: the kiosk signed for whoever runs this.
  EXPECT_EQ(reply->body, "uid " + std::to_string(::geteuid()));
  EXPECT_EQ(reply->warnings, std::vector<std::string>{"squeue: error: a warning"});
  std::string pieces;
  reply = Get("/long", [&](const api::HttpResponse& head, std::string_view piece) {
    EXPECT_EQ(head.status, 200);
    pieces += piece;
  });
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(pieces, LongBody());
  EXPECT_EQ(reply->body, "");
}

TEST_F(KioskRoundTripTest, RefusalsBeforeTheRequestIsReadAreSignedToo) {
  config::ApiLimits limits;
  limits.max_connections_per_user = 0;
  Start(auth_->ForApiRequests(), limits);
  auto reply = Get("/who");
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(reply->status, 503);
  EXPECT_EQ(reply->retry_after_s, 1);
  EXPECT_NE(reply->body.find("max_connections_per_user"), std::string::npos) << reply->body;
}

TEST_F(KioskRoundTripTest, UnsignedRepliesAreRefused) {
  Start(std::make_shared<ReplySigner>(auth_->ForApiRequests(), [](std::string_view) {
    return util::Unavailable("munged is away");
  }));
  auto reply = Get("/who");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), util::Code::kPermissionDenied);
  EXPECT_NE(reply.status().message().find("the controller's reply carries no credential"),
            std::string::npos)
      << reply.status().message();
}

TEST_F(KioskRoundTripTest, RepliesSignedWithAnotherKeyAreRefused) {
  std::shared_ptr<ServiceAuth> other = MakeAuth("other", "another key, sixteen bytes or more");
  auto other_api = other->ForApiRequests();
  Start(std::make_shared<ReplySigner>(auth_->ForApiRequests(), [other_api](std::string_view text) {
    return other_api->SignReply(text);
  }));
  auto reply = Get("/who");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), util::Code::kPermissionDenied);
  EXPECT_NE(reply.status().message().find("Protocol authentication error: the controller's reply "
                                          "was refused: credential service: bad signature"),
            std::string::npos)
      << reply.status().message();
}

TEST_F(KioskRoundTripTest, AReplyToAnotherRequestIsRefused) {
  // An impostor that saw musterd's first reply hands it out again (its
  // credential, over an altered body as well as a different request).
  auto real = auth_->ForApiRequests();
  auto first = std::make_shared<std::string>();
  Start(std::make_shared<ReplySigner>(real, [real, first](std::string_view text) {
    if (first->empty()) *first = real->SignReply(text).value();
    return util::Result<std::string>(*first);
  }));
  ASSERT_TRUE(Get("/who").ok());
  auto reply = Get("/who");
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("bad signature"), std::string::npos)
      << reply.status().message();
}

}  // namespace
}  // namespace muster::auth

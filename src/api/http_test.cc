// The API server's bounds, over a real unix socket: an io_context thread
// serves while the test talks raw HTTP to it.
#include "api/http.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace muster::api {
namespace {

// 3 MB of numbered lines: longer than any socket buffer or client piece.
std::string LongText() {
  std::string text;
  for (int i = 0; text.size() < (3 << 20); ++i) text += std::to_string(i) + " a line of text\n";
  return text;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(config::ApiLimits limits, std::function<bool(uid_t)> exempt = nullptr) {
    char tmpl[] = "/tmp/muster-http-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/api.sock";
    HttpServerOptions options;
    options.limits = limits;
    options.exempt = std::move(exempt);
    auto server = HttpServer::Listen(
        io_, path_,
        [this](const HttpRequest& req, Respond respond) {
          ++handled_;
          HttpResponse r;
          r.body = nlohmann::json{{"bytes", req.body.size()}}.dump();
          if (req.target == "/text") {
            // A long text reply with warnings, as a view's.
            r.content_type = "text/plain";
            r.body = LongText();
            r.warnings = {"squeue: error: Invalid user: a\r\nX-Evil: 1", ""};
          } else if (req.target == "/missing") {
            r.status = 404;
          }
          respond(std::move(r));
        },
        options);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      boost::asio::post(io_, [this] { server_->Close(); });
      work_.reset();
      io_.stop();
      thread_.join();
    }
    std::filesystem::remove_all(dir_);
  }

  int Connect() const {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }

  // Sends what it can of `data` (the server may stop reading), then reads
  // the reply until the server closes.
  static std::string Exchange(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    return ReadAll(fd);
  }

  static std::string ReadAll(int fd) {
    std::string out;
    char buf[65536];
    for (;;) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return out;
  }

  static int Status(const std::string& reply) {
    return reply.size() > 12 ? std::atoi(reply.c_str() + 9) : 0;
  }

  static nlohmann::json Body(const std::string& reply) {
    auto at = reply.find("\r\n\r\n");
    return at == std::string::npos ? nlohmann::json()
                                   : nlohmann::json::parse(reply.substr(at + 4), nullptr, false);
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  std::string dir_, path_;
  std::atomic<int> handled_{0};
};

config::ApiLimits Small() {
  config::ApiLimits l;
  l.max_body_size = 1000;
  l.max_header_size = 1024;
  l.max_connections = 100;
  l.max_connections_per_user = 4;
  return l;
}

std::string Post(size_t body_bytes, const std::string& extra_headers = {}) {
  return "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body_bytes) +
         "\r\n" + extra_headers + "\r\n";
}

TEST_F(HttpServerTest, BodyWithinTheLimitIsServed) {
  Start(Small());
  std::string reply =
      Exchange(Connect(), Post(1000, "Connection: close\r\n") + std::string(1000, 'x'));
  EXPECT_EQ(Status(reply), 200) << reply;
  EXPECT_EQ(Body(reply)["bytes"], 1000);
}

TEST_F(HttpServerTest, OversizedBodyIsRefusedFromContentLengthWithoutReadingIt) {
  Start(Small());
  // Only the header is sent: the answer must not wait for the body.
  int fd = Connect();
  std::string head = Post(50 << 20);
  ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  std::string reply = ReadAll(fd);
  EXPECT_EQ(Status(reply), 413) << reply;
  nlohmann::json body = Body(reply);
  EXPECT_EQ(body["limit"], 1000);
  EXPECT_EQ(body["key"], "MusterApiParameters=max_body_size");
  EXPECT_NE(body["error"].get<std::string>().find("of 52428800 bytes"), std::string::npos) << body;
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpServerTest, ChunkedBodyIsRefusedOnceItGrowsPastTheLimit) {
  Start(Small());
  std::string req = "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 20; ++i) req += "100\r\n" + std::string(256, 'y') + "\r\n";
  std::string reply = Exchange(Connect(), req);
  EXPECT_EQ(Status(reply), 413) << reply;
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpServerTest, OversizedHeadersGet431) {
  Start(Small());
  std::string req = "GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'h') +
                    "\r\n\r\n";
  std::string reply = Exchange(Connect(), req);
  EXPECT_EQ(Status(reply), 431) << reply;
  EXPECT_EQ(Body(reply)["key"], "MusterApiParameters=max_header_size");
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpServerTest, ExpectContinueIsAnsweredBeforeTheBody) {
  Start(Small());
  int fd = Connect();
  std::string head = Post(10, "Expect: 100-continue\r\nConnection: close\r\n");
  ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  char buf[64];
  ssize_t n = recv(fd, buf, sizeof(buf), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  std::string reply = Exchange(fd, std::string(10, 'z'));
  EXPECT_EQ(Status(reply), 200) << reply;
}

TEST_F(HttpServerTest, OneUidIsCappedAndOperatorsAreNot) {
  std::atomic<bool> exempt{false};
  Start(Small(), [&exempt](uid_t) { return exempt.load(); });
  // Four idle connections of this uid fill its share...
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(Connect());
  // ...so the fifth is told at once, without reading its request.
  int fd = Connect();
  std::string reply = ReadAll(fd);
  EXPECT_EQ(Status(reply), 503) << reply;
  EXPECT_NE(reply.find("Retry-After: 1"), std::string::npos) << reply;
  nlohmann::json body = Body(reply);
  EXPECT_EQ(body["key"], "MusterApiParameters=max_connections_per_user");
  EXPECT_EQ(body["limit"], 4);
  // The same uid as an operator gets in.
  exempt = true;
  reply = Exchange(Connect(), Post(0, "Connection: close\r\n"));
  EXPECT_EQ(Status(reply), 200) << reply;
  exempt = false;
  // Once one closes, a user connection is served again.
  close(held.back());
  held.pop_back();
  for (int tries = 0; tries < 100; ++tries) {
    reply = Exchange(Connect(), Post(0, "Connection: close\r\n"));
    if (Status(reply) == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Status(reply), 200) << reply;
  for (int h : held) close(h);
}

TEST_F(HttpServerTest, ClientReadsTheRefusalEvenWhenItCouldNotSendEverything) {
  Start(Small());
  auto r = HttpCall(path_, "POST", "/v1/jobs", std::string(8 << 20, 'b'));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("max_body_size"), std::string::npos) << r->body;
}

TEST_F(HttpServerTest, SinkGetsA2xxBodyInOrderWithTheWarnings) {
  Start(config::ApiLimits{});
  std::string streamed;
  int pieces = 0;
  std::vector<std::string> warnings;
  auto r = HttpCall(path_, "GET", "/text", "", [&](const HttpResponse& head, std::string_view p) {
    if (pieces++ == 0) warnings = head.warnings;
    EXPECT_EQ(head.status, 200);
    streamed.append(p);
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body.empty());  // it went to the sink
  EXPECT_EQ(streamed, LongText());
  EXPECT_GT(pieces, 1);
  // In order; control bytes of a warning cannot start a header of their own.
  EXPECT_EQ(warnings, (std::vector<std::string>{"squeue: error: Invalid user: a??X-Evil: 1", ""}));
  EXPECT_EQ(r->warnings, warnings);
}

TEST_F(HttpServerTest, WithoutASinkOrForAnErrorTheBodyIsGathered) {
  Start(config::ApiLimits{});
  auto whole = HttpCall(path_, "GET", "/text", "");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->body, LongText());
  EXPECT_EQ(whole->warnings.size(), 2u);
  bool called = false;
  auto missing = HttpCall(path_, "GET", "/missing", "",
                          [&](const HttpResponse&, std::string_view) { called = true; });
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_FALSE(called);
  EXPECT_NE(missing->body.find("bytes"), std::string::npos) << missing->body;
}

}  // namespace
}  // namespace muster::api

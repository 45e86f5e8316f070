#include "cli/step_attach.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/send_all.h"
#include "util/tcp.h"

namespace muster::cli {
namespace {

TEST(AttachFrameTest, EveryKindGoesThereAndBack) {
  const std::vector<AttachFrame> frames = {
      {'O', 3, 0, 0, "out\nline"}, {'E', 0, 0, 0, "err"}, {'I', -1, 0, 0, "in"},
      {'I', 2, 0, 0, ""},          {'X', 1, 4, 0, ""},    {'X', 0, 0, 9, ""},
      {'D', 0, 0, 0, ""}};
  std::string wire;
  for (const AttachFrame& f : frames) wire += EncodeAttachFrame(f);
  for (const AttachFrame& want : frames) {
    AttachFrame got;
    ASSERT_EQ(TakeAttachFrame(wire, &got), 1);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.rank, want.kind == 'D' ? 0 : want.rank);
    EXPECT_EQ(got.exit_code, want.exit_code);
    EXPECT_EQ(got.signal, want.signal);
    EXPECT_EQ(got.data, want.data);
  }
  EXPECT_TRUE(wire.empty());
}

TEST(AttachFrameTest, WaitsForTheRestAndRefusesGarbage) {
  AttachFrame f;
  std::string part = "O 1 10\nabc";
  EXPECT_EQ(TakeAttachFrame(part, &f), 0);
  EXPECT_EQ(part, "O 1 10\nabc");  // nothing taken
  std::string bad = "Q what\n";
  EXPECT_EQ(TakeAttachFrame(bad, &f), -1);
  std::string negative = "O 1 -4\n";
  EXPECT_EQ(TakeAttachFrame(negative, &f), -1);
  std::string endless(200, 'x');
  EXPECT_EQ(TakeAttachFrame(endless, &f), -1);
}

// Serves `hub` until `done` or about 5 s.
template <typename Done>
void ServeUntil(AttachHub& hub, const AttachHub::Input& input, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    std::vector<pollfd> fds;
    hub.AddPollFds(&fds);
    ::poll(fds.data(), fds.size(), 50);
    hub.Serve(fds, input);
  }
}

// What `fd` has within a moment, decoded.
std::vector<AttachFrame> ReadFrames(int fd, std::string& buffer) {
  std::vector<AttachFrame> out;
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 200) > 0) {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    buffer.append(buf, static_cast<size_t>(n));
  }
  AttachFrame f;
  while (TakeAttachFrame(buffer, &f) == 1) out.push_back(f);
  return out;
}

TEST(AttachHubTest, ReplaysFollowsTakesInputAndSaysWhenTheStepEnds) {
  AttachHub hub;
  ASSERT_NE(hub.port(), 0);
  hub.Output(0, true, "before\n");
  hub.TaskEnded(1, 3, 0);
  const int fd = util::ConnectTcp("127.0.0.1", hub.port(), 2000);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(util::SendAll(fd, "HELLO " + hub.token() + "\nI 5 1\nhelloI 0 -1\n"));
  std::vector<std::pair<int, std::string>> input;
  ServeUntil(hub, [&](int rank, std::string_view data) { input.emplace_back(rank, data); },
             [&] { return input.size() == 2; });
  EXPECT_EQ(input, (std::vector<std::pair<int, std::string>>{{1, "hello"}, {-1, ""}}));
  std::string buffer;
  std::vector<AttachFrame> got = ReadFrames(fd, buffer);
  ASSERT_EQ(got.size(), 2u);  // the output so far, then the ended task
  EXPECT_EQ(got[0].kind, 'O');
  EXPECT_EQ(got[0].data, "before\n");
  EXPECT_EQ(got[1].kind, 'X');
  EXPECT_EQ(got[1].exit_code, 3);
  hub.Output(1, false, "after");
  hub.Close();
  got = ReadFrames(fd, buffer);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, 'E');
  EXPECT_EQ(got[0].rank, 1);
  EXPECT_EQ(got[1].kind, 'D');
  ::close(fd);
}

TEST(AttachHubTest, AWrongTokenGetsNothing) {
  AttachHub hub;
  hub.Output(0, true, "secret\n");
  const int fd = util::ConnectTcp("127.0.0.1", hub.port(), 2000);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(util::SendAll(fd, "HELLO 0123\n"));
  bool dropped = false;
  ServeUntil(hub, [](int, std::string_view) {}, [&] {
    char c;
    dropped = ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
    return dropped;
  });
  EXPECT_TRUE(dropped);
  ::close(fd);
}

}  // namespace
}  // namespace muster::cli

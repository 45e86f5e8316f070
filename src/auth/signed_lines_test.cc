#include "auth/signed_lines.h"

#include <gtest/gtest.h>

#include "auth/shared_key.h"

namespace muster::auth {
namespace {

class SignedLinesTest : public ::testing::Test {
 protected:
  std::shared_ptr<const SharedKey> key_ = SharedKey::FromBytes("a key of at least sixteen bytes");
  util::FakeClock clock_{1'800'000'000};
  std::shared_ptr<Verifier> ctld_verifier_ = std::make_shared<Verifier>(key_, 300);

  SignedLines Agent(Identity who) {
    return SignedLines(key_, std::make_shared<Verifier>(key_, 300), who, kToController, kToAgent,
                       {0, 64030}, clock_);
  }
  SignedLines Controller() {
    return SignedLines(key_, ctld_verifier_, {0, 0}, kToAgent, kToController, {0, 64030}, clock_);
  }
};

TEST_F(SignedLinesTest, AgentLinesOpenAtTheController) {
  SignedLines agent = Agent({64030, 64030});
  SignedLines ctld = Controller();
  const std::string line = agent.Seal(R"({"type":"register"})").value();
  auto opened = ctld.Open(line);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(*opened, R"({"type":"register"})");
  // The same line again, on this or another connection of the controller.
  EXPECT_EQ(Controller().Open(line).status().message(), "replayed credential");
}

TEST_F(SignedLinesTest, RefusesReflectionUsersAndUnsignedLines) {
  SignedLines ctld = Controller();
  // The controller's own line sent back to it.
  EXPECT_EQ(ctld.Open(ctld.Seal("{}").value()).status().message(),
            "bad signature (a different key, or an altered message)");
  // A user who holds the key still may not speak for an agent.
  EXPECT_EQ(ctld.Open(Agent({1000, 1000}).Seal("{}").value()).status().message(),
            "signed by uid 1000, who is neither root nor SlurmUser");
  EXPECT_EQ(ctld.Open(R"({"type":"register"})").status().message(),
            "an unsigned message (is AuthType the same on both hosts?)");
  // Time moves on past the credential's life.
  const std::string line = Agent({0, 0}).Seal("{}").value();
  clock_.Advance(301);
  EXPECT_EQ(ctld.Open(line).status().message().rfind("expired credential", 0), 0u);
}

}  // namespace
}  // namespace muster::auth

#include "api/conn_limiter.h"

#include <vector>

#include <gtest/gtest.h>

namespace muster::api {
namespace {

using Slot = ConnectionLimiter::Slot;

TEST(ConnectionLimiter, CapsOneUserAndLeavesOthersAlone) {
  auto lim = ConnectionLimiter::Create(100, 2, nullptr);
  Slot a, b, c, other;
  EXPECT_TRUE(lim->Admit(1001, &a).ok());
  EXPECT_TRUE(lim->Admit(1001, &b).ok());
  util::Status refused = lim->Admit(1001, &c);
  EXPECT_EQ(refused.code(), util::Code::kUnavailable);
  EXPECT_NE(refused.message().find("max_connections_per_user=2"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("uid 1001"), std::string::npos);
  EXPECT_TRUE(lim->Admit(1002, &other).ok());
  EXPECT_EQ(lim->open_of(1001), 2);
  EXPECT_EQ(lim->open_total(), 3);
}

TEST(ConnectionLimiter, ReleasingASlotAdmitsAgain) {
  auto lim = ConnectionLimiter::Create(100, 1, nullptr);
  {
    Slot a;
    ASSERT_TRUE(lim->Admit(7, &a).ok());
    Slot b;
    EXPECT_FALSE(lim->Admit(7, &b).ok());
  }
  EXPECT_EQ(lim->open_of(7), 0);
  EXPECT_EQ(lim->open_total(), 0);
  Slot c;
  EXPECT_TRUE(lim->Admit(7, &c).ok());
  // A slot moved from releases nothing; the one moved to releases once.
  Slot d = std::move(c);
  EXPECT_EQ(lim->open_of(7), 1);
  d = Slot();
  EXPECT_EQ(lim->open_of(7), 0);
}

TEST(ConnectionLimiter, TotalCapsUsersButNeverOperators) {
  auto lim = ConnectionLimiter::Create(3, 10, [](uid_t uid) { return uid == 0; });
  std::vector<Slot> slots(6);
  EXPECT_TRUE(lim->Admit(1001, &slots[0]).ok());
  EXPECT_TRUE(lim->Admit(1002, &slots[1]).ok());
  EXPECT_TRUE(lim->Admit(1003, &slots[2]).ok());
  util::Status refused = lim->Admit(1004, &slots[3]);
  EXPECT_EQ(refused.code(), util::Code::kUnavailable);
  EXPECT_NE(refused.message().find("max_connections=3"), std::string::npos) << refused.message();
  EXPECT_EQ(lim->open_of(1004), 0);
  // root gets in over the limit, and is counted.
  EXPECT_TRUE(lim->Admit(0, &slots[4]).ok());
  EXPECT_TRUE(lim->Admit(0, &slots[5]).ok());
  EXPECT_EQ(lim->open_total(), 5);
  EXPECT_EQ(lim->open_of(0), 2);
  slots[4] = Slot();
  EXPECT_EQ(lim->open_of(0), 1);
}

TEST(ConnectionLimiter, AsksWhoIsExemptOnlyAtALimit) {
  int asked = 0;
  auto lim = ConnectionLimiter::Create(100, 1, [&asked](uid_t) {
    ++asked;
    return true;
  });
  Slot a, b;
  EXPECT_TRUE(lim->Admit(0, &a).ok());
  EXPECT_EQ(asked, 0);
  EXPECT_TRUE(lim->Admit(0, &b).ok());
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(lim->open_of(0), 2);
}

TEST(ConnectionLimiter, SlotsMayOutliveTheirLimiterHandle) {
  Slot a;
  {
    auto lim = ConnectionLimiter::Create(1, 1, nullptr);
    ASSERT_TRUE(lim->Admit(5, &a).ok());
  }
  a = Slot();  // releases into the limiter the slot kept alive
}

}  // namespace
}  // namespace muster::api

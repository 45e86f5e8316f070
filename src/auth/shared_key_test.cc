#include "auth/shared_key.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

namespace muster::auth {
namespace {

constexpr int64_t kNow = 1'800'000'000;
constexpr int64_t kTtl = 300;

std::shared_ptr<const SharedKey> Key(const std::string& bytes = "0123456789abcdef0123") {
  return SharedKey::FromBytes(bytes);
}

TEST(SharedKeyTest, SignedMessageVerifiesOnceWithItsIdentity) {
  auto key = Key();
  Verifier verifier(key, kTtl);
  const std::string cred =
      key->Sign({1000, 100}, "to-ctld", "{\"type\":\"register\"}", kNow).value();
  auto who = verifier.Verify(cred, "to-ctld", "{\"type\":\"register\"}", kNow + 5);
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->uid, 1000u);
  EXPECT_EQ(who->gid, 100u);
  auto again = verifier.Verify(cred, "to-ctld", "{\"type\":\"register\"}", kNow + 6);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), "replayed credential");
}

TEST(SharedKeyTest, RefusesWhatDoesNotMatch) {
  auto key = Key();
  const std::string message = "{\"job_id\":7}";
  const std::string cred = key->Sign({0, 0}, "to-ctld", message, kNow).value();
  struct Case {
    std::string name;
    std::shared_ptr<const SharedKey> key;
    std::string credential, purpose, message;
    int64_t now;
    std::string error_start;
  };
  std::string altered_uid = cred;
  altered_uid.replace(altered_uid.find(":0:0:"), 5, ":1:0:");
  const Case cases[] = {
      {"other key", Key("another key of twenty"), cred, "to-ctld", message, kNow, "bad signature"},
      {"altered message", key, cred, "to-ctld", "{\"job_id\":8}", kNow, "bad signature"},
      {"reflected", key, cred, "to-agent", message, kNow, "bad signature"},
      {"altered uid", key, altered_uid, "to-ctld", message, kNow, "bad signature"},
      {"expired", key, cred, "to-ctld", message, kNow + kTtl + 1,
       "expired credential (signed 301 s ago"},
      {"from the future", key, cred, "to-ctld", message, kNow - kTtl - 1,
       "expired credential (signed 301 s in the future"},
      {"garbage", key, "hello", "to-ctld", message, kNow, "malformed credential"},
      {"empty", key, "", "to-ctld", message, kNow, "malformed credential"},
      {"short mac", key, cred.substr(0, cred.size() - 2), "to-ctld", message, kNow,
       "malformed credential"},
  };
  for (const Case& c : cases) {
    Verifier verifier(c.key, kTtl);
    auto who = verifier.Verify(c.credential, c.purpose, c.message, c.now);
    ASSERT_FALSE(who.ok()) << c.name;
    EXPECT_EQ(who.status().code(), util::Code::kPermissionDenied) << c.name;
    EXPECT_EQ(who.status().message().rfind(c.error_start, 0), 0u)
        << c.name << ": " << who.status().message();
  }
}

TEST(SharedKeyTest, ForgetsNoncesOnlyAfterTheyCouldNoLongerVerify) {
  auto key = Key();
  Verifier verifier(key, kTtl);
  const std::string cred = key->Sign({0, 0}, "p", "m", kNow).value();
  ASSERT_TRUE(verifier.Verify(cred, "p", "m", kNow - kTtl).ok());
  // Still inside its time to live at kNow + kTtl: still remembered.
  EXPECT_EQ(verifier.Verify(cred, "p", "m", kNow + kTtl).status().message(), "replayed credential");
  // Another credential's check long after forgets the first.
  const std::string later = key->Sign({0, 0}, "p", "m", kNow + 10 * kTtl).value();
  EXPECT_TRUE(verifier.Verify(later, "p", "m", kNow + 10 * kTtl).ok());
  EXPECT_FALSE(verifier.Verify(cred, "p", "m", kNow + 10 * kTtl).ok());
}

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("muster-key-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes, mode_t mode) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << bytes;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(KeyFileTest, LoadsAPrivateKeyAndRefusesOthers) {
  const std::string good = Write("good.key", "a secret of twenty bytes", 0600);
  auto key = SharedKey::Load(good, ::geteuid());
  ASSERT_TRUE(key.ok()) << key.status().message();
  Verifier verifier(*key, kTtl);
  EXPECT_TRUE(verifier.Verify((*key)->Sign({0, 0}, "p", "m", kNow).value(), "p", "m", kNow).ok());

  EXPECT_TRUE(SharedKey::Load(Write("ro.key", "a secret of twenty bytes", 0400), ::geteuid()).ok());
  struct Case {
    std::string path, error_part;
  };
  const Case cases[] = {
      {Write("open.key", "a secret of twenty bytes", 0644),
       "mode 0644 lets others read or write it"},
      {Write("group.key", "a secret of twenty bytes", 0640), "mode 0640"},
      {Write("short.key", "short", 0600), "5 bytes long; a key has at least 16"},
      {(dir_ / "missing.key").string(), "cannot read the auth/slurm key"},
      {dir_.string(), "not a regular file"},
  };
  std::vector<Case> all(std::begin(cases), std::end(cases));
  if (::geteuid() == 0) {
    const std::string theirs = Write("theirs.key", "a secret of twenty bytes", 0600);
    ASSERT_EQ(::chown(theirs.c_str(), 12345, 12345), 0);
    all.push_back({theirs, "owned by uid 12345, not by root or the service user (uid 0)"});
  }
  for (const Case& c : all) {
    auto refused = SharedKey::Load(c.path, ::geteuid());
    ASSERT_FALSE(refused.ok()) << c.path;
    EXPECT_NE(refused.status().message().find(c.error_part), std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find(c.path), std::string::npos)
        << refused.status().message();
  }
}

}  // namespace
}  // namespace muster::auth

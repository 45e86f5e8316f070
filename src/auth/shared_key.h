// The shared-key authentication of messages between hosts, for sites
// without munge (AuthType=auth/slurm, as Slurm 23.11 names it): every host
// of the cluster holds the same secret key file, readable only by the
// service user, and every message carries a credential signed with it.
//
// A credential is one line of text:
//   MUSTER1:<uid>:<gid>:<unix time>:<nonce, 32 hex>:<HMAC-SHA256, 64 hex>
// The HMAC covers the fields before it, a purpose (which direction of which
// protocol, so that a message cannot be reflected back to its sender as if
// the other side had said it) and the SHA-256 of the message itself, so a
// credential vouches for exactly one message. A verifier refuses a
// credential older or newer than its time to live (clock skew counts) and
// one whose nonce it has seen before (a replay): the same rules as munge's.
// Nonces are remembered for twice the time to live, in memory: a verifier
// that restarts may accept a replay of a message captured less than a
// time-to-live before, as munged after a restart does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include "auth/credentials.h"
#include "util/status.h"

namespace muster::auth {

class SharedKey final : public Signer {
 public:
  // Reads the key file at `path`. It must be a regular file of at least 16
  // bytes, owned by root or `service_uid`, and neither group- nor
  // world-accessible (mode 0400 or 0600), as Slurm requires of slurm.key.
  // Errors name the file and what is wrong with it.
  static util::Result<std::shared_ptr<const SharedKey>> Load(const std::string& path,
                                                             uid_t service_uid);
  // A key from its bytes, for tests.
  static std::shared_ptr<const SharedKey> FromBytes(std::string bytes);

  // A credential for one message from `who`, signed at `now` (unix
  // seconds); never fails.
  util::Result<std::string> Sign(const Identity& who, std::string_view purpose,
                                 std::string_view message, int64_t now) const override;

  // The MAC the credential's fields and message must carry (hex).
  std::string Mac(std::string_view fields, std::string_view purpose,
                  std::string_view message) const;

 private:
  explicit SharedKey(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string bytes_;
};

// Checks credentials against one key and remembers the nonces it accepted.
// Not thread-safe: owned by one event loop.
class Verifier final : public CredentialVerifier {
 public:
  Verifier(std::shared_ptr<const SharedKey> key, int64_t ttl_s)
      : key_(std::move(key)), ttl_s_(ttl_s) {}

  // Reasons: "bad signature", "expired credential (signed 400 s ago, time
  // to live 300 s)", "replayed credential", "malformed credential".
  util::Result<Identity> Verify(std::string_view credential, std::string_view purpose,
                                std::string_view message, int64_t now) override;

 private:
  void Forget(int64_t now);

  std::shared_ptr<const SharedKey> key_;
  int64_t ttl_s_;
  // Nonces accepted, and when each may be forgotten, in acceptance order
  // (lookups only).
  std::unordered_set<std::string> seen_;
  std::deque<std::pair<int64_t, std::string>> expiry_;
};

}  // namespace muster::auth

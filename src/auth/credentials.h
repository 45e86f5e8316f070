// The two halves of a credential scheme between hosts, whatever proves it:
// a key every host shares (auth/shared_key.h, AuthType=auth/slurm) or
// munged (auth/munge.h, AuthType=auth/munge). A credential vouches for one
// message, for one purpose (a direction of a protocol, or an API request),
// and names who sent it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace muster::auth {

// Who a verified credential says sent the message.
struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
};

class Signer {
 public:
  virtual ~Signer() = default;
  // A credential for one message of `who` for `purpose`, at `now` (unix
  // seconds); kUnavailable when the scheme's service cannot be reached.
  virtual util::Result<std::string> Sign(const Identity& who, std::string_view purpose,
                                         std::string_view message, int64_t now) const = 0;
};

class CredentialVerifier {
 public:
  virtual ~CredentialVerifier() = default;
  // The sender of `message`, when `credential` is a good, fresh, unseen
  // credential of it for `purpose`; else PermissionDenied saying why.
  virtual util::Result<Identity> Verify(std::string_view credential, std::string_view purpose,
                                        std::string_view message, int64_t now) = 0;
};

}  // namespace muster::auth

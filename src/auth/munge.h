// AuthType=auth/munge: credentials from munged (Debian's munge package),
// the way Slurm sites already authenticate. munged knows who asks (the
// kernel names the caller on its socket), signs with the key every host's
// munged shares, and refuses expired, rewound and replayed credentials on
// decoding. A credential's payload names the purpose, the SHA-256 of the
// message and the identity it speaks for:
//   "<purpose>\n<uid> <gid>\n<sha256 hex>"
// which is the encoder's own unless the encoder is a service user (root or
// SlurmUser): the credential service (auth/kiosk_server.h) signs local
// commands' requests on their behalf, as with the shared key.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "auth/credentials.h"

namespace muster::auth {

class MungeSigner final : public Signer {
 public:
  // `socket`: munged's socket (AuthInfo=socket=), empty for munge's default.
  explicit MungeSigner(std::string socket) : socket_(std::move(socket)) {}
  util::Result<std::string> Sign(const Identity& who, std::string_view purpose,
                                 std::string_view message, int64_t now) const override;

 private:
  std::string socket_;
};

class MungeVerifier final : public CredentialVerifier {
 public:
  MungeVerifier(std::string socket, std::vector<uid_t> service_uids)
      : socket_(std::move(socket)), service_uids_(std::move(service_uids)) {}
  util::Result<Identity> Verify(std::string_view credential, std::string_view purpose,
                                std::string_view message, int64_t now) override;

 private:
  std::string socket_;
  std::vector<uid_t> service_uids_;
};

// The payload a credential for `message` carries.
std::string MungePayload(const Identity& who, std::string_view purpose, std::string_view message);

}  // namespace muster::auth

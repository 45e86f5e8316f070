// What a daemon needs to speak to other hosts under the configured
// AuthType (auth/slurm: the shared key; auth/munge: munged): a signer, a
// verifier shared by all its connections (so a replay on another
// connection is caught too), and the LineAuth of each new connection.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "api/line_conn.h"
#include "auth/credentials.h"
#include "config/config.h"
#include "util/clock.h"
#include "util/status.h"

namespace muster::auth {

class ServiceAuth {
 public:
  // AuthType=auth/slurm: loads the key of `cfg` (its file checked as
  // SharedKey::Load says); auth/munge: talks to munged at AuthInfo=socket=
  // (munge's default without). FailedPrecondition on one host (AuthType
  // unset).
  // `key_path` replaces the key's place beside the configuration (a
  // configless agent's configuration is a cached copy).
  static util::Result<std::unique_ptr<ServiceAuth>> Create(const config::Config& cfg,
                                                           const util::Clock& clock,
                                                           const std::string& key_path = {});

  // The LineAuth of one connection: seals for `seal_purpose`, opens what
  // the other side sealed for `open_purpose` (kToController / kToAgent).
  std::shared_ptr<api::LineAuth> ForConnection(std::string_view seal_purpose,
                                               std::string_view open_purpose) const;

  // Checks the credentials of API requests from other hosts, and signs
  // the replies to them (musterd).
  std::shared_ptr<api::RequestAuth> ForApiRequests() const;
  // A credential for an API request of `who` (the kiosk, for a local
  // caller).
  util::Result<std::string> SignApiRequest(const Identity& who, std::string_view text) const;
  // Whether `credential` is musterd's (root's or SlurmUser's) for the API
  // reply whose ReplySigningText is `text` (the kiosk, for a local
  // command); PermissionDenied saying why not.
  util::Status VerifyApiReply(std::string_view credential, std::string_view text) const;

 private:
  ServiceAuth(std::shared_ptr<const Signer> signer, std::shared_ptr<CredentialVerifier> verifier,
              std::vector<uid_t> service_uids, const util::Clock& clock)
      : signer_(std::move(signer)),
        verifier_(std::move(verifier)),
        service_uids_(std::move(service_uids)),
        clock_(clock) {}

  std::shared_ptr<const Signer> signer_;
  std::shared_ptr<CredentialVerifier> verifier_;
  std::vector<uid_t> service_uids_;
  const util::Clock& clock_;
};

}  // namespace muster::auth

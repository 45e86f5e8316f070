// What a daemon needs to speak to other hosts under the configured
// AuthType: the key, a verifier shared by all its connections, and the
// LineAuth of each new connection.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "api/line_conn.h"
#include "auth/shared_key.h"
#include "config/config.h"
#include "util/clock.h"
#include "util/status.h"

namespace muster::auth {

class ServiceAuth {
 public:
  // Loads the key of `cfg` (AuthType=auth/slurm; its file checked as
  // SharedKey::Load says). FailedPrecondition for any other AuthType.
  static util::Result<std::unique_ptr<ServiceAuth>> Create(const config::Config& cfg,
                                                           const util::Clock& clock);

  // The LineAuth of one connection: seals for `seal_purpose`, opens what
  // the other side sealed for `open_purpose` (kToController / kToAgent).
  std::shared_ptr<api::LineAuth> ForConnection(std::string_view seal_purpose,
                                               std::string_view open_purpose) const;

  // Checks the credentials of API requests from other hosts (musterd).
  std::shared_ptr<api::RequestAuth> ForApiRequests() const;
  // A credential for an API request of `who` (the kiosk, for a local
  // caller).
  std::string SignApiRequest(const Identity& who, std::string_view text) const;

 private:
  ServiceAuth(std::shared_ptr<const SharedKey> key, int ttl_s, std::vector<uid_t> service_uids,
              const util::Clock& clock)
      : key_(std::move(key)),
        verifier_(std::make_shared<Verifier>(key_, ttl_s)),
        service_uids_(std::move(service_uids)),
        clock_(clock) {}

  std::shared_ptr<const SharedKey> key_;
  std::shared_ptr<Verifier> verifier_;
  std::vector<uid_t> service_uids_;
  const util::Clock& clock_;
};

}  // namespace muster::auth

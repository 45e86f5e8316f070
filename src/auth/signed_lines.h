// The LineAuth of the agent protocol between hosts: each line is
// "<credential> <message>", the credential (auth/credentials.h: the shared
// key's or munge's) of the message for this direction of the protocol. Only
// the service users (root and SlurmUser) may speak for an agent or the
// controller: a user who somehow signs a line is refused all the same.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/line_conn.h"
#include "auth/credentials.h"
#include "util/clock.h"

namespace muster::auth {

// The purposes of the two directions, so neither side's lines can be
// reflected back to it.
inline constexpr std::string_view kToController = "agent-to-controller";
inline constexpr std::string_view kToAgent = "controller-to-agent";
// The purposes of an API request's credential (any user's) and of
// musterd's reply to it.
inline constexpr std::string_view kApiRequest = "api-request";
inline constexpr std::string_view kApiReply = "api-reply";

class SignedLines final : public api::LineAuth {
 public:
  // Seals as `self` for `seal_purpose`; opens lines signed for
  // `open_purpose` by one of `service_uids`. `verifier` may be shared by
  // every connection of the process, so a line replayed on another
  // connection is refused too. `clock` must outlive this.
  SignedLines(std::shared_ptr<const Signer> signer, std::shared_ptr<CredentialVerifier> verifier,
              Identity self, std::string_view seal_purpose, std::string_view open_purpose,
              std::vector<uid_t> service_uids, const util::Clock& clock)
      : signer_(std::move(signer)),
        verifier_(std::move(verifier)),
        self_(self),
        seal_purpose_(seal_purpose),
        open_purpose_(open_purpose),
        service_uids_(std::move(service_uids)),
        clock_(clock) {}

  util::Result<std::string> Seal(std::string_view message) override;
  util::Result<std::string> Open(std::string_view line) override;

 private:
  std::shared_ptr<const Signer> signer_;
  std::shared_ptr<CredentialVerifier> verifier_;
  const Identity self_;
  const std::string seal_purpose_;
  const std::string open_purpose_;
  const std::vector<uid_t> service_uids_;
  const util::Clock& clock_;
};

}  // namespace muster::auth

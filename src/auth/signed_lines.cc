#include "auth/signed_lines.h"

#include <algorithm>

#include <fmt/format.h>

namespace muster::auth {

util::Result<std::string> SignedLines::Seal(std::string_view message) {
  util::Result<std::string> credential = signer_->Sign(self_, seal_purpose_, message, clock_.Now());
  if (!credential.ok()) return credential.status();
  std::string line = std::move(*credential);
  line += ' ';
  line += message;
  return line;
}

util::Result<std::string> SignedLines::Open(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) {
    return util::PermissionDenied("an unsigned message (is AuthType the same on both hosts?)");
  }
  const std::string_view message = line.substr(space + 1);
  util::Result<Identity> who =
      verifier_->Verify(line.substr(0, space), open_purpose_, message, clock_.Now());
  if (!who.ok()) return who.status();
  if (std::find(service_uids_.begin(), service_uids_.end(), who->uid) == service_uids_.end()) {
    return util::PermissionDenied(
        fmt::format("signed by uid {}, who is neither root nor SlurmUser", who->uid));
  }
  return std::string(message);
}

}  // namespace muster::auth

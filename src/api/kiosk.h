// The client side of a host's credential service (the kiosk, served by
// its muster-agent, as Slurm's sackd or munged): a command that is not on
// the controller's host cannot read the shared key, so it hands the text
// of its request to the kiosk over a local unix socket; the kiosk signs it
// for the uid and gid the kernel gives for the caller (SO_PEERCRED) and
// names the controller's address, resolved on the agent's side so the
// static commands need no resolver.
//
// It also checks musterd's credential on each reply (api/http.h), which a
// command cannot either without the key.
//
// Wire format, one exchange per connection:
//   request  "SIGN <length>\n" <length bytes of RequestSigningText>
//   reply    "OK <IPv4 or IPv6 address> <port> <credential>\n"
//         or "ERROR <why>\n"
//   request  "VERIFY <length> <length>\n" <the reply's credential>
//            <ReplySigningText>
//   reply    "OK\n" (signed by musterd: root or SlurmUser)
//         or "ERROR <why>\n"
#pragma once

#include <string>

#include "util/status.h"

namespace muster::api {

struct KioskGrant {
  std::string address;  // numeric
  int port = 0;
  std::string credential;
};

// The largest request text a kiosk signs: a batch script (4 MiB by
// default, at most what max_body_size allows) and its environment.
constexpr size_t kMaxKioskText = 256 << 20;

// Asks the kiosk at `socket_path` to sign `text`. kUnavailable when it
// cannot be reached, kPermissionDenied when it refuses.
util::Result<KioskGrant> KioskSign(const std::string& socket_path, const std::string& text);

// Asks the kiosk at `socket_path` whether `credential` is musterd's for the
// reply whose ReplySigningText is `text`: kPermissionDenied saying why
// not, kUnavailable when the kiosk cannot be reached.
util::Status KioskVerifyReply(const std::string& socket_path, const std::string& credential,
                              const std::string& text);

}  // namespace muster::api

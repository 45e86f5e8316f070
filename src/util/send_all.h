// Writing a whole message to a socket.
#pragma once

#include <string_view>

namespace muster::util {

// Sends all of `data` on socket `fd` (retrying short sends and EINTR,
// never raising SIGPIPE); false when the peer is gone or the send failed.
bool SendAll(int fd, std::string_view data);

}  // namespace muster::util

// Readiness for systemd's Type=notify services: "READY=1" on the datagram
// socket systemd names in $NOTIFY_SOCKET (the protocol of sd_notify(3),
// without linking libsystemd). Nothing happens outside systemd.
#pragma once

#include <string_view>

namespace muster::util {

// Sends `state` (e.g. "READY=1\nSTATUS=serving") to $NOTIFY_SOCKET; false
// when there is none or it could not be reached.
bool NotifySystemd(std::string_view state);

}  // namespace muster::util

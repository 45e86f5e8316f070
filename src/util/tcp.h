// Plain TCP between the commands of one step (srun, its launchers,
// sattach): a listener on every address of this host, a bounded connect
// to a numeric address, this host's own addresses and the random tokens
// that prove a caller was told where to connect. Numeric only: the static
// commands carry no resolver.
#pragma once

#include <string>
#include <vector>

namespace muster::util {

// A listening TCP socket (close-on-exec) on every IPv4 address of this
// host; its port in *port. -1 (errno set) when it cannot listen.
int ListenTcp(int* port);

// A socket connected to `address` (numeric IPv4 or IPv6) and `port`
// within `timeout_ms`, blocking again once connected; -1 when it is not.
int ConnectTcp(const std::string& address, int port, int timeout_ms);

// This host's IPv4 addresses on interfaces that are up, loopback last.
std::vector<std::string> LocalAddresses();

// 32 hex digits from the kernel's random source.
std::string RandomToken();

}  // namespace muster::util

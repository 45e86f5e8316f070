// This host's name.
#pragma once

#include <string>

namespace muster::util {

// The short host name ("node1" of "node1.example.org"); "localhost" when
// gethostname(2) fails.
std::string HostName();

}  // namespace muster::util

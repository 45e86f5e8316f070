#include "util/hostname.h"

#include <unistd.h>

namespace muster::util {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  std::string h = buf;
  auto dot = h.find('.');
  if (dot != std::string::npos) h.resize(dot);
  return h;
}

}  // namespace muster::util

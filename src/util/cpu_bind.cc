#include "util/cpu_bind.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace muster::util {

void BindTaskCpus(const CpuBind& bind, std::string_view node, int rank, int local_id) {
  if (!bind.cores && !bind.verbose) return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  cpu_set_t mine = allowed;
  if (bind.cores) {
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    }
    if (cpus.empty()) return;
    CPU_ZERO(&mine);
    const size_t per_task = static_cast<size_t>(std::max(bind.cpus_per_task, 1));
    for (size_t k = 0; k < per_task; ++k) {
      CPU_SET(cpus[(static_cast<size_t>(local_id) * per_task + k) % cpus.size()], &mine);
    }
    if (::sched_setaffinity(0, sizeof(mine), &mine) != 0) mine = allowed;
  }
  if (!bind.verbose) return;
  // The mask in hex, highest CPU first.
  std::string hex;
  for (int c = CPU_SETSIZE - 4; c >= 0; c -= 4) {
    const int nibble = (CPU_ISSET(c, &mine) ? 1 : 0) | (CPU_ISSET(c + 1, &mine) ? 2 : 0) |
                       (CPU_ISSET(c + 2, &mine) ? 4 : 0) | (CPU_ISSET(c + 3, &mine) ? 8 : 0);
    if (hex.empty() && nibble == 0) continue;
    hex += "0123456789abcdef"[nibble];
  }
  const std::string line = fmt::format("cpu-bind={} - {}, task {:2} {:2} [{}]: mask 0x{} set\n",
                                       bind.cores ? "MASK" : "NONE", node, rank, local_id,
                                       ::getpid(), hex.empty() ? "0" : hex);
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace muster::util

// Runs a program in the background and forgets it (musterd's notification
// commands): double-forked, so the caller never has a child to reap.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::util {

// Starts `argv` (argv[0] an absolute path) with `env` ("K=V") as its whole
// environment, stdin from /dev/null and stdout/stderr to the caller's
// stderr, and returns once it has started (or failed to).
Status SpawnDetached(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// Who the program runs as: its uid, gid and supplementary groups (which
// only root may take on; another caller may only name itself).
struct SpawnIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};
Status SpawnDetached(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     const std::optional<SpawnIdentity>& as);

}  // namespace muster::util

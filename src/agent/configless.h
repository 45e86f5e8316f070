// A configless agent (muster-agent --conf-server HOST[:PORT], Slurm's
// configless mode): only the controller keeps muster.conf; the agent asks
// musterd for it over the signed agent protocol and keeps the copy in a
// cache directory, where the commands of its host find it too
// (config::DefaultConfigPath).
#pragma once

#include <string>

#include "util/status.h"

namespace muster::agent {

struct ConfiglessOptions {
  std::string server;     // "ctl" or "ctl:6817"
  std::string key_file;   // the auth/slurm key; when it does not exist, munge is used
  std::string cache_dir;  // where the files are written
  std::string host;       // this host's name, for musterd's log
  // How long to keep trying, a second apart, while the server cannot be
  // connected to (it is starting, or restarting for a reconfigure); a
  // refusal or a bad answer ends the tries at once.
  int connect_wait_s = 60;
};

// Fetches the configuration into options.cache_dir and returns the path of
// its muster.conf; errors name the server and what went wrong (refused,
// configless not enabled there, unreachable).
util::Result<std::string> FetchConfiguration(const ConfiglessOptions& options);

}  // namespace muster::agent

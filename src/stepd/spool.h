// Files in a job's spool directory (spec.json, step.pid, result.json).
// muster-step writes them as root, so nothing here follows a symlink, and
// writes are atomic (tmp file, fsync, rename, fsync of the directory) so a
// reader, or an agent restarted after a crash, sees the old file or the
// new one, never a torn one. Free functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace muster::stepd {

// Replaces <dir_fd>/<name> with `content` via <name>.tmp.
util::Status WriteFileAtomic(int dir_fd, const std::string& name, std::string_view content);

// Reads all of <dir_fd>/<name> (at most 64 MiB).
util::Result<std::string> ReadFileAt(int dir_fd, const std::string& name);

}  // namespace muster::stepd

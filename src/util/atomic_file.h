// Replacing a file whole: written beside it, synced, renamed over it and
// the directory synced, so a crash leaves the old file or the new, never a
// mix.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace muster::util {

// Writes `text` to `path` + ".tmp" (mode 0600), fdatasyncs it, renames it to
// `path` and fsyncs the directory. Errors name the file and errno's text.
Status WriteFileAtomically(const std::string& path, std::string_view text);

}  // namespace muster::util

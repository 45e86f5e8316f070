// A daemon restarting in place (scontrol reconfigure): the same pid, so a
// pid file, systemd's main pid and the children stay as they are, running
// the program anew on the configuration file as it is now.
#pragma once

#include "util/status.h"

namespace muster::util {

// Marks every descriptor above stderr close-on-exec (listening sockets
// above all: the new image binds them again) and execs this program's file
// with `argv`. Returns only when the exec failed.
Status ReexecSelf(char** argv);

}  // namespace muster::util

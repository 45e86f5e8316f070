// Lookups in the system's user and group databases (getpwuid & co, through
// NSS), with Slurm's fallbacks: an unknown uid prints as its number. For the
// daemons; the CLI links none of it (see util/user_db.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/hostname.h"
#include "util/user_db.h"

namespace muster::util {

// The functions below as a UserDb, for the views.
const UserDb& SystemUserDb();

std::string UserName(uint32_t uid);   // "alice", or "1234" when unknown
std::string GroupName(uint32_t gid);  // "users", or "100" when unknown
std::optional<uint32_t> LookupUid(const std::string& name_or_uid);
std::optional<uint32_t> LookupGid(const std::string& name_or_gid);
// The user's groups (primary first, then supplementary) from the group database.
std::vector<uint32_t> UserGroups(uint32_t uid, uint32_t gid);
// The user's proper name (GECOS field up to the first comma), else the login.
std::string RealName(uint32_t uid);

}  // namespace muster::util

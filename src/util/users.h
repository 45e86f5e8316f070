// Lookups in the system's user and group databases (getpwuid & co), with
// Slurm's fallbacks: an unknown uid prints as its number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace muster::util {

std::string UserName(uint32_t uid);   // "alice", or "1234" when unknown
std::string GroupName(uint32_t gid);  // "users", or "100" when unknown
std::optional<uint32_t> LookupUid(const std::string& name_or_uid);
std::optional<uint32_t> LookupGid(const std::string& name_or_gid);
// The user's groups (primary first, then supplementary) from the group database.
std::vector<uint32_t> UserGroups(uint32_t uid, uint32_t gid);
std::string HostName();  // short host name
// The user's proper name (GECOS field up to the first comma), else the login.
std::string RealName(uint32_t uid);

}  // namespace muster::util

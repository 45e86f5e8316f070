// The system's user and group databases as an interface. The views of
// src/cli/render (linked into the CLI too, for their tables) reach the
// databases only through it, so the CLI, which never looks a user up
// itself, links no NSS code and can be a static binary (its start-up, paid
// by every sbatch, is a quarter shorter than a dynamic one's). musterd
// hands the views SystemUserDb() (util/users.h); tests may hand a fake.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace muster::util {

class UserDb {
 public:
  virtual ~UserDb() = default;
  // "alice", or "1234" when the uid is unknown.
  virtual std::string UserName(uint32_t uid) const = 0;
  // "users", or "100" when the gid is unknown.
  virtual std::string GroupName(uint32_t gid) const = 0;
  // A user's uid from its name, else the text as a number; nullopt when
  // it is neither.
  virtual std::optional<uint32_t> LookupUid(const std::string& name_or_uid) const = 0;
  // The same for groups.
  virtual std::optional<uint32_t> LookupGid(const std::string& name_or_gid) const = 0;
};

}  // namespace muster::util

#include "util/users.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace muster::util {

std::string UserName(uint32_t uid) {
  struct passwd pw {};
  struct passwd* res = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res) return res->pw_name;
  return std::to_string(uid);
}

std::string GroupName(uint32_t gid) {
  struct group gr {};
  struct group* res = nullptr;
  char buf[8192];
  if (getgrgid_r(gid, &gr, buf, sizeof(buf), &res) == 0 && res) return res->gr_name;
  return std::to_string(gid);
}

namespace {
std::optional<uint32_t> AsNumber(const std::string& s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  unsigned long v = std::strtoul(s.c_str(), nullptr, 10);
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(v);
}
}  // namespace

std::optional<uint32_t> LookupUid(const std::string& name_or_uid) {
  struct passwd pw {};
  struct passwd* res = nullptr;
  char buf[4096];
  if (getpwnam_r(name_or_uid.c_str(), &pw, buf, sizeof(buf), &res) == 0 && res) return res->pw_uid;
  return AsNumber(name_or_uid);
}

std::optional<uint32_t> LookupGid(const std::string& name_or_gid) {
  struct group gr {};
  struct group* res = nullptr;
  char buf[8192];
  if (getgrnam_r(name_or_gid.c_str(), &gr, buf, sizeof(buf), &res) == 0 && res) return res->gr_gid;
  return AsNumber(name_or_gid);
}

std::vector<uint32_t> UserGroups(uint32_t uid, uint32_t gid) {
  std::vector<uint32_t> out{gid};
  std::string name = UserName(uid);
  int n = 64;
  std::vector<gid_t> groups(n);
  if (getgrouplist(name.c_str(), gid, groups.data(), &n) < 0) {
    groups.resize(n);
    if (getgrouplist(name.c_str(), gid, groups.data(), &n) < 0) return out;
  }
  groups.resize(n);
  for (gid_t g : groups) {
    if (g != gid) out.push_back(g);
  }
  return out;
}

std::string RealName(uint32_t uid) {
  struct passwd pw {};
  struct passwd* res = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res) {
    std::string gecos = res->pw_gecos ? res->pw_gecos : "";
    gecos = gecos.substr(0, gecos.find(','));
    return gecos.empty() ? std::string(res->pw_name) : gecos;
  }
  return std::to_string(uid);
}

const UserDb& SystemUserDb() {
  class System final : public UserDb {
   public:
    std::string UserName(uint32_t uid) const override { return util::UserName(uid); }
    std::string GroupName(uint32_t gid) const override { return util::GroupName(gid); }
    std::optional<uint32_t> LookupUid(const std::string& name_or_uid) const override {
      return util::LookupUid(name_or_uid);
    }
    std::optional<uint32_t> LookupGid(const std::string& name_or_gid) const override {
      return util::LookupGid(name_or_gid);
    }
  };
  static const System kSystem;
  return kSystem;
}

}  // namespace muster::util

#include "api/conn_limiter.h"

#include <string>

#include <fmt/format.h>

#include "util/log.h"

namespace muster::api {

ConnectionLimiter::Slot::Slot(std::shared_ptr<ConnectionLimiter> owner, uid_t uid)
    : owner_(std::move(owner)), uid_(uid) {}

ConnectionLimiter::Slot::Slot(Slot&& other) noexcept
    : owner_(std::move(other.owner_)), uid_(other.uid_) {
  other.owner_.reset();
}

ConnectionLimiter::Slot& ConnectionLimiter::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::move(other.owner_);
    uid_ = other.uid_;
    other.owner_.reset();
  }
  return *this;
}

ConnectionLimiter::Slot::~Slot() { Release(); }

void ConnectionLimiter::Slot::Release() {
  if (owner_) owner_->Release(uid_);
  owner_.reset();
}

std::shared_ptr<ConnectionLimiter> ConnectionLimiter::Create(int max_total, int max_per_user,
                                                             std::function<bool(uid_t)> exempt) {
  return std::shared_ptr<ConnectionLimiter>(
      new ConnectionLimiter(max_total, max_per_user, std::move(exempt)));
}

util::Status ConnectionLimiter::Admit(uid_t uid, Slot* slot, std::string_view holder) {
  int& mine = per_user_[uid];
  const bool at_limit = mine >= max_per_user_ || total_ >= max_total_;
  if (at_limit && exempt_ && exempt_(uid)) {
    ++mine;
    ++total_;
    *slot = Slot(shared_from_this(), uid);
    return util::Status::Ok();
  }
  if (mine >= max_per_user_) {
    const std::string who = holder.empty() ? fmt::format("uid {}", uid) : std::string(holder);
    if (warned_.insert(uid).second) {
      util::LogWarn("API: {} holds {} connections (max_connections_per_user); refusing more",
                    who, mine);
    }
    return util::Unavailable(fmt::format(
        "too many connections: {} already has {} open, the most one user may have "
        "(MusterApiParameters max_connections_per_user={})",
        who, mine, max_per_user_));
  }
  if (total_ >= max_total_) {
    if (mine == 0) per_user_.erase(uid);
    if (!warned_total_) {
      warned_total_ = true;
      util::LogWarn("API: {} connections open (max_connections); refusing more", total_);
    }
    return util::Unavailable(fmt::format(
        "too many connections: {} are open, the most musterd serves "
        "(MusterApiParameters max_connections={})",
        total_, max_total_));
  }
  ++mine;
  ++total_;
  *slot = Slot(shared_from_this(), uid);
  return util::Status::Ok();
}

int ConnectionLimiter::open_of(uid_t uid) const {
  auto it = per_user_.find(uid);
  return it == per_user_.end() ? 0 : it->second;
}

void ConnectionLimiter::Release(uid_t uid) {
  auto it = per_user_.find(uid);
  if (it == per_user_.end()) return;
  --total_;
  if (--it->second < max_per_user_) warned_.erase(uid);
  if (it->second == 0) per_user_.erase(it);
  if (total_ < max_total_) warned_total_ = false;
}

}  // namespace muster::api

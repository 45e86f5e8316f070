// ConnectionLimiter: the API's open connections, counted per uid and in
// all, and whether one more may open (MusterApiParameters
// max_connections_per_user and max_connections). Every connection counts;
// operators are never refused, so root can still connect and act while a
// user floods (`exempt` is asked only at a limit, since it may look the
// user up). Owned through shared_ptr by the server and every connection's
// Slot; not thread-safe (the server's io_context thread only).
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "util/status.h"

namespace muster::api {

class ConnectionLimiter : public std::enable_shared_from_this<ConnectionLimiter> {
 public:
  // Holds one admitted connection; releases it when destroyed. Move-only.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept;
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class ConnectionLimiter;
    Slot(std::shared_ptr<ConnectionLimiter> owner, uid_t uid);
    void Release();
    std::shared_ptr<ConnectionLimiter> owner_;  // null: empty
    uid_t uid_ = 0;
  };

  // `exempt` says whether a uid is an operator (may be empty: nobody is).
  static std::shared_ptr<ConnectionLimiter> Create(int max_total, int max_per_user,
                                                   std::function<bool(uid_t)> exempt);

  // Admits one more connection of `uid` into *slot, or returns
  // kUnavailable with a message naming the limit and the key that sets it.
  // `holder` names whose connections `uid` counts in messages ("uid
  // 1000" when empty; another host's address when its key stands for it).
  util::Status Admit(uid_t uid, Slot* slot, std::string_view holder = {});

  int open_total() const { return total_; }
  int open_of(uid_t uid) const;

 private:
  ConnectionLimiter(int max_total, int max_per_user, std::function<bool(uid_t)> exempt)
      : max_total_(max_total), max_per_user_(max_per_user), exempt_(std::move(exempt)) {}
  void Release(uid_t uid);

  const int max_total_;
  const int max_per_user_;
  const std::function<bool(uid_t)> exempt_;
  int total_ = 0;
  std::unordered_map<uid_t, int> per_user_;  // lookups only
  // Uids refused since their count last fell below the limit, so a flood
  // logs one line, not one per connection.
  std::set<uid_t> warned_;
  bool warned_total_ = false;
};

}  // namespace muster::api

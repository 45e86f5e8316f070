#include "auth/munge.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <munge.h>
#include <openssl/sha.h>

namespace muster::auth {
namespace {

struct CtxDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Ctx = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, CtxDeleter>;

Ctx MakeCtx(const std::string& socket) {
  Ctx ctx(munge_ctx_create());
  if (ctx != nullptr && !socket.empty()) munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str());
  return ctx;
}

std::string Sha256Hex(std::string_view message) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data());
  std::string hex;
  hex.reserve(2 * digest.size());
  for (unsigned char b : digest) hex += fmt::format("{:02x}", b);
  return hex;
}

}  // namespace

std::string MungePayload(const Identity& who, std::string_view purpose, std::string_view message) {
  return fmt::format("{}\n{} {}\n{}", purpose, who.uid, who.gid, Sha256Hex(message));
}

util::Result<std::string> MungeSigner::Sign(const Identity& who, std::string_view purpose,
                                            std::string_view message, int64_t) const {
  Ctx ctx = MakeCtx(socket_);
  if (ctx == nullptr) return util::Unavailable("munge: cannot create a context");
  const std::string payload = MungePayload(who, purpose, message);
  char* cred = nullptr;
  munge_err_t err =
      munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
  if (err != EMUNGE_SUCCESS) {
    return util::Unavailable(fmt::format("munge_encode: {} (is munged running{}?)",
                                         munge_ctx_strerror(ctx.get()),
                                         socket_.empty() ? "" : " on " + socket_));
  }
  std::string out = cred;
  std::free(cred);
  return out;
}

util::Result<Identity> MungeVerifier::Verify(std::string_view credential, std::string_view purpose,
                                             std::string_view message, int64_t) {
  Ctx ctx = MakeCtx(socket_);
  if (ctx == nullptr) return util::Unavailable("munge: cannot create a context");
  const std::string cred(credential);
  void* buf = nullptr;
  int len = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t err = munge_decode(cred.c_str(), ctx.get(), &buf, &len, &uid, &gid);
  std::string payload =
      buf != nullptr ? std::string(static_cast<char*>(buf), static_cast<size_t>(len)) : "";
  std::free(buf);
  if (err != EMUNGE_SUCCESS) {
    return util::PermissionDenied(fmt::format("munge: {}", munge_strerror(err)));
  }
  // "<purpose>\n<uid> <gid>\n<digest>"
  const size_t first = payload.find('\n');
  const size_t second = first == std::string::npos ? first : payload.find('\n', first + 1);
  Identity claimed;
  if (second == std::string::npos ||
      std::sscanf(payload.substr(first + 1, second - first - 1).c_str(), "%u %u", &claimed.uid,
                  &claimed.gid) != 2) {
    return util::PermissionDenied("munge: a credential without Muster's payload");
  }
  if (payload.substr(0, first) != purpose || payload.substr(second + 1) != Sha256Hex(message)) {
    return util::PermissionDenied("munge: the credential is for another message");
  }
  const bool service =
      std::find(service_uids_.begin(), service_uids_.end(), uid) != service_uids_.end();
  if ((claimed.uid != uid || claimed.gid != gid) && !service) {
    return util::PermissionDenied(
        fmt::format("munge: uid {} may not speak for uid {}", uid, claimed.uid));
  }
  return claimed;
}

}  // namespace muster::auth

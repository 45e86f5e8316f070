#include "auth/shared_key.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "util/strings.h"

namespace muster::auth {
namespace {

constexpr std::string_view kVersion = "MUSTER1";
constexpr size_t kMinKeyBytes = 16;
// Far more than any key needs; a bound on what is read.
constexpr size_t kMaxKeyBytes = 1 << 20;
constexpr size_t kNonceBytes = 16;

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return out;
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool IsHex(std::string_view s, size_t len) {
  return s.size() == len && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

util::Result<std::shared_ptr<const SharedKey>> SharedKey::Load(const std::string& path,
                                                               uid_t service_uid) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return util::PermissionDenied(
        fmt::format("cannot read the auth/slurm key {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_uid != 0 && st.st_uid != service_uid) {
    why = fmt::format("owned by uid {}, not by root or the service user (uid {})", st.st_uid,
                      service_uid);
  } else if ((st.st_mode & 077) != 0) {
    why = fmt::format("mode {:04o} lets others read or write it (use 0400 or 0600)",
                      st.st_mode & 07777);
  } else if (st.st_size < static_cast<off_t>(kMinKeyBytes)) {
    why = fmt::format("{} bytes long; a key has at least {}", st.st_size, kMinKeyBytes);
  } else if (st.st_size > static_cast<off_t>(kMaxKeyBytes)) {
    why = fmt::format("{} bytes long; a key has at most {}", st.st_size, kMaxKeyBytes);
  }
  std::string bytes;
  if (why.empty()) {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        why = n < 0 ? std::strerror(errno) : "shorter than its size";
        break;
      }
      got += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  if (!why.empty()) {
    return util::PermissionDenied(fmt::format("refusing the auth/slurm key {}: {}", path, why));
  }
  return FromBytes(std::move(bytes));
}

std::shared_ptr<const SharedKey> SharedKey::FromBytes(std::string bytes) {
  return std::shared_ptr<const SharedKey>(new SharedKey(std::move(bytes)));
}

std::string SharedKey::Mac(std::string_view fields, std::string_view purpose,
                           std::string_view message) const {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data());
  std::string signed_text;
  signed_text.reserve(fields.size() + purpose.size() + 2 + digest.size());
  signed_text.append(fields).append(1, ':').append(purpose).append(1, '\n');
  signed_text.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), bytes_.data(), static_cast<int>(bytes_.size()),
       reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac.data(),
       &mac_len);
  return Hex(mac.data(), mac_len);
}

util::Result<std::string> SharedKey::Sign(const Identity& who, std::string_view purpose,
                                          std::string_view message, int64_t now) const {
  std::array<unsigned char, kNonceBytes> nonce{};
  size_t got = 0;
  while (got < nonce.size()) {
    ssize_t n = ::getrandom(nonce.data() + got, nonce.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    // getrandom cannot fail for 16 bytes once the pool is initialised; a
    // nonce the verifier has seen is refused, never accepted wrongly.
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  const std::string fields = fmt::format("{}:{}:{}:{}:{}", kVersion, who.uid, who.gid, now,
                                         Hex(nonce.data(), nonce.size()));
  return fields + ":" + Mac(fields, purpose, message);
}

util::Result<Identity> Verifier::Verify(std::string_view credential, std::string_view purpose,
                                        std::string_view message, int64_t now) {
  const size_t mac_at = credential.rfind(':');
  std::vector<std::string> parts = util::Split(std::string(credential), ':');
  Identity who;
  int64_t signed_at = 0;
  if (parts.size() != 6 || parts[0] != kVersion || !ParseNumber(parts[1], &who.uid) ||
      !ParseNumber(parts[2], &who.gid) || !ParseNumber(parts[3], &signed_at) ||
      !IsHex(parts[4], 2 * kNonceBytes) || !IsHex(parts[5], 2 * SHA256_DIGEST_LENGTH)) {
    return util::PermissionDenied("malformed credential");
  }
  const std::string expected = key_->Mac(credential.substr(0, mac_at), purpose, message);
  if (CRYPTO_memcmp(expected.data(), parts[5].data(), expected.size()) != 0) {
    return util::PermissionDenied("bad signature (a different key, or an altered message)");
  }
  if (signed_at < now - ttl_s_ || signed_at > now + ttl_s_) {
    return util::PermissionDenied(fmt::format(
        "expired credential (signed {} s {}, time to live {} s; are the clocks in step?)",
        signed_at < now ? now - signed_at : signed_at - now,
        signed_at < now ? "ago" : "in the future", ttl_s_));
  }
  Forget(now);
  if (!seen_.insert(parts[4]).second) return util::PermissionDenied("replayed credential");
  expiry_.emplace_back(now + 2 * ttl_s_, parts[4]);
  return who;
}

void Verifier::Forget(int64_t now) {
  while (!expiry_.empty() && expiry_.front().first < now) {
    seen_.erase(expiry_.front().second);
    expiry_.pop_front();
  }
}

}  // namespace muster::auth

#include "auth/service.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "auth/munge.h"
#include "auth/shared_key.h"
#include "auth/signed_lines.h"
#include "util/users.h"

namespace muster::auth {

util::Result<std::unique_ptr<ServiceAuth>> ServiceAuth::Create(const config::Config& cfg,
                                                               const util::Clock& clock,
                                                               const std::string& key_path) {
  if (cfg.auth_type == config::AuthType::kLocal) {
    return util::FailedPrecondition("AuthType is unset: one host, no authentication between hosts");
  }
  std::vector<uid_t> service_uids = {0};
  if (std::optional<uint32_t> uid = util::LookupUid(cfg.slurm_user); uid && *uid != 0) {
    service_uids.push_back(*uid);
  }
  if (cfg.auth_type == config::AuthType::kMunge) {
    // munged keeps the time to live and the replay cache itself.
    auto signer = std::make_shared<MungeSigner>(cfg.auth_socket);
    auto verifier = std::make_shared<MungeVerifier>(cfg.auth_socket, service_uids);
    // Fails early, naming the socket, when munged is not there.
    util::Result<std::string> probe =
        signer->Sign({::geteuid(), ::getegid()}, "probe", "", clock.Now());
    if (!probe.ok()) return probe.status();
    return std::unique_ptr<ServiceAuth>(
        new ServiceAuth(std::move(signer), std::move(verifier), std::move(service_uids), clock));
  }
  auto key =
      SharedKey::Load(key_path.empty() ? config::AuthKeyPath(cfg) : key_path, service_uids.back());
  if (!key.ok()) return key.status();
  auto verifier = std::make_shared<Verifier>(*key, cfg.auth_ttl_s);
  return std::unique_ptr<ServiceAuth>(
      new ServiceAuth(std::move(*key), std::move(verifier), std::move(service_uids), clock));
}

std::shared_ptr<api::LineAuth> ServiceAuth::ForConnection(std::string_view seal_purpose,
                                                          std::string_view open_purpose) const {
  const Identity self{::geteuid(), ::getegid()};
  return std::make_shared<SignedLines>(signer_, verifier_, self, seal_purpose, open_purpose,
                                       service_uids_, clock_);
}

namespace {

class ApiRequestAuth final : public api::RequestAuth {
 public:
  ApiRequestAuth(std::shared_ptr<const Signer> signer,
                 std::shared_ptr<CredentialVerifier> verifier, const util::Clock& clock)
      : signer_(std::move(signer)), verifier_(std::move(verifier)), clock_(clock) {}

  util::Result<api::PeerCred> Verify(std::string_view credential, std::string_view text) override {
    util::Result<Identity> who = verifier_->Verify(credential, kApiRequest, text, clock_.Now());
    if (!who.ok()) return who.status();
    api::PeerCred peer;
    peer.uid = who->uid;
    peer.gid = who->gid;
    return peer;
  }

  util::Result<std::string> SignReply(std::string_view text) override {
    return signer_->Sign({::geteuid(), ::getegid()}, kApiReply, text, clock_.Now());
  }

 private:
  std::shared_ptr<const Signer> signer_;
  std::shared_ptr<CredentialVerifier> verifier_;
  const util::Clock& clock_;
};

}  // namespace

std::shared_ptr<api::RequestAuth> ServiceAuth::ForApiRequests() const {
  return std::make_shared<ApiRequestAuth>(signer_, verifier_, clock_);
}

util::Result<std::string> ServiceAuth::SignApiRequest(const Identity& who,
                                                      std::string_view text) const {
  return signer_->Sign(who, kApiRequest, text, clock_.Now());
}

util::Status ServiceAuth::VerifyApiReply(std::string_view credential, std::string_view text) const {
  util::Result<Identity> who = verifier_->Verify(credential, kApiReply, text, clock_.Now());
  if (!who.ok()) return who.status();
  if (std::find(service_uids_.begin(), service_uids_.end(), who->uid) == service_uids_.end()) {
    return util::PermissionDenied(
        fmt::format("signed by uid {}, who is neither root nor SlurmUser", who->uid));
  }
  return util::Status::Ok();
}

}  // namespace muster::auth

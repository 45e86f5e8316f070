#include "cli/client.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "api/http.h"
#include "util/hostname.h"

namespace muster::cli {

util::Result<Client> Client::Connect(const std::string& conf_path) {
  std::string path = conf_path.empty() ? config::DefaultConfigPath() : conf_path;
  auto cfg = config::LoadConfig(path);
  if (!cfg.ok()) return cfg.status();
  return ForConfig(*cfg);
}

Client Client::ForConfig(const config::Config& cfg) {
  api::Endpoint endpoint;
  endpoint.unix_path = config::ControllerSocketPath(cfg);
  // Not the controller's host (neither its name nor its socket is here):
  // over TCP, where the cluster's hosts authenticate to each other. (The
  // name counts too: the socket is briefly gone while musterd restarts.)
  if (cfg.auth_type != config::AuthType::kLocal && util::HostName() != cfg.control_host &&
      ::access(endpoint.unix_path.c_str(), F_OK) != 0) {
    endpoint.kiosk_path = config::KioskSocketPath(cfg, util::HostName());
    endpoint.unix_path.clear();
  }
  return Client(std::move(endpoint));
}

namespace {
util::Result<Response> ToResponse(util::Result<api::HttpResponse> r) {
  if (!r.ok()) return r.status();
  Response out;
  out.status = r->status;
  out.text = std::move(r->body);
  out.warnings = std::move(r->warnings);
  if (!out.text.empty() && (out.text[0] == '{' || out.text[0] == '[')) {
    out.body = nlohmann::json::parse(out.text, nullptr, false);
    if (out.body.is_discarded()) out.body = nullptr;
  }
  return out;
}

// Retries a connection refused for too many open ones (503 with
// Retry-After; musterd read nothing of it, so a POST is safe to resend),
// and a read-only request left unanswered, waiting 0.1 s, doubling, five
// times.
util::Result<api::HttpResponse> CallWithRetry(const api::Endpoint& endpoint,
                                               const std::string& method,
                                               const std::string& target, const std::string& body,
                                               const api::BodySink& sink = nullptr) {
  auto wait = std::chrono::milliseconds(100);
  // A read-only request that musterd dropped unanswered (it was restarting
  // in place, scontrol reconfigure) is safe to send again.
  const bool read_only = method == "GET" || target.starts_with("/v1/render/");
  for (int attempt = 0;; ++attempt) {
    auto r = api::HttpCall(endpoint, method, target, body, sink);
    const bool dropped = !r.ok() && read_only &&
                         r.status().message().starts_with("reading from musterd failed");
    const bool busy = r.ok() && r->status == 503 && r->retry_after_s > 0;
    if ((!dropped && !busy) || attempt == 5) return r;
    std::this_thread::sleep_for(wait);
    wait *= 2;
  }
}
}  // namespace

util::Result<Response> Client::Get(const std::string& target) const {
  return ToResponse(CallWithRetry(endpoint_, "GET", target, ""));
}

util::Result<Response> Client::Post(const std::string& target, const nlohmann::json& body,
                                    const api::BodySink& sink) const {
  return ToResponse(
      CallWithRetry(endpoint_, "POST", target,
                    body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), sink));
}

std::string ErrorText(const Response& r) {
  if (r.body.is_object() && r.body.contains("error")) return r.body["error"].get<std::string>();
  return r.text;
}

bool IsTransportRefusal(const Response& r) {
  return r.status == 413 || r.status == 431 || r.status == 503;
}

util::Result<Response> PostToController(const std::string& target, const nlohmann::json& body,
                                        const api::BodySink& sink) {
  auto client = Client::Connect();
  if (!client.ok()) return util::Unavailable(client.status().message());
  auto resp = client->Post(target, body, sink);
  if (!resp.ok()) return util::Unavailable(resp.status().message());
  return resp;
}

util::Result<Response> CallController(const std::string& target, const nlohmann::json& body,
                                      const api::BodySink& sink) {
  auto resp = PostToController(target, body, sink);
  if (!resp.ok()) return resp;
  if (IsTransportRefusal(*resp)) return util::Unavailable(ErrorText(*resp));
  if (resp->status < 200 || resp->status >= 300) return util::FailedPrecondition(ErrorText(*resp));
  return resp;
}

void PrintCallError(const std::string& prog, const util::Status& status) {
  if (status.code() == util::Code::kUnavailable) {
    std::cerr << prog << ": error: " << status.message() << "\n";
  } else {
    std::cerr << status.message() << "\n";
  }
}

}  // namespace muster::cli

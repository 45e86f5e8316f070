#include "cli/client.h"

#include <iostream>

#include "api/http.h"

namespace muster::cli {

util::Result<Client> Client::Connect(const std::string& conf_path) {
  std::string path = conf_path.empty() ? config::DefaultConfigPath() : conf_path;
  auto cfg = config::LoadConfig(path);
  if (!cfg.ok()) return cfg.status();
  return Client(config::ControllerSocketPath(*cfg));
}

namespace {
util::Result<Response> ToResponse(util::Result<api::HttpResponse> r) {
  if (!r.ok()) return r.status();
  Response out;
  out.status = r->status;
  out.text = std::move(r->body);
  if (!out.text.empty() && (out.text[0] == '{' || out.text[0] == '[')) {
    out.body = nlohmann::json::parse(out.text, nullptr, false);
    if (out.body.is_discarded()) out.body = nullptr;
  }
  return out;
}
}  // namespace

util::Result<Response> Client::Get(const std::string& target) const {
  return ToResponse(api::HttpCall(socket_path_, "GET", target, ""));
}

util::Result<Response> Client::Post(const std::string& target, const nlohmann::json& body) const {
  return ToResponse(api::HttpCall(socket_path_, "POST", target,
                                  body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

std::string ErrorText(const Response& r) {
  if (r.body.is_object() && r.body.contains("error")) return r.body["error"].get<std::string>();
  return r.text;
}

util::Result<Response> CallController(const std::string& target, const nlohmann::json& body) {
  auto client = Client::Connect();
  if (!client.ok()) {
    if (client.status().code() == util::Code::kUnavailable) return client.status();
    return util::Unavailable(client.status().message());
  }
  auto resp = client->Post(target, body);
  if (!resp.ok()) return util::Unavailable(resp.status().message());
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

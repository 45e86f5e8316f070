// The CLI's connection to musterd: HTTP/1.1 with JSON bodies, one request
// per call. On the controller's host, over its unix socket (the caller's
// uid reaches musterd through SO_PEERCRED, so no credential is sent); on
// any other host of an auth/slurm cluster, over TCP with each request
// signed by this host's credential service (api/kiosk.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/http.h"
#include "config/config.h"
#include "util/status.h"

namespace muster::cli {

struct Response {
  int status = 0;          // HTTP status
  nlohmann::json body;     // parsed JSON body (null when empty)
  std::string text;        // raw body
  // Lines to print to stderr before the body (api::HttpResponse::warnings).
  std::vector<std::string> warnings;
};

class Client {
 public:
  // Loads the configuration found by config::DefaultConfigPath() (or
  // `conf_path` when not empty) to locate the socket.
  static util::Result<Client> Connect(const std::string& conf_path = {});
  // The client of a loaded configuration.
  static Client ForConfig(const config::Config& cfg);
  explicit Client(api::Endpoint endpoint) : endpoint_(std::move(endpoint)) {}

  // One request. A 503 with Retry-After (musterd refused the connection:
  // too many open) is retried a few times, about 3 s in all, before it is
  // returned: a burst of commands from one user waits rather than fails.
  util::Result<Response> Get(const std::string& target) const;
  // With `sink`, a 2xx reply's body goes to it in pieces as it arrives
  // (api::HttpCall) and Response::text stays empty.
  util::Result<Response> Post(const std::string& target, const nlohmann::json& body,
                              const api::BodySink& sink = nullptr) const;

 private:
  api::Endpoint endpoint_;
};

// The error text of a non-2xx response: body["error"] or the raw text.
std::string ErrorText(const Response& r);

// Whether musterd refused the request as a whole, before handling it: 413
// (body too large), 431 (headers too large), 503 (too many connections, or
// a service it lacks). Its error text is then Muster's, not a command's.
bool IsTransportRefusal(const Response& r);

// Connects to the controller of the default configuration and POSTs `body`.
// Any reply is returned (check its status); kUnavailable when the
// controller could not be reached.
util::Result<Response> PostToController(const std::string& target, const nlohmann::json& body,
                                        const api::BodySink& sink = nullptr);

// PostToController for a 2xx reply; otherwise kUnavailable when the
// controller could not be reached or refused the request as a whole (the
// caller prefixes "prog: error: "), or kFailedPrecondition carrying the
// reply's error text, already in the command's own words. With `sink`, as
// Client::Post.
util::Result<Response> CallController(const std::string& target, const nlohmann::json& body,
                                      const api::BodySink& sink = nullptr);

// Prints a CallController error to stderr the way the Slurm command would.
void PrintCallError(const std::string& prog, const util::Status& status);

}  // namespace muster::cli

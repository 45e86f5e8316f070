// The CLI's connection to musterd: HTTP/1.1 with JSON bodies over the
// controller's unix socket (the caller's uid reaches musterd through
// SO_PEERCRED, so no credential is sent). One request per call.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "util/status.h"

namespace muster::cli {

struct Response {
  int status = 0;          // HTTP status
  nlohmann::json body;     // parsed JSON body (null when empty)
  std::string text;        // raw body
};

class Client {
 public:
  // Loads the configuration found by config::DefaultConfigPath() (or
  // `conf_path` when not empty) to locate the socket.
  static util::Result<Client> Connect(const std::string& conf_path = {});
  explicit Client(std::string socket_path) : socket_path_(std::move(socket_path)) {}

  util::Result<Response> Get(const std::string& target) const;
  util::Result<Response> Post(const std::string& target, const nlohmann::json& body) const;
  const std::string& socket_path() const { return socket_path_; }

 private:
  std::string socket_path_;
};

// The error text of a non-2xx response: body["error"] or the raw text.
std::string ErrorText(const Response& r);

// Connects to the controller of the default configuration and POSTs `body`.
// A 2xx reply is returned; otherwise kUnavailable when the controller could
// not be reached (the caller prefixes "prog: error: "), or kFailedPrecondition
// carrying the reply's error text, already in the command's own words.
util::Result<Response> CallController(const std::string& target, const nlohmann::json& body);

// Prints a CallController error to stderr the way the Slurm command would.
void PrintCallError(const std::string& prog, const util::Status& status);

}  // namespace muster::cli

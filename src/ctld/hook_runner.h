// Programs musterd runs without waiting for them on its loop:
// PrologSlurmctld and EpilogSlurmctld. Each is watched through a pidfd
// (musterd reaps no other children), its output kept for the error, and
// killed after its timeout.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "util/status.h"

namespace muster::ctld {

class HookRunner {
 public:
  explicit HookRunner(boost::asio::io_context& io) : io_(io) {}
  // Starts `path` with `env`; `done` gets its outcome (util::HookOutcome)
  // on the loop once it has ended, or at once when it cannot start.
  void Run(const std::string& path, const std::vector<std::string>& env, int timeout_s,
           std::function<void(util::Status)> done);

 private:
  boost::asio::io_context& io_;
};

}  // namespace muster::ctld

// scontrol create|update|delete|show reservation, in Slurm's syntax and
// words. The controller keeps the reservations and its rules
// (src/ctld/reservations.cc); this file reads the command line, checks
// what Slurm's scontrol checks itself, and lays out `show`.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/sbatch_parse.h"
#include "core/reservation.h"
#include "util/hostlist.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using nlohmann::json;

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string Joined(const json& list) {
  std::vector<std::string> v = list.get<std::vector<std::string>>();
  return OrNull(util::Join(v, ","));
}

// One reservation as `scontrol show reservation` prints it.
std::string RenderReservation(const json& r, bool one_liner) {
  const int64_t start = r.value("start", int64_t{0});
  const int64_t end = r.value("end", int64_t{0});
  const std::vector<std::string> nodes = r.value("nodes", std::vector<std::string>{});
  const int64_t cores = r.value("core_cnt", int64_t{0});
  const std::vector<std::string> lines = {
      fmt::format("ReservationName={} StartTime={} EndTime={} Duration={}", r.value("name", ""),
                  util::FormatTimestamp(start), util::FormatTimestamp(end),
                  util::FormatDurationLong(end - start)),
      fmt::format("Nodes={} NodeCnt={} CoreCnt={} Features=(null) PartitionName={} Flags={}",
                  OrNull(util::CompressHostlist(nodes)), nodes.size(), cores,
                  OrNull(r.value("partition", "")),
                  core::FormatReservationFlags(r.value("flags", uint32_t{0}))),
      fmt::format("TRES=cpu={}", cores),
      fmt::format("Users={} Groups=(null) Accounts={} Licenses=(null) State={} "
                  "BurstBuffer=(null) Watts=n/a",
                  Joined(r.value("users", json::array())),
                  Joined(r.value("accounts", json::array())), r.value("state", "")),
      "MaxStartDelay=(null)",
  };
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += one_liner ? " " : "\n   ";
    out += lines[i];
  }
  return out + (one_liner ? "\n" : "\n\n");
}

int ShowReservations(const std::vector<std::string>& names, bool one_liner) {
  auto client = Client::Connect();
  if (!client.ok()) {
    PrintError("scontrol", client.status().message());
    return 1;
  }
  auto resp = client->Get("/v1/reservations");
  if (!resp.ok() || resp->status / 100 != 2) {
    PrintCallError("scontrol", resp.ok() ? util::Unavailable(ErrorText(*resp)) : resp.status());
    return 1;
  }
  const json& list = resp->body["reservations"];
  if (names.empty()) {
    if (list.empty()) {
      std::cout << "No reservations in the system\n";
      return 0;
    }
    for (const json& r : list) std::cout << RenderReservation(r, one_liner);
    return 0;
  }
  for (const json& r : list) {
    if (r.value("name", "") == names.front()) {
      std::cout << RenderReservation(r, one_liner);
      return 0;
    }
  }
  std::cout << "Reservation " << names.front() << " not found\n";
  return 1;
}

// KEY=VALUE words into the controller's request; a bad value is refused in
// scontrol's words ("Invalid start time StartTime=bogus").
util::Result<json> ReadFields(const std::vector<std::string>& words) {
  json req = json::object();
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      if (util::EqualsIgnoreCase(word, "reservation") || util::EqualsIgnoreCase(word, "res")) {
        continue;
      }
      return util::InvalidArgument("Invalid parameter: " + word + ".");
    }
    const std::string key = util::ToLower(word.substr(0, eq));
    const std::string value = word.substr(eq + 1);
    if (key == "reservationname" || key == "reservation") {
      req["name"] = value;
    } else if (key == "starttime" || key == "endtime") {
      const bool start = key == "starttime";
      auto t = ParseBeginTime(value);
      if (!t.ok()) {
        std::cerr << "Invalid time specification (pos=0): " << value << "\n";
        return util::InvalidArgument(
            fmt::format("Invalid {} time {}.", start ? "start" : "end", word));
      }
      req[start ? "start" : "end"] = *t;
    } else if (key == "duration") {
      auto d = util::ParseTimeLimitSeconds(value);
      if (!d.ok()) return util::InvalidArgument("Invalid duration " + word + ".");
      req["duration"] = *d == util::kUnlimited ? int64_t{-1} : (*d + 59) / 60 * 60;
    } else if (key == "nodes" || key == "nodelist") {
      req["nodes"] = value;
    } else if (key == "nodecnt") {
      auto n = util::ParseInt(value);
      if (!n.ok() || *n <= 0) return util::InvalidArgument("Invalid node count " + word + ".");
      req["node_cnt"] = *n;
    } else if (key == "partitionname" || key == "partition") {
      req["partition"] = value;
    } else if (key == "users" || key == "user") {
      req["users"] = value;
    } else if (key == "accounts" || key == "account") {
      req["accounts"] = value;
    } else if (key == "flags") {
      uint32_t removed = 0;
      auto flags = core::ParseReservationFlags(value, &removed);
      if (!flags.ok()) return flags.status();
      req["flags"] = value;
    } else {
      return util::InvalidArgument("Invalid parameter: " + word + ".");
    }
  }
  return req;
}

// Sends one change; prints the controller's line, or its refusal after
// `refused` ("Error creating the reservation: ").
int Send(json req, const std::string& refused, const std::string& also) {
  auto resp = CallController("/v1/reservations", req);
  if (!resp.ok()) {
    if (resp.status().code() != util::Code::kFailedPrecondition) {
      PrintCallError("scontrol", resp.status());
      return 1;
    }
    // The controller's refusal, in Slurm's words.
    std::cerr << refused << resp.status().message() << "\n";
    if (!also.empty()) std::cerr << also << resp.status().message() << "\n";
    return 1;
  }
  const std::string line = resp->body.value("message", "");
  if (!line.empty()) std::cout << line << "\n";
  return 0;
}

}  // namespace

int ReservationCommand(const std::string& verb, const std::vector<std::string>& words,
                       bool one_liner) {
  if (verb == "show") return ShowReservations(words, one_liner);
  if (verb == "delete") {
    // delete ReservationName=NAME, or delete reservation NAME.
    std::string name;
    for (const std::string& w : words) {
      const size_t eq = w.find('=');
      if (eq != std::string::npos) {
        name = w.substr(eq + 1);
      } else if (!util::EqualsIgnoreCase(w, "reservation") && !util::EqualsIgnoreCase(w, "res")) {
        name = w;
      }
    }
    if (name.empty()) {
      std::cerr << "scontrol: error: too few arguments for keyword:delete\n";
      return 1;
    }
    return Send({{"op", "delete"}, {"name", name}},
                "delete_reservation ReservationName=" + name + ": ", "");
  }
  const bool create = verb == "create";
  auto fields = ReadFields(words);
  const std::string not_made = create ? "  No reservation created." : "";
  if (!fields.ok()) {
    std::cerr << "scontrol: error: " << fields.status().message() << not_made << "\n";
    return 1;
  }
  json req = std::move(fields).value();
  req["op"] = create ? "create" : "update";
  if (create) {
    if (!req.contains("nodes") && !req.contains("node_cnt")) {
      std::cerr << "scontrol: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts "
                   "must be specified."
                << not_made << "\n";
      return 1;
    }
    if (!req.contains("users") && !req.contains("accounts")) {
      std::cerr << "scontrol: error: Either Users/Groups and/or Accounts must be specified."
                << not_made << "\n";
      return 1;
    }
    return Send(std::move(req), "Error creating the reservation: ", "");
  }
  if (!req.contains("name")) {
    std::cerr << "scontrol: error: ReservationName must be given.  No reservation updated.\n";
    return 1;
  }
  return Send(std::move(req), "Error updating the reservation: ", "slurm_update error: ");
}

}  // namespace muster::cli

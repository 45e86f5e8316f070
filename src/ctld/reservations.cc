// scontrol's reservations in the controller: the rules of creating,
// changing and deleting one (Slurm's refusals), their file, and their
// ageing. The scheduler honours them from the snapshot (sched/scheduler.h).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "ctld/controller.h"
#include "sched/partition_rules.h"
#include "sched/pipeline.h"
#include "util/atomic_file.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {

using core::Reservation;
using nlohmann::json;

namespace {

constexpr int64_t kDay = 24 * 3600;
// Without EndTime or Duration a reservation lasts a year.
constexpr int64_t kDefaultDuration = 365 * kDay;
// PURGE_COMP: how long a reservation may stay without jobs.
constexpr int64_t kPurgeAfter = 5 * 60;

std::string Path(const config::Config& cfg) {
  return cfg.state_save_location + "/reservations.json";
}

std::vector<std::string> List(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key) || !j[key].is_string()) return out;
  for (const std::string& item : util::Split(j[key].get<std::string>(), ',')) {
    std::string name(util::Trim(item));
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace

util::Status Controller::LoadReservations() {
  std::ifstream in(Path(cfg_));
  if (!in) return util::Status::Ok();  // none made yet
  json saved = json::parse(in, nullptr, false);
  if (saved.is_discarded() || !saved.is_object()) {
    return util::Internal(Path(cfg_) + ": not a reservations file");
  }
  next_reservation_id_ = saved.value("next_id", int64_t{1});
  for (const auto& j : saved.value("reservations", json::array())) {
    Reservation r = j.get<Reservation>();
    cluster_.reservations()[r.name] = std::move(r);
  }
  return util::Status::Ok();
}

util::Status Controller::SaveReservations() const {
  json list = json::array();
  for (const auto& [name, r] : cluster_.reservations()) list.push_back(r);
  return util::WriteFileAtomically(
      Path(cfg_), json{{"next_id", next_reservation_id_}, {"reservations", list}}.dump());
}

bool Controller::ReservationInUse(const std::string& name) const {
  for (const core::Job& job : cluster_.jobs()) {
    const bool live = job.state == core::JobState::kPending ||
                      job.state == core::JobState::kRunning ||
                      job.state == core::JobState::kCompleting;
    if (live && job.req.reservation == name) return true;
  }
  return false;
}

json Controller::ReservationsReport() const {
  json list = json::array();
  const int64_t now = Now();
  // In the order they were made, as Slurm lists them.
  std::vector<const Reservation*> made;
  for (const auto& [name, r] : cluster_.reservations()) made.push_back(&r);
  std::stable_sort(made.begin(), made.end(),
                   [](const Reservation* a, const Reservation* b) { return a->id < b->id; });
  for (const Reservation* p : made) {
    const Reservation& r = *p;
    int64_t cores = 0;
    for (const std::string& n : r.nodes) {
      if (const core::Node* node = cluster_.FindNode(n)) cores += node->config.cpus;
    }
    json j = r;
    j["state"] = r.Active(now) ? "ACTIVE" : "INACTIVE";
    j["core_cnt"] = cores;
    list.push_back(std::move(j));
  }
  return json{{"reservations", list}};
}

util::Result<std::string> Controller::ChangeReservation(const json& request, const Caller& caller) {
  if (!caller.admin) return util::PermissionDenied("Access/permission denied");
  const std::string op = request.value("op", "");
  const std::string name = request.value("name", "");
  const int64_t now = Now();
  auto found = cluster_.reservations().find(name);
  if (op == "delete") {
    if (found == cluster_.reservations().end())
      return util::NotFound("Requested reservation is invalid");
    if (ReservationInUse(name)) return util::FailedPrecondition("Requested reservation is in use");
    Reservation gone = std::move(found->second);
    cluster_.reservations().erase(found);
    if (util::Status st = SaveReservations(); !st.ok()) {
      cluster_.reservations()[gone.name] = std::move(gone);
      return st;
    }
    util::LogInfo("reservation {} deleted", name);
    RequestSchedule();
    return std::string();
  }
  if (op != "create" && op != "update") return util::InvalidArgument("unknown operation " + op);
  const bool create = op == "create";
  if (create && found != cluster_.reservations().end()) {
    return util::FailedPrecondition("Duplicate reservation name");
  }
  if (!create && found == cluster_.reservations().end()) {
    return util::NotFound("Requested reservation is invalid");
  }
  Reservation r = create ? Reservation{} : found->second;

  // Who may use it.
  if (request.contains("users")) r.users = List(request, "users");
  if (request.contains("accounts")) r.accounts = List(request, "accounts");
  for (const std::string& user : r.users) {
    if (!util::LookupUid(user)) return util::InvalidArgument("Invalid user id");
  }
  for (const std::string& account : r.accounts) {
    if (cluster_.accounts().FindAccount(account) == nullptr) {
      return util::InvalidArgument(sched::kInvalidAccountMsg);
    }
  }
  if (r.users.empty() && r.accounts.empty()) {
    return util::InvalidArgument("Either Users/Groups and/or Accounts must be specified");
  }

  // When.
  if (request.contains("start")) r.start = request["start"].get<int64_t>();
  if (create && !request.contains("start")) r.start = now;
  if (request.contains("end")) {
    r.end = request["end"].get<int64_t>();
  } else if (request.contains("duration")) {
    const int64_t d = request["duration"].get<int64_t>();
    r.end = d < 0 ? r.start + kDefaultDuration : r.start + d;
  } else if (create) {
    r.end = r.start + kDefaultDuration;
  } else if (request.contains("start")) {
    r.end = r.start + (found->second.end - found->second.start);  // keeps its length
  }
  if (r.end <= r.start) return util::InvalidArgument("Invalid time specification");

  // How.
  if (request.contains("flags")) {
    uint32_t removed = 0;
    auto flags = core::ParseReservationFlags(request["flags"].get<std::string>(), &removed);
    if (!flags.ok()) return flags.status();
    r.flags = ((create ? 0 : r.flags) | *flags) & ~removed;
  }
  if (request.contains("partition")) {
    r.partition = request["partition"].get<std::string>();
    if (!r.partition.empty() && cfg_.FindPartition(r.partition) == nullptr) {
      return util::InvalidArgument("Invalid partition name specified");
    }
  }

  // Where: named nodes, or a count chosen from the partition.
  auto overlaps = [&](const std::string& node) {
    for (const auto& [other_name, other] : cluster_.reservations()) {
      if (other_name != r.name && other.Covers(node, r.start, r.end)) return true;
    }
    return false;
  };
  if (request.contains("nodes")) {
    auto names = util::ExpandHostlist(request["nodes"].get<std::string>());
    if (!names.ok() || names->empty()) return util::InvalidArgument("Invalid node name specified");
    for (const std::string& n : *names) {
      if (cluster_.FindNode(n) == nullptr)
        return util::InvalidArgument("Invalid node name specified");
    }
    r.nodes = *names;
    r.flags |= core::kResvSpecNodes;
  } else if (request.contains("node_cnt")) {
    const int64_t want = request["node_cnt"].get<int64_t>();
    const core::Partition* part =
        r.partition.empty() ? cfg_.DefaultPartition() : cfg_.FindPartition(r.partition);
    if (part == nullptr || want <= 0) {
      return util::InvalidArgument("Requested node configuration is not available");
    }
    if (r.partition.empty()) r.partition = part->name;
    // Idle nodes first, those without GPUs before those with, then in
    // configuration order: a reservation keeps GPUs free where it can.
    std::vector<const core::Node*> pool;
    for (const std::string& n : part->nodes) {
      const core::Node* node = cluster_.FindNode(n);
      if (node != nullptr && !node->down && !node->drain && !node->fail && !overlaps(n)) {
        pool.push_back(node);
      }
    }
    auto rank = [](const core::Node* n) {
      return std::pair(n->running_jobs > 0, sched::GpuCount(n->config) > 0);
    };
    std::stable_sort(pool.begin(), pool.end(),
                     [&](const core::Node* a, const core::Node* b) { return rank(a) < rank(b); });
    if (static_cast<int64_t>(pool.size()) < want) {
      return util::Unavailable("Requested node configuration is not available");
    }
    r.nodes.clear();
    for (int64_t k = 0; k < want; ++k) r.nodes.push_back(pool[k]->config.name);
    r.flags &= ~core::kResvSpecNodes;
  }
  if (r.nodes.empty()) {
    return util::InvalidArgument(
        "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified");
  }
  // Config order, as Slurm lists them.
  std::vector<std::string> ordered;
  for (const core::Node& n : cluster_.nodes()) {
    if (std::find(r.nodes.begin(), r.nodes.end(), n.config.name) != r.nodes.end()) {
      ordered.push_back(n.config.name);
    }
  }
  r.nodes = std::move(ordered);
  for (const std::string& n : r.nodes) {
    if (overlaps(n)) {
      return util::FailedPrecondition("Requested reservation overlaps with another reservation");
    }
  }

  if (create) {
    r.id = next_reservation_id_;
    if (r.name.empty()) r.name = name;
    if (r.name.empty()) {
      r.name = fmt::format("{}_{}", r.users.empty() ? r.accounts.front() : r.users.front(), r.id);
    }
  }
  const auto before = cluster_.reservations();
  const int64_t id_before = next_reservation_id_;
  if (create) ++next_reservation_id_;
  cluster_.reservations()[r.name] = r;
  if (util::Status st = SaveReservations(); !st.ok()) {
    cluster_.reservations() = before;
    next_reservation_id_ = id_before;
    return st;
  }
  util::LogInfo("reservation {} {}: {} from {} to {}", r.name, create ? "created" : "updated",
                util::CompressHostlist(r.nodes), r.start, r.end);
  RequestSchedule();
  return create ? "Reservation created: " + r.name : std::string("Reservation updated.");
}

void Controller::AgeReservations(int64_t now) {
  bool changed = false;
  for (auto it = cluster_.reservations().begin(); it != cluster_.reservations().end();) {
    Reservation& r = it->second;
    if (r.Has(core::kResvPurgeComp) && r.Active(now)) {
      if (ReservationInUse(r.name)) {
        r.idle_since = 0;
      } else if (r.idle_since == 0) {
        r.idle_since = now;
      } else if (now - r.idle_since >= kPurgeAfter) {
        util::LogInfo("reservation {}: no jobs for 5 minutes (PURGE_COMP), removed", r.name);
        it = cluster_.reservations().erase(it);
        changed = true;
        continue;
      }
    }
    if (now < r.end) {
      ++it;
      continue;
    }
    const int64_t period = r.Has(core::kResvDaily) ? kDay : r.Has(core::kResvWeekly) ? 7 * kDay : 0;
    if (period > 0) {
      const int64_t skip = (now - r.end) / period + 1;
      r.start += skip * period;
      r.end += skip * period;
      ++it;
    } else {
      util::LogInfo("reservation {} ended", r.name);
      it = cluster_.reservations().erase(it);
    }
    changed = true;
  }
  if (!changed) return;
  if (util::Status st = SaveReservations(); !st.ok()) {
    util::LogError("reservations: {}", st.message());
  }
  RequestSchedule();
}

int64_t Controller::NextReservationChange(int64_t now) const {
  // While a PURGE_COMP reservation's jobs run, whether it is still in use
  // is looked at once a minute; its purge is then due 5 minutes after.
  constexpr int64_t kInUseCheck = 60;
  int64_t next = kNever;
  for (const auto& [name, r] : cluster_.reservations()) {
    if (r.start > now) next = std::min(next, r.start);
    next = std::min(next, std::max(r.end, now + 1));
    if (r.Has(core::kResvPurgeComp) && r.Active(now)) {
      next = std::min(next, r.idle_since != 0 ? std::max(r.idle_since + kPurgeAfter, now + 1)
                                              : now + kInUseCheck);
    }
  }
  return next;
}

bool Controller::ReservationBegan(int64_t after, int64_t now) const {
  return std::any_of(
      cluster_.reservations().begin(), cluster_.reservations().end(),
      [&](const auto& entry) { return entry.second.start > after && entry.second.start <= now; });
}

}  // namespace muster::ctld

// Advance reservations (scontrol create|update|delete|show reservation):
// nodes set aside over a window of time for some users or accounts. Jobs
// that name the reservation (sbatch --reservation) run on its nodes in its
// window; no other job uses those nodes then. Pure data and rules: the
// controller keeps the table and its file, the scheduler honours it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::core {

// Flags=..., Slurm's names; DAILY and WEEKLY repeat the window, MAINT marks
// maintenance (no one's jobs run there), IGNORE_JOBS allows nodes with
// running jobs, FLEX lets the reservation's jobs use other nodes too,
// PURGE_COMP removes the reservation once idle for 5 minutes, SPEC_NODES
// (set by Muster) says the nodes were named.
enum ReservationFlag : uint32_t {
  kResvMaint = 1u << 0,
  kResvFlex = 1u << 1,
  kResvIgnoreJobs = 1u << 2,
  kResvDaily = 1u << 3,
  kResvWeekly = 1u << 4,
  kResvPurgeComp = 1u << 5,
  kResvSpecNodes = 1u << 6,
};

struct Reservation {
  std::string name;
  int64_t id = 0;
  int64_t start = 0;
  int64_t end = 0;
  std::vector<std::string> nodes;  // expanded, config order
  std::string partition;           // PartitionName= ("" = not given)
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  uint32_t flags = 0;
  // PURGE_COMP: when the last job of the reservation ended (0 = none yet).
  int64_t idle_since = 0;

  bool Active(int64_t now) const { return start <= now && now < end; }
  bool Has(uint32_t flag) const { return (flags & flag) != 0; }
  // Whether a job of this user and account may use it (Users=, Accounts=).
  bool Admits(const std::string& user, const std::string& account) const;
  // Whether [start, end) on `node` meets this reservation's window there.
  bool Covers(const std::string& node, int64_t from, int64_t to) const;
};

// "MAINT,DAILY" -> flags; an unknown name or a "-" prefix (update removes a
// flag) is handled by the caller: `removed` gets the flags written "-F".
// Returns InvalidArgument naming the first unknown flag.
util::Result<uint32_t> ParseReservationFlags(const std::string& text, uint32_t* removed);
// Slurm's order: "MAINT,FLEX,IGNORE_JOBS,DAILY,WEEKLY,PURGE_COMP=00:05:00,SPEC_NODES".
std::string FormatReservationFlags(uint32_t flags);

void to_json(nlohmann::json& j, const Reservation& r);
void from_json(const nlohmann::json& j, Reservation& r);

}  // namespace muster::core

// Slurm's time notations: time limits ("MM", "MM:SS", "HH:MM:SS", "D-HH",
// "D-HH:MM", "D-HH:MM:SS", "UNLIMITED"/"INFINITE"), elapsed durations as
// squeue prints them ("0:05", "1:02:03", "2-00:00:00") and timestamps
// ("2026-12-02T15:41:03"). Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace muster::util {

// Minutes; kUnlimited means no limit.
inline constexpr int64_t kUnlimited = -1;

// Parses a time limit in any Slurm form into seconds (kUnlimited for
// UNLIMITED/INFINITE/-1). Slurm rounds "MM:SS" up to whole minutes when it
// stores limits; this returns exact seconds and callers round as needed.
Result<int64_t> ParseTimeLimitSeconds(std::string_view text);

// Formats seconds as squeue's TIME and TIME_LIMIT columns do:
// "0:00", "5:07", "1:02:03", "1-02:03:04"; kUnlimited -> "UNLIMITED".
std::string FormatDuration(int64_t seconds);

// Formats seconds as scontrol does for TimeLimit/RunTime: always
// "[D-]HH:MM:SS" ("00:05:00", "1-00:00:00"); kUnlimited -> "UNLIMITED".
std::string FormatDurationLong(int64_t seconds);

// Local-time timestamp "YYYY-MM-DDTHH:MM:SS"; 0 -> "Unknown".
std::string FormatTimestamp(int64_t unix_seconds);

// The offset in seconds of Slurm's relative time "now[{+|-}COUNT[UNIT]]"
// (sbatch --begin, sacct -S/-E, ...), any case: UNIT is seconds (the
// default), minutes, hours, days or weeks, singular or plural, and may
// follow the count after spaces; abbreviations ("1h", "2min") are refused,
// as Slurm 22.05 refuses them. More than a century either way is refused.
Result<int64_t> ParseNowOffset(std::string_view text);
}  // namespace muster::util

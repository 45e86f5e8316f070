// Small string helpers shared by config, CLI and daemons.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace muster::util {

std::vector<std::string> Split(std::string_view s, char sep, bool skip_empty = true);
std::string_view Trim(std::string_view s);
std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWith(std::string_view s, std::string_view prefix);

// Parses a non-negative decimal integer; rejects signs, blanks and overflow.
Result<int64_t> ParseInt(std::string_view s);
// ParseInt with an optional leading '+' or '-'.
Result<int64_t> ParseSignedInt(std::string_view s);

// Parses a memory size as Slurm does for --mem: a number with an optional
// K/M/G/T suffix (case-insensitive; default unit MB). Returns megabytes,
// rounding K up to whole megabytes.
Result<int64_t> ParseMemoryMb(std::string_view s);
// Memory in megabytes as Slurm prints TRES and MinMemory values: the value
// is divided by 1024 as long as it is at least 1024 and a multiple of 512,
// and printed with unit M/G/T/P, as an integer when whole and with two
// decimals otherwise: 1000 -> "1000M", 2048 -> "2G", 1536 -> "1.50G",
// 64000 -> "62.50G", 1025 -> "1025M", 1048576 -> "1T"; 0 or less -> "0".
std::string FormatMemoryMb(int64_t mb);

// Joins strings with a separator.
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// Joins integers with a separator: {0, 2, 3} -> "0,2,3".
std::string JoinInts(const std::vector<int>& values, std::string_view sep = ",");

// Comma list of integers in range form: {0,1,2,5} -> "0-2,5". Sorted input.
std::string FormatIndexRanges(const std::vector<int>& sorted);
// The same with strided runs as "first-last:step" ({0,2,4,6,9} ->
// "0-6:2,9"), which stays short for --array=0-99999:2. Not for cpusets (the
// kernel's list form has no steps).
std::string FormatIndexRangesWithSteps(const std::vector<int>& sorted);
// The inverse of both: "0-2,5" -> {0,1,2,5}, "0-6:2" -> {0,2,4,6}; "" -> {}.
// InvalidArgument naming the bad part for anything else (negative, reversed
// or unparsable ranges, a step below 1) and for more than kMaxIndices
// indices (Slurm's largest MaxArraySize: a job array never has more).
inline constexpr int64_t kMaxIndices = 4000001;
Result<std::vector<int>> ParseIndexRanges(std::string_view text);

}  // namespace muster::util

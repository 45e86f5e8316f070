#include "core/partition.h"

#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include "util/strings.h"

namespace muster::core {
namespace {

constexpr std::array<std::pair<PartitionState, std::string_view>, 4> kNames = {{
    {PartitionState::kUp, "UP"},
    {PartitionState::kDown, "DOWN"},
    {PartitionState::kDrain, "DRAIN"},
    {PartitionState::kInactive, "INACTIVE"},
}};

}  // namespace

std::string_view PartitionStateName(PartitionState s) {
  for (const auto& [state, name] : kNames) {
    if (state == s) return name;
  }
  return "UP";
}

std::optional<PartitionState> ParsePartitionState(std::string_view s) {
  for (const auto& [state, name] : kNames) {
    if (util::EqualsIgnoreCase(s, name)) return state;
  }
  return std::nullopt;
}

std::string_view PreemptModeName(PreemptMode m) {
  switch (m) {
    case PreemptMode::kOff: return "OFF";
    case PreemptMode::kCancel: return "CANCEL";
    case PreemptMode::kRequeue: return "REQUEUE";
  }
  return "OFF";
}

std::optional<PreemptMode> ParsePreemptMode(std::string_view s) {
  for (PreemptMode m : {PreemptMode::kOff, PreemptMode::kCancel, PreemptMode::kRequeue}) {
    if (util::EqualsIgnoreCase(s, PreemptModeName(m))) return m;
  }
  return std::nullopt;
}

}  // namespace muster::core

#include "core/partition.h"

#include <array>
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

}  // namespace muster::core

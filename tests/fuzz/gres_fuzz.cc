// GRES and TRES strings: a node's Gres=, --gres, --gpus, --gpus-per-node and
// scontrol's TresPerJob. What parses formats and parses back the same.
#include <cstdint>
#include <string>

#include "core/gres.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  std::string_view text = fuzz::AsText(data, size);
  if (auto node = core::ParseNodeGres(text); node.ok() && !node->empty()) {
    auto again = core::ParseNodeGres(core::FormatGres(*node));
    if (!again.ok() || again->size() != node->size()) __builtin_trap();
  }
  if (auto req = core::ParseGresRequest(text); req.ok() && !req->empty()) {
    auto again = core::ParseGresRequest(core::FormatGresRequest(*req));
    if (!again.ok() || again->size() != req->size()) __builtin_trap();
    for (size_t i = 0; i < req->size(); ++i) {
      const auto& a = (*req)[i];
      const auto& b = (*again)[i];
      if (a.name != b.name || a.type != b.type || a.count != b.count) __builtin_trap();
    }
  }
  (void)core::ParseGpuCount(text, true);
  (void)core::ParseGpuCount(text, false);
  return 0;
}

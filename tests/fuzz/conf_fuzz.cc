// muster.conf / slurm.conf and gres.conf: the input is the main file, then,
// after a line "%%", gres.conf. A configuration either loads or is refused
// with a message naming the file and line; nothing else.
#include <cstdint>
#include <string>

#include "config/config.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  std::string text(fuzz::AsText(data, size));
  std::string gres;
  if (size_t split = text.find("\n%%\n"); split != std::string::npos) {
    gres = text.substr(split + 4);
    text.resize(split);
  }
  // Include= resolves against this directory, which holds nothing.
  auto cfg = config::ParseConfig(text, fuzz::ScratchDir() + "/muster.conf", gres, false);
  if (!cfg.ok()) {
    if (cfg.status().message().empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  // What the daemons do first with a loaded configuration.
  (void)cfg->DefaultPartition();
  for (const auto& node : cfg->nodes) {
    if (cfg->FindNode(node.name) == nullptr) __builtin_trap();
  }
  for (const auto& part : cfg->partitions) {
    if (cfg->FindPartition(part.name) == nullptr) __builtin_trap();
  }
  (void)config::ControllerSocketPath(*cfg);
  return 0;
}

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
  // The lookups are linear: a few of each, not all (a short input can
  // configure a million nodes).
  for (size_t i = 0; i < cfg->nodes.size(); i += 1 + cfg->nodes.size() / 16) {
    if (cfg->FindNode(cfg->nodes[i].name) == nullptr) __builtin_trap();
  }
  for (size_t i = 0; i < cfg->partitions.size(); i += 1 + cfg->partitions.size() / 16) {
    if (cfg->FindPartition(cfg->partitions[i].name) == nullptr) __builtin_trap();
  }
  (void)config::ControllerSocketPath(*cfg);
  return 0;
}

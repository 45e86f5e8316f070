// The controller's state files as recovery reads them: the input is a
// journal.log (or, for snapshot_fuzz, a snapshot.json) in an otherwise
// empty state directory, and a real Controller::Recover() runs on it. A
// corrupt file is refused with a message, or its torn tail dropped; the
// controller never crashes on it. The target is built twice, once per file.
//
// Almost every mutation of a journal record breaks its checksum, which
// only reaches the torn-tail path; so when the input's first byte is odd,
// the rest has its records' checksums made right before it is written, and
// the payloads' contents reach the decoders.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "controller_under_test.h"
#include "util/checksum.h"

#ifndef MUSTER_RECOVERY_FILE
#error "MUSTER_RECOVERY_FILE names the state file the input becomes"
#endif

namespace {

// Journal framing (ctld/journal.h): u32 length, u32 FNV-1a of the payload,
// u64 sequence number, the payload.
std::string WithChecksums(std::string text) {
  constexpr size_t kHeader = 16;
  for (size_t off = 0; text.size() - off >= kHeader;) {
    uint32_t len;
    std::memcpy(&len, text.data() + off, 4);
    if (len > text.size() - off - kHeader) break;
    uint32_t sum = muster::util::Fnv1a32(text.data() + off + kHeader, len);
    std::memcpy(text.data() + off + 4, &sum, 4);
    off += kHeader + len;
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  std::string text(fuzz::AsText(data, size));
  if (std::strcmp(MUSTER_RECOVERY_FILE, "journal.log") == 0 && !text.empty()) {
    const bool repair = (text[0] & 1) != 0;
    text.erase(0, 1);
    if (repair) text = WithChecksums(std::move(text));
  }
  const std::string dir = fuzz::ScratchDir() + "/state";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  fuzz::WriteFile(dir + "/" + MUSTER_RECOVERY_FILE, text);
  fuzz::ControllerUnderTest c(dir);
  util::Status st = c.ctl.Recover();
  if (!st.ok() && st.message().empty()) __builtin_trap();  // a refusal says why
  if (st.ok()) {
    // What a recovered controller does first: commit and snapshot.
    c.Drain();
    (void)c.ctl.Save();
  }
  return 0;
}

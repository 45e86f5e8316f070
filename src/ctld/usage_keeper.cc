#include "ctld/usage_keeper.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/atomic_file.h"
#include "util/log.h"

namespace muster::ctld {

UsageKeeper::UsageKeeper(const config::Config& cfg, sched::UsageLedger* ledger, int64_t now)
    : path_(cfg.state_save_location + "/assoc_usage.json"),
      calc_period_s_(cfg.priority.calc_period_s),
      ledger_(*ledger),
      saved_at_(now) {
  std::ifstream in(path_);
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json saved = nlohmann::json::parse(text.str(), nullptr, false);
  util::Status st = saved.is_discarded() ? util::InvalidArgument("not JSON") : ledger_.Load(saved);
  if (!st.ok()) {
    std::error_code ec;
    std::filesystem::rename(path_, path_ + ".bad", ec);
    util::LogError("{}: {}; fairshare usage starts from zero (the file is kept as {}.bad)", path_,
                   st.message(), path_);
  }
}

UsageKeeper::~UsageKeeper() {
  util::Status st = Save();
  if (!st.ok()) util::LogError("saving fairshare usage: {}", st.message());
}

void UsageKeeper::SaveIfDue(int64_t now) {
  if (now - saved_at_ < calc_period_s_) return;
  util::Status st = Save();
  if (!st.ok()) util::LogError("saving fairshare usage: {}", st.message());
  saved_at_ = now;
}

util::Status UsageKeeper::Save() {
  return util::WriteFileAtomically(path_, ledger_.ToJson().dump());
}

}  // namespace muster::ctld

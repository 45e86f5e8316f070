#include "ctld/usage_keeper.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/tres.h"
#include "util/atomic_file.h"
#include "util/log.h"

namespace muster::ctld {

UsageKeeper::UsageKeeper(const config::Config& cfg, int64_t now)
    : path_(cfg.state_save_location + "/assoc_usage.json"),
      fair_tree_(cfg.priority.fair_tree),
      calc_period_s_(cfg.priority.calc_period_s),
      ledger_(cfg.priority, now),
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

sched::UsageCharge UsageKeeper::ChargeOf(const core::Job& job, const config::Config& cfg,
                                         const core::AccountTable& table) {
  const core::Partition* part = cfg.PartitionOf(job);
  const core::Tres tres = core::JobTres(job, cfg.MemoryDefaultsFor(job));
  static const std::vector<core::TresWeight> kNone;
  const core::QosRecord* qos = table.FindQos(core::QosName(job.req));
  const double factor = qos != nullptr ? qos->usage_factor : 1.0;
  auto scaled = [factor](int64_t amount) { return factor * static_cast<double>(amount); };
  return {{job.req.account, job.req.user_name},
          factor * core::BillingUnits(tres, part != nullptr ? part->billing_weights : kNone),
          job.start_time,
          {scaled(tres.cpus), scaled(tres.mem_mb), scaled(tres.nodes), scaled(tres.gpus)}};
}

void UsageKeeper::Advance(int64_t now, const std::vector<sched::UsageCharge>& running) {
  ledger_.Advance(now, running);
  if (now - saved_at_ < calc_period_s_) return;
  util::Status st = Save();
  if (!st.ok()) util::LogError("saving fairshare usage: {}", st.message());
  saved_at_ = now;
}

sched::ShareTree UsageKeeper::Shares(std::vector<sched::AssocKey> also,
                                     const core::AccountTable& table) const {
  for (const auto& [key, used] : ledger_.usage()) also.push_back(key);
  std::erase_if(also,
                [&](const sched::AssocKey& k) { return table.HasAssociation(k.first, k.second); });
  std::vector<sched::Association> assocs = sched::DefaultAssociations(also);
  // sacctmgr's accounts replace the defaults of the same name.
  std::erase_if(assocs, [&](const sched::Association& a) {
    return a.user.empty() && table.FindAccount(a.account) != nullptr;
  });
  for (const core::AccountRecord& a : table.accounts()) {
    if (a.name != "root") assocs.push_back({a.name, "", a.parent, a.shares});
  }
  for (const core::UserAssociation& a : table.associations()) {
    assocs.push_back({a.account, a.user, "", a.shares});
  }
  return sched::ShareTree::Build(assocs, ledger_.usage(), fair_tree_);
}

util::Status UsageKeeper::Save() {
  return util::WriteFileAtomically(path_, ledger_.ToJson().dump());
}

}  // namespace muster::ctld

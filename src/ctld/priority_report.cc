// What sprio and sshare show: the priority factors of the queue and the
// fairshare tree, as data; the commands lay them out (cli/priority_views.h).
// Both bring usage up to now first, so they show what the next pass uses.
#include <algorithm>
#include <cmath>

#include "core/tres.h"
#include "ctld/controller.h"
#include "sched/priority.h"

namespace muster::ctld {

using core::Job;
using nlohmann::json;

namespace {

json FactorsJson(const sched::PriorityFactors& f) {
  return {{"factors",
           {{"age", f.age},
            {"assoc", f.assoc},
            {"fairshare", f.fairshare},
            {"job_size", f.job_size},
            {"partition", f.partition},
            {"qos", f.qos}}},
          {"tres", f.tres},
          {"nice", f.nice},
          {"priority", f.priority}};
}

// A JSON number for a double that may be infinite (LevelFS): null then.
json Finite(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

json Controller::PriorityReport() {
  const config::PriorityConfig& pc = cfg_.priority;
  json tres_names = json::array();
  json tres_weights = json::array();
  for (const core::TresWeight& w : pc.weight_tres) {
    tres_names.push_back(w.name);
    tres_weights.push_back(w.weight);
  }
  json out = {{"multifactor", pc.multifactor},
              {"weights",
               {{"age", pc.weight_age},
                {"assoc", pc.weight_assoc},
                {"fairshare", pc.weight_fairshare},
                {"job_size", pc.weight_job_size},
                {"partition", pc.weight_partition},
                {"qos", pc.weight_qos},
                {"tres_names", tres_names},
                {"tres", tres_weights},
                {"tres_text", pc.weight_tres_text}}},
              {"jobs", json::array()}};
  if (!pc.multifactor) return out;
  const int64_t now = Now();
  std::vector<sched::RunningJob> running = RunningJobs(now);
  AdvanceUsage(now, running);
  std::vector<const Job*> pending;
  std::vector<sched::AssocKey> keys;
  for (core::JobId id : pending_ids_) {
    const Job& job = jobs_.At(id);
    if (job.held) continue;
    pending.push_back(&job);
    keys.emplace_back(job.req.account, job.req.user_name);
  }
  sched::ShareTree shares = usage_->Shares(std::move(keys), accounts_);
  sched::PriorityCalculator calc(cfg_, &shares, now, &accounts_);
  for (const Job* job : pending) {
    json row = FactorsJson(calc.Factors(*job));
    row["priority"] = calc.Priority(*job);  // an operator's Priority= wins
    row["job_id"] = job->id;
    row["partition"] = job->partition;
    row["user"] = job->req.user_name;
    row["uid"] = job->req.uid;
    out["jobs"].push_back(std::move(row));
  }
  return out;
}

json Controller::SharesReport() {
  const int64_t now = Now();
  std::vector<sched::RunningJob> running = RunningJobs(now);
  AdvanceUsage(now, running);
  std::vector<sched::AssocKey> keys;
  for (core::JobId id : pending_ids_) {
    const Job& job = jobs_.At(id);
    keys.emplace_back(job.req.account, job.req.user_name);
  }
  // TRES-minutes the running jobs still hold by their time limits, per
  // association and, below, summed into each account above it.
  std::map<sched::AssocKey, core::Tres> run_mins;
  for (const sched::RunningJob& r : running) {
    const Job& job = *r.job;
    keys.emplace_back(job.req.account, job.req.user_name);
    const int64_t minutes = std::max<int64_t>(0, (r.expected_end - now) / 60);
    const core::Tres t = core::JobTres(job, cfg_.MemoryDefaultsFor(job));
    const sched::UsageCharge charge = UsageKeeper::ChargeOf(job, cfg_, accounts_);
    core::Tres& sum = run_mins[{job.req.account, job.req.user_name}];
    sum.cpus += t.cpus * minutes;
    sum.mem_mb += t.mem_mb * minutes;
    sum.nodes += t.nodes * minutes;
    sum.gpus += t.gpus * minutes;
    sum.billing += static_cast<int64_t>(charge.billing * static_cast<double>(minutes));
  }
  sched::ShareTree shares = usage_->Shares(std::move(keys), accounts_);
  json rows = json::array();
  // Accounts open on a stack of (depth, row index) to sum their subtrees.
  std::vector<std::pair<int, size_t>> open;
  std::vector<core::Tres> totals(shares.rows().size());
  for (size_t i = 0; i < shares.rows().size(); ++i) {
    const sched::ShareRow& r = shares.rows()[i];
    while (!open.empty() && open.back().first >= r.depth) open.pop_back();
    if (!r.user.empty()) {
      auto it = run_mins.find({r.account, r.user});
      if (it != run_mins.end()) {
        totals[i] = it->second;
        for (const auto& [depth, k] : open) {
          totals[k].cpus += it->second.cpus;
          totals[k].mem_mb += it->second.mem_mb;
          totals[k].nodes += it->second.nodes;
          totals[k].gpus += it->second.gpus;
          totals[k].billing += it->second.billing;
        }
      }
    } else {
      open.emplace_back(r.depth, i);
    }
  }
  for (size_t i = 0; i < shares.rows().size(); ++i) {
    const sched::ShareRow& r = shares.rows()[i];
    const core::Tres& t = totals[i];
    rows.push_back({{"account", r.account},
                    {"user", r.user},
                    {"depth", r.depth},
                    {"raw_shares", r.raw_shares},
                    {"norm_shares", r.norm_shares},
                    {"raw_usage", r.raw_usage},
                    {"norm_usage", r.norm_usage},
                    {"effective_usage", r.effective_usage},
                    {"level_fs", Finite(r.level_fs)},
                    {"fairshare", r.fairshare},
                    {"tres_run_mins",
                     {{"cpu", t.cpus},
                      {"mem", t.mem_mb},
                      {"node", t.nodes},
                      {"billing", t.billing},
                      {"gres/gpu", t.gpus}}}});
  }
  return {{"fair_tree", cfg_.priority.fair_tree}, {"rows", rows}};
}

}  // namespace muster::ctld

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

// Whether sprio lists a pending job. As Slurm 22.05's, it leaves out the
// jobs that are not eligible yet: held, before their --begin time (a
// requeued job's too), waiting on a dependency or for their reservation to
// begin. Jobs held back by limits, a down partition or resources are listed.
bool ShownBySprio(const Job& job, int64_t now) {
  // A dependency is cleared once met (cluster::Cluster::DependencyGate).
  if (job.held || job.req.begin_time > now || !job.req.dependency.empty()) return false;
  switch (job.reason) {
    case core::PendingReason::kBeginTime:
    case core::PendingReason::kDependency:
    case core::PendingReason::kDependencyNeverSatisfied:
    case core::PendingReason::kReservation:
    case core::PendingReason::kJobRequeuedHeld:
      return false;
    default:
      return true;
  }
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
  AdvanceUsage(now);
  std::vector<const Job*> pending;
  std::vector<sched::AssocKey> keys;
  for (core::JobId id : cluster_.pending_ids()) {
    const Job& job = cluster_.jobs().At(id);
    if (!ShownBySprio(job, now)) continue;
    pending.push_back(&job);
    keys.emplace_back(job.req.account, job.req.user_name);
  }
  sched::ShareTree shares = cluster_.Shares(std::move(keys));
  sched::PriorityCalculator calc(cfg_, &shares, now, &cluster_.accounts());
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
  AdvanceUsage(now);
  const std::vector<sched::RunningJob> running = cluster_.RunningJobs(now);
  std::vector<sched::AssocKey> keys;
  for (core::JobId id : cluster_.pending_ids()) {
    const Job& job = cluster_.jobs().At(id);
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
    const sched::UsageCharge charge = cluster::ChargeOf(job, cfg_, cluster_.accounts());
    core::Tres& sum = run_mins[{job.req.account, job.req.user_name}];
    sum.cpus += t.cpus * minutes;
    sum.mem_mb += t.mem_mb * minutes;
    sum.nodes += t.nodes * minutes;
    sum.gpus += t.gpus * minutes;
    sum.billing += static_cast<int64_t>(charge.billing * static_cast<double>(minutes));
  }
  sched::ShareTree shares = cluster_.Shares(std::move(keys));
  const auto& tres_used = cluster_.usage().tres_usage();
  // Per row, what its user association holds (TRES-minutes by the running
  // jobs' limits) and has used (TRES-seconds); an account's rows get the
  // sums of the users below it, kept open on a stack of (depth, row index).
  std::vector<core::Tres> run_totals(shares.rows().size());
  std::vector<sched::TresUsage> used_totals(shares.rows().size());
  std::vector<std::pair<int, size_t>> open;
  for (size_t i = 0; i < shares.rows().size(); ++i) {
    const sched::ShareRow& r = shares.rows()[i];
    while (!open.empty() && open.back().first >= r.depth) open.pop_back();
    if (r.user.empty()) {
      open.emplace_back(r.depth, i);
      continue;
    }
    const auto run = run_mins.find({r.account, r.user});
    const auto used = tres_used.find({r.account, r.user});
    std::vector<size_t> targets{i};
    for (const auto& [depth, k] : open) targets.push_back(k);
    for (size_t k : targets) {
      if (run != run_mins.end()) {
        run_totals[k].cpus += run->second.cpus;
        run_totals[k].mem_mb += run->second.mem_mb;
        run_totals[k].nodes += run->second.nodes;
        run_totals[k].gpus += run->second.gpus;
        run_totals[k].billing += run->second.billing;
      }
      if (used != tres_used.end()) {
        used_totals[k].cpu += used->second.cpu;
        used_totals[k].mem_mb += used->second.mem_mb;
        used_totals[k].node += used->second.node;
        used_totals[k].gpu += used->second.gpu;
      }
    }
  }
  // Slurm shows used TRES in whole minutes, cut down.
  auto minutes = [](double seconds) { return static_cast<int64_t>(std::floor(seconds / 60)); };
  json rows = json::array();
  for (size_t i = 0; i < shares.rows().size(); ++i) {
    const sched::ShareRow& r = shares.rows()[i];
    const core::Tres& t = run_totals[i];
    const sched::TresUsage& u = used_totals[i];
    rows.push_back({{"account", r.account},
                    {"user", r.user},
                    {"depth", r.depth},
                    // Muster keeps no association ids: a row's place in the
                    // tree stands for it (root is 1, as in Slurm).
                    {"id", i + 1},
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
                      {"gres/gpu", t.gpus}}},
                    {"tres_raw_mins",
                     {{"cpu", minutes(u.cpu)},
                      {"mem", minutes(u.mem_mb)},
                      {"node", minutes(u.node)},
                      {"billing", minutes(r.raw_usage)},
                      {"gres/gpu", minutes(u.gpu)}}}});
  }
  return {{"fair_tree", cfg_.priority.fair_tree}, {"cluster", cfg_.cluster_name}, {"rows", rows}};
}

}  // namespace muster::ctld

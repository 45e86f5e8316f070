#include "cluster/cluster.h"

#include <algorithm>

#include "core/tres.h"
#include "sched/priority.h"
#include "util/log.h"

namespace muster::cluster {

using core::Job;
using core::JobId;
using core::JobState;

Cluster::Cluster(const config::Config& cfg, int64_t now)
    : cfg_(cfg),
      usage_(cfg.priority, now),
      next_job_id_(static_cast<JobId>(std::max(1, cfg.first_job_id))) {
  for (const auto& nc : cfg_.nodes) {
    core::Node n;
    n.config = nc;
    n.gpu_used.assign(static_cast<size_t>(n.TotalGpus()), false);
    n.cpu_used.assign(static_cast<size_t>(nc.cpus), false);
    if (nc.initial_state == core::NodeInitialState::kDown) {
      n.down = true;
      n.reason = "Set in configuration";
      n.reason_source = core::ReasonSource::kConfig;
    } else if (nc.initial_state == core::NodeInitialState::kDrain) {
      n.drain = true;
      n.reason = "Set in configuration";
      n.reason_source = core::ReasonSource::kConfig;
    }
    nodes_.push_back(std::move(n));
  }
  // Views of the names the nodes keep, once nodes_ no longer moves.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    node_index_.emplace(nodes_[i].config.name, static_cast<int>(i));  // first of duplicates wins
  }
  partition_nodes_ = sched::PartitionNodes(Snapshot(now));
}

core::Node* Cluster::FindNode(const std::string& name) {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
}

const core::Node* Cluster::FindNode(const std::string& name) const {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
}

sched::NodeLookup Cluster::Lookup() {
  return [this](const std::string& name) { return FindNode(name); };
}

sched::Snapshot Cluster::Snapshot(int64_t now) const {
  sched::Snapshot snap;
  snap.config = &cfg_;
  snap.now = now;
  snap.node_index = &node_index_;
  snap.partition_nodes = &partition_nodes_;
  for (const auto& n : nodes_) snap.nodes.push_back(&n);
  snap.array_running = array_running_;
  snap.running = RunningJobs(now);
  snap.accounts = &accounts_;
  for (const auto& [name, r] : reservations_) snap.reservations.push_back(&r);
  for (const auto& [id, deadline] : preempt_deadline_) snap.preempting.insert(id);
  return snap;
}

std::vector<sched::RunningJob> Cluster::RunningJobs(int64_t now) const {
  std::vector<sched::RunningJob> out;
  for (const Job& job : jobs_) {
    if (job.state != JobState::kRunning && job.state != JobState::kCompleting) continue;
    const int64_t end =
        job.time_limit_s >= 0 ? job.start_time + job.time_limit_s : now + kUnlimitedRunS;
    out.push_back({&job, std::max(end, now)});
  }
  return out;
}

uint32_t Cluster::PriorityOf(const Job& job, int64_t now) const {
  if (job.held) return 0;
  if (job.admin_priority > 0) return job.admin_priority;
  // priority/basic needs nothing of the cluster (a submission stays cheap).
  if (!cfg_.priority.multifactor) return sched::BasicPriority(job);
  sched::PriorityCalculator calc(cfg_, shares_ ? &*shares_ : nullptr, now, &accounts_);
  return calc.Priority(job);
}

void Cluster::AdvanceUsage(int64_t now) { AdvanceUsage(now, RunningJobs(now)); }

void Cluster::AdvanceUsage(int64_t now, const std::vector<sched::RunningJob>& running) {
  std::vector<sched::UsageCharge> charges;
  charges.reserve(running.size());
  for (const sched::RunningJob& r : running) charges.push_back(ChargeOf(*r.job, cfg_, accounts_));
  usage_.Advance(now, charges);
}

sched::ShareTree Cluster::Shares(std::vector<sched::AssocKey> also) const {
  for (const auto& [key, used] : usage_.usage()) also.push_back(key);
  std::erase_if(
      also, [&](const sched::AssocKey& k) { return accounts_.HasAssociation(k.first, k.second); });
  std::vector<sched::Association> assocs = sched::DefaultAssociations(also);
  // sacctmgr's accounts replace the defaults of the same name.
  std::erase_if(assocs, [&](const sched::Association& a) {
    return a.user.empty() && accounts_.FindAccount(a.account) != nullptr;
  });
  for (const core::AccountRecord& a : accounts_.accounts()) {
    if (a.name != "root") assocs.push_back({a.name, "", a.parent, a.shares});
  }
  for (const core::UserAssociation& a : accounts_.associations()) {
    assocs.push_back({a.account, a.user, "", a.shares});
  }
  return sched::ShareTree::Build(assocs, usage_.usage(), cfg_.priority.fair_tree);
}

void Cluster::Reprioritize(sched::Snapshot* snap) {
  const sched::ShareTree* shares = nullptr;
  if (cfg_.priority.multifactor) {
    AdvanceUsage(snap->now, snap->running);  // the snapshot's, not a second walk
    std::vector<sched::AssocKey> keys;
    keys.reserve(snap->pending.size());
    for (const Job* job : snap->pending) keys.emplace_back(job->req.account, job->req.user_name);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    shares_ = Shares(std::move(keys));
    shares = &*shares_;
  }
  for (const sched::JobPriority& p : sched::OrderQueue(snap, shares)) {
    jobs_.At(p.job_id).priority = p.priority;
  }
}

void Cluster::ReleaseResources(Job& job, int64_t now) {
  usage_.ChargeEnded(ChargeOf(job, cfg_, accounts_), now);
  util::Status st = sched::ReleaseJob(job.alloc, Lookup());
  if (!st.ok()) util::LogError("job {}: releasing its allocation: {}", job.id, st.message());
  if (job.array_job_id != 0) {
    auto running = array_running_.find(job.array_job_id);
    if (running != array_running_.end() && --running->second <= 0) array_running_.erase(running);
  }
  for (const auto& a : job.alloc) {
    if (core::Node* node = FindNode(a.node)) node->last_busy = now;
  }
}

Job& Cluster::SplitTask(Job& part, int task) {
  auto& pending = part.array_pending;
  auto it = std::lower_bound(pending.begin(), pending.end(), task);
  if (pending.size() == 1) {
    part.array_task_id = task;
    pending.clear();
    MarkJob(part.id);
    return part;
  }
  if (it != pending.end() && *it == task) pending.erase(it);
  // The copy must not carry the (possibly long) list of pending tasks.
  std::vector<int> rest = std::move(part.array_pending);
  Job split = part;
  part.array_pending = std::move(rest);
  split.array_task_id = task;
  split.id = NewJobId();
  const JobId id = split.id;
  Job& added = jobs_.Put(std::move(split));
  pending_ids_.insert(id);
  MarkJob(part.id);
  MarkJob(id);
  return added;
}

sched::UsageCharge ChargeOf(const Job& job, const config::Config& cfg,
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

}  // namespace muster::cluster

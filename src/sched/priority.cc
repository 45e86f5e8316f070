#include "sched/priority.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "core/tres.h"
#include "sched/pipeline.h"

namespace muster::sched {
namespace {

// Slurm's priority/basic counts down from this value in submission order.
constexpr uint32_t kBasePriority = 4294901760u;

// How much of a TRES weight's resource a node has.
double NodeAmount(const core::NodeConfig& node, const std::string& tres) {
  if (tres == "cpu") return node.cpus;
  if (tres == "mem") return static_cast<double>(node.real_memory_mb);
  if (tres == "node") return 1;
  if (tres.starts_with("gres/")) {
    const std::string name = tres.substr(5);
    double sum = 0;
    for (const core::GresSpec& g : node.gres) {
      if (g.name == name) sum += static_cast<double>(g.count);
    }
    return sum;
  }
  return 0;
}

// How much of it a pending job asks for.
double JobAmount(const core::Job& job, const core::Tres& tres, const std::string& name) {
  if (name == "cpu") return static_cast<double>(tres.cpus);
  if (name == "mem") return static_cast<double>(tres.mem_mb);
  if (name == "node") return static_cast<double>(tres.nodes);
  if (name == "gres/gpu") return static_cast<double>(tres.gpus);
  if (name.starts_with("gres/")) {
    const std::string gres = name.substr(5);
    double sum = 0;
    for (const core::GresRequest& g : job.req.gres) {
      if (g.name == gres) sum += static_cast<double>(g.per_job ? g.count : g.count * tres.nodes);
    }
    return sum;
  }
  return 0;
}

}  // namespace

uint32_t BasicPriority(const core::Job& job) {
  const int64_t order = job.array_job_id != 0 ? job.array_job_id : job.id;
  const int64_t p = static_cast<int64_t>(kBasePriority) - order - job.req.nice;
  return static_cast<uint32_t>(std::clamp<int64_t>(p, 1, UINT32_MAX));
}

PriorityCalculator::PriorityCalculator(const config::Config& cfg, const ShareTree* shares,
                                       int64_t now, const core::AccountTable* accounts)
    : cfg_(cfg), shares_(shares), now_(now), accounts_(accounts) {
  if (accounts_ != nullptr) {
    for (const core::QosRecord& q : accounts_->qos()) {
      max_qos_priority_ = std::max(max_qos_priority_, static_cast<double>(q.priority));
    }
  }
  // Nodes by name, for the partitions' TRES totals.
  std::unordered_map<std::string_view, const core::NodeConfig*> by_name;  // lookups only
  if (!cfg.priority.weight_tres.empty()) by_name.reserve(cfg.nodes.size());
  for (const core::NodeConfig& n : cfg.nodes) {
    total_nodes_ += 1;
    total_cpus_ += n.cpus;
    if (!cfg.priority.weight_tres.empty()) by_name.emplace(n.name, &n);
  }
  int max_factor = 0;
  for (const core::Partition& p : cfg.partitions) {
    max_factor = std::max(max_factor, p.priority_job_factor);
  }
  for (const core::Partition& p : cfg.partitions) {
    PartitionTotals& t = partitions_[p.name];
    t.partition_factor =
        max_factor > 0 ? static_cast<double>(p.priority_job_factor) / max_factor : 0;
    core::Job probe;
    probe.partition = p.name;
    t.memory = cfg.MemoryDefaultsFor(probe);
    t.tres.assign(cfg.priority.weight_tres.size(), 0);
    if (t.tres.empty()) continue;
    for (const std::string& name : p.nodes) {
      auto node = by_name.find(name);
      if (node == by_name.end()) continue;
      for (size_t k = 0; k < t.tres.size(); ++k) {
        t.tres[k] += NodeAmount(*node->second, cfg.priority.weight_tres[k].name);
      }
    }
  }
}

const PriorityCalculator::PartitionTotals* PriorityCalculator::TotalsOf(
    const core::Job& job) const {
  const std::string first = job.partition.substr(0, job.partition.find(','));
  auto it = partitions_.find(first);
  return it == partitions_.end() ? nullptr : &it->second;
}

PriorityFactors PriorityCalculator::Factors(const core::Job& job) const {
  const config::PriorityConfig& pc = cfg_.priority;
  PriorityFactors f;
  f.nice = job.req.nice;
  if (job.eligible_time > 0 && now_ >= job.eligible_time) {
    f.age = pc.max_age_s > 0 ? std::min(1.0, static_cast<double>(now_ - job.eligible_time) /
                                                 static_cast<double>(pc.max_age_s))
                             : 1.0;
  }
  if (shares_ != nullptr) f.fairshare = shares_->Factor(job.req.account, job.req.user_name);
  if (accounts_ != nullptr && max_qos_priority_ > 0) {
    const core::QosRecord* q = accounts_->FindQos(core::QosName(job.req));
    if (q != nullptr) {
      f.qos = static_cast<double>(std::max<int64_t>(q->priority, 0)) / max_qos_priority_;
    }
  }
  const PartitionTotals* totals = TotalsOf(job);
  const core::Tres tres =
      core::JobTres(job, totals != nullptr ? totals->memory : cfg_.MemoryDefaultsFor(job));
  if (total_nodes_ > 0 && total_cpus_ > 0) {
    const double size = (std::min(static_cast<double>(tres.nodes), total_nodes_) / total_nodes_ +
                         std::min(static_cast<double>(tres.cpus), total_cpus_) / total_cpus_) /
                        2;
    f.job_size = pc.favor_small ? 1 - size : size;
  }
  f.tres.assign(pc.weight_tres.size(), 0);
  if (totals != nullptr) {
    f.partition = totals->partition_factor;
    for (size_t k = 0; k < f.tres.size(); ++k) {
      if (totals->tres[k] > 0) {
        f.tres[k] = std::min(1.0, JobAmount(job, tres, pc.weight_tres[k].name) / totals->tres[k]);
      }
    }
  }
  double sum = static_cast<double>(pc.weight_age) * f.age +
               static_cast<double>(pc.weight_assoc) * f.assoc +
               static_cast<double>(pc.weight_fairshare) * f.fairshare +
               static_cast<double>(pc.weight_job_size) * f.job_size +
               static_cast<double>(pc.weight_partition) * f.partition +
               static_cast<double>(pc.weight_qos) * f.qos;
  for (size_t k = 0; k < f.tres.size(); ++k) sum += pc.weight_tres[k].weight * f.tres[k];
  sum -= f.nice;
  f.priority = static_cast<uint32_t>(std::clamp(std::floor(sum), 1.0, 4294967295.0));
  return f;
}

uint32_t PriorityCalculator::Priority(const core::Job& job) const {
  if (job.admin_priority > 0) return job.admin_priority;
  return cfg_.priority.multifactor ? Factors(job).priority : BasicPriority(job);
}

namespace {

// OrderByPriority by `priority[k]` for (*jobs)[k].
void OrderBy(std::vector<const core::Job*>* jobs, const std::vector<uint32_t>& priority,
             const config::Config& cfg) {
  struct Keyed {
    int tier;  // PriorityTier of the job's (first) partition, looked up once per job
    uint32_t priority;
    const core::Job* job;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(jobs->size());
  std::map<std::string, int, std::less<>> tiers;
  for (const core::Partition& p : cfg.partitions) tiers.emplace(p.name, p.priority_tier);
  for (size_t k = 0; k < jobs->size(); ++k) {
    const core::Job* j = (*jobs)[k];
    auto it = tiers.find(std::string_view(j->partition).substr(0, j->partition.find(',')));
    keyed.push_back(Keyed{it == tiers.end() ? 0 : it->second, priority[k], j});
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.job->id < b.job->id;
  });
  for (size_t k = 0; k < keyed.size(); ++k) (*jobs)[k] = keyed[k].job;
}

}  // namespace

void OrderByPriority(std::vector<const core::Job*>* jobs, const config::Config& cfg) {
  std::vector<uint32_t> priority;
  priority.reserve(jobs->size());
  for (const core::Job* j : *jobs) priority.push_back(j->priority);
  OrderBy(jobs, priority, cfg);
}

std::vector<JobPriority> OrderQueue(Snapshot* snapshot, const ShareTree* shares) {
  const std::unique_ptr<QueueSortStage> sort = QueueSortFor(*snapshot, shares);
  std::vector<uint32_t> priority;
  std::vector<JobPriority> out;
  priority.reserve(snapshot->pending.size());
  out.reserve(snapshot->pending.size());
  for (const core::Job* j : snapshot->pending) {
    priority.push_back(sort->Priority(*j));
    out.push_back(JobPriority{j->id, priority.back()});
  }
  OrderBy(&snapshot->pending, priority, *snapshot->config);
  return out;
}

}  // namespace muster::sched

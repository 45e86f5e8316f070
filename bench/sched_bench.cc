// The scheduler core on a synthetic cluster, timed in this process (no
// daemon): sched_bench [NODES] [PENDING] [SEED]
//
// NODES nodes of 8 GPUs of three types (h100, a100, l40s) with features,
// 64 CPUs and 1 TB each, in two partitions (all nodes; the h100 nodes);
// half the cluster busy with running jobs ending over the next day;
// PENDING jobs of mixed shapes (1, 2, 4 or 8 GPUs on one node, 2-8 whole
// nodes, CPU-only, constrained to a GPU type, arrays of 100 tasks) from 50
// users in 10 accounts, submitted over the last week. It prints, for one
// full pass as musterd runs it:
//   priority   multifactor priority of every pending job (fairshare tree
//              over the accounts' usage) and the sort
//   schedule   sched::Schedule: placement, and backfill planning of every
//              job that cannot start now (its start is squeue --start's),
//              once with the default QOS limiting each user's running jobs
//              and GPUs and each account's GPUs (most jobs then wait for a
//              limit, not to be planned), once without limits
// and the heap held per pending job (core::Job as the controller keeps it).
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "sched/fairshare.h"
#include "sched/priority.h"
#include "sched/scheduler.h"

namespace {

using namespace muster;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Heap in use, large (mmap'd) blocks included.
size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

const char* kTypes[] = {"h100", "a100", "l40s"};

config::Config MakeConfig(int nodes) {
  config::Config cfg;
  cfg.cluster_name = "bench";
  cfg.def_mem_per_cpu_mb = 4000;
  cfg.priority.multifactor = true;
  cfg.priority.weight_age = 1000;
  cfg.priority.weight_fairshare = 10000;
  cfg.priority.weight_job_size = 1000;
  cfg.priority.weight_partition = 1000;
  core::Partition all;
  all.name = "batch";
  all.is_default = true;
  core::Partition h100;
  h100.name = "h100";
  h100.priority_job_factor = 2;
  for (int i = 0; i < nodes; ++i) {
    core::NodeConfig n;
    char name[32];
    std::snprintf(name, sizeof name, "n%05d", i);
    n.name = name;
    n.cpus = 64;
    n.sockets = 2;
    n.cores_per_socket = 32;
    n.real_memory_mb = 1024 * 1024;
    // A type per block of 8 nodes, as racks are bought.
    const char* type = kTypes[(i / 8) % 3];
    n.gres.push_back(core::GresSpec{"gpu", type, 8, {}});
    n.features = {type, i % 2 ? "ib" : "eth"};
    all.nodes.push_back(n.name);
    if (type == std::string("h100")) h100.nodes.push_back(n.name);
    cfg.nodes.push_back(std::move(n));
  }
  all.nodes_expr = "ALL";
  cfg.partitions = {all, h100};
  return cfg;
}

core::Job MakePending(core::JobId id, std::mt19937_64& rng, int64_t now) {
  core::Job job;
  job.id = id;
  job.state = core::JobState::kPending;
  job.submit_time = now - static_cast<int64_t>(rng() % (7 * 86400));
  job.eligible_time = job.submit_time;
  const int user = static_cast<int>(rng() % 50);
  job.req.user_name = "user" + std::to_string(user);
  job.req.uid = 20000 + static_cast<uint32_t>(user);
  job.req.account = "acct" + std::to_string(user % 10);
  job.partition = rng() % 5 == 0 ? "h100" : "batch";
  job.req.partition = job.partition;
  job.time_limit_s = 600 * static_cast<int64_t>(1 + rng() % 48);
  job.req.time_limit_s = job.time_limit_s;
  job.req.cpus_per_task = 1;
  switch (rng() % 10) {
    case 0:  // CPU-only
      job.req.ntasks = 1 + static_cast<int>(rng() % 16);
      break;
    case 1:  // whole nodes
    case 2: {
      const int nodes = 2 << (rng() % 3);
      job.req.min_nodes = job.req.max_nodes = nodes;
      job.req.ntasks = nodes * 8;
      job.req.gres.push_back({"gpu", "", 8, false});
      break;
    }
    case 3:  // one GPU type
      job.req.gres.push_back(
          {"gpu", kTypes[rng() % 3], 1 + static_cast<int64_t>(rng() % 4), false});
      job.req.ntasks = 4;
      break;
    default: {
      const int64_t gpus = int64_t{1} << (rng() % 4);
      job.req.gres.push_back({"gpu", "", gpus, false});
      job.req.ntasks = static_cast<int>(gpus);
      job.req.cpus_per_task = 4;
      break;
    }
  }
  if (rng() % 50 == 0) {
    job.array_job_id = id;
    for (int t = 0; t < 100; ++t) job.array_pending.push_back(t);
  }
  return job;
}

}  // namespace

int main(int argc, char** argv) {
  const int node_count = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int pending_count = argc > 2 ? std::atoi(argv[2]) : 10000;
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  if (node_count < 8 || pending_count < 1) {
    std::fprintf(stderr, "usage: sched_bench [NODES>=8] [PENDING>=1] [SEED]\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  const int64_t now = 1'800'000'000;
  config::Config cfg = MakeConfig(node_count);
  std::vector<core::Node> nodes;
  nodes.reserve(cfg.nodes.size());
  for (const auto& nc : cfg.nodes) {
    core::Node n;
    n.config = nc;
    n.registered = true;
    n.gpu_used.assign(8, false);
    n.cpu_used.assign(64, false);
    nodes.push_back(std::move(n));
  }
  // Half the nodes busy: one 8-GPU job each, ending over the next day.
  std::vector<core::Job> running;
  running.reserve(nodes.size() / 2);
  for (size_t i = 0; i < nodes.size(); i += 2) {
    core::Job job;
    job.id = 1'000'000 + static_cast<core::JobId>(i);
    job.state = core::JobState::kRunning;
    job.req.account = "acct" + std::to_string(i % 10);
    job.req.user_name = "user" + std::to_string(i % 50);
    job.partition = "batch";
    job.start_time = now - 3600;
    job.time_limit_s = 3600 + static_cast<int64_t>(rng() % 86400);
    core::NodeAlloc a;
    a.node = nodes[i].config.name;
    a.cpus = 32;
    a.mem_mb = 128000;
    a.gpu_indices = {0, 1, 2, 3, 4, 5, 6, 7};
    job.alloc = {a};
    if (!sched::ApplyStart(job.alloc, std::vector<core::Node*>{&nodes[i]}).ok()) return 1;
    running.push_back(std::move(job));
  }

  const size_t heap_before = HeapInUse();
  std::vector<core::Job> pending;
  pending.reserve(static_cast<size_t>(pending_count));
  for (int i = 0; i < pending_count; ++i) {
    pending.push_back(MakePending(static_cast<core::JobId>(i + 1), rng, now));
  }
  const size_t heap_jobs = HeapInUse() - heap_before;

  // Limits as a shared cluster sets them: every user at most 200 running
  // jobs and 64 GPUs under the default QOS, every account at most 2,000 GPUs.
  core::AccountTable accounts;
  core::QosSettings qos;
  qos.max_jobs_per_user = 200;
  qos.max_tres_per_user = core::TresLimits{-1, -1, -1, 64};
  accounts.ModifyQos({"normal"}, qos);
  core::AccountSettings account;
  account.limits.grp_tres = core::TresLimits{-1, -1, -1, 2000};
  std::vector<std::string> names;
  for (int a = 0; a < 10; ++a) names.push_back("acct" + std::to_string(a));
  accounts.AddAccounts(names, account, "bench");

  sched::Snapshot snap;
  snap.config = &cfg;
  snap.accounts = &accounts;
  snap.now = now;
  for (auto& n : nodes) snap.nodes.push_back(&n);
  for (const auto& r : running) snap.running.push_back({&r, r.start_time + r.time_limit_s});
  for (const auto& p : pending) snap.pending.push_back(&p);

  // Usage: the accounts have used the cluster unevenly.
  std::map<sched::AssocKey, double> usage;
  for (int u = 0; u < 50; ++u) {
    usage[{"acct" + std::to_string(u % 10), "user" + std::to_string(u)}] = 1e6 * (1 + u % 7);
  }

  auto t0 = std::chrono::steady_clock::now();
  std::vector<sched::AssocKey> keys;
  for (const core::Job* j : snap.pending) keys.emplace_back(j->req.account, j->req.user_name);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const auto& [key, used] : usage) keys.push_back(key);
  sched::ShareTree shares = sched::ShareTree::Build(sched::DefaultAssociations(keys), usage, true);
  // The queue sort of the core, as musterd runs it; the priorities go to
  // the jobs, where the pass reads them.
  for (const sched::JobPriority& p : sched::OrderQueue(&snap, &shares)) {
    pending[static_cast<size_t>(p.job_id - 1)].priority = p.priority;
  }
  const double t_priority = Seconds(t0);

  t0 = std::chrono::steady_clock::now();
  sched::Plan plan = sched::Schedule(snap);
  const double t_schedule = Seconds(t0);

  std::printf("cluster: %d nodes x 8 GPUs, %zu running jobs, %d pending jobs\n", node_count,
              running.size(), pending_count);
  std::printf("priority  %8.3f s  (%zu associations)\n", t_priority, shares.rows().size());
  auto report = [&](const char* what, const sched::Plan& p, double t) {
    std::printf("schedule  %8.3f s  %s: %zu started, %zu pending, %zu of them planned\n", t, what,
                p.starts.size(), p.pending.size(), p.planned.size());
  };
  report("with QOS and account limits", plan, t_schedule);
  // Without the limits every job reaches placement, and backfill plans each
  // one that cannot start now (within bf_window, one day).
  snap.accounts = nullptr;
  t0 = std::chrono::steady_clock::now();
  sched::Plan unlimited = sched::Schedule(snap);
  const double t_unlimited = Seconds(t0);
  report("without limits", unlimited, t_unlimited);
  std::printf("full pass %8.3f s  (priority and the slower schedule)\n",
              t_priority + std::max(t_schedule, t_unlimited));
  std::printf("memory    %8.0f bytes per pending job (core::Job and its heap)\n",
              static_cast<double>(heap_jobs) / pending_count);
  return 0;
}

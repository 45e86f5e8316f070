#include "ctld/job_env.h"

#include <map>

#include "core/array.h"
#include "core/tres.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace muster::ctld {

namespace {

// An array task's SLURM_ARRAY_* (its SLURM_JOB_ID stays its own raw id). The
// statistics describe the whole array as submitted, whatever has run.
void SetArrayVariables(const core::Job& job, const config::Config& cfg,
                       std::map<std::string, std::string>& env) {
  // Every task of an array asks the same: parse its spec once, not per task
  // (a 10,000-task spec costs a sort).
  static std::string cached_spec;
  static core::ArrayStats cached_stats;
  core::ArrayStats stats{1, job.array_task_id, job.array_task_id, 1};
  if (job.req.array_spec == cached_spec && !cached_spec.empty()) {
    stats = cached_stats;
  } else if (util::Result<core::ArraySpec> spec =
                 core::ParseArraySpec(job.req.array_spec, cfg.max_array_size);
             spec.ok()) {
    stats = core::StatsOf(*spec);
    cached_spec = job.req.array_spec;
    cached_stats = stats;
  }
  env["SLURM_ARRAY_JOB_ID"] = std::to_string(job.array_job_id);
  env["SLURM_ARRAY_TASK_ID"] = std::to_string(job.array_task_id);
  env["SLURM_ARRAY_TASK_COUNT"] = std::to_string(stats.count);
  env["SLURM_ARRAY_TASK_MIN"] = std::to_string(stats.min);
  env["SLURM_ARRAY_TASK_MAX"] = std::to_string(stats.max);
  env["SLURM_ARRAY_TASK_STEP"] = std::to_string(stats.step);
}

// The nodes, tasks and CPUs of the allocation.
void SetLayoutVariables(const core::Job& job, std::map<std::string, std::string>& env) {
  const core::JobRequest& req = job.req;
  std::vector<std::string> node_names;
  std::vector<int> cpus_per_node, tasks_per_node;
  for (const auto& a : job.alloc) {
    node_names.push_back(a.node);
    cpus_per_node.push_back(a.cpus);
    tasks_per_node.push_back(a.tasks);
  }
  const std::string nodelist = util::CompressHostlist(node_names);
  const std::string nnodes = std::to_string(job.alloc.size());
  env["SLURM_JOB_NODELIST"] = env["SLURM_NODELIST"] = nodelist;
  env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = nnodes;
  env["SLURM_JOB_CPUS_PER_NODE"] = util::CompressCounts(cpus_per_node);
  env["SLURM_TASKS_PER_NODE"] = util::CompressCounts(tasks_per_node);
  if (req.ntasks > 0 || req.ntasks_per_node > 0) {
    // What -n asked for: -N 2 -n 3 --ntasks-per-node=2 counts 2 tasks on
    // each node (NumTasks=4) but SLURM_NTASKS=3.
    const std::string ntasks = std::to_string(req.ntasks > 0 ? req.ntasks : job.NumTasks());
    env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = ntasks;
  }
  if (req.ntasks_per_node > 0) env["SLURM_NTASKS_PER_NODE"] = std::to_string(req.ntasks_per_node);
  if (req.cpus_per_task_set) env["SLURM_CPUS_PER_TASK"] = std::to_string(req.cpus_per_task);
  if (req.cpus_per_gpu > 0) env["SLURM_CPUS_PER_GPU"] = std::to_string(req.cpus_per_gpu);
  if (req.mem_per_gpu_mb > 0) env["SLURM_MEM_PER_GPU"] = std::to_string(req.mem_per_gpu_mb);
}

// Memory as Slurm states it: per CPU when it came from --mem-per-cpu or
// DefMemPerCPU, else per node (--mem, --mem=0, or the whole node).
void SetMemoryVariable(const core::Job& job, const config::Config& cfg,
                       const core::NodeAlloc& first, std::map<std::string, std::string>& env) {
  if (const int64_t per_cpu = core::MemoryPerCpuMb(job.req, cfg.def_mem_per_cpu_mb); per_cpu > 0) {
    env["SLURM_MEM_PER_CPU"] = std::to_string(per_cpu);
  } else {
    env["SLURM_MEM_PER_NODE"] = std::to_string(first.mem_mb);
  }
}

// The node's place in the network: its switches from the top down, then
// itself ("s0.s1.gpu01", pattern "switch.switch.node"); the node alone
// without topology/tree.
void SetTopologyVariables(const config::Config& cfg, const std::string& node,
                          std::map<std::string, std::string>& env) {
  std::string addr = node, pattern = "node";
  if (auto leaf = cfg.leaf_of_node.find(node); leaf != cfg.leaf_of_node.end()) {
    for (int sw = leaf->second; sw >= 0; sw = cfg.switches[sw].parent) {
      addr = cfg.switches[sw].name + "." + addr;
      pattern = "switch." + pattern;
    }
  }
  env["SLURM_TOPOLOGY_ADDR"] = addr;
  env["SLURM_TOPOLOGY_ADDR_PATTERN"] = pattern;
}

// What the batch step's own node gives it: CPUs, name, memory, GPUs.
void SetBatchNodeVariables(const core::Job& job, const config::Config& cfg,
                           const core::NodeAlloc& first, const std::vector<std::string>& mig_uuids,
                           std::map<std::string, std::string>& env) {
  env["SLURM_CPUS_ON_NODE"] = std::to_string(first.cpus);
  // slurmd sets HOSTNAME to the node's name, whatever the submitter had.
  env["SLURMD_NODENAME"] = env["HOSTNAME"] = first.node;
  SetTopologyVariables(cfg, first.node, env);
  SetMemoryVariable(job, cfg, first, env);
  if (first.gpu_indices.empty()) return;
  const std::string list = util::JoinInts(first.gpu_indices);
  const std::string visible =
      util::Join(GpuVisibleNames(first.gpu_indices, cfg.cgroup.constrain_devices, mig_uuids), ",");
  // The gres/gpu plugin sets the AMD and Intel names too; SLURM_JOB_GPUS
  // keeps the node's own indices.
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES",
                           "ZE_AFFINITY_MASK"}) {
    env[name] = visible;
  }
  env["SLURM_JOB_GPUS"] = list;
  env["SLURM_GPUS_ON_NODE"] = std::to_string(first.gpu_indices.size());
}

// A heterogeneous job's size, and each component's figures with
// _HET_GROUP_<offset> (and Slurm's older _PACK_GROUP_<offset>) after
// their names, as Slurm sets them beside the first component's own.
void SetHetVariables(const std::vector<const core::Job*>& components, const config::Config& cfg,
                     std::map<std::string, std::string>& env) {
  env["SLURM_HET_SIZE"] = env["SLURM_PACK_SIZE"] = std::to_string(components.size());
  for (const core::Job* c : components) {
    std::map<std::string, std::string> own;
    SetLayoutVariables(*c, own);
    if (!c->alloc.empty()) SetMemoryVariable(*c, cfg, c->alloc.front(), own);
    own["SLURM_JOB_ID"] = std::to_string(c->id);
    own["SLURM_JOB_NAME"] = c->req.name;
    own["SLURM_JOB_PARTITION"] = c->partition;
    own["SLURM_JOB_ACCOUNT"] = c->req.account.empty() ? c->req.user_name : c->req.account;
    own["SLURM_JOB_QOS"] = core::QosName(c->req);
    const std::string offset = std::to_string(c->het_job_offset);
    for (std::string_view name : core::kHetGroupVariables) {
      auto v = own.find(std::string(name));
      if (v == own.end()) continue;
      env[v->first + "_HET_GROUP_" + offset] = v->second;
      env[v->first + "_PACK_GROUP_" + offset] = v->second;
    }
  }
}

}  // namespace

std::vector<std::string> GpuVisibleNames(const std::vector<int>& indices, bool confined,
                                         const std::vector<std::string>& mig_uuids) {
  std::vector<std::string> out;
  for (size_t k = 0; k < indices.size(); ++k) {
    const auto index = static_cast<size_t>(indices[k]);
    if (index < mig_uuids.size() && !mig_uuids[index].empty()) {
      out.push_back(mig_uuids[index]);
    } else {
      out.push_back(std::to_string(confined ? static_cast<int>(k) : indices[k]));
    }
  }
  return out;
}

std::vector<std::string> BuildBatchEnvironment(const core::Job& job, const config::Config& cfg,
                                               const std::vector<std::string>& user_env,
                                               const std::vector<const core::Job*>& het,
                                               const std::vector<std::string>& batch_mig_uuids) {
  // Later assignments win: user variables first, Slurm's on top, as Slurm
  // overrides SLURM_* names the submitter happened to carry.
  std::map<std::string, std::string> env;
  for (const auto& kv : user_env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // A submission from inside a step (--export=ALL) carries its step id; the
  // batch shell is no step, and muster-step tells step processes from the
  // shell's own by that variable (signals reach steps only, as in Slurm).
  env.erase("SLURM_STEP_ID");
  env.erase("SLURM_STEPID");
  const core::JobRequest& req = job.req;
  auto set = [&](const std::string& k, const std::string& v) { env[k] = v; };
  std::string id = std::to_string(job.id);
  set("SLURM_JOB_ID", id);
  set("SLURM_JOBID", id);
  if (job.array_job_id != 0 && job.array_task_id >= 0) SetArrayVariables(job, cfg, env);
  set("SLURM_JOB_NAME", req.name);
  SetLayoutVariables(job, env);
  if (!job.alloc.empty()) SetBatchNodeVariables(job, cfg, job.alloc.front(), batch_mig_uuids, env);
  set("ENVIRONMENT", "BATCH");
  // slurmstepd gives a job without TMPDIR the node's TmpFS.
  if (env.count("TMPDIR") == 0) set("TMPDIR", cfg.tmp_fs);
  set("SLURM_SUBMIT_DIR", req.submit_dir.empty() ? req.work_dir : req.submit_dir);
  set("SLURM_SUBMIT_HOST", req.submit_host);
  set("SLURM_JOB_PARTITION", job.partition);
  set("SLURM_JOB_ACCOUNT", req.account.empty() ? req.user_name : req.account);
  set("SLURM_JOB_QOS", core::QosName(req));
  set("SLURM_JOB_USER", req.user_name);
  set("SLURM_JOB_UID", std::to_string(req.uid));
  set("SLURM_JOB_GID", std::to_string(req.gid));
  set("SLURM_CLUSTER_NAME", cfg.cluster_name);
  set("SLURM_CONF", cfg.path);
  set("SLURM_GTIDS", "0");
  set("SLURM_PROCID", "0");
  set("SLURM_LOCALID", "0");
  set("SLURM_NODEID", "0");
  set("SLURM_PRIO_PROCESS", "0");
  // A requeued job knows which run it is (Slurm sets it from the first requeue).
  if (job.restart_count > 0) set("SLURM_RESTART_COUNT", std::to_string(job.restart_count));
  if (!het.empty()) SetHetVariables(het, cfg, env);
  set("SLURM_NODE_ALIASES", "(null)");
  std::vector<std::string> out;
  out.reserve(env.size());
  for (auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace muster::ctld

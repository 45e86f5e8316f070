#include "ctld/job_env.h"

#include <gtest/gtest.h>

#include <map>

namespace muster::ctld {
namespace {

std::map<std::string, std::string> AsMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const auto& kv : env) m[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  return m;
}

TEST(BuildBatchEnvironment, SetsSlurmVariablesOverUserOnes) {
  config::Config cfg;
  cfg.cluster_name = "c1";
  cfg.path = "/etc/muster/muster.conf";
  core::Job job;
  job.id = 42;
  job.partition = "gpu";
  job.req.name = "train";
  job.req.ntasks = 4;
  job.req.cpus_per_task = 2;
  job.req.cpus_per_task_set = true;
  job.req.user_name = "alice";
  job.req.uid = 1000;
  job.req.work_dir = "/home/alice/run";
  job.req.submit_dir = "/home/alice";
  job.alloc = {{"gpu01", 4, 8000, 2, {0, 3}}, {"gpu02", 4, 8000, 2, {1, 2}}};
  auto env = AsMap(BuildBatchEnvironment(
      job, cfg, {"SLURM_JOB_ID=1", "HOME=/home/alice", "SLURM_STEP_ID=3", "SLURM_STEPID=3"}));
  EXPECT_EQ(env["SLURM_JOB_ID"], "42");
  // Submitted from inside a step: the batch shell is no step.
  EXPECT_EQ(env.count("SLURM_STEP_ID") + env.count("SLURM_STEPID"), 0u);
  EXPECT_EQ(env["HOME"], "/home/alice");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "gpu[01-02]");
  EXPECT_EQ(env["SLURM_JOB_NUM_NODES"], "2");
  EXPECT_EQ(env["SLURM_NTASKS"], "4");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x2)");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "4(x2)");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "4");
  EXPECT_EQ(env["SLURMD_NODENAME"], "gpu01");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,3");
  EXPECT_EQ(env["SLURM_GPUS_ON_NODE"], "2");
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "8000");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/home/alice");
  EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "c1");
  EXPECT_EQ(env["SLURM_JOB_ACCOUNT"], "alice");
  EXPECT_EQ(env.count("SLURM_NTASKS_PER_NODE"), 0u);
}

TEST(BuildBatchEnvironment, ConfinedGpusAreNumberedFromZero) {
  // ConstrainDevices: CUDA sees only the job's GPUs, so 0 and 3 of the
  // node are its 0 and 1; SLURM_JOB_GPUS keeps the node's indices.
  config::Config cfg;
  cfg.cgroup.constrain_devices = true;
  core::Job job;
  job.id = 7;
  job.alloc = {{"gpu01", 4, 8000, 2, {0, 3}}};
  auto env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["GPU_DEVICE_ORDINAL"], "0,1");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "0,3");
  // A MIG instance goes by its UUID, confined or not.
  const std::vector<std::string> mig = {"", "", "", "MIG-3"};
  env = AsMap(BuildBatchEnvironment(job, cfg, {}, {}, mig));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,MIG-3");
  cfg.cgroup.constrain_devices = false;
  env = AsMap(BuildBatchEnvironment(job, cfg, {}, {}, mig));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,MIG-3");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "0,3");
}

TEST(GpuVisibleNames, IndicesOrdinalsOrUuids) {
  EXPECT_EQ(GpuVisibleNames({4, 6}, false, {}), (std::vector<std::string>{"4", "6"}));
  EXPECT_EQ(GpuVisibleNames({4, 6}, true, {}), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(GpuVisibleNames({1}, true, {"MIG-0", "MIG-1"}), (std::vector<std::string>{"MIG-1"}));
}

TEST(BuildBatchEnvironment, StatesMemoryTheWayItWasAsked) {
  // The oracle (DefMemPerCPU=1000): the default job and --mem-per-cpu=500
  // see SLURM_MEM_PER_CPU (1000, 500) and no SLURM_MEM_PER_NODE; --mem=2000
  // sees SLURM_MEM_PER_NODE=2000 only.
  config::Config cfg;
  cfg.def_mem_per_cpu_mb = 1000;
  core::Job job;
  job.id = 7;
  job.alloc = {{"cpu01", 3, 3000, 3, {}}};
  auto env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_MEM_PER_CPU"], "1000");
  EXPECT_EQ(env.count("SLURM_MEM_PER_NODE"), 0u);
  job.req.mem_per_cpu_mb = 500;
  env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_MEM_PER_CPU"], "500");
  job.req.mem_per_cpu_mb = 0;
  job.req.mem_per_node_mb = 2000;
  job.alloc[0].mem_mb = 2000;
  env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "2000");
  EXPECT_EQ(env.count("SLURM_MEM_PER_CPU"), 0u);
  // No DefMemPerCPU: the whole node's memory, per node.
  cfg.def_mem_per_cpu_mb = 0;
  job.req.mem_per_node_mb = 0;
  job.alloc[0].mem_mb = 64000;
  env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "64000");
  EXPECT_EQ(env.count("SLURM_MEM_PER_CPU"), 0u);
}

TEST(BuildBatchEnvironment, SetsWhatSlurmdAdds) {
  // The oracle's batch env beyond SLURM_*: ENVIRONMENT=BATCH, HOSTNAME = the
  // node (over the submitter's), TMPDIR=/tmp unless the submitter had one,
  // and the gres/gpu plugin's AMD/Intel names beside CUDA_VISIBLE_DEVICES.
  config::Config cfg;
  core::Job job;
  job.id = 32;
  job.alloc = {{"gpu01", 1, 1000, 1, {0, 1}}};
  auto env = AsMap(BuildBatchEnvironment(job, cfg, {"HOSTNAME=login1"}));
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["HOSTNAME"], "gpu01");
  EXPECT_EQ(env["TMPDIR"], "/tmp");
  EXPECT_EQ(env["ROCR_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["ZE_AFFINITY_MASK"], "0,1");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "0,1");
  env = AsMap(BuildBatchEnvironment(job, cfg, {"TMPDIR=/var/tmp"}));
  EXPECT_EQ(env["TMPDIR"], "/var/tmp");
}

TEST(BuildBatchEnvironment, TasksPerNodeAndTaskCount) {
  // -N2 -n3 --ntasks-per-node=2 on the oracle: SLURM_TASKS_PER_NODE=2(x2),
  // SLURM_NTASKS=3, SLURM_NTASKS_PER_NODE=2; -N2 -n4: 3,1.
  config::Config cfg;
  core::Job job;
  job.id = 75;
  job.req.ntasks = 3;
  job.req.ntasks_per_node = 2;
  job.alloc = {{"cpu02", 2, 2000, 2, {}}, {"gpu01", 2, 2000, 2, {}}};
  auto env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x2)");
  EXPECT_EQ(env["SLURM_NTASKS"], "3");
  EXPECT_EQ(env["SLURM_NPROCS"], "3");
  EXPECT_EQ(env["SLURM_NTASKS_PER_NODE"], "2");
  job.req.ntasks = 4;
  job.req.ntasks_per_node = 0;
  job.alloc = {{"cpu01", 3, 3000, 3, {}}, {"cpu02", 1, 1000, 1, {}}};
  env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "3,1");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "3,1");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "3");
  EXPECT_EQ(env["SLURM_NTASKS"], "4");
}

TEST(BuildBatchEnvironment, SetsArrayVariablesForTasks) {
  // sbatch --array=1,3,5-7%2 --wrap='env | grep SLURM': task 1 (raw id
  // 14404) saw SLURM_ARRAY_JOB_ID=14403 SLURM_ARRAY_TASK_COUNT=5
  // SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_MIN=1
  // SLURM_ARRAY_TASK_STEP=1 SLURM_JOB_ID=14404.
  config::Config cfg;
  core::Job job;
  job.id = 14404;
  job.array_job_id = 14403;
  job.array_task_id = 1;
  job.array_max_running = 2;
  job.req.array_spec = "1,3,5-7%2";
  job.alloc = {{"cpu01", 1, 100, 1, {}}};
  auto env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_JOB_ID"], "14404");
  EXPECT_EQ(env["SLURM_JOBID"], "14404");
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "14403");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "1");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "5");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MIN"], "1");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], "7");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_STEP"], "1");

  // --array=0-10:5,20: SLURM_ARRAY_TASK_STEP=5 in every task.
  job.req.array_spec = "0-10:5,20";
  job.array_task_id = 20;
  env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env["SLURM_ARRAY_TASK_STEP"], "5");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "4");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], "20");
}

TEST(BuildBatchEnvironment, NoArrayVariablesOutsideArrays) {
  // A plain job's env has none of them (diff of `env` in both kinds).
  config::Config cfg;
  core::Job job;
  job.id = 14478;
  job.alloc = {{"cpu01", 1, 100, 1, {}}};
  auto env = AsMap(BuildBatchEnvironment(job, cfg, {}));
  EXPECT_EQ(env.count("SLURM_ARRAY_JOB_ID"), 0u);
  EXPECT_EQ(env.count("SLURM_ARRAY_TASK_ID"), 0u);
}

}  // namespace
}  // namespace muster::ctld

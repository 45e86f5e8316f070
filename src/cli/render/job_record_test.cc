// `scontrol show job` records against Slurm 22.05.8 (the "anchor" oracle
// cluster described in squeue_render_test.cc; jobs submitted as root from
// /tmp/sqo). Each test names the oracle command and submission. Known,
// deliberate differences from Slurm:
//   AllocNode:Sid  Muster records no session id: "localhost:0" where Slurm
//                  printed "localhost:6183".
//   CPU_IDs        Muster hands out the lowest free ids of a node ("0-3"
//                  on an empty node) where Slurm's cons_tres printed the
//                  cores it chose ("9,11-13"); see CpuIdsShowTheAllocation.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <string>
#include <vector>

#include "cli/render/format_util.h"
#include "cli/render/render.h"
#include "util/hostlist.h"
#include "util/users.h"

namespace muster::render {
namespace {

using core::Job;
using core::JobState;
using core::PendingReason;

class UtcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};
[[maybe_unused]] ::testing::Environment* const kUtc =
    ::testing::AddGlobalTestEnvironment(new UtcEnvironment);

constexpr int64_t k154458 = 1796226298;  // 2026-12-02T15:44:58Z
constexpr int64_t k154616 = 1796226376;  // 2026-12-02T15:46:16Z
constexpr int64_t k154645 = 1796226405;  // 2026-12-02T15:46:45Z

class RecordJob {
 public:
  RecordJob(core::JobId id, std::string name, int64_t submit) {
    j_.id = id;
    j_.req.name = std::move(name);
    j_.req.user_name = "root";
    j_.req.account = "root";
    j_.req.work_dir = "/tmp/sqo";
    j_.req.submit_host = "localhost";
    j_.req.command = "(null)";
    j_.req.requeue = true;
    j_.partition = "short";
    j_.submit_time = submit;
    j_.eligible_time = submit;
    j_.time_limit_s = 3600;
  }
  RecordJob& Partition(std::string p, int64_t limit) {
    j_.partition = std::move(p);
    j_.time_limit_s = limit;
    return *this;
  }
  RecordJob& Priority(uint32_t p) { j_.priority = p; return *this; }
  RecordJob& Pending(PendingReason r) {
    j_.state = JobState::kPending;
    j_.reason = r;
    return *this;
  }
  RecordJob& Held() {
    j_.held = true;
    j_.eligible_time = 0;
    return Pending(PendingReason::kJobHeldUser);
  }
  // One NodeAlloc per node: cpus, MB, the GPU indices and tasks per node.
  RecordJob& Running(int64_t start, const std::vector<std::string>& nodes, int cpus = 1,
                     int64_t mem = 1000, std::vector<std::vector<int>> gpus = {}, int tasks = 1) {
    j_.state = JobState::kRunning;
    j_.start_time = start;
    for (size_t i = 0; i < nodes.size(); ++i) {
      core::NodeAlloc a;
      a.node = nodes[i];
      a.cpus = cpus;
      a.mem_mb = mem;
      a.tasks = tasks;
      if (i < gpus.size()) a.gpu_indices = gpus[i];
      j_.alloc.push_back(a);
    }
    j_.nodelist = util::CompressHostlist(nodes);
    j_.batch_host = nodes.front();
    return *this;
  }
  RecordJob& Ended(JobState s, int64_t end, int code = 0, int sig = 0) {
    j_.state = s;
    j_.end_time = end;
    j_.exit_code = code;
    j_.exit_signal = sig;
    return *this;
  }
  core::JobRequest& req() { return j_.req; }
  Job Build() const { return j_; }

 private:
  Job j_;
};

class JobRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_.cluster_name = "anchor";
    cfg_.def_mem_per_cpu_mb = 1000;
    for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"}) {
      core::Node node;
      node.config.name = n;
      node.config.cpus = 32;
      node.config.real_memory_mb = 64000;
      if (n[0] == 'g') node.config.gres.push_back({"gpu", "h100", 8, {}, {}});
      cfg_.nodes.push_back(node.config);
      nodes_.push_back(node);
    }
    core::Partition shortp;
    shortp.name = "short";
    shortp.is_default = true;
    shortp.nodes = {"gpu01", "gpu02", "gpu03", "gpu04", "cpu01", "cpu02"};
    core::Partition train;
    train.name = "train";
    train.nodes = {"gpu01", "gpu02", "gpu03", "gpu04"};
    cfg_.partitions = {shortp, train};
  }

  std::string Show(const Job& job, int64_t now, bool one_liner = false, bool details = false) {
    ClusterView view;
    view.users = &util::SystemUserDb();
    view.config = &cfg_;
    for (const core::Node& n : nodes_) view.nodes.push_back(&n);
    view.jobs.push_back(&job);
    view.now = now;
    return RenderJobRecord(job, view, one_liner, details);
  }

  config::Config cfg_;
  std::vector<core::Node> nodes_;
};

// Joins record lines as scontrol's multi-line form does.
std::string Record(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "\n   ") + lines[i];
  return out + "\n   \n\n";
}

TEST_F(JobRecordTest, RunningJobExactBytes) {
  // Oracle: `scontrol show job 1` (sbatch --wrap 'sleep 300' -J test), RunTime 00:01:24.
  Job job = RecordJob(1, "test", k154458).Priority(11085).Running(k154458 + 1, {"cpu01"}).Build();
  EXPECT_EQ(Show(job, k154458 + 1 + 84),
            "JobId=1 JobName=test\n"
            "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
            "   Priority=11085 Nice=0 Account=root QOS=normal\n"
            "   JobState=RUNNING Reason=None Dependency=(null)\n"
            "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
            "   RunTime=00:01:24 TimeLimit=01:00:00 TimeMin=N/A\n"
            "   SubmitTime=2026-12-02T15:44:58 EligibleTime=2026-12-02T15:44:58\n"
            "   AccrueTime=2026-12-02T15:44:58\n"
            "   StartTime=2026-12-02T15:44:59 EndTime=2026-12-02T16:44:59 Deadline=N/A\n"
            "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:44:59 Scheduler=Main\n"
            "   Partition=short AllocNode:Sid=localhost:0\n"
            "   ReqNodeList=(null) ExcNodeList=(null)\n"
            "   NodeList=cpu01\n"
            "   BatchHost=cpu01\n"
            "   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
            "   TRES=cpu=1,mem=1000M,node=1,billing=1\n"
            "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
            "   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0\n"
            "   Features=(null) DelayBoot=00:00:00\n"
            "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
            "   Command=(null)\n"
            "   WorkDir=/tmp/sqo\n"
            "   StdErr=/tmp/sqo/slurm-1.out\n"
            "   StdIn=/dev/null\n"
            "   StdOut=/tmp/sqo/slurm-1.out\n"
            "   Power=\n"
            "   \n"
            "\n");
}

TEST_F(JobRecordTest, OneLiner) {
  // Oracle: `scontrol -o show job 2` (sbatch --wrap 'sleep 300' -J held -H).
  Job held = RecordJob(2, "held", k154458).Held().Build();
  EXPECT_EQ(
      Show(held, k154458 + 90, /*one_liner=*/true),
      "JobId=2 JobName=held UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=0 Nice=0 "
      "Account=root QOS=normal JobState=PENDING Reason=JobHeldUser Dependency=(null) "
      // Muster's addition for pending jobs.
      "Explanation=held by its user (scontrol release to start) Requeue=1 "
      "Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=01:00:00 "
      "TimeMin=N/A SubmitTime=2026-12-02T15:44:58 EligibleTime=Unknown AccrueTime=Unknown "
      "StartTime=Unknown EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 "
      "LastSchedEval=2026-12-02T15:44:58 Scheduler=Main Partition=short AllocNode:Sid=localhost:0 "
      "ReqNodeList=(null) ExcNodeList=(null) NodeList= NumNodes=1 NumCPUs=1 NumTasks=1 "
      "CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=1000M,node=1,billing=1 Socks/Node=* "
      "NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0 "
      "Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
      "Network=(null) Command=(null) WorkDir=/tmp/sqo StdErr=/tmp/sqo/slurm-2.out "
      "StdIn=/dev/null StdOut=/tmp/sqo/slurm-2.out Power= \n");

  // Oracle: `scontrol -o -dd show job 4` (--gres=gpu:2 -p train -t 30), RunTime 00:01:34:
  // the Nodes= item keeps its two extra spaces.
  RecordJob gpu(4, "gpujob", k154458);
  gpu.Partition("train", 1800).Priority(11085).Running(k154458 + 1, {"gpu01"}, 1, 1000, {{0, 1}});
  gpu.req().gres.push_back({"gpu", "", 2, false});
  EXPECT_EQ(
      Show(gpu.Build(), k154458 + 1 + 94, true, true),
      "JobId=4 JobName=gpujob UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=11085 Nice=0 "
      "Account=root QOS=normal JobState=RUNNING Reason=None Dependency=(null) Requeue=1 "
      "Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 DerivedExitCode=0:0 RunTime=00:01:34 "
      "TimeLimit=00:30:00 TimeMin=N/A SubmitTime=2026-12-02T15:44:58 "
      "EligibleTime=2026-12-02T15:44:58 AccrueTime=2026-12-02T15:44:58 "
      "StartTime=2026-12-02T15:44:59 EndTime=2026-12-02T16:14:59 Deadline=N/A SuspendTime=None "
      "SecsPreSuspend=0 LastSchedEval=2026-12-02T15:44:59 Scheduler=Main Partition=train "
      "AllocNode:Sid=localhost:0 ReqNodeList=(null) ExcNodeList=(null) NodeList=gpu01 "
      "BatchHost=gpu01 NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
      "TRES=cpu=1,mem=1000M,node=1,billing=1,gres/gpu=2 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* "
      "CoreSpec=* JOB_GRES=gpu:h100:2   Nodes=gpu01 CPU_IDs=0 Mem=1000 "
      "GRES=gpu:h100:2(IDX:0-1) MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0 "
      "Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
      "Network=(null) Command=(null) WorkDir=/tmp/sqo StdErr=/tmp/sqo/slurm-4.out "
      "StdIn=/dev/null StdOut=/tmp/sqo/slurm-4.out Power= TresPerNode=gres:gpu:2 \n");
}

TEST_F(JobRecordTest, RecordsConcatenateWithBlankLines) {
  // Oracle: `scontrol show job` lists records separated by one empty line;
  // `scontrol -o show job` one line each.
  Job a = RecordJob(1, "a", k154458).Held().Build();
  Job b = RecordJob(2, "b", k154458).Held().Build();
  std::string both = Show(a, k154458) + Show(b, k154458);
  EXPECT_NE(both.find("Power=\n   \n\nJobId=2 JobName=b\n"), std::string::npos);
  std::string lines = Show(a, k154458, true) + Show(b, k154458, true);
  EXPECT_NE(lines.find("Power= \nJobId=2 JobName=b UserId="), std::string::npos);
}

TEST_F(JobRecordTest, ArrayRecords) {
  // sbatch --array=1,3,5-7%2 --wrap='... sleep 45' (14403), tasks 1 (14404)
  // and 3 running: `scontrol show job 14403` and `scontrol -o show job 14403`.
  Job part = RecordJob(14403, "wrap", k154458).Pending(PendingReason::kJobArrayTaskLimit).Build();
  part.array_job_id = 14403;
  part.array_pending = {5, 6, 7};
  part.array_max_running = 2;
  EXPECT_EQ(Show(part, k154616).substr(0, 95),
            "JobId=14403 ArrayJobId=14403 ArrayTaskId=5-7%2 ArrayTaskThrottle=2 JobName=wrap\n"
            "   UserId=root(");
  EXPECT_EQ(Show(part, k154616, true).substr(0, 92),
            "JobId=14403 ArrayJobId=14403 ArrayTaskId=5-7%2 ArrayTaskThrottle=2 JobName=wrap "
            "UserId=root(");
  Job task = RecordJob(14405, "wrap", k154458).Running(k154458, {"cpu01"}).Build();
  task.array_job_id = 14403;
  task.array_task_id = 3;
  task.array_max_running = 2;
  EXPECT_EQ(Show(task, k154616).substr(0, 79),
            "JobId=14405 ArrayJobId=14403 ArrayTaskId=3 ArrayTaskThrottle=2 JobName=wrap\n"
            "   ");
  // Without a throttle there is no ArrayTaskThrottle (14350, --array=0-3).
  task.id = 14373;
  task.array_job_id = 14350;
  task.array_task_id = 2;
  task.array_max_running = 0;
  EXPECT_EQ(Show(task, k154616).substr(0, 55),
            "JobId=14373 ArrayJobId=14350 ArrayTaskId=2 JobName=wrap");
}

TEST_F(JobRecordTest, ArrayPendingPartDefaultOutput) {
  // sbatch -H --array=0-9%3 --wrap=true from /tmp/h2 (14482): scontrol show
  // job printed StdOut=/tmp/h2/slurm-14482_4294967294.out (the pattern is
  // slurm-%A_%a.out; the pending part has no task id yet).
  Job part = RecordJob(14482, "wrap", k154458).Held().Build();
  part.req.work_dir = "/tmp/h2";
  part.array_job_id = 14482;
  part.array_pending = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  part.array_max_running = 3;
  std::string out = Show(part, k154616);
  EXPECT_EQ(out.substr(0, 80),
            "JobId=14482 ArrayJobId=14482 ArrayTaskId=0-9%3 ArrayTaskThrottle=3 JobName=wrap\n");
  EXPECT_NE(out.find("   StdErr=/tmp/h2/slurm-14482_4294967294.out\n"), std::string::npos);
  EXPECT_NE(out.find("   StdOut=/tmp/h2/slurm-14482_4294967294.out\n"), std::string::npos);
}

TEST_F(JobRecordTest, Table) {
  struct Case {
    std::string oracle;  // the sbatch submission and the scontrol command
    Job job;
    int64_t now;
    bool details;
    std::vector<std::string> want;
  };
  std::vector<Case> cases;

  {
    // `sbatch --wrap 'sleep 300' -J big -N 6 -p train`; `scontrol show job 3`.
    RecordJob j(3, "big", k154458);
    j.Partition("train", 4 * 3600).Priority(4849).Pending(PendingReason::kPartitionNodeLimit);
    j.req().min_nodes = 6;
    j.req().max_nodes = 6;
    cases.push_back({"big", j.Build(), k154458 + 60, false,
                     {"JobId=3 JobName=big",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=4849 Nice=0 Account=root QOS=normal",
                      "JobState=PENDING Reason=PartitionNodeLimit Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "RunTime=00:00:00 TimeLimit=04:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:44:58 EligibleTime=2026-12-02T15:44:58",
                      "AccrueTime=2026-12-02T15:44:58",
                      "StartTime=Unknown EndTime=Unknown Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:44:58 Scheduler=Main",
                      "Partition=train AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=",
                      "NumNodes=6-6 NumCPUs=6 NumTasks=6 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=6,mem=6000M,node=6,billing=6",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/slurm-3.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-3.out",
                      "Power="}});
  }
  {
    // `sbatch -J twonode -N 2 --ntasks-per-node=2`; `scontrol show job -dd 7`
    // (Slurm: CPU_IDs=0,16).
    RecordJob j(7, "twonode", k154458);
    j.Priority(11177).Running(k154458 + 1, {"cpu01", "cpu02"}, 2, 2000, {}, 2);
    j.req().min_nodes = 2;
    j.req().max_nodes = 2;
    j.req().ntasks_per_node = 2;
    cases.push_back({"twonode", j.Build(), k154458 + 1 + 84, true,
                     {"JobId=7 JobName=twonode",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=11177 Nice=0 Account=root QOS=normal",
                      "JobState=RUNNING Reason=None Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "DerivedExitCode=0:0",
                      "RunTime=00:01:24 TimeLimit=01:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:44:58 EligibleTime=2026-12-02T15:44:58",
                      "AccrueTime=2026-12-02T15:44:58",
                      "StartTime=2026-12-02T15:44:59 EndTime=2026-12-02T16:44:59 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:44:59 Scheduler=Main",
                      "Partition=short AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=cpu[01-02]",
                      "BatchHost=cpu01",
                      "NumNodes=2 NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=4,mem=4000M,node=2,billing=4",
                      "Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=*",
                      "JOB_GRES=(null)",
                      "  Nodes=cpu[01-02] CPU_IDs=0-1 Mem=2000 GRES=",
                      "MinCPUsNode=2 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/slurm-7.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-7.out",
                      "Power="}});
  }
  {
    // `sbatch -J memnode --mem=2G -c 4`; `scontrol show job 101`, RunTime 00:00:11.
    RecordJob j(101, "memnode", k154645);
    j.Priority(4427).Running(k154645, {"cpu01"}, 4, 2048);
    j.req().mem_per_node_mb = 2048;
    j.req().cpus_per_task = 4;
    j.req().cpus_per_task_set = true;
    cases.push_back({"memnode", j.Build(), k154645 + 11, false,
                     {"JobId=101 JobName=memnode",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=4427 Nice=0 Account=root QOS=normal",
                      "JobState=RUNNING Reason=None Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "RunTime=00:00:11 TimeLimit=01:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T15:46:45",
                      "AccrueTime=2026-12-02T15:46:45",
                      "StartTime=2026-12-02T15:46:45 EndTime=2026-12-02T16:46:45 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:45 Scheduler=Main",
                      "Partition=short AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=cpu01",
                      "BatchHost=cpu01",
                      "NumNodes=1 NumCPUs=4 NumTasks=1 CPUs/Task=4 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=4,mem=2G,node=1,billing=4",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "MinCPUsNode=4 MinMemoryNode=2G MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/slurm-101.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-101.out",
                      "Power="}});
  }
  {
    // `sbatch -J reqw -w gpu02 -x gpu03 -C h100 --comment 'hello world' -A ml
    // --qos limited -p train`; `scontrol show job -dd 103`: Comment= keeps a
    // trailing blank.
    RecordJob j(103, "reqw", k154645);
    j.Partition("train", 4 * 3600).Priority(11085).Running(k154645, {"gpu02"});
    j.req().nodelist = "gpu02";
    j.req().exclude = "gpu03";
    j.req().constraint = "h100";
    j.req().comment = "hello world";
    j.req().account = "ml";
    j.req().qos = "limited";
    cases.push_back({"reqw", j.Build(), k154645 + 11, true,
                     {"JobId=103 JobName=reqw",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=11085 Nice=0 Account=ml QOS=limited",
                      "JobState=RUNNING Reason=None Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "DerivedExitCode=0:0",
                      "RunTime=00:00:11 TimeLimit=04:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T15:46:45",
                      "AccrueTime=2026-12-02T15:46:45",
                      "StartTime=2026-12-02T15:46:45 EndTime=2026-12-02T19:46:45 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:45 Scheduler=Main",
                      "Partition=train AllocNode:Sid=localhost:0",
                      "ReqNodeList=gpu02 ExcNodeList=gpu03",
                      "NodeList=gpu02",
                      "BatchHost=gpu02",
                      "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=1,mem=1000M,node=1,billing=1",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "JOB_GRES=(null)",
                      "  Nodes=gpu02 CPU_IDs=0 Mem=1000 GRES=",
                      "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=h100 DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "Comment=hello world ",
                      "StdErr=/tmp/sqo/slurm-103.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-103.out",
                      "Power="}});
  }
  {
    // `sbatch -J outs -o /tmp/sqo/out-%j.txt -e /tmp/sqo/err-%j.txt -i /dev/zero
    // --no-requeue --nice=10`; `scontrol show job 104`.
    RecordJob j(104, "outs", k154645);
    j.Priority(4409).Running(k154645, {"cpu01"});
    j.req().std_out = "/tmp/sqo/out-%j.txt";
    j.req().std_err = "/tmp/sqo/err-%j.txt";
    j.req().std_in = "/dev/zero";
    j.req().requeue = false;
    j.req().nice = 10;
    cases.push_back({"outs", j.Build(), k154645 + 11, false,
                     {"JobId=104 JobName=outs",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=4409 Nice=10 Account=root QOS=normal",
                      "JobState=RUNNING Reason=None Dependency=(null)",
                      "Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "RunTime=00:00:11 TimeLimit=01:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T15:46:45",
                      "AccrueTime=2026-12-02T15:46:45",
                      "StartTime=2026-12-02T15:46:45 EndTime=2026-12-02T16:46:45 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:45 Scheduler=Main",
                      "Partition=short AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=cpu01",
                      "BatchHost=cpu01",
                      "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=1,mem=1000M,node=1,billing=1",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/err-104.txt",
                      "StdIn=/dev/zero",
                      "StdOut=/tmp/sqo/out-104.txt",
                      "Power="}});
  }
  {
    // `sbatch -J begin --begin=now+1hour`; `scontrol show job 106`.
    RecordJob j(106, "begin", k154645);
    j.Priority(4419).Pending(PendingReason::kBeginTime);
    j.req().begin_time = k154645 + 3600;
    cases.push_back({"begin", j.Build(), k154645 + 5, false,
                     {"JobId=106 JobName=begin",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=4419 Nice=0 Account=root QOS=normal",
                      "JobState=PENDING Reason=BeginTime Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T16:46:45",
                      "AccrueTime=Unknown",
                      "StartTime=2026-12-02T16:46:45 EndTime=2026-12-02T17:46:45 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:45 Scheduler=Main",
                      "Partition=short AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=",
                      "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=1,mem=1000M,node=1,billing=1",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/slurm-106.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-106.out",
                      "Power="}});
  }
  {
    // `sbatch -J excl --exclusive -p train`; `scontrol show job -dd 102`.
    RecordJob j(102, "excl", k154645);
    j.Partition("train", 4 * 3600).Priority(4419)
        .Running(k154645 + 14, {"gpu03"}, 32, 32000, {{0, 1, 2, 3, 4, 5, 6, 7}});
    j.req().exclusive = true;
    cases.push_back({"excl", j.Build(), k154645 + 14 + 21, true,
                     {"JobId=102 JobName=excl",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=4419 Nice=0 Account=root QOS=normal",
                      "JobState=RUNNING Reason=None Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                      "DerivedExitCode=0:0",
                      "RunTime=00:00:21 TimeLimit=04:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T15:46:45",
                      "AccrueTime=2026-12-02T15:46:45",
                      "StartTime=2026-12-02T15:46:59 EndTime=2026-12-02T19:46:59 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:59 Scheduler=Main",
                      "Partition=train AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=gpu03",
                      "BatchHost=gpu03",
                      "NumNodes=1 NumCPUs=32 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=32,mem=32000M,node=1,billing=32,gres/gpu=8",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "JOB_GRES=gpu:h100:8",
                      "  Nodes=gpu03 CPU_IDs=0-31 Mem=32000 GRES=gpu:h100:8(IDX:0-7)",
                      "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/slurm-102.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-102.out",
                      "Power="}});
  }
  {
    // `sbatch -J gpusjob --gpus=3 -p train`; `scontrol show job -dd 107`.
    RecordJob j(107, "gpusjob", k154645);
    j.Partition("train", 4 * 3600).Priority(4419)
        .Running(k154645 + 14, {"gpu04"}, 1, 1000, {{0, 1, 2}});
    j.req().gres.push_back({"gpu", "", 3, true});
    std::vector<std::string> want = {
        "JobId=107 JobName=gpusjob",
        "UserId=root(0) GroupId=root(0) MCS_label=N/A",
        "Priority=4419 Nice=0 Account=root QOS=normal",
        "JobState=RUNNING Reason=None Dependency=(null)",
        "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
        "DerivedExitCode=0:0",
        "RunTime=00:00:21 TimeLimit=04:00:00 TimeMin=N/A",
        "SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T15:46:45",
        "AccrueTime=2026-12-02T15:46:45",
        "StartTime=2026-12-02T15:46:59 EndTime=2026-12-02T19:46:59 Deadline=N/A",
        "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:59 Scheduler=Main",
        "Partition=train AllocNode:Sid=localhost:0",
        "ReqNodeList=(null) ExcNodeList=(null)",
        "NodeList=gpu04",
        "BatchHost=gpu04",
        "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
        "TRES=cpu=1,mem=1000M,node=1,billing=1,gres/gpu=3",
        "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
        "JOB_GRES=gpu:h100:3",
        "  Nodes=gpu04 CPU_IDs=0 Mem=1000 GRES=gpu:h100:3(IDX:0-2)",
        "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
        "Features=(null) DelayBoot=00:00:00",
        "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
        "Command=(null)",
        "WorkDir=/tmp/sqo",
        "StdErr=/tmp/sqo/slurm-107.out",
        "StdIn=/dev/null",
        "StdOut=/tmp/sqo/slurm-107.out",
        "Power=",
        "TresPerJob=gres:gpu:3"};
    cases.push_back({"gpusjob", j.Build(), k154645 + 14 + 21, true, want});
  }
  {
    // `sbatch -J gpn --gpus-per-node=h100:2 -N 2 -p train`; `scontrol show job -dd 108`:
    // different GPU indices per node give one Nodes= line each (Slurm: CPU_IDs=1).
    RecordJob j(108, "gpn", k154645);
    j.Partition("train", 4 * 3600).Priority(4505)
        .Running(k154645 + 14, {"gpu01", "gpu02"}, 1, 1000, {{2, 3}, {0, 1}});
    j.req().gres.push_back({"gpu", "h100", 2, false});
    j.req().min_nodes = 2;
    j.req().max_nodes = 2;
    Job job = j.Build();
    std::string out = Show(job, k154645 + 14 + 21, false, true);
    EXPECT_NE(out.find("\n   NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
                       "   TRES=cpu=2,mem=2000M,node=2,billing=2,gres/gpu=4\n"
                       "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
                       "   JOB_GRES=gpu:h100:4\n"
                       "     Nodes=gpu01 CPU_IDs=0 Mem=1000 GRES=gpu:h100:2(IDX:2-3)\n"
                       "     Nodes=gpu02 CPU_IDs=0 Mem=1000 GRES=gpu:h100:2(IDX:0-1)\n"
                       "   MinCPUsNode=1"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("\n   Power=\n   TresPerNode=gres:gpu:h100:2\n   \n\n"), std::string::npos);
  }
  {
    // `sbatch -J failer --wrap 'exit 3'`; `scontrol show job 97`.
    RecordJob j(97, "failer", k154616);
    j.Priority(4419).Running(k154616, {"cpu01"}).Ended(JobState::kFailed, k154616, 3, 0);
    cases.push_back({"failer", j.Build(), k154616 + 30, false,
                     {"JobId=97 JobName=failer",
                      "UserId=root(0) GroupId=root(0) MCS_label=N/A",
                      "Priority=4419 Nice=0 Account=root QOS=normal",
                      "JobState=FAILED Reason=NonZeroExitCode Dependency=(null)",
                      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0",
                      "RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A",
                      "SubmitTime=2026-12-02T15:46:16 EligibleTime=2026-12-02T15:46:16",
                      "AccrueTime=2026-12-02T15:46:16",
                      "StartTime=2026-12-02T15:46:16 EndTime=2026-12-02T15:46:16 Deadline=N/A",
                      "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T15:46:16 Scheduler=Main",
                      "Partition=short AllocNode:Sid=localhost:0",
                      "ReqNodeList=(null) ExcNodeList=(null)",
                      "NodeList=cpu01",
                      "BatchHost=cpu01",
                      "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                      "TRES=cpu=1,mem=1000M,node=1,billing=1",
                      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*",
                      "MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0",
                      "Features=(null) DelayBoot=00:00:00",
                      "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
                      "Command=(null)",
                      "WorkDir=/tmp/sqo",
                      "StdErr=/tmp/sqo/slurm-97.out",
                      "StdIn=/dev/null",
                      "StdOut=/tmp/sqo/slurm-97.out",
                      "Power="}});
  }
  {
    // `sbatch -J tocancel --wrap 'sleep 200'`, scancel after 3 s; `scontrol show job 100`.
    RecordJob j(100, "tocancel", k154616);
    j.Priority(4419).Running(k154616, {"cpu01"}).Ended(JobState::kCancelled, k154616 + 3, 0, 15);
    Job job = j.Build();
    job.cancelled_by = 0;
    std::string out = Show(job, k154616 + 30);
    EXPECT_NE(out.find("\n   JobState=CANCELLED Reason=None Dependency=(null)\n"
                       "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15\n"
                       "   RunTime=00:00:03 TimeLimit=01:00:00 TimeMin=N/A\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("\n   StartTime=2026-12-02T15:46:16 EndTime=2026-12-02T15:46:19 Deadline=N/A\n"),
              std::string::npos);
  }

  for (const Case& c : cases) {
    // Slurm's record, with Muster's one added line for pending jobs.
    std::vector<std::string> want = c.want;
    if (c.job.state == core::JobState::kPending) {
      want.insert(want.begin() + 4, "Explanation=" + JobExplanation(c.job));
    }
    EXPECT_EQ(Show(c.job, c.now, false, c.details), Record(want)) << c.oracle;
  }
}

TEST_F(JobRecordTest, CancelledWhilePending) {
  // Oracle: `sbatch -J gpupend --gres=gpu:h100:8 -N 4 -p train` (pending
  // Resources), scancel; `scontrol show job -dd 111`: the reason stays, the
  // start time is the cancel time, NumTasks is N/A, no allocation lines.
  RecordJob j(111, "gpupend", k154645);
  j.Partition("train", 4 * 3600).Priority(4677).Pending(PendingReason::kResources)
      .Ended(JobState::kCancelled, k154645 + 6);
  j.req().gres.push_back({"gpu", "h100", 8, false});
  j.req().min_nodes = 4;
  j.req().max_nodes = 4;
  std::string out = Show(j.Build(), k154645 + 60, false, true);
  EXPECT_NE(out.find("\n   JobState=CANCELLED Reason=Resources Dependency=(null)\n"
                     "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
                     "   DerivedExitCode=0:0\n"
                     "   RunTime=00:00:00 TimeLimit=04:00:00 TimeMin=N/A\n"
                     "   SubmitTime=2026-12-02T15:46:45 EligibleTime=2026-12-02T15:46:45\n"
                     "   AccrueTime=2026-12-02T15:46:45\n"
                     "   StartTime=2026-12-02T15:46:51 EndTime=2026-12-02T15:46:51 Deadline=N/A\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n   NodeList=\n"
                     "   NumNodes=4 NumCPUs=4 NumTasks=N/A CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
                     "   TRES=cpu=4,mem=4000M,node=4,billing=4,gres/gpu=32\n"
                     "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
                     "   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n   Power=\n   TresPerNode=gres:gpu:h100:8\n   \n\n"), std::string::npos);
}

TEST_F(JobRecordTest, ReqNodeNotAvailNamesItsNodes) {
  // Oracle: `sbatch -w gpu03` with gpu03 drained; `scontrol show job`:
  // "Reason=ReqNodeNotAvail,_UnavailableNodes:gpu03"; `-p train -N4` then:
  // "Reason=Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_
  // in_higher_priority_partitions". squeue %r keeps the spaces.
  RecordJob j(94, "wrap", k154645);
  j.Partition("short", 3600).Pending(PendingReason::kReqNodeNotAvail);
  Job job = j.Build();
  job.reason_nodes = "gpu03";
  std::string out = Show(job, k154645 + 5, false, false);
  EXPECT_NE(out.find("JobState=PENDING Reason=ReqNodeNotAvail,_UnavailableNodes:gpu03 "
                     "Dependency=(null)\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(JobReasonText(job), "ReqNodeNotAvail, UnavailableNodes:gpu03");
  EXPECT_NE(JobExplanation(job).find("gpu03"), std::string::npos);
  job.reason_nodes.clear();
  out = Show(job, k154645 + 5, false, false);
  EXPECT_NE(out.find("Reason=Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_"
                     "higher_priority_partitions Dependency=(null)\n"),
            std::string::npos)
      << out;
}

TEST_F(JobRecordTest, CpuIdsShowTheAllocation) {
  // Oracle: `sbatch -c 4`, `scontrol show job -d`: "Nodes=cpu01 CPU_IDs=9,11-13
  // Mem=4000 GRES=" names the CPUs the job holds.
  RecordJob j(120, "ids", k154645);
  j.Running(k154645, {"cpu01"}, 4, 4000);
  Job job = j.Build();
  job.alloc[0].cpu_ids = {9, 11, 12, 13};
  std::string out = Show(job, k154645 + 5, false, true);
  EXPECT_NE(out.find("\n     Nodes=cpu01 CPU_IDs=9,11-13 Mem=4000 GRES=\n"), std::string::npos) << out;
}

TEST_F(JobRecordTest, ScriptCommandAndTimeout) {
  // Oracle: `sbatch -J scr ./script.sh a1 a2`: Command= is the path as given
  // with its arguments.
  RecordJob scr(105, "scr", k154645);
  scr.Priority(4419).Running(k154645, {"cpu01"});
  scr.req().command = "./script.sh";
  scr.req().argv = {"a1", "a2"};
  EXPECT_NE(Show(scr.Build(), k154645 + 11).find("\n   Command=./script.sh a1 a2\n   WorkDir=/tmp/sqo\n"),
            std::string::npos);
  // Oracle: `sbatch -J tout -t 1 --wrap 'sleep 200'`; `scontrol show job 98`.
  RecordJob tout(98, "tout", k154616);
  tout.Partition("short", 60).Running(k154616, {"cpu01"}).Ended(JobState::kTimeout, k154616 + 80, 0, 15);
  std::string out = Show(tout.Build(), k154616 + 100);
  EXPECT_NE(out.find("\n   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)\n"
                     "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15\n"
                     "   RunTime=00:01:20 TimeLimit=00:01:00 TimeMin=N/A\n"),
            std::string::npos)
      << out;
  // Oracle: `sbatch -J segv --wrap 'kill -SEGV $$'`: FAILED, JobLaunchFailure, 0:11.
  RecordJob segv(143, "segv", k154645);
  segv.Running(k154645, {"cpu01"}).Ended(JobState::kFailed, k154645, 0, 11);
  EXPECT_NE(Show(segv.Build(), k154645 + 5)
                .find("JobState=FAILED Reason=JobLaunchFailure Dependency=(null)\n"
                      "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:11\n"),
            std::string::npos);
}

TEST_F(JobRecordTest, MemoryForms) {
  // Oracle: held jobs submitted with the given memory options; `scontrol show job`.
  struct Case {
    int64_t per_cpu, per_node;
    bool whole;
    int ntasks;
    std::string tres, min_mem;
  };
  std::vector<Case> cases = {
      {0, 1536, false, 0, "TRES=cpu=1,mem=1.50G,node=1,billing=1", "MinMemoryNode=1.50G"},
      {0, 102400, false, 0, "TRES=cpu=1,mem=100G,node=1,billing=1", "MinMemoryNode=100G"},
      {2048, 0, false, 2, "TRES=cpu=2,mem=4G,node=1,billing=2", "MinMemoryCPU=2G"},
      {0, 1025, false, 0, "TRES=cpu=1,mem=1025M,node=1,billing=1", "MinMemoryNode=1025M"},
      {0, 0, true, 0, "TRES=cpu=1,mem=62.50G,node=1,billing=1", "MinMemoryNode=0"},
      {1048576, 0, false, 3, "TRES=cpu=3,mem=3T,node=1,billing=3", "MinMemoryCPU=1T"},
  };
  for (const Case& c : cases) {
    RecordJob j(113, "m", k154645);
    j.Held();
    j.req().mem_per_cpu_mb = c.per_cpu;
    j.req().mem_per_node_mb = c.per_node;
    j.req().mem_whole_node = c.whole;
    j.req().ntasks = c.ntasks;
    std::string out = Show(j.Build(), k154645);
    EXPECT_NE(out.find("\n   " + c.tres + "\n"), std::string::npos) << c.tres << "\n" << out;
    EXPECT_NE(out.find("\n   MinCPUsNode=1 " + c.min_mem + " MinTmpDiskNode=0\n"), std::string::npos)
        << c.min_mem;
  }
}

}  // namespace
}  // namespace muster::render

#include "core/json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::core {
namespace {

using nlohmann::json;

Job FullJob() {
  Job job;
  job.id = 42;
  JobRequest& r = job.req;
  r.name = "train";
  r.partition = "gpu";
  r.account = "ml";
  r.comment = "c";
  r.qos = "high";
  r.reservation = "res";
  r.wckey = "wk";
  r.constraint = "h100&ib";
  r.uid = 1000;
  r.gid = 1001;
  r.user_name = "alice";
  r.groups = {1001, 27};
  r.work_dir = "/home/alice";
  r.submit_host = "login1";
  r.std_out = "out-%j";
  r.std_err = "err-%j";
  r.std_in = "/dev/zero";
  r.open_append = true;
  r.min_nodes = 2;
  r.max_nodes = 3;
  r.ntasks = 8;
  r.ntasks_per_node = 4;
  r.cpus_per_task = 2;
  r.cpus_per_task_set = true;
  r.mem_per_node_mb = 4096;
  r.mem_per_cpu_mb = 100;
  r.mem_whole_node = true;
  r.gres = {{"gpu", "h100", 2, false}, {"gpu", "", 4, true}};
  r.time_limit_s = 3600;
  r.exclusive = true;
  r.hold = true;
  r.begin_time = 1700000000;
  r.requeue = true;
  r.nice = -5;
  r.signal_spec = "USR1@60";
  r.nodelist = "gpu[01-02]";
  r.exclude = "gpu03";
  r.export_mode = ExportMode::kList;
  r.environment = {"A=1", "B=2"};
  r.argv = {"x", "y"};
  r.script = "#!/bin/sh\necho hi\n";
  r.command = "/home/alice/job.sh";

  job.state = JobState::kCancelled;
  job.reason = PendingReason::kPartitionTimeLimit;
  job.priority = 12345;
  job.held = true;
  job.held_by_admin = true;
  job.submit_time = 1;
  job.eligible_time = 2;
  job.start_time = 3;
  job.end_time = 4;
  job.time_limit_s = 7200;
  job.partition = "gpu";
  job.alloc = {{"gpu01", 8, 2048, 4, {0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}},
               {"gpu02", 8, 2048, 4, {3}, {8, 9, 10, 11, 12, 13, 14, 15}}};
  job.batch_host = "gpu01";
  job.nodelist = "gpu[01-02]";
  job.exit_code = 2;
  job.exit_signal = 9;
  job.cancelled_by = 0;
  job.restart_count = 1;
  job.ending_as = JobState::kNodeFail;
  job.array_job_id = 7;
  job.array_pending = {1, 2, 3, 9};  // journalled as "1-3,9"
  job.array_max_running = 2;
  job.failure_detail = "oops";
  return job;
}

Node FullNode() {
  Node n;
  n.config.name = "gpu01";
  n.config.cpus = 64;
  n.config.sockets = 2;
  n.config.cores_per_socket = 16;
  n.config.threads_per_core = 2;
  n.config.real_memory_mb = 512000;
  n.config.tmp_disk_mb = 100;
  n.config.gres = {{"gpu", "h100", 2, {"/dev/nvidia0", "/dev/nvidia1"}, {{0, 1}, {2, 3}}},
                   {"nic", "", 1, {}, {}}};
  n.config.features = {"h100", "ib"};
  n.config.weight = 10;
  n.config.initial_state = core::NodeInitialState::kFuture;
  n.registered = true;
  n.down = true;
  n.drain = true;
  n.reason = "maintenance";
  n.reason_uid = 0;
  n.reason_time = 99;
  n.reason_source = core::ReasonSource::kOperator;
  n.boot_time = 98;
  n.last_busy = 97;
  n.alloc_cpus = 8;
  n.alloc_mem_mb = 1024;
  n.gpu_used = {true, false};
  n.running_jobs = 1;
  return n;
}

// Every field of the types, compared through their JSON (which covers each
// field by name) and spot-checked directly.
TEST(JsonTest, JobRoundTrips) {
  const Job job = FullJob();
  const json j = job;
  const Job back = j.get<Job>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.req.gres[1].per_job, true);
  EXPECT_EQ(back.req.export_mode, ExportMode::kList);
  EXPECT_EQ(back.alloc[1].gpu_indices, std::vector<int>{3});
  EXPECT_EQ(back.state, JobState::kCancelled);
  EXPECT_EQ(back.cancelled_by, 0u);
  EXPECT_EQ(back.req.script, job.req.script);
  // Through text as well.
  EXPECT_EQ(json(json::parse(j.dump()).get<Job>()), j);
}

TEST(JsonTest, NodeRoundTrips) {
  const Node node = FullNode();
  const json j = node;
  const Node back = j.get<Node>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.config.gres[0].files[1], "/dev/nvidia1");
  EXPECT_EQ(back.config.gres[0].device_cores[1], (std::vector<int>{2, 3}));
  EXPECT_EQ(back.gpu_used, (std::vector<bool>{true, false}));
  EXPECT_EQ(back.ScontrolState(), node.ScontrolState());
  EXPECT_EQ(j.at("reason_source"), "operator");
  EXPECT_EQ(back.reason_source, ReasonSource::kOperator);
}

TEST(JsonTest, KeysAreFieldNames) {
  const json j = FullJob();
  EXPECT_EQ(j.at("id"), 42);
  EXPECT_EQ(j.at("state"), "CANCELLED");
  EXPECT_EQ(j.at("reason"), "PartitionTimeLimit");
  EXPECT_EQ(j.at("req").at("export_mode"), "LIST");
  EXPECT_EQ(j.at("req").at("time_limit_s"), 3600);
  EXPECT_EQ(j.at("req").at("gres").at(0).at("type"), "h100");
  EXPECT_EQ(j.at("alloc").at(0).at("node"), "gpu01");
  const json n = FullNode();
  EXPECT_EQ(n.at("config").at("real_memory_mb"), 512000);
  EXPECT_EQ(n.at("gpu_used"), json::array({true, false}));
  EXPECT_EQ(n.at("drain"), true);
  EXPECT_EQ(n.at("config").at("initial_state"), "FUTURE");
}

TEST(JsonTest, EnumNames) {
  for (JobState s : {JobState::kPending, JobState::kRunning, JobState::kNodeFail,
                     JobState::kOutOfMemory}) {
    json j = s;
    EXPECT_EQ(j, std::string(JobStateName(s)));
    EXPECT_EQ(j.get<JobState>(), s);
  }
  EXPECT_EQ(json("PD").get<JobState>(), JobState::kPending);  // short names too
  for (PendingReason r : {PendingReason::kNone, PendingReason::kResources,
                          PendingReason::kNodeDown}) {
    json j = r;
    EXPECT_EQ(j, std::string(PendingReasonName(r)));
    EXPECT_EQ(j.get<PendingReason>(), r);
  }
  EXPECT_EQ(json(ExportMode::kAll), "ALL");
  EXPECT_EQ(json(ExportMode::kNone), "NONE");
  EXPECT_EQ(json("NONE").get<ExportMode>(), ExportMode::kNone);
  EXPECT_EQ(json("LIST").get<ExportMode>(), ExportMode::kList);
  EXPECT_EQ(json(NodeInitialState::kDrain), "DRAIN");
  EXPECT_EQ(json("DRAIN").get<NodeInitialState>(), NodeInitialState::kDrain);
  EXPECT_EQ(json("").get<NodeInitialState>(), NodeInitialState::kUnknown);  // older records
}

TEST(JsonTest, PartialObjectsKeepDefaults) {
  const JobRequest req = json::parse(R"({"name": "x", "ntasks": 4, "gres": [{"name": "gpu"}]})")
                             .get<JobRequest>();
  EXPECT_EQ(req.name, "x");
  EXPECT_EQ(req.ntasks, 4);
  EXPECT_EQ(req.cpus_per_task, 1);
  EXPECT_EQ(req.time_limit_s, -2);
  EXPECT_EQ(req.export_mode, ExportMode::kAll);
  ASSERT_EQ(req.gres.size(), 1u);
  EXPECT_EQ(req.gres[0].name, "gpu");
  EXPECT_EQ(req.gres[0].count, 0);

  const Job job = json::parse(R"({"id": 7, "req": {"name": "y"}, "priority": null})").get<Job>();
  EXPECT_EQ(job.id, 7u);
  EXPECT_EQ(job.req.name, "y");
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.cancelled_by, UINT32_MAX);
  EXPECT_EQ(job.time_limit_s, -1);

  const Node node = json::parse(R"({"config": {"name": "n1"}})").get<Node>();
  EXPECT_EQ(node.config.name, "n1");
  EXPECT_EQ(node.config.cpus, 1);
  EXPECT_FALSE(node.registered);

  EXPECT_EQ(json::object().get<NodeAlloc>().cpus, 0);
  EXPECT_EQ(json::object().get<GresSpec>().count, 0);
  EXPECT_EQ(json::object().get<NodeConfig>().weight, 1);
}

// Found by the API fuzzer: {"time_limit_s": 6.7e109} reached a float to
// integer conversion out of range (undefined behaviour) in from_json.
TEST(JsonTest, OutsideInputHoldsOnlyIntegers) {
  EXPECT_EQ(ParseIntegerJson(R"({"a": [1, -2, {"b": 18446744073709551615}], "c": "1.5"})"),
            json::parse(R"({"a": [1, -2, {"b": 18446744073709551615}], "c": "1.5"})"));
  for (const char* bad : {R"({"time_limit_s": 6.7e109})", R"({"a": [1, 2.5]})", "1e3", "{",
                          R"({"a": 1} x)"}) {
    EXPECT_TRUE(ParseIntegerJson(bad).is_discarded()) << bad;
  }
}

TEST(JsonTest, BadInputThrowsJsonExceptions) {
  const std::vector<std::string> bad = {
      R"({"id": "seven"})",
      R"({"state": "SLEEPING"})",
      R"({"state": 3})",
      R"({"reason": "Because"})",
      R"({"req": {"export_mode": "SOME"}})",
      R"({"req": {"gres": [1]}})",
      R"({"req": []})",
      R"([1, 2])",
      R"("job")",
  };
  for (const std::string& text : bad) {
    SCOPED_TRACE(text);
    EXPECT_THROW(json::parse(text).get<Job>(), json::exception);
  }
  EXPECT_THROW(json::parse(R"({"gpu_used": [1]})").get<Node>(), json::exception);
  EXPECT_THROW(json::parse(R"({"config": {"cpus": "x"}})").get<Node>(), json::exception);
  EXPECT_THROW(json::parse(R"({"config": {"initial_state": "ASLEEP"}})").get<Node>(),
               json::exception);
}

}  // namespace
}  // namespace muster::core

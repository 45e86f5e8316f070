#include <gtest/gtest.h>

#include "stepd/step.h"

namespace muster::stepd {
namespace {

StepSpec FullSpec() {
  StepSpec s;
  s.job_id = 77;
  s.uid = 1000;
  s.gid = 1001;
  s.groups = {1001, 27, 4294967295u};
  s.user_name = "alice";
  s.work_dir = "/home/alice";
  s.script_path = "/var/spool/muster/job00077/script";
  s.argv = {"a b", ""};
  s.env = {"A=1", "B="};
  s.std_out = "slurm-77.out";
  s.std_err = "err";
  s.std_in = "in";
  s.open_append = true;
  s.time_limit_s = 3600;
  s.kill_wait_s = 5;
  s.warn_signal = 12;
  s.warn_time_s = 60;
  s.warn_batch_only = true;
  s.mem_limit_mb = 4096;
  s.cpuset = "0-3,8";
  s.denied_devices = {"c 195:1", "c 195:2"};
  return s;
}

TEST(StepJsonTest, SpecRoundTrips) {
  StepSpec s = FullSpec();
  nlohmann::json j = ToJson(s);
  EXPECT_EQ(j["job_id"], 77);
  EXPECT_EQ(j["std_out"], "slurm-77.out");
  EXPECT_EQ(j["mem_limit_mb"], 4096);
  EXPECT_EQ(j["cpuset"], "0-3,8");
  util::Result<StepSpec> back = StepSpecFromJson(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ToJson(*back), j);
}

TEST(StepJsonTest, MissingKeysKeepDefaults) {
  util::Result<StepSpec> s = StepSpecFromJson(nlohmann::json::parse(R"({"job_id": 3, "std_in": null})"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->job_id, 3u);
  EXPECT_EQ(ToJson(*s), ToJson([] {
              StepSpec d;
              d.job_id = 3;
              return d;
            }()));
  EXPECT_EQ(s->time_limit_s, -1);
  EXPECT_EQ(s->kill_wait_s, 30);
  EXPECT_EQ(s->mem_limit_mb, 0u);
  EXPECT_EQ(s->cpuset, "");

  util::Result<StepResult> r = StepResultFromJson(nlohmann::json::object());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, "");
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->max_rss_kb, 0u);
  EXPECT_EQ(r->total_cpu_ms, 0u);
  EXPECT_FALSE(r->oom_killed);
  EXPECT_FALSE(r->cgroup);
}

TEST(StepJsonTest, WrongTypesAreRejectedNamingTheKey) {
  struct Case {
    const char* json;
    const char* key;  // must appear in the message
  };
  const Case cases[] = {
      {R"({"uid": -1})", "\"uid\""},
      {R"({"uid": 4294967296})", "\"uid\""},
      {R"({"gid": "100"})", "\"gid\""},
      {R"({"time_limit_s": 1.5})", "\"time_limit_s\""},
      {R"({"kill_wait_s": 3000000000})", "\"kill_wait_s\""},
      {R"({"open_append": 1})", "\"open_append\""},
      {R"({"argv": ["a", 1]})", "\"argv\""},
      {R"({"env": "A=1"})", "\"env\""},
      {R"({"groups": [1, -2]})", "\"groups\""},
      {R"({"work_dir": 5})", "\"work_dir\""},
      {R"({"mem_limit_mb": -1})", "\"mem_limit_mb\""},
      {R"({"cpuset": [0]})", "\"cpuset\""},
      {R"({"denied_devices": ["c 195"]})", "\"denied_devices\""},
      {R"([1, 2])", "object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    util::Result<StepSpec> s = StepSpecFromJson(nlohmann::json::parse(c.json));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), util::Code::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.key), std::string::npos) << s.status().message();
  }
}

TEST(StepJsonTest, ResultRoundTrips) {
  StepResult r;
  r.job_id = 9;
  r.state = "TIMEOUT";
  r.exit_code = 0;
  r.exit_signal = 9;
  r.start_time = 1700000000;
  r.end_time = 1700003600;
  r.detail = "x";
  r.max_rss_kb = 102400;
  r.total_cpu_ms = 1500;
  r.oom_killed = true;
  r.cgroup = true;
  nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["max_rss_kb"], 102400);
  EXPECT_EQ(j["total_cpu_ms"], 1500);
  EXPECT_EQ(j["oom_killed"], true);
  EXPECT_EQ(j["cgroup"], true);
  EXPECT_EQ(j["state"], "TIMEOUT");
  EXPECT_EQ(j["exit_signal"], 9);
  util::Result<StepResult> back = StepResultFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson(*back), j);

  EXPECT_FALSE(StepResultFromJson(nlohmann::json::parse(R"({"state": 3})")).ok());
}

}  // namespace
}  // namespace muster::stepd

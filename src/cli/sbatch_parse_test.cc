#include "cli/sbatch_parse.h"

#include <time.h>

#include <gtest/gtest.h>

namespace muster::cli {
namespace {

TEST(ExtractDirectives, StopsAtFirstCommandAndSkipsComments) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH -J name --time=10   # trailing comment\n"
      "\n"
      "# plain comment\n"
      "#SBATCH --comment=\"two words\"\n"
      "#SBATCHX --ignored\n"
      "echo hi\n"
      "#SBATCH --after-command\n";
  EXPECT_EQ(ExtractDirectives(script),
            (std::vector<std::vector<std::string>>{
                {"-J", "name", "--time=10", "--comment=two words"}}));
}

TEST(ExtractDirectives, HetjobLinesSeparateComponents) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH -n1 -J hetjob\n"
      "#SBATCH hetjob\n"
      "#SBATCH -n2\n"
      "#SBATCH packjob\n"
      "#SBATCH -p train\n"
      "srun true\n";
  std::vector<std::string> warnings;
  EXPECT_EQ(ExtractDirectives(script, &warnings),
            (std::vector<std::vector<std::string>>{{"-n1", "-J", "hetjob"}, {"-n2"}, {"-p", "train"}}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("\"packjob\" component separator is being deprecated"),
            std::string::npos);
}

TEST(SplitComponents, ColonsSeparateComponentsUntilTheScript) {
  EXPECT_EQ(SplitComponents({"-n1", ":", "-n2", "-p", "train", "job.sh", "a"}),
            (std::vector<std::vector<std::string>>{{"-n1"}, {"-n2", "-p", "train", "job.sh", "a"}}));
  // A ":" after the script is its argument.
  EXPECT_EQ(SplitComponents({"-n1", "job.sh", ":", "x"}),
            (std::vector<std::vector<std::string>>{{"-n1", "job.sh", ":", "x"}}));
  EXPECT_EQ(SplitComponents({"-n1", ":", "-n2", "job.sh", ":", "x"}),
            (std::vector<std::vector<std::string>>{{"-n1"}, {"-n2", "job.sh", ":", "x"}}));
}

TEST(ApplySbatchOptions, CommandLineOverridesDirectives) {
  SbatchInvocation inv;
  ASSERT_TRUE(ApplySbatchOptions({"-c", "2", "-J", "a", "--mem=4G"}, &inv).ok());
  auto pos = ApplySbatchOptions({"-c3", "--job-name=b", "script.sh", "arg1", "-x"}, &inv);
  ASSERT_TRUE(pos.ok());
  EXPECT_EQ(*pos, (std::vector<std::string>{"script.sh", "arg1", "-x"}));
  EXPECT_EQ(inv.req.cpus_per_task, 3);
  EXPECT_EQ(inv.req.name, "b");
  EXPECT_EQ(inv.req.mem_per_node_mb, 4096);
}

TEST(ApplySbatchOptions, ParsesResourceForms) {
  SbatchInvocation inv;
  ASSERT_TRUE(ApplySbatchOptions({"-N", "2-4", "-n", "8", "--ntasks-per-node=2", "--gres=gpu:h100:2",
                                  "-t", "1-02:30", "--exclusive", "-H", "--parsable"},
                                 &inv)
                  .ok());
  EXPECT_EQ(inv.req.min_nodes, 2);
  EXPECT_EQ(inv.req.max_nodes, 4);
  EXPECT_EQ(inv.req.ntasks, 8);
  EXPECT_EQ(inv.req.ntasks_per_node, 2);
  ASSERT_EQ(inv.req.gres.size(), 1u);
  EXPECT_EQ(inv.req.gres[0].type, "h100");
  EXPECT_EQ(inv.req.gres[0].count, 2);
  EXPECT_EQ(inv.req.time_limit_s, (24 + 2) * 3600 + 30 * 60);
  EXPECT_TRUE(inv.req.exclusive);
  EXPECT_TRUE(inv.req.hold);
  EXPECT_TRUE(inv.parsable);
}

TEST(ApplySbatchOptions, TimeRoundsUpToMinutes) {
  SbatchInvocation inv;
  ASSERT_TRUE(ApplySbatchOptions({"--time=10:30"}, &inv).ok());
  EXPECT_EQ(inv.req.time_limit_s, 11 * 60);
}

// now-N is taken as Slurm takes it (a begin time in the past), and so are
// the unit's whole names.
TEST(ApplySbatchOptions, BeginTakesSlurmsRelativeForms) {
  const int64_t before = ::time(nullptr);
  SbatchInvocation inv;
  ASSERT_TRUE(ApplySbatchOptions({"--begin=now-1hour"}, &inv).ok());
  EXPECT_LE(inv.req.begin_time, ::time(nullptr) - 3600);
  EXPECT_GE(inv.req.begin_time, before - 3600);
  ASSERT_TRUE(ApplySbatchOptions({"--begin=now+5second"}, &inv).ok());
  EXPECT_GE(inv.req.begin_time, before + 5);
}

TEST(ApplySbatchOptions, ErrorsNameTheOption) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  // As Slurm 22.05 prints them (checked on the oracle): a refused value is
  // sbatch's error line, an unknown option glibc's line and the hint.
  const std::string try_help = "\nTry \"sbatch --help\" for more information";
  const Case cases[] = {
      {{"--bogus"}, "sbatch: unrecognized option '--bogus'" + try_help},
      {{"-t", "xx"}, "sbatch: error: Invalid --time specification"},
      {{"--mem=lots"}, "sbatch: error: Invalid --mem specification"},
      {{"-c", "0"}, "sbatch: error: Invalid numeric value \"0\" for --cpus-per-task."},
      {{"-n", "x"}, "sbatch: error: Invalid numeric value \"x\" for --ntasks."},
      {{"--ntasks-per-node=-1"},
       "sbatch: error: Invalid numeric value \"-1\" for --ntasks-per-node."},
      {{"-N", "x"}, "sbatch: error: \"x\" is not a valid node count"},
      {{"-N", "2-x"}, "sbatch: error: \"x\" is not a valid node count"},
      {{"-N", "3-1"}, "sbatch: error: Maximum node count 1 is less than minimum node count 3"},
      {{"--open-mode=sideways"}, "sbatch: error: Invalid --open-mode specification"},
      {{"--exclusive=maybe"}, "sbatch: error: Invalid --exclusive specification"},
      {{"--time-min=abc"}, "sbatch: error: Invalid --time-min specification"},
      {{"-J"}, "sbatch: option requires an argument -- 'J'" + try_help},
      // Found by the fuzzer: the offset overflowed (signed overflow, UB).
      {{"--begin=now+444444444444444222hours"}, "sbatch: error: Invalid --begin specification"},
      {{"--begin=now+36601days"}, "sbatch: error: Invalid --begin specification"},
      // Slurm 22.05 refuses abbreviated units (checked on the oracle).
      {{"--begin=now+1h"}, "sbatch: error: Invalid --begin specification"},
      {{"--begin=now+2min"}, "sbatch: error: Invalid --begin specification"},
      {{"--bogus=1"}, "sbatch: unrecognized option '--bogus=1'" + try_help},
      {{"--mem"}, "sbatch: option '--mem' requires an argument" + try_help},
      {{"--cpus-per-gpu=x"}, "sbatch: error: Invalid numeric value \"x\" for --cpus-per-gpu."},
      {{"--cpus-per-gpu=0"}, "sbatch: error: Invalid numeric value \"0\" for --cpus-per-gpu."},
      {{"--mem-per-gpu=zz"}, "sbatch: error: Invalid --mem-per-gpu specification"},
  };
  for (const auto& c : cases) {
    SbatchInvocation inv;
    auto r = ApplySbatchOptions(c.args, &inv);
    ASSERT_FALSE(r.ok()) << c.args[0];
    EXPECT_EQ(r.status().message(), c.message);
    // Slurm's sbatch exits 1 for a count out of range, 255 otherwise.
    const bool count = c.message.find("Invalid numeric value") != std::string::npos;
    EXPECT_EQ(SbatchOptionExitCode(r.status()), count ? 1 : 255) << c.args[0];
  }
}

// --cpus-per-gpu and --mem-per-gpu, and what Slurm refuses about them
// (messages and exit statuses as the oracle gives them).
TEST(ApplySbatchOptions, PerGpuOptions) {
  SbatchInvocation inv;
  ASSERT_TRUE(
      ApplySbatchOptions({"--gres=gpu:2", "--cpus-per-gpu=4", "--mem-per-gpu=10G"}, &inv).ok());
  EXPECT_EQ(inv.req.cpus_per_gpu, 4);
  EXPECT_EQ(inv.req.mem_per_gpu_mb, 10240);
  EXPECT_TRUE(CheckPerGpuOptions(inv.req).ok());
  // One memory option per command line.
  for (const char* other : {"--mem=1G", "--mem-per-cpu=1G"}) {
    SbatchInvocation both;
    auto r = ApplySbatchOptions({"--gres=gpu:2", "--mem-per-gpu=10G", other}, &both);
    ASSERT_FALSE(r.ok()) << other;
    EXPECT_EQ(r.status().message(),
              "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
    EXPECT_EQ(SbatchOptionExitCode(r.status()), 1);
  }
  // A later pass (the command line over the script) replaces the option.
  SbatchInvocation later;
  ASSERT_TRUE(ApplySbatchOptions({"--mem-per-gpu=10G"}, &later).ok());
  ASSERT_TRUE(ApplySbatchOptions({"--mem=2G"}, &later).ok());
  EXPECT_EQ(later.req.mem_per_gpu_mb, 0);
  EXPECT_EQ(later.req.mem_per_node_mb, 2048);
  SbatchInvocation with_c;
  ASSERT_TRUE(ApplySbatchOptions({"--gres=gpu:2", "--cpus-per-gpu=4", "-c", "2"}, &with_c).ok());
  EXPECT_EQ(CheckPerGpuOptions(with_c.req).message(),
            "--cpus-per-gpu is mutually exclusive with --cpus-per-task");
  SbatchInvocation no_gpu;
  ASSERT_TRUE(ApplySbatchOptions({"--mem-per-gpu=4G"}, &no_gpu).ok());
  EXPECT_EQ(CheckPerGpuOptions(no_gpu.req).message(),
            "Requested mem_per_tres=gres:gpu:4096 but did not request any GPU.");
  // --cpus-per-gpu without a GPU is accepted and does nothing, as in Slurm.
  SbatchInvocation cpus_only;
  ASSERT_TRUE(ApplySbatchOptions({"--cpus-per-gpu=4"}, &cpus_only).ok());
  EXPECT_TRUE(CheckPerGpuOptions(cpus_only.req).ok());
}

TEST(ApplyExport, AllNoneAndLists) {
  const std::vector<std::string> env = {"A=1", "B=2", "SLURM_X=3", "AB=4"};
  core::JobRequest req;
  ASSERT_TRUE(ApplyExport("ALL", env, &req).ok());
  EXPECT_EQ(req.environment, env);
  ASSERT_TRUE(ApplyExport("NONE", env, &req).ok());
  EXPECT_EQ(req.environment, (std::vector<std::string>{"SLURM_X=3"}));
  ASSERT_TRUE(ApplyExport("A,C=5", env, &req).ok());
  EXPECT_EQ(req.environment, (std::vector<std::string>{"A=1", "C=5", "SLURM_X=3"}));
  EXPECT_EQ(req.export_mode, core::ExportMode::kList);
}

TEST(CheckScript, RequiresShebang) {
  EXPECT_TRUE(CheckScript("#!/bin/sh\ntrue\n").ok());
  EXPECT_FALSE(CheckScript("echo hi\n").ok());
  EXPECT_FALSE(CheckScript("").ok());
  EXPECT_EQ(WrapScript("hostname"), "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname\n");
}

}  // namespace
}  // namespace muster::cli

#include "util/spawn.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace muster::util {
namespace {

TEST(Spawn, RunsTheProgramWithItsArgumentsAndEnvironment) {
  const std::string out = ::testing::TempDir() + "/spawn_" + std::to_string(::getpid());
  std::filesystem::remove(out);
  ASSERT_TRUE(SpawnDetached({"/bin/sh", "-c", "echo \"$1 $GREETING\" > " + out, "sh", "world"},
                            {"GREETING=hello"})
                  .ok());
  std::string line;
  for (int i = 0; i < 200 && line.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream in(out);
    std::getline(in, line);
  }
  EXPECT_EQ(line, "world hello");
  std::filesystem::remove(out);
}

TEST(Spawn, SaysWhenTheProgramCannotRun) {
  Status st = SpawnDetached({"/nonexistent/notify"}, {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent/notify"), std::string::npos);
  EXPECT_NE(st.message().find("No such file"), std::string::npos);
  EXPECT_FALSE(SpawnDetached({"relative"}, {}).ok());
}

}  // namespace
}  // namespace muster::util

#include "util/version.h"

#include <regex>
#include <sstream>

#include <gtest/gtest.h>

namespace muster::util {
namespace {

// Tools read Slurm's version from `sbatch -V` with a regex or by splitting
// at blanks; both must still find Slurm's release, not Muster's.
TEST(VersionTest, LineParsesAsSlurmsVersion) {
  const std::string line = VersionLine();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(slurm (\d+)\.(\d+))")));
  const std::string slurm(SlurmVersion());
  EXPECT_EQ(m[1].str() + "." + m[2].str(), slurm.substr(0, slurm.rfind('.')));
  std::istringstream words(line);
  std::string first, second;
  words >> first >> second;
  EXPECT_EQ(first, "slurm");
  EXPECT_EQ(second, slurm);
  EXPECT_NE(line.find("(muster " + std::string(MusterVersion()) + ")"), std::string::npos);
}

TEST(VersionTest, VersionsAreDottedNumbers) {
  const std::regex dotted(R"(\d+\.\d+\.\d+)");
  EXPECT_TRUE(std::regex_match(std::string(SlurmVersion()), dotted));
  EXPECT_TRUE(std::regex_match(std::string(MusterVersion()), dotted));
}

}  // namespace
}  // namespace muster::util

#include "cli/job_options.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "cli/sbatch_parse.h"

namespace muster::cli {
namespace {

// The catalogue and sbatch's (and salloc's) parser agree: a supported
// option is the parser's, a refused one is refused by name, one without
// effect is taken with a warning.
void CheckParserAgrees(JobCommand cmd) {
  const std::string prog(JobCommandName(cmd));
  for (const CatalogOption& o : JobOptionCatalog()) {
    if ((o.commands & static_cast<unsigned>(cmd)) == 0) continue;
    const std::string name = o.long_name;
    // salloc's own, read before sbatch's parser sees the rest.
    if (cmd == JobCommand::kSalloc && (name == "immediate" || name == "no-shell" || name == "no-bell")) continue;
    std::string arg = "--" + name;
    if (o.arg[0] == '=') arg += "=1";
    SbatchInvocation inv;
    util::Result<std::vector<std::string>> got = ApplySbatchOptions({arg}, &inv, prog);
    const std::string error = got.ok() ? "" : got.status().message();
    SCOPED_TRACE(prog + " " + arg + ": " + error);
    EXPECT_EQ(error.find("unrecognized option"), std::string::npos);
    switch (o.state) {
      case OptionState::kSupported:
        EXPECT_EQ(error.find("not supported by Muster"), std::string::npos);
        EXPECT_TRUE(inv.warnings.empty());
        break;
      case OptionState::kRefused:
        EXPECT_NE(error.find(prog + ": error: --" + name + " is not supported by Muster"),
                  std::string::npos);
        break;
      case OptionState::kNoEffect:
        EXPECT_EQ(error, "");
        ASSERT_EQ(inv.warnings.size(), 1u);
        EXPECT_EQ(inv.warnings[0].rfind(prog + ": warning: --" + name + " has no effect", 0), 0u);
        break;
    }
  }
}

TEST(JobOptionsTest, SbatchParserAgreesWithTheCatalogue) { CheckParserAgrees(JobCommand::kSbatch); }
TEST(JobOptionsTest, SallocParserAgreesWithTheCatalogue) { CheckParserAgrees(JobCommand::kSalloc); }

TEST(JobOptionsTest, WarningsAreGivenOncePerOption) {
  SbatchInvocation inv;
  ASSERT_TRUE(ApplySbatchOptions({"--mail-type=END", "--mail-user=a"}, &inv).ok());
  ASSERT_TRUE(ApplySbatchOptions({"--mail-type=ALL", "-v"}, &inv).ok());
  EXPECT_EQ(inv.warnings.size(), 3u);
  // A value the parser checks is still checked.
  EXPECT_FALSE(ApplySbatchOptions({"--time-min=bogus"}, &inv).ok());
}

TEST(JobOptionsTest, EachOptionOnceForEachCommand) {
  for (JobCommand cmd : {JobCommand::kSbatch, JobCommand::kSalloc, JobCommand::kSrun}) {
    std::set<std::string> seen;
    for (const CatalogOption& o : JobOptionCatalog()) {
      if ((o.commands & static_cast<unsigned>(cmd)) == 0) continue;
      EXPECT_TRUE(seen.insert(o.long_name).second) << JobCommandName(cmd) << " " << o.long_name;
      if (o.state == OptionState::kNoEffect) {
        EXPECT_STRNE(o.note, "") << o.long_name;
      }
    }
  }
}

TEST(JobOptionsTest, HelpHasSlurmsLayout) {
  const std::string help = JobCommandHelp(JobCommand::kSbatch);
  EXPECT_EQ(help.rfind("Usage: sbatch ", 0), 0u);
  EXPECT_NE(help.find("\nParallel run options:\n  -a, --array=indexes "), std::string::npos);
  EXPECT_NE(help.find("\nGPU scheduling options:\n"), std::string::npos);
  EXPECT_LT(help.find("\nConstraint options:\n"), help.find("\nHelp options:\n"));
  EXPECT_NE(help.find("--bb=<spec>             burst buffer request [not in Muster]"),
            std::string::npos);
  EXPECT_EQ(help.find("--pty"), std::string::npos);  // srun's
  EXPECT_NE(JobCommandHelp(JobCommand::kSrun).find("--pty"), std::string::npos);
  const std::string usage = JobCommandUsage(JobCommand::kSalloc);
  EXPECT_EQ(usage.rfind("Usage: salloc [-A name] ", 0), 0u);
  EXPECT_EQ(usage.find("--bb"), std::string::npos);  // refused: not in the usage
}

// docs/options.md carries the catalogue's tables as they are; with
// MUSTER_WRITE_OPTIONS_DOC=1 the test writes them there instead.
TEST(JobOptionsTest, DocsTableIsTheCatalogues) {
  const std::string path = MUSTER_SOURCE_DIR "/docs/options.md";
  std::ifstream in(path);
  std::string doc(std::istreambuf_iterator<char>(in), {});
  const std::string begin = "<!-- job options: begin -->\n", end = "<!-- job options: end -->\n";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string want = JobOptionsMarkdown();
  if (std::getenv("MUSTER_WRITE_OPTIONS_DOC") != nullptr) {
    doc = doc.substr(0, b + begin.size()) + want + doc.substr(e);
    std::ofstream(path) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), want)
      << "run the test with MUSTER_WRITE_OPTIONS_DOC=1 to update " << path;
}

}  // namespace
}  // namespace muster::cli

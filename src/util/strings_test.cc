#include "util/strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::util {
namespace {

TEST(SplitTest, Splits) {
  struct Case {
    std::string in;
    char sep;
    bool skip_empty;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"a,b,c", ',', true, {"a", "b", "c"}},
      {"a,,b,", ',', true, {"a", "b"}},
      {"a,,b,", ',', false, {"a", "", "b", ""}},
      {"", ',', true, {}},
      {"", ',', false, {""}},
      {"abc", ',', true, {"abc"}},
      {"k=v=w", '=', true, {"k", "v", "w"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(Split(c.in, c.sep, c.skip_empty), c.want);
  }
}

TEST(StringsTest, TrimCaseAndPrefix) {
  EXPECT_EQ(Trim("  a b \t\n"), "a b");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim("x"), "x");
  EXPECT_EQ(ToLower("AbC1"), "abc1");
  EXPECT_EQ(ToUpper("AbC1"), "ABC1");
  EXPECT_TRUE(EqualsIgnoreCase("Unlimited", "UNLIMITED"));
  EXPECT_FALSE(EqualsIgnoreCase("UNLIMITE", "UNLIMITED"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_TRUE(StartsWith("gpu01", "gpu"));
  EXPECT_TRUE(StartsWith("gpu", ""));
  EXPECT_FALSE(StartsWith("gp", "gpu"));
  EXPECT_EQ(Join({"a", "b", "c"}, ","), "a,b,c");
  EXPECT_EQ(Join({"a"}, ", "), "a");
  EXPECT_EQ(Join({}, ","), "");
}

TEST(ParseIntTest, ParsesAndRejects) {
  struct Case {
    std::string in;
    bool ok;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"0", true, 0},
      {"42", true, 42},
      {"007", true, 7},
      {"9223372036854775807", true, INT64_MAX},
      {"9223372036854775808", false, 0},
      {"", false, 0},
      {"-1", false, 0},
      {"+1", false, 0},
      {" 1", false, 0},
      {"1 ", false, 0},
      {"1a", false, 0},
      {"1.0", false, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Result<int64_t> got = ParseInt(c.in);
    ASSERT_EQ(got.ok(), c.ok);
    if (c.ok) {
      EXPECT_EQ(*got, c.want);
    }
  }
}

TEST(ParseMemoryMbTest, ParsesLikeSbatchMem) {
  struct Case {
    std::string in;
    int64_t want_mb;
  };
  // Checked against `sbatch --test-only --mem=...` (Slurm 22.05).
  const std::vector<Case> cases = {
      {"100", 100},       {"0", 0},           {"4G", 4096},      {"4g", 4096},
      {"4M", 4},          {"4m", 4},          {"1T", 1048576},   {"1t", 1048576},
      {"512K", 1},        {"1024K", 1},       {"1025K", 2},      {"1k", 1},
      {"0K", 0},          {"4GB", 4096},      {"100MB", 100},    {"4KB", 1},
      {" 4G", 4096},      // leading blanks are skipped, as strtol does
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Result<int64_t> got = ParseMemoryMb(c.in);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, c.want_mb);
  }
}

TEST(ParseMemoryMbTest, RejectsWhatSbatchRejects) {
  const std::vector<std::string> cases = {
      "1.5G", "abc", "-5", "", "G", "4X", "4Gx", "4GiB", "4B", "4G ", "+4", "4 G",
      "9999999999999999999", "9999999999999999T",
  };
  for (const std::string& in : cases) {
    SCOPED_TRACE(in);
    Result<int64_t> got = ParseMemoryMb(in);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument);
  }
}

}  // namespace
TEST(IndexRanges, FormatAndParseAreInverse) {
  EXPECT_EQ(FormatIndexRanges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(FormatIndexRanges({}), "");
  EXPECT_EQ(FormatIndexRanges({0, 1, 3}), "0-1,3");  // srun's task states
  EXPECT_EQ(JoinInts({0, 2, 3}), "0,2,3");
  EXPECT_EQ(JoinInts({4}, ";"), "4");
  EXPECT_EQ(JoinInts({}), "");
  EXPECT_EQ(ParseIndexRanges("0-2,5,7-8").value(), (std::vector<int>{0, 1, 2, 5, 7, 8}));
  EXPECT_TRUE(ParseIndexRanges("").value().empty());
  for (const char* bad : {"3-1", "x", "1,,2", "-1", "1-"}) {
    EXPECT_FALSE(ParseIndexRanges(bad).ok()) << bad;
  }
  std::vector<int> many;
  for (int i = 0; i < 10000; i += (i % 7 == 0 ? 2 : 1)) many.push_back(i);
  EXPECT_EQ(ParseIndexRanges(FormatIndexRanges(many)).value(), many);
  EXPECT_EQ(ParseIndexRanges(FormatIndexRangesWithSteps(many)).value(), many);
}

// A record's index ranges are outside input (a journal, an API client):
// they never expand past the largest job array, and a huge step neither
// overflows nor loops.
TEST(IndexRanges, ExpansionIsBounded) {
  auto huge = ParseIndexRanges("2-2041222041");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(), "more than 4000001 indices in '2-2041222041'");
  EXPECT_FALSE(ParseIndexRanges("0-3000000,0-3000000").ok());  // counted over all parts
  EXPECT_EQ(ParseIndexRanges("0-4000000").value().size(), 4000001u);
  EXPECT_EQ(ParseIndexRanges("5-2147483647:9223372036854775807").value(), std::vector<int>{5});
  EXPECT_EQ(ParseIndexRanges("0-2147483647:1073741824").value(),
            (std::vector<int>{0, 1073741824}));
}

TEST(IndexRanges, StridedRunsStayShort) {
  EXPECT_EQ(FormatIndexRangesWithSteps({0, 2, 4, 6, 9}), "0-6:2,9");
  EXPECT_EQ(FormatIndexRangesWithSteps({1, 2, 5, 7}), "1-2,5,7");
  EXPECT_EQ(FormatIndexRangesWithSteps({3}), "3");
  EXPECT_EQ(FormatIndexRangesWithSteps({}), "");
  EXPECT_EQ(ParseIndexRanges("0-6:2,9").value(), (std::vector<int>{0, 2, 4, 6, 9}));
  EXPECT_EQ(ParseIndexRanges("1-8:3").value(), (std::vector<int>{1, 4, 7}));
  for (const char* bad : {"0-6:0", "0:2", "0-6:", "0-6:x"}) {
    EXPECT_FALSE(ParseIndexRanges(bad).ok()) << bad;
  }
  // --array=0-99999:2 after its first task left: one short term, not 50,000.
  std::vector<int> evens;
  for (int i = 2; i < 100000; i += 2) evens.push_back(i);
  EXPECT_EQ(FormatIndexRangesWithSteps(evens), "2-99998:2");
  EXPECT_EQ(ParseIndexRanges("2-99998:2").value(), evens);
}

}  // namespace muster::util

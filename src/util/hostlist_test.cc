#include "util/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace muster::util {
namespace {

using ::testing::HasSubstr;
using Hosts = std::vector<std::string>;

// Expected values below were checked against `scontrol show hostnames`,
// `scontrol show hostlist` and `scontrol show hostlistsorted` of Slurm 22.05.

struct ExpandCase {
  std::string expr;
  Hosts want;
};

TEST(ExpandHostlistTest, Expands) {
  const std::vector<ExpandCase> cases = {
      // Plain names and comma lists, order and duplicates kept.
      {"gpu01", {"gpu01"}},
      {"a", {"a"}},
      {"N1", {"N1"}},
      {"n1,n2", {"n1", "n2"}},
      {"b,a,c", {"b", "a", "c"}},
      {"n1,n[2-3],n1", {"n1", "n2", "n3", "n1"}},
      {"rack1-node01", {"rack1-node01"}},
      {"n-1", {"n-1"}},
      // Empty parts are skipped; the empty expression is the empty list.
      {"", {}},
      {",", {}},
      {"a,,b", {"a", "b"}},
      {",a,", {"a"}},
      // Blanks separate hosts like commas.
      {" n1 , n2 ", {"n1", "n2"}},
      {"a b", {"a", "b"}},
      {"a\tb\nc", {"a", "b", "c"}},
      {"n [1-2]", {"n", "1", "2"}},
      // Ranges and lists in brackets.
      {"gpu[01-03],cpu1", {"gpu01", "gpu02", "gpu03", "cpu1"}},
      {"gpu[01-04,20]", {"gpu01", "gpu02", "gpu03", "gpu04", "gpu20"}},
      {"n[1,3-4]", {"n1", "n3", "n4"}},
      {"n[1-3,2]", {"n1", "n2", "n3", "n2"}},
      {"n[7]", {"n7"}},
      {"x[0]", {"x0"}},
      {"n[3-3]", {"n3"}},
      {"[1-2]", {"1", "2"}},
      {"n[1-2],[3-4]", {"n1", "n2", "3", "4"}},
      {"n[1-2],x", {"n1", "n2", "x"}},
      {"n[1-2],m[3-4]", {"n1", "n2", "m3", "m4"}},
      // Zero padding: the width of the lower bound.
      {"n[8-10]", {"n8", "n9", "n10"}},
      {"n[08-10]", {"n08", "n09", "n10"}},
      {"n[8-010]", {"n8", "n9", "n10"}},
      {"n[08-9]", {"n08", "n09"}},
      {"n[01-1]", {"n01"}},
      {"n[098-100]", {"n098", "n099", "n100"}},
      {"n[0098-0100]", {"n0098", "n0099", "n0100"}},
      {"n[00-01]", {"n00", "n01"}},
      {"n[1,02,003]", {"n1", "n02", "n003"}},
      {"n[99999999999]", {"n99999999999"}},
      // Several bracket groups: the cartesian product, first group
      // outermost for two groups.
      {"a[1-2]b[3-4]", {"a1b3", "a1b4", "a2b3", "a2b4"}},
      {"n[1-2][3-4]", {"n13", "n14", "n23", "n24"}},
      {"a[1-2]b[1]", {"a1b1", "a2b1"}},
      {"rack[1-2]-node[01-02]",
       {"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}},
      {"r[1-2]n[1,3]", {"r1n1", "r1n3", "r2n1", "r2n3"}},
      // With three or more groups Slurm varies the last group fastest, then
      // the first, then the second...: reproduced exactly.
      {"n[01-02]-x[1-2]-y[5-6]",
       {"n01-x1-y5", "n01-x1-y6", "n02-x1-y5", "n02-x1-y6", "n01-x2-y5", "n01-x2-y6",
        "n02-x2-y5", "n02-x2-y6"}},
      {"a[1-2]b[3-4]c[5-6]d[7-8]",
       {"a1b3c5d7", "a1b3c5d8", "a2b3c5d7", "a2b3c5d8", "a1b4c5d7", "a1b4c5d8",
        "a2b4c5d7", "a2b4c5d8", "a1b3c6d7", "a1b3c6d8", "a2b3c6d7", "a2b3c6d8",
        "a1b4c6d7", "a1b4c6d8", "a2b4c6d7", "a2b4c6d8"}},
      // Commas inside brackets do not split the expression.
      {"a[1,2]b[3],c", {"a1b3", "a2b3", "c"}},
  };
  for (const ExpandCase& c : cases) {
    SCOPED_TRACE(c.expr);
    Result<Hosts> got = ExpandHostlist(c.expr);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(ExpandHostlistTest, LargeRanges) {
  Result<Hosts> got = ExpandHostlist("n[001-100]");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 100u);
  EXPECT_EQ(got->front(), "n001");
  EXPECT_EQ((*got)[41], "n042");
  EXPECT_EQ(got->back(), "n100");

  // Slurm's bound: at most 65536 hosts in one range.
  got = ExpandHostlist("n[0-65535]");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 65536u);
  EXPECT_EQ(got->back(), "n65535");
}

struct ErrorCase {
  std::string expr;
  std::string detail;  // expected in the message
};

TEST(ExpandHostlistTest, Errors) {
  const std::vector<ErrorCase> cases = {
      // Unbalanced or nested brackets.
      {"n[1-2", "unbalanced '['"},
      {"n1-2]", "unbalanced ']'"},
      {"n[1-2]]", "unbalanced ']'"},
      {"n]1[", "unbalanced ']'"},
      {"n[[1-2]", "nested"},
      {"a[1-2,b", "unbalanced '['"},
      // Reversed, malformed and non-numeric ranges.
      {"n[5-3]", "invalid range '5-3'"},
      {"n[a-b]", "invalid range 'a-b'"},
      {"n[1-x]", "invalid range '1-x'"},
      {"n[-1]", "invalid range '-1'"},
      {"n[1-]", "invalid range '1-'"},
      {"n[1--2]", "invalid range '1--2'"},
      {"n[1-2-3]", "invalid range '1-2-3'"},
      {"n[+1]", "invalid range '+1'"},
      {"n[1234567890123456789]", "invalid range"},
      // Empty brackets and empty list items.
      {"n[]", "invalid range ''"},
      {"n[1-2,]", "invalid range ''"},
      {"n[,1]", "invalid range ''"},
      // Blanks inside brackets.
      {"n[1-2 ]", "blank"},
      {"n[ 1-2]", "blank"},
      // Text after the last bracket group (Slurm: "Invalid hostlist").
      {"rack[1-2]-node", "after the last ']'"},
      {"n[1-2]b", "after the last ']'"},
      {"a[1-2]b[1]c", "after the last ']'"},
      {"x,n[1-2]b", "after the last ']'"},
      // Too many hosts.
      {"n[0-65536]", "too many hosts in range"},
      {"n[1-100000]", "too many hosts in range"},
      {"a[0-9999]b[0-9999]", "too many hosts"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.expr);
    Result<Hosts> got = ExpandHostlist(c.expr);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("Invalid hostlist: " + c.expr));
    EXPECT_THAT(got.status().message(), HasSubstr(c.detail));
  }
}

struct CompressCase {
  Hosts hosts;
  std::string want;
};

TEST(CompressHostlistTest, Compresses) {
  const std::vector<CompressCase> cases = {
      {{}, ""},
      {{"gpu01"}, "gpu01"},
      {{"a"}, "a"},
      // Sorted by prefix, then numerically.
      {{"gpu02", "gpu01", "gpu03", "cpu01"}, "cpu01,gpu[01-03]"},
      {{"gpu01", "gpu02", "gpu03", "cpu01"}, "cpu01,gpu[01-03]"},
      {{"n10", "n9", "n1"}, "n[1,9-10]"},
      {{"n1", "n2", "m1", "m2", "n3"}, "m[1-2],n[1-3]"},
      {{"n1", "n3", "n5"}, "n[1,3,5]"},
      {{"n1", "n2", "n3", "n5", "n7", "n8"}, "n[1-3,5,7-8]"},
      // Names without numbers sort by name, before numbered names of the
      // same prefix.
      {{"b", "a", "c"}, "a,b,c"},
      {{"x", "n1", "n2", "y"}, "n[1-2],x,y"},
      {{"a", "a1", "a01", "b"}, "a,a[1,01],b"},
      {{"n1a", "n2a", "n1"}, "n1,n1a,n2a"},
      {{"a1", "A1", "b"}, "A1,a1,b"},
      // Duplicates are dropped (scontrol show hostlistsorted keeps them).
      {{"n1", "n1", "n2"}, "n[1-2]"},
      {{"n2", "n1", "n2", "n3"}, "n[1-3]"},
      {{"a", "a"}, "a"},
      {{"n01", "n01"}, "n01"},
      // Runs of equal width fold; unpadded numbers fold across widths.
      {{"n8", "n9", "n10"}, "n[8-10]"},
      {{"n08", "n09", "n10"}, "n[08-10]"},
      {{"n9", "n10", "n11"}, "n[9-11]"},
      {{"n98", "n99", "n100"}, "n[98-100]"},
      {{"n098", "n099", "n100"}, "n[098-100]"},
      {{"n0", "n1", "n2"}, "n[0-2]"},
      // Different zero-padded widths are not merged; narrower widths first.
      {{"n1", "n01", "n2", "n02"}, "n[1-2,01-02]"},
      {{"n001", "n1", "n01"}, "n[1,01,001]"},
      {{"gpu1", "gpu01"}, "gpu[1,01]"},
      {{"n0", "n00", "n1"}, "n[0-1,00]"},
      {{"n9", "n08", "n10", "n11"}, "n[9,08,10-11]"},
      {{"n010", "n9", "n10", "n011"}, "n[9-10,010-011]"},
      {{"n9", "n010"}, "n[9,010]"},
      {{"n9", "n09", "n10"}, "n[9,09-10]"},
      {{"n08", "n09", "n10", "n100"}, "n[08-10,100]"},
      // Only the last number counts.
      {{"rack1-node01", "rack1-node02", "rack2-node01"}, "rack1-node[01-02],rack2-node01"},
      {{"rack2-node01", "rack1-node02", "rack1-node01"}, "rack1-node[01-02],rack2-node01"},
      {{"x1y2", "x1y1", "x2y1"}, "x1y[1-2],x2y1"},
      {{"a1b1", "a1b2"}, "a1b[1-2]"},
      {{"n-1", "n-2"}, "n-[1-2]"},
      // Names that are all digits have an empty prefix.
      {{"1", "2", "3"}, "[1-3]"},
      // Empty names are ignored.
      {{"", "n1"}, "n1"},
  };
  for (const CompressCase& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(CompressHostlist(c.hosts), c.want);
  }
}

TEST(CompressHostlistTest, VeryLongNumbersAreNames) {
  // More digits than fit in 64 bits: treated as a name, not a number.
  EXPECT_EQ(CompressHostlist({"n99999999999999999999", "n1"}), "n1,n99999999999999999999");
}

TEST(HostlistTest, RoundTrips) {
  const std::vector<std::string> exprs = {
      "gpu[01-16,20]", "cpu01,gpu[01-03]", "n[8-10]",          "n[1-2,01-02]",
      "n[9-10,010-011]", "a,a[1,01],b",    "rack1-node[01-04],rack2-node[01-04]",
      "[1-3]",          "n[0-1,00]",       "x1y[1-2],x2y1",     "n[098-100]",
      "m[1-2],n[1-3,5,7-8]",
  };
  for (const std::string& expr : exprs) {
    SCOPED_TRACE(expr);
    Result<Hosts> hosts = ExpandHostlist(expr);
    ASSERT_TRUE(hosts.ok()) << hosts.status().message();
    EXPECT_EQ(CompressHostlist(*hosts), expr);
  }
}

TEST(HostlistTest, CompressThenExpandGivesSortedUniqueHosts) {
  const Hosts hosts = {"gpu10", "gpu9",  "gpu09", "gpu9",   "cpu", "n001",
                       "n1",    "n01",   "a1b2",  "a1b1",   "x",   "rack1-node7",
                       "gpu11", "gpu010", "0",    "00",     "1"};
  Result<Hosts> back = ExpandHostlist(CompressHostlist(hosts));
  ASSERT_TRUE(back.ok()) << back.status().message();
  Hosts want = hosts;
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  Hosts got = *back;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  // And compressing again is stable.
  EXPECT_EQ(CompressHostlist(*back), CompressHostlist(hosts));
}

TEST(HostlistTest, LargeRoundTrip) {
  Hosts hosts;
  for (int i = 1; i <= 2000; ++i) {
    if (i % 100 != 0) hosts.push_back("node" + std::to_string(i));
  }
  std::string expr = CompressHostlist(hosts);
  EXPECT_TRUE(expr.starts_with("node[1-99,101-199,"));
  EXPECT_TRUE(expr.ends_with(",1901-1999]"));
  Result<Hosts> back = ExpandHostlist(expr);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, hosts);
}

TEST(CompressCountsTest, FoldsRuns) {
  EXPECT_EQ(CompressCounts({2, 2, 2, 1}), "2(x3),1");
  EXPECT_EQ(CompressCounts({4}), "4");
  EXPECT_EQ(CompressCounts({1, 2, 1}), "1,2,1");
  EXPECT_EQ(CompressCounts({3, 1, 1}), "3,1(x2)");
  EXPECT_EQ(CompressCounts({}), "");
}

}  // namespace
}  // namespace muster::util

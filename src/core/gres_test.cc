#include "core/gres.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::core {
namespace {

using ::testing::HasSubstr;

struct NodeGresCase {
  std::string text;
  std::vector<GresSpec> want;
};

bool SameSpecs(const std::vector<GresSpec>& a, const std::vector<GresSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].type != b[i].type || a[i].count != b[i].count) {
      return false;
    }
  }
  return true;
}

TEST(ParseNodeGresTest, Parses) {
  const std::vector<NodeGresCase> cases = {
      {"", {}},
      {"(null)", {}},
      {"gpu:h100:8", {{"gpu", "h100", 8}}},
      {"gpu:8", {{"gpu", "", 8}}},
      {"gpu", {{"gpu", "", 1}}},
      {"gpu:h100", {{"gpu", "h100", 1}}},
      {"gpu:0", {{"gpu", "", 0}}},
      {"gpu:h100:8,gpu:a100:2,nic:1",
       {{"gpu", "h100", 8}, {"gpu", "a100", 2}, {"nic", "", 1}}},
      {" gpu:2 , nic:1 ", {{"gpu", "", 2}, {"nic", "", 1}}},
      // Count suffixes are powers of 1024.
      {"bandwidth:4k", {{"bandwidth", "", 4096}}},
      {"bandwidth:2K", {{"bandwidth", "", 2048}}},
      {"bandwidth:lustre:1M", {{"bandwidth", "lustre", 1048576}}},
      {"mem:1G", {{"mem", "", int64_t{1} << 30}}},
      {"mem:1T", {{"mem", "", int64_t{1} << 40}}},
      // Socket bindings are ignored, commas inside them included.
      {"gpu:h100:8(S:0-1)", {{"gpu", "h100", 8}}},
      {"gpu:h100:4(S:0),gpu:a100:4(S:1)", {{"gpu", "h100", 4}, {"gpu", "a100", 4}}},
      {"gpu:2(S:0,1),nic:1", {{"gpu", "", 2}, {"nic", "", 1}}},
      // MIG-like types that start with a digit stay types.
      {"gpu:1g.10gb:7", {{"gpu", "1g.10gb", 7}}},
      {"gpu:1g.10gb", {{"gpu", "1g.10gb", 1}}},
  };
  for (const NodeGresCase& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<std::vector<GresSpec>> got = ParseNodeGres(c.text);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(SameSpecs(*got, c.want)) << FormatGres(*got);
  }
}

TEST(ParseNodeGresTest, Rejects) {
  for (const std::string text :
       {"gpu:", ":8", "gpu::8", "gpu:h100:8:9", "gpu:h100:x", "gpu:2x", "gpu,,nic",
        "gpu:h100:-1", "gpu:8(S:0", ","}) {
    SCOPED_TRACE(text);
    util::Result<std::vector<GresSpec>> got = ParseNodeGres(text);
    ASSERT_FALSE(got.ok());
    EXPECT_THAT(got.status().message(),
                HasSubstr("Invalid generic resource (gres) specification"));
  }
}

TEST(FormatGresTest, Formats) {
  EXPECT_EQ(FormatGres({}), "(null)");
  EXPECT_EQ(FormatGres({{"gpu", "h100", 8}}), "gpu:h100:8");
  EXPECT_EQ(FormatGres({{"gpu", "", 8}}), "gpu:8");
  EXPECT_EQ(FormatGres({{"gpu", "h100", 8}, {"gpu", "a100", 2}, {"nic", "", 1}}),
            "gpu:h100:8,gpu:a100:2,nic:1");
  // Round trip.
  util::Result<std::vector<GresSpec>> parsed = ParseNodeGres("gpu:a100:2,gpu:h100:2,nic:1");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(FormatGres(*parsed), "gpu:a100:2,gpu:h100:2,nic:1");
}

struct RequestCase {
  std::string text;
  std::vector<GresRequest> want;
};

bool SameRequests(const std::vector<GresRequest>& a, const std::vector<GresRequest>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].type != b[i].type || a[i].count != b[i].count ||
        a[i].per_job != b[i].per_job) {
      return false;
    }
  }
  return true;
}

TEST(ParseGresRequestTest, Parses) {
  // Accepted by `sbatch --test-only --gres=...` (Slurm 22.05).
  const std::vector<RequestCase> cases = {
      {"", {}},
      {"gpu", {{"gpu", "", 1, false}}},
      {"gpu:2", {{"gpu", "", 2, false}}},
      {"gpu:0", {{"gpu", "", 0, false}}},
      {"gpu:h100:2", {{"gpu", "h100", 2, false}}},
      {"gpu:h100", {{"gpu", "h100", 1, false}}},
      {"gpu:1k", {{"gpu", "", 1024, false}}},
      {"gpu:h100:2,nic:1", {{"gpu", "h100", 2, false}, {"nic", "", 1, false}}},
      {"gpu:h100:1,gpu:a100:1", {{"gpu", "h100", 1, false}, {"gpu", "a100", 1, false}}},
  };
  for (const RequestCase& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<std::vector<GresRequest>> got = ParseGresRequest(c.text);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(SameRequests(*got, c.want)) << FormatGresRequest(*got);
  }
}

TEST(ParseGresRequestTest, Rejects) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"foo:bar:baz:1", "Invalid generic resource (gres) specification: foo:bar:baz:1"},
      {"gpu:-1", "Invalid generic resource (gres) specification: gpu:-1"},
      {"gpu:2x", "Invalid generic resource (gres) specification: gpu:2x"},
      {":2", "Invalid generic resource (gres) specification: :2"},
      {"gpu::2", "Invalid generic resource (gres) specification: gpu::2"},
      {"gpu:2(S:0)", "Invalid generic resource (gres) specification: gpu:2(S:0)"},
      {"gpu,", "Invalid generic resource (gres) specification: "},
      {"gpu:1,x:y:z:w", "Invalid generic resource (gres) specification: x:y:z:w"},
      {"gpu:1,gpu:h100:1",
       "Invalid GRES specification (with and without type identification): gpu"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<std::vector<GresRequest>> got = ParseGresRequest(c.text);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), util::Code::kInvalidArgument);
    EXPECT_EQ(got.status().message(), c.message);
  }
}

TEST(ParseGpuCountTest, Parses) {
  struct Case {
    std::string text;
    bool per_job;
    GresRequest want;
  };
  const std::vector<Case> cases = {
      {"2", false, {"gpu", "", 2, false}},
      {"2", true, {"gpu", "", 2, true}},
      {"h100:2", true, {"gpu", "h100", 2, true}},
      {"h100", false, {"gpu", "h100", 1, false}},
      {"0", false, {"gpu", "", 0, false}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    util::Result<GresRequest> got = ParseGpuCount(c.text, c.per_job);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(SameRequests({*got}, {c.want}));
  }
  for (const std::string bad : {"", "a:b:2", "-1", "2x", "h100:", ":2", "2,3"}) {
    SCOPED_TRACE(bad);
    util::Result<GresRequest> got = ParseGpuCount(bad, false);
    ASSERT_FALSE(got.ok());
    EXPECT_THAT(got.status().message(), HasSubstr("Invalid generic resource"));
  }
}

TEST(FormatGresRequestTest, Formats) {
  EXPECT_EQ(FormatGresRequest({}), "");
  EXPECT_EQ(FormatGresRequest({{"gpu", "", 2, false}}), "gpu:2");
  EXPECT_EQ(FormatGresRequest({{"gpu", "h100", 2, false}, {"nic", "", 1, false}}),
            "gpu:h100:2,nic:1");
}

}  // namespace
}  // namespace muster::core

#include "util/getopt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::util {
namespace {

using ::testing::ElementsAre;

// A table like a command's: flags, values, an optional value, aliases.
class GetoptTest : public ::testing::Test {
 protected:
  std::vector<OptionSpec> Specs() {
    auto record = [this](const char* name) {
      return [this, name](const std::string& v) {
        seen_.push_back(std::string(name) + "=" + v);
        return Status::Ok();
      };
    };
    return {
        {.short_name = 'n', .long_name = "noheader", .apply = record("noheader")},
        {.short_name = 'X', .long_name = "allocations", .apply = record("allocations")},
        {.short_name = 'u', .long_name = "user", .arg = Arg::kRequired, .apply = record("user"),
         .id = 1},
        {.long_name = "users", .arg = Arg::kRequired, .apply = record("user"), .id = 1},
        {.long_name = "usage", .apply = record("usage")},
        {.short_name = 'j', .long_name = "jobs", .arg = Arg::kOptional, .apply = record("jobs"),
         .optional_takes_next = true},
        {.short_name = 's', .long_name = "steps", .arg = Arg::kOptional, .apply = record("steps")},
        {.long_name = "start", .apply = record("start")},
        {.long_name = "states", .arg = Arg::kRequired, .apply = record("states")},
    };
  }
  Result<ParseResult> Parse(const std::vector<std::string>& args, bool stop = false) {
    seen_.clear();
    specs_ = Specs();
    return ParseOptions("cmd", specs_, args, stop);
  }

  std::vector<OptionSpec> specs_;
  std::vector<std::string> seen_;
};

TEST_F(GetoptTest, BundlesAttachedAndSeparateValues) {
  auto r = Parse({"-nXubob", "--user=amy", "-u", "cat", "--users", "dan"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_THAT(seen_, ElementsAre("noheader=", "allocations=", "user=bob", "user=amy", "user=cat",
                                 "user=dan"));
  ASSERT_EQ(r->options.size(), 6u);
  EXPECT_EQ(r->options[2].value, "bob");
  EXPECT_FALSE(r->options[0].value.has_value());
}

TEST_F(GetoptTest, PrefixesAndAliases) {
  ASSERT_TRUE(Parse({"--noh", "--alloc"}).ok());
  EXPECT_THAT(seen_, ElementsAre("noheader=", "allocations="));
  // "user" and "users" are one option: a prefix of both is not ambiguous.
  ASSERT_TRUE(Parse({"--use=x"}).ok());
  EXPECT_THAT(seen_, ElementsAre("user=x"));
  EXPECT_EQ(Parse({"--us"}).status().message(),
            "cmd: option '--us' is ambiguous; possibilities: '--user' '--users' '--usage'");
  EXPECT_EQ(Parse({"--st=pd"}).status().message(),
            "cmd: option '--st=pd' is ambiguous; possibilities: '--steps' '--start' '--states'");
  ASSERT_TRUE(Parse({"--start"}).ok());  // exact beats the prefix of "--states"
  EXPECT_THAT(seen_, ElementsAre("start="));
}

TEST_F(GetoptTest, OptionalValues) {
  ASSERT_TRUE(Parse({"-j", "5", "-s", "x", "--jobs=7", "-j8", "-j"}).ok());
  // -j takes a following word; -s (without optional_takes_next) does not.
  EXPECT_THAT(seen_, ElementsAre("jobs=5", "steps=", "jobs=7", "jobs=8", "jobs="));
  auto r = Parse({"-j", "-n"});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(seen_, ElementsAre("jobs=", "noheader="));  // an option is not a value
}

TEST_F(GetoptTest, PositionalWords) {
  auto mixed = Parse({"a", "-n", "b", "--", "-X", "c"});
  ASSERT_TRUE(mixed.ok());
  EXPECT_THAT(mixed->positional, ElementsAre("a", "b", "-X", "c"));  // "--" ends options
  EXPECT_THAT(seen_, ElementsAre("noheader="));
  auto stop = Parse({"-n", "script.sh", "-X"}, true);
  ASSERT_TRUE(stop.ok());
  EXPECT_THAT(stop->positional, ElementsAre("script.sh", "-X"));  // the script's own arguments
  EXPECT_THAT(seen_, ElementsAre("noheader="));
}

TEST_F(GetoptTest, GlibcMessages) {
  EXPECT_EQ(Parse({"--bogus=1"}).status().message(), "cmd: unrecognized option '--bogus=1'");
  EXPECT_EQ(Parse({"-nq"}).status().message(), "cmd: invalid option -- 'q'");
  EXPECT_EQ(Parse({"-u"}).status().message(), "cmd: option requires an argument -- 'u'");
  EXPECT_EQ(Parse({"--use"}).status().message(), "cmd: option '--user' requires an argument");
  EXPECT_EQ(Parse({"--noheader=yes"}).status().message(),
            "cmd: option '--noheader' doesn't allow an argument");
}

TEST_F(GetoptTest, AnApplyErrorEndsParsing) {
  std::vector<OptionSpec> specs = {
      {.short_name = 'a', .apply = [](const std::string&) { return InvalidArgument("no a"); }},
      {.short_name = 'b', .apply = [](const std::string&) -> Status { std::abort(); }},
  };
  EXPECT_EQ(ParseOptions("cmd", specs, {"-ab"}, false).status().message(), "no a");
}

}  // namespace
}  // namespace muster::util

// sreport's arguments: options, then "<type> <report> [key=value...]",
// into the request musterd answers from the accounting database
// (src/cli/render/sreport_render.cc).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/render/render.h"
#include "util/getopt.h"
#include "util/strings.h"

namespace muster::cli {

using util::InvalidArgument;
using util::Result;

Result<render::SreportRequest> ParseSreportArgs(const std::vector<std::string>& args) {
  render::SreportRequest r;
  auto flag = [](bool* field) {
    return [field](const std::string&) {
      *field = true;
      return util::Status::Ok();
    };
  };
  auto lower = [](std::string* field) {
    return [field](const std::string& v) {
      *field = util::ToLower(v);
      return util::Status::Ok();
    };
  };
  const std::vector<util::OptionSpec> options = {
      {.short_name = 'n', .long_name = "noheader", .apply = flag(&r.noheader)},
      {.short_name = 'p', .long_name = "parsable", .apply = flag(&r.parsable)},
      {.short_name = 'P', .long_name = "parsable2", .apply = flag(&r.parsable2)},
      {.short_name = 't', .long_name = "time-format", .arg = util::Arg::kRequired,
       .apply = lower(&r.time_format)},
      {.short_name = 'T', .long_name = "tres", .arg = util::Arg::kRequired,
       .apply = lower(&r.tres)},
      {.short_name = 'V', .long_name = "version", .apply = flag(&r.version)},
      {.short_name = 'h', .long_name = "help", .apply = flag(&r.help)},
      {.long_name = "usage", .apply = flag(&r.help)},
  };
  Result<util::ParseResult> parsed = util::ParseOptions("sreport", options, args, false);
  if (!parsed.ok()) {
    return InvalidArgument(parsed.status().message() +
                           "\nTry \"sreport --help\" for more information");
  }
  if (r.version || r.help) return r;
  const std::vector<std::string>& words = parsed->positional;
  const std::map<std::string, std::string> kUnits = {
      {"m", "minutes"}, {"minutes", "minutes"}, {"h", "hours"}, {"hours", "hours"},
      {"s", "seconds"}, {"seconds", "seconds"}, {"p", "percent"}, {"percent", "percent"}};
  if (auto it = kUnits.find(r.time_format); it != kUnits.end()) r.time_format = it->second;
  else {
    // sreport warns (no newline) and goes on in minutes.
    r.warning = "unknown time format " + r.time_format;
    r.time_format = "minutes";
  }
  std::vector<std::string> cmd;
  for (const std::string& w : words) {
    size_t eq = w.find('=');
    if (eq == std::string::npos) {
      cmd.push_back(util::ToLower(w));
      continue;
    }
    const std::string k = util::ToLower(w.substr(0, eq)), v = w.substr(eq + 1);
    if (k == "start") r.start = v;
    else if (k == "end") r.end = v;
    else if (k == "users" || k == "user") r.users = util::Split(v, ',');
    else if (k == "accounts" || k == "account") r.accounts = util::Split(v, ',');
    else if (k == "topcount" || k == "days") {
      Result<int64_t> n = util::ParseInt(v);
      if (!n.ok() || *n > 1000000) {
        return InvalidArgument("sreport: error: " + w.substr(0, eq) + " needs a number, not '" +
                               v + "'");
      }
      (k == "days" ? r.days : r.top_count) = std::max(1, static_cast<int>(*n));
    }
    else if (k == "clusters" || k == "cluster" || k == "format") {
    } else {
      return InvalidArgument("sreport: error: Unknown condition: " + w);
    }
  }
  if (cmd.size() != 2) return InvalidArgument("sreport: error: No report type given");
  const std::string rep = cmd[0] + " " + cmd[1];
  if (cmd[0] == "cluster" && rep != "cluster utilization" &&
      rep != "cluster accountutilizationbyuser") {
    return InvalidArgument("Not valid report " + words.back() +
                           "\nValid cluster reports are, \"AccountUtilizationByUser\", "
                           "\"UserUtilizationByAccount\", \"UserUtilizationByWckey\", "
                           "\"Utilization\", and \"WCKeyUtilizationByUser\"");
  }
  const std::map<std::string, std::string> kReports = {
      {"cluster utilization", "cluster Utilization"},
      {"cluster accountutilizationbyuser", "cluster AccountUtilizationByUser"},
      {"user topusage", "user TopUsage"},
      {"job overrequest", "job OverRequest"}};
  auto report = kReports.find(rep);
  if (report == kReports.end()) return InvalidArgument("Not valid report " + cmd[1]);
  r.report = report->second;
  return r;
}

}  // namespace muster::cli

#include "cli/priority_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>

#include "cli/render/format_util.h"
#include "util/getopt.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using nlohmann::json;
using render::FitField;
using render::ParsePercentFormat;
using render::PercentField;
using render::PercentFormat;

// A field's value cut or padded to its width, then its suffix.
std::string Cell(std::string value, const PercentField& f) {
  return FitField(value, f.width, f.right) + f.suffix;
}

// One line of a format: its prefix, then each valid field (sprio drops an
// invalid one, suffix and all, after saying so).
std::string Line(const PercentFormat& format,
                 const std::function<std::string(const PercentField&)>& field) {
  std::string out = format.prefix;
  for (const PercentField& f : format.fields) {
    if (f.type != 0) out += Cell(field(f), f);
  }
  return out + "\n";
}

const std::map<char, const char*>& SprioHeaders() {
  static const std::map<char, const char*> headers = {
      {'a', "AGE"},       {'A', "AGE"},       {'b', "ASSOC"},     {'B', "ASSOC"},
      {'c', "CLUSTER"},   {'f', "FAIRSHARE"}, {'F', "FAIRSHARE"}, {'i', "JOBID"},
      {'j', "JOBSIZE"},   {'J', "JOBSIZE"},   {'N', "NICE"},      {'p', "PARTITION"},
      {'P', "PARTITION"}, {'q', "QOS"},       {'Q', "QOS"},       {'r', "PARTITION"},
      {'S', "SITE"},      {'t', "TRES"},      {'T', "TRES"},      {'u', "USER"},
      {'y', "PRIORITY"},  {'Y', "PRIORITY"}};
  return headers;
}

// The factor key of a field letter (either case), and its weight's.
const char* FactorKey(char type) {
  switch (std::tolower(static_cast<unsigned char>(type))) {
    case 'a':
      return "age";
    case 'b':
      return "assoc";
    case 'f':
      return "fairshare";
    case 'j':
      return "job_size";
    case 'p':
      return "partition";
    case 'q':
      return "qos";
    default:
      return nullptr;
  }
}

// The format sprio uses when none is given: factors whose weight is 0 are
// left out unless -l asks for everything.
std::string DefaultSprioFormat(const SprioOptions& o, const json& weights) {
  auto weighted = [&](const char* key) {
    return o.long_format || weights.value(key, int64_t{0}) > 0;
  };
  const bool tres = o.long_format || !weights.value("tres_text", std::string()).empty();
  std::string f = "%.15i %9r";
  if (o.long_format || !o.users.empty()) f += " %.8u";
  if (o.normalized) {
    f += " %10y";
    for (char c : std::string("abfjpq")) {
      if (weighted(FactorKey(c))) f += fmt::format(" %10{}", c);
    }
    if (tres) f += " %20t";
    return f;
  }
  f += " %.10Y %.10S";
  for (char c : std::string("ABFJPQ")) {
    if (weighted(FactorKey(c))) f += fmt::format(" %.10{}", c);
  }
  if (o.long_format) f += " %.11N";
  if (tres) f += o.long_format ? " %.20T" : " %20T";
  return f;
}

std::string SprioField(const PercentField& p, const json& job, const json& weights) {
  const std::vector<std::string> names = weights.value("tres_names", std::vector<std::string>{});
  const std::vector<double> tres_w = weights.value("tres", std::vector<double>{});
  switch (p.type) {
    case 'i':
      return std::to_string(job.value("job_id", 0u));
    case 'r':
      return job.value("partition", "");
    case 'u':
      return job.value("user", "");
    case 'Y':
      return std::to_string(job.value("priority", 0u));
    // Slurm's figure is cut at 8 decimals, not rounded (10988 is 0.00000255).
    case 'y':
      return fmt::format("{:.8f}",
                         std::floor(job.value("priority", 0u) / 4294967295.0 * 1e8) / 1e8);
    case 'S':
      return "0";
    case 'N':
      return std::to_string(job.value("nice", 0));
    case 'c':
      return "(null)";  // no federation
    case 't':
    case 'T': {
      const std::vector<double> f = job.value("tres", std::vector<double>{});
      std::vector<std::string> items;
      for (size_t k = 0; k < f.size() && k < names.size(); ++k) {
        items.push_back(p.type == 't'
                            ? fmt::format("{}={:.2f}", names[k], f[k])
                            : fmt::format("{}={}", names[k], std::llround(f[k] * tres_w[k])));
      }
      return util::Join(items, ",");
    }
    default:
      break;
  }
  const char* key = FactorKey(p.type);
  if (key == nullptr) return "";
  const double factor = job.at("factors").value(key, 0.0);
  if (std::islower(static_cast<unsigned char>(p.type))) return fmt::format("{:.7f}", factor);
  return std::to_string(std::llround(factor * static_cast<double>(weights.value(key, int64_t{0}))));
}

std::string WeightField(const PercentField& p, const json& weights) {
  switch (p.type) {
    case 'i':
      return "Weights";
    case 'S':
      return "1";
    case 't':
    case 'T': {
      const std::string text = weights.value("tres_text", std::string());
      return text.empty() ? "(null)" : text;
    }
    default:
      break;
  }
  const char* key = FactorKey(p.type);
  return key == nullptr ? "" : std::to_string(weights.value(key, int64_t{0}));
}

}  // namespace

bool ValidSprioField(char type) { return SprioHeaders().count(type) != 0; }

std::vector<std::string> SprioFormatErrors(const std::string& format) {
  std::vector<std::string> out;
  for (const std::string& bad : ParsePercentFormat(format, &ValidSprioField).invalid) {
    out.push_back("sprio: error: Invalid job format specification: " + bad);
  }
  return out;
}

util::Result<SprioOptions> ParseSprioArgs(const std::vector<std::string>& args,
                                          const char* env_format) {
  SprioOptions o;
  if (env_format != nullptr) o.format = env_format;
  util::Status bad_job = util::Status::Ok();
  auto flag = [](bool* field) {
    return [field](const std::string&) {
      *field = true;
      return util::Status::Ok();
    };
  };
  const std::vector<util::OptionSpec> specs = {
      {'h', "noheader", util::Arg::kNone, flag(&o.noheader)},
      {'j', "jobs", util::Arg::kOptional,
       [&](const std::string& v) {
         for (const std::string& item : util::Split(v, ',')) {
           auto id = util::ParseInt(item);
           if (!id.ok() || *id <= 0 || *id > UINT32_MAX) {
             return util::InvalidArgument("sprio: error: Invalid job id: " + item);
           }
           o.jobs.push_back(static_cast<uint32_t>(*id));
         }
         return util::Status::Ok();
       },
       0, /*optional_takes_next=*/true},
      {'l', "long", util::Arg::kNone, flag(&o.long_format)},
      {'n', "norm", util::Arg::kNone, flag(&o.normalized)},
      {'o', "format", util::Arg::kRequired,
       [&](const std::string& v) {
         o.format = v;
         return util::Status::Ok();
       }},
      {'p', "partition", util::Arg::kRequired,
       [&](const std::string& v) {
         o.partitions = util::Split(v, ',');
         return util::Status::Ok();
       }},
      {'u', "user", util::Arg::kRequired,
       [&](const std::string& v) {
         o.users = util::Split(v, ',');
         return util::Status::Ok();
       }},
      {'w', "weights", util::Arg::kNone, flag(&o.weights)},
      {'V', "version", util::Arg::kNone, flag(&o.version)},
      {0, "help", util::Arg::kNone, flag(&o.help)},
      {0, "usage", util::Arg::kNone, flag(&o.usage)},
      {'v', "verbose", util::Arg::kNone, nullptr},
      {0, "local", util::Arg::kNone, nullptr},
  };
  auto parsed = util::ParseOptions("sprio", specs, args, false);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->positional.empty()) {
    return util::InvalidArgument("sprio: error: Unrecognized option: " + parsed->positional[0]);
  }
  return o;
}

std::string SprioUsage() {
  // Slurm's layout (the usage line, the options, the help options), in
  // Muster's words.
  return "Usage: sprio [OPTIONS]\n"
         "  -h, --noheader                  leave out the header line\n"
         "  -j, --jobs                      the jobs to show, a comma list\n"
         "                                  (all pending jobs without it)\n"
         "      --local                     this cluster only (there is no other)\n"
         "  -l, --long                      every factor, in the long layout\n"
         "  -n, --norm                      the factors between 0 and 1, before weights\n"
         "  -o, --format=format             the columns, as %-codes\n"
         "  -p, --partition=partition_name  the jobs of these partitions only\n"
         "  -u, --user=user_name            the jobs of these users only\n"
         "  -v, --verbose                   accepted; nothing more is printed\n"
         "  -V, --version                   print the version and exit\n"
         "  -w, --weights                   the weight of each factor\n"
         "\nHelp options:\n"
         "  --help                          print this help and exit\n"
         "  --usage                         print the usage line and exit\n";
}

std::string RenderSprio(const SprioOptions& opts, const json& report,
                        const std::vector<std::optional<uint32_t>>& user_uids) {
  const json& weights = report.at("weights");
  const PercentFormat pieces = ParsePercentFormat(
      opts.format.empty() ? DefaultSprioFormat(opts, weights) : opts.format, &ValidSprioField);
  std::string out;
  if (!opts.noheader) {
    out += Line(pieces, [](const PercentField& p) {
      auto it = SprioHeaders().find(p.type);
      return std::string(it == SprioHeaders().end() ? "" : it->second);
    });
  }
  if (opts.weights) {
    return out + Line(pieces, [&](const PercentField& p) { return WeightField(p, weights); });
  }
  std::vector<json> jobs;
  for (const json& job : report.at("jobs")) {
    const uint32_t id = job.value("job_id", 0u);
    if (!opts.jobs.empty() &&
        std::find(opts.jobs.begin(), opts.jobs.end(), id) == opts.jobs.end()) {
      continue;
    }
    if (!opts.users.empty() &&
        std::find(user_uids.begin(), user_uids.end(),
                  std::optional<uint32_t>(job.value("uid", 0u))) == user_uids.end()) {
      continue;
    }
    if (!opts.partitions.empty()) {
      const std::vector<std::string> parts = util::Split(job.value("partition", ""), ',');
      if (std::none_of(parts.begin(), parts.end(), [&](const std::string& p) {
            return std::find(opts.partitions.begin(), opts.partitions.end(), p) !=
                   opts.partitions.end();
          })) {
        continue;
      }
    }
    jobs.push_back(job);
  }
  if (jobs.empty() && !opts.jobs.empty()) {
    return "Unable to find jobs matching user/id(s) specified\n";
  }
  std::sort(jobs.begin(), jobs.end(), [](const json& a, const json& b) {
    return a.value("job_id", 0u) < b.value("job_id", 0u);
  });
  for (const json& job : jobs) {
    out += Line(pieces, [&](const PercentField& p) { return SprioField(p, job, weights); });
  }
  return out;
}

// ---------------------------------------------------------------------------
// sshare

namespace {

struct ShareColumn {
  const char* header;
  int width;
  bool right;
  std::function<std::string(const json& row, int depth)> value;
};

std::string Fixed6(double v) { return fmt::format("{:.6f}", v); }

std::string TresRunMins(const json& row) {
  const json& t = row.at("tres_run_mins");
  return fmt::format(
      "cpu={},mem={},energy=0,node={},billing={},fs/disk=0,vmem=0,pages=0,gres/gpu={}",
      t.value("cpu", int64_t{0}), t.value("mem", int64_t{0}), t.value("node", int64_t{0}),
      t.value("billing", int64_t{0}), t.value("gres/gpu", int64_t{0}));
}

std::vector<ShareColumn> ShareColumns(bool long_format, bool users_only) {
  auto is_root = [](const json& r) { return r.value("depth", 0) == 0; };
  auto is_user = [](const json& r) { return !r.value("user", std::string()).empty(); };
  std::vector<ShareColumn> cols = {
      {"Account", 20, false,
       [users_only](const json& r, int depth) {
         return std::string(users_only ? 0 : static_cast<size_t>(depth), ' ') +
                r.value("account", "");
       }},
      {"User", 10, true, [](const json& r, int) { return r.value("user", std::string()); }},
      {"RawShares", 10, true,
       [=](const json& r, int) {
         return is_root(r) ? "" : std::to_string(r.value("raw_shares", 0));
       }},
      {"NormShares", 11, true,
       [](const json& r, int) { return Fixed6(r.value("norm_shares", 0.0)); }},
      {"RawUsage", 11, true,
       [](const json& r, int) { return std::to_string(std::llround(r.value("raw_usage", 0.0))); }},
  };
  if (long_format) {
    cols.push_back({"NormUsage", 11, true, [=](const json& r, int) {
                      return is_root(r) ? "" : Fixed6(r.value("norm_usage", 0.0));
                    }});
  }
  cols.push_back({"EffectvUsage", 13, true,
                  [](const json& r, int) { return Fixed6(r.value("effective_usage", 0.0)); }});
  cols.push_back({"FairShare", 10, true, [=](const json& r, int) {
                    return is_user(r) ? Fixed6(r.value("fairshare", 0.0)) : std::string();
                  }});
  if (long_format) {
    cols.push_back({"LevelFS", 10, true, [=](const json& r, int) -> std::string {
                      if (is_root(r)) return "";
                      const json& v = r.at("level_fs");
                      return v.is_null() ? "inf" : Fixed6(v.get<double>());
                    }});
    cols.push_back({"GrpTRESMins", 30, true, [](const json&, int) { return std::string(); }});
    cols.push_back({"TRESRunMins", 30, true, [](const json& r, int) { return TresRunMins(r); }});
  }
  return cols;
}

}  // namespace

util::Result<SshareOptions> ParseSshareArgs(const std::vector<std::string>& args) {
  SshareOptions o;
  auto flag = [](bool* field) {
    return [field](const std::string&) {
      *field = true;
      return util::Status::Ok();
    };
  };
  const std::vector<util::OptionSpec> specs = {
      {'A', "accounts", util::Arg::kRequired,
       [&](const std::string& v) {
         o.accounts = util::Split(v, ',');
         return util::Status::Ok();
       }},
      {'a', "all", util::Arg::kNone, flag(&o.all)},
      {'l', "long", util::Arg::kNone, flag(&o.long_format)},
      {'n', "noheader", util::Arg::kNone, flag(&o.noheader)},
      {'p', "parsable", util::Arg::kNone,
       [&](const std::string&) {
         o.parsable = 1;
         return util::Status::Ok();
       }},
      {'P', "parsable2", util::Arg::kNone,
       [&](const std::string&) {
         o.parsable = 2;
         return util::Status::Ok();
       }},
      {'u', "users", util::Arg::kRequired,
       [&](const std::string& v) {
         o.users = util::Split(v, ',');
         return util::Status::Ok();
       }},
      {'U', "Users", util::Arg::kNone, flag(&o.users_only)},
      {'V', "version", util::Arg::kNone, flag(&o.version)},
      {0, "help", util::Arg::kNone, flag(&o.help)},
      {0, "usage", util::Arg::kNone, flag(&o.help)},
      {'v', "verbose", util::Arg::kNone, nullptr},
  };
  auto parsed = util::ParseOptions("sshare", specs, args, false);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->positional.empty()) {
    return util::InvalidArgument("sshare: error: Unrecognized option: " + parsed->positional[0]);
  }
  return o;
}

std::string SshareUsage() {
  return "Usage: sshare [OPTION]\n"
         "  Valid OPTIONs are:\n"
         "    -a or --all            list all users\n"
         "    -A or --accounts=      display specific accounts (comma separated list)\n"
         "    -l or --long           include normalized usage in output\n"
         "    -n or --noheader       omit header from output\n"
         "    -p or --parsable       '|' delimited output with a trailing '|'\n"
         "    -P or --parsable2      '|' delimited output without a trailing '|'\n"
         "    -u or --users=         display specific users (comma separated list)\n"
         "    -U or --Users          display only user information\n"
         "    -v or --verbose        display more information\n"
         "    -V or --version        display tool version number\n"
         "          --help           display this usage description\n"
         "          --usage          display this usage description\n";
}

std::string RenderSshare(const SshareOptions& opts, const json& report, const std::string& caller) {
  const std::vector<ShareColumn> cols = ShareColumns(opts.long_format, opts.users_only);
  auto line = [&](const std::function<std::string(const ShareColumn&)>& cell, bool header) {
    std::string out;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (opts.parsable != 0) {
        render::AppendParsableCell(&out, cell(cols[k]), k == 0, opts.parsable);
      } else {
        render::AppendAccountingCell(&out, cell(cols[k]), cols[k].width, cols[k].right, header);
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!opts.noheader) {
    out += line([](const ShareColumn& c) { return std::string(c.header); }, true);
    if (opts.parsable == 0) {
      out += line(
          [](const ShareColumn& c) { return std::string(static_cast<size_t>(c.width), '-'); }, true);
    }
  }
  auto listed = [](const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  // With -A, each named account's subtree, its depth counted from there.
  int base_depth = -1;
  for (const json& row : report.at("rows")) {
    const std::string account = row.value("account", "");
    const std::string user = row.value("user", "");
    int depth = row.value("depth", 0);
    if (!opts.accounts.empty()) {
      if (base_depth >= 0 && depth <= base_depth) base_depth = -1;
      if (base_depth < 0 && user.empty() && listed(opts.accounts, account)) base_depth = depth;
      if (base_depth < 0) continue;
      depth -= base_depth;
    }
    if (user.empty()) {
      if (opts.users_only) continue;
    } else {
      const bool wanted =
          !opts.users.empty() ? listed(opts.users, user) : opts.all || user == caller;
      if (!wanted) continue;
    }
    out += line([&](const ShareColumn& c) { return c.value(row, depth); }, false);
  }
  return out;
}

}  // namespace muster::cli

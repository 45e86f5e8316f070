#include "cli/priority_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "cli/render/format_util.h"
#include "util/check.h"
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

// How a field's values meet its column, as sshare prints them: text is cut
// to the column with a '+'; integers run over it; a real that "%.6f" cannot
// fit is written in e-notation with as many decimals as the column leaves
// (none below 7 wide, and 6 when not even that fits), never padded.
enum class ShareKind { kText, kInteger, kReal };

// A cell's content: text, or for kReal the number (none: blank).
struct ShareValue {
  std::string text;
  std::optional<double> real;
};

struct ShareRowView {
  const json& row;
  int depth;            // the indentation of its account name
  const json& report;   // for the cluster's name
};

struct ShareField {
  const char* name;
  int width;
  bool right;
  ShareKind kind;
  std::function<ShareValue(const ShareRowView&)> value;
};

bool IsRoot(const json& r) { return r.value("depth", 0) == 0; }
bool IsUser(const json& r) { return !r.value("user", std::string()).empty(); }

ShareValue Text(std::string s) { return {std::move(s), std::nullopt}; }
ShareValue Real(double v) { return {"", v}; }

// "cpu=N,mem=N,energy=0,node=N,billing=N,fs/disk=0,vmem=0,pages=0,gres/gpu=N":
// every TRES Slurm counts by default, in its order.
std::string TresMinutes(const json& t) {
  return fmt::format(
      "cpu={},mem={},energy=0,node={},billing={},fs/disk=0,vmem=0,pages=0,gres/gpu={}",
      t.value("cpu", int64_t{0}), t.value("mem", int64_t{0}), t.value("node", int64_t{0}),
      t.value("billing", int64_t{0}), t.value("gres/gpu", int64_t{0}));
}

// sshare's fields in its --helpformat order, which is also the order a
// prefix of -o is matched in ("R" is RawShares).
const std::vector<ShareField>& ShareFields() {
  static const std::vector<ShareField> fields = {
      {"Account", 20, false, ShareKind::kText,
       [](const ShareRowView& v) {
         return Text(std::string(static_cast<size_t>(v.depth), ' ') + v.row.value("account", ""));
       }},
      {"Cluster", 10, true, ShareKind::kText,
       [](const ShareRowView& v) { return Text(v.report.value("cluster", "")); }},
      {"EffectvUsage", 13, true, ShareKind::kReal,
       [](const ShareRowView& v) { return Real(v.row.value("effective_usage", 0.0)); }},
      {"FairShare", 10, true, ShareKind::kReal,
       [](const ShareRowView& v) {
         return IsUser(v.row) ? Real(v.row.value("fairshare", 0.0)) : ShareValue{};
       }},
      // Muster has no GrpTRESMins limits.
      {"GrpTRESMins", 30, true, ShareKind::kText, [](const ShareRowView&) { return ShareValue{}; }},
      {"GrpTRESRaw", 30, true, ShareKind::kText,
       [](const ShareRowView& v) {
         return Text(TresMinutes(v.row.value("tres_raw_mins", json::object())));
       }},
      {"ID", 6, true, ShareKind::kInteger,
       [](const ShareRowView& v) { return Text(std::to_string(v.row.value("id", 0))); }},
      {"LevelFS", 10, true, ShareKind::kReal,
       [](const ShareRowView& v) -> ShareValue {
         if (IsRoot(v.row)) return {};
         const json& l = v.row.at("level_fs");
         return Real(l.is_null() ? std::numeric_limits<double>::infinity() : l.get<double>());
       }},
      {"NormShares", 11, true, ShareKind::kReal,
       [](const ShareRowView& v) { return Real(v.row.value("norm_shares", 0.0)); }},
      {"NormUsage", 11, true, ShareKind::kReal,
       [](const ShareRowView& v) {
         return IsRoot(v.row) ? ShareValue{} : Real(v.row.value("norm_usage", 0.0));
       }},
      // Muster's associations have no partition part.
      {"Partition", 12, true, ShareKind::kText, [](const ShareRowView&) { return ShareValue{}; }},
      {"RawShares", 10, true, ShareKind::kInteger,
       [](const ShareRowView& v) {
         return IsRoot(v.row) ? ShareValue{} : Text(std::to_string(v.row.value("raw_shares", 0)));
       }},
      {"RawUsage", 11, true, ShareKind::kInteger,
       [](const ShareRowView& v) {
         return Text(std::to_string(std::llround(v.row.value("raw_usage", 0.0))));
       }},
      {"TRESRunMins", 30, true, ShareKind::kText,
       [](const ShareRowView& v) {
         return Text(TresMinutes(v.row.value("tres_run_mins", json::object())));
       }},
      {"User", 10, true, ShareKind::kText,
       [](const ShareRowView& v) { return Text(v.row.value("user", std::string())); }},
  };
  return fields;
}

// One of ShareFields(), by its exact name (this file's own names only).
const ShareField& FieldNamed(std::string_view name) {
  const auto& fields = ShareFields();
  auto it = std::find_if(fields.begin(), fields.end(),
                         [&](const ShareField& f) { return f.name == name; });
  MUSTER_CHECK(it != fields.end());
  return *it;
}

// A column: its field, width and justification.
struct ShareColumn {
  const ShareField* field;
  int width;
  bool right;
};

// The columns without -o: the default ones, -m's Partition, -l's usage
// and limits.
std::vector<ShareColumn> DefaultShareColumns(const SshareOptions& o) {
  std::vector<const char*> names = {"Account", "User"};
  if (o.partition) names.push_back("Partition");
  names.insert(names.end(), {"RawShares", "NormShares", "RawUsage"});
  if (o.long_format) names.push_back("NormUsage");
  names.insert(names.end(), {"EffectvUsage", "FairShare"});
  if (o.long_format) names.insert(names.end(), {"LevelFS", "GrpTRESMins", "TRESRunMins"});
  std::vector<ShareColumn> cols;
  for (const char* n : names) {
    const ShareField& f = FieldNamed(n);
    cols.push_back({&f, f.width, f.right});
  }
  return cols;
}

// atoi(3): blanks, a sign, digits; 0 when there are none.
int LeadingInt(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  size_t digits = i;
  const int n = render::ReadWidth(s, &digits);
  return negative ? -n : n;
}

// -o's list. Empty items are skipped; each other names a field by any
// prefix of its name, in any case, with "%N" for N wide right-justified or
// "%-N" left-justified (0 or no number: the field's own). As in Slurm 22.05
// a width belongs to the field, not the item: the last one given for a
// field sets every column of it. A list naming nothing shows Account.
util::Result<std::vector<ShareColumn>> ParseShareFormat(const std::string& format) {
  std::vector<const ShareField*> picked;
  std::map<const ShareField*, std::pair<int, bool>> sizes;
  for (const std::string& item : util::Split(format, ',')) {
    if (item.empty()) continue;
    const size_t pct = item.find('%');
    const std::string name = item.substr(0, pct);
    const ShareField* field = nullptr;
    for (const ShareField& f : ShareFields()) {
      if (name.size() <= std::strlen(f.name) &&
          util::EqualsIgnoreCase(std::string_view(f.name).substr(0, name.size()), name)) {
        field = &f;
        break;
      }
    }
    if (field == nullptr) {
      return util::InvalidArgument("sshare: error: Invalid field requested: \"" +
                                   util::ToLower(name) + "\"");
    }
    picked.push_back(field);
    if (pct != std::string::npos) {
      const int width = LeadingInt(std::string_view(item).substr(pct + 1));
      if (width != 0) sizes[field] = {std::abs(width), width > 0};
    }
  }
  if (picked.empty()) picked.push_back(&FieldNamed("Account"));
  std::vector<ShareColumn> cols;
  for (const ShareField* f : picked) {
    auto it = sizes.find(f);
    cols.push_back(it == sizes.end() ? ShareColumn{f, f->width, f->right}
                                     : ShareColumn{f, it->second.first, it->second.second});
  }
  return cols;
}

void AppendShareCell(std::string* out, const ShareColumn& c, const ShareValue& v) {
  if (c.field->kind == ShareKind::kText) {
    render::AppendAccountingCell(out, v.text, c.width, c.right, false);
    return;
  }
  std::string s = v.text;
  if (v.real) {
    s = fmt::format("{:.6f}", *v.real);
    if (static_cast<int>(s.size()) > c.width) {
      *out += fmt::format("{:.{}e} ", *v.real, c.width >= 6 ? c.width - 6 : 6);
      return;
    }
  }
  *out += c.right ? fmt::format("{:>{}} ", s, c.width) : fmt::format("{:<{}} ", s, c.width);
}

std::string ParsableValue(const ShareValue& v) {
  return v.real ? fmt::format("{:.6f}", *v.real) : v.text;
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
      {'e', "helpformat", util::Arg::kNone, flag(&o.helpformat)},
      {'l', "long", util::Arg::kNone, flag(&o.long_format)},
      {'m', "partition", util::Arg::kNone, flag(&o.partition)},
      {'n', "noheader", util::Arg::kNone, flag(&o.noheader)},
      {'o', "format", util::Arg::kRequired,
       [&](const std::string& v) {
         o.format = v;
         return util::Status::Ok();
       }},
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
  // A bad field is refused before musterd is asked, as sshare does.
  if (o.format) MUSTER_RETURN_IF_ERROR(ParseShareFormat(*o.format).status());
  return o;
}

std::string SshareUsage() {
  return "Usage: sshare [OPTION]\n"
         "  Valid OPTIONs are:\n"
         "    -a or --all            list all users\n"
         "    -A or --accounts=      display specific accounts (comma separated list)\n"
         "    -e or --helpformat     list the fields --format takes\n"
         "    -l or --long           include normalized usage in output\n"
         "    -m or --partition      add the associations' partition column\n"
         "    -n or --noheader       omit header from output\n"
         "    -o or --format=        the columns, a comma separated list of fields\n"
         "                           (Name%N for N wide, Name%-N left-justified)\n"
         "    -p or --parsable       '|' delimited output with a trailing '|'\n"
         "    -P or --parsable2      '|' delimited output without a trailing '|'\n"
         "    -u or --users=         display specific users (comma separated list)\n"
         "    -U or --Users          display only user information\n"
         "    -v or --verbose        display more information\n"
         "    -V or --version        display tool version number\n"
         "          --help           display this usage description\n"
         "          --usage          display this usage description\n";
}

std::string SshareHelpFormat() {
  std::vector<std::string_view> names;
  for (const ShareField& f : ShareFields()) names.push_back(f.name);
  return render::HelpFormatColumns(names, 17);
}

std::string RenderSshare(const SshareOptions& opts, const json& report, const std::string& caller) {
  std::vector<ShareColumn> cols = DefaultShareColumns(opts);
  if (opts.format) {
    // ParseSshareArgs refused a bad list already.
    util::Result<std::vector<ShareColumn>> parsed = ParseShareFormat(*opts.format);
    if (parsed.ok()) cols = std::move(parsed).value();
  }
  std::string out;
  if (!opts.noheader) {
    for (size_t k = 0; k < cols.size(); ++k) {
      if (opts.parsable != 0) {
        render::AppendParsableCell(&out, cols[k].field->name, k == 0, opts.parsable);
      } else {
        render::AppendAccountingCell(&out, cols[k].field->name, cols[k].width, cols[k].right, true);
      }
    }
    out += '\n';
    if (opts.parsable == 0) {
      for (const ShareColumn& c : cols) out += std::string(static_cast<size_t>(c.width), '-') + ' ';
      out += '\n';
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
    const ShareRowView view{row, opts.users_only ? 0 : depth, report};
    for (size_t k = 0; k < cols.size(); ++k) {
      const ShareValue v = cols[k].field->value(view);
      if (opts.parsable != 0) {
        render::AppendParsableCell(&out, ParsableValue(v), k == 0, opts.parsable);
      } else {
        AppendShareCell(&out, cols[k], v);
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace muster::cli

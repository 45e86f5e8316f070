#include "cli/options.h"

namespace muster::cli {

namespace {

const OptionSpec* FindLong(const std::vector<OptionSpec>& specs, const std::string& name,
                           bool* ambiguous) {
  const OptionSpec* prefix_match = nullptr;
  int prefix_count = 0;
  for (const auto& s : specs) {
    if (s.long_name.empty()) continue;
    if (s.long_name == name) return &s;
    if (s.long_name.compare(0, name.size(), name) == 0) {
      if (!prefix_match || prefix_match->long_name != s.long_name) ++prefix_count;
      prefix_match = &s;
    }
  }
  *ambiguous = prefix_count > 1;
  return prefix_count == 1 ? prefix_match : nullptr;
}

const OptionSpec* FindShort(const std::vector<OptionSpec>& specs, char c) {
  for (const auto& s : specs) {
    if (s.short_name == c) return &s;
  }
  return nullptr;
}

}  // namespace

util::Result<ParseResult> ParseOptions(const std::string& prog, const std::vector<OptionSpec>& specs,
                                       const std::vector<std::string>& args,
                                       bool stop_at_positional) {
  ParseResult out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positional.insert(out.positional.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      std::string name = a.substr(2);
      std::string value;
      bool has_value = false;
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      bool ambiguous = false;
      const OptionSpec* spec = FindLong(specs, name, &ambiguous);
      if (!spec) {
        if (ambiguous) return util::InvalidArgument(prog + ": option '--" + name + "' is ambiguous");
        return util::InvalidArgument(prog + ": unrecognized option '--" + name + "'");
      }
      if (spec->arg == Arg::kNone && has_value) {
        return util::InvalidArgument(prog + ": option '--" + spec->long_name +
                                     "' doesn't allow an argument");
      }
      if (spec->arg == Arg::kRequired && !has_value) {
        if (i + 1 >= args.size()) {
          return util::InvalidArgument(prog + ": option '--" + spec->long_name +
                                       "' requires an argument");
        }
        value = args[++i];
      }
      MUSTER_RETURN_IF_ERROR(spec->apply(value));
      continue;
    }
    if (a.size() > 1 && a[0] == '-') {
      for (size_t k = 1; k < a.size(); ++k) {
        const OptionSpec* spec = FindShort(specs, a[k]);
        if (!spec) {
          return util::InvalidArgument(prog + ": invalid option -- '" + std::string(1, a[k]) + "'");
        }
        if (spec->arg == Arg::kNone) {
          MUSTER_RETURN_IF_ERROR(spec->apply(""));
          continue;
        }
        std::string value;
        if (k + 1 < a.size()) {
          value = a.substr(k + 1);
        } else if (spec->arg == Arg::kRequired) {
          if (i + 1 >= args.size()) {
            return util::InvalidArgument(prog + ": option requires an argument -- '" +
                                         std::string(1, a[k]) + "'");
          }
          value = args[++i];
        }
        MUSTER_RETURN_IF_ERROR(spec->apply(value));
        break;
      }
      continue;
    }
    if (stop_at_positional) {
      out.positional.insert(out.positional.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    out.positional.push_back(a);
  }
  return out;
}

std::vector<std::string> SplitShellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < line.size()) {
        cur += line[++i];
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
      continue;
    }
    if (c == '#' && !in_word) break;  // a comment after the options
    cur += c;
    in_word = true;
  }
  if (in_word) words.push_back(cur);
  return words;
}

}  // namespace muster::cli

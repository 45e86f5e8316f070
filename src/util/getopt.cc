#include "util/getopt.h"

#include <utility>

namespace muster::util {
namespace {

bool SameOption(const OptionSpec& a, const OptionSpec& b) {
  return &a == &b || (a.id != 0 && a.id == b.id && a.arg == b.arg);
}

// The entry `name` names: exact, else the one option all entries it is a
// prefix of belong to. `text` is the argument as written, for messages.
Result<const OptionSpec*> FindLong(const std::string& prog, const std::vector<OptionSpec>& specs,
                                   const std::string& name, const std::string& text) {
  std::vector<const OptionSpec*> candidates;
  for (const OptionSpec& s : specs) {
    if (s.long_name.empty()) continue;
    if (s.long_name == name) return &s;
    if (s.long_name.compare(0, name.size(), name) == 0) candidates.push_back(&s);
  }
  if (candidates.empty()) return InvalidArgument(prog + ": unrecognized option '" + text + "'");
  for (const OptionSpec* c : candidates) {
    if (SameOption(*c, *candidates.front())) continue;
    std::string msg = prog + ": option '" + text + "' is ambiguous; possibilities:";
    for (const OptionSpec* o : candidates) msg += " '--" + o->long_name + "'";
    return InvalidArgument(msg);
  }
  return candidates.front();
}

const OptionSpec* FindShort(const std::vector<OptionSpec>& specs, char c) {
  for (const OptionSpec& s : specs) {
    if (s.short_name == c) return &s;
  }
  return nullptr;
}

}  // namespace

OptionSpec IdOption(char short_name, std::string long_name, Arg arg, int id) {
  OptionSpec o;
  o.short_name = short_name;
  o.long_name = std::move(long_name);
  o.arg = arg;
  o.id = id;
  return o;
}

Result<ParseResult> ParseOptions(const std::string& prog, const std::vector<OptionSpec>& specs,
                                 const std::vector<std::string>& args, bool stop_at_positional) {
  ParseResult out;
  auto take = [&](const OptionSpec& spec, std::optional<std::string> value) -> Status {
    if (spec.apply) MUSTER_RETURN_IF_ERROR(spec.apply(value.value_or("")));
    out.options.push_back({&spec, std::move(value)});
    return Status::Ok();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // An optional value may be the next word when it is not an option.
    auto next_word = [&](const OptionSpec& spec) -> std::optional<std::string> {
      if (spec.optional_takes_next && i + 1 < args.size() && !args[i + 1].empty() &&
          args[i + 1][0] != '-') {
        return args[++i];
      }
      return std::nullopt;
    };
    if (a == "--") {
      out.positional.insert(out.positional.end(), args.begin() + static_cast<long>(i) + 1,
                            args.end());
      break;
    }
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      const size_t eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      std::optional<std::string> value;
      if (eq != std::string::npos) value = a.substr(eq + 1);
      Result<const OptionSpec*> found = FindLong(prog, specs, name, a);
      if (!found.ok()) return found.status();
      const OptionSpec& spec = **found;
      const std::string full = "'--" + spec.long_name + "'";
      switch (spec.arg) {
        case Arg::kNone:
          if (value) {
            return InvalidArgument(prog + ": option " + full + " doesn't allow an argument");
          }
          break;
        case Arg::kRequired:
          if (!value) {
            if (i + 1 >= args.size()) {
              return InvalidArgument(prog + ": option " + full + " requires an argument");
            }
            value = args[++i];
          }
          break;
        case Arg::kOptional:
          if (!value) value = next_word(spec);
          break;
      }
      MUSTER_RETURN_IF_ERROR(take(spec, std::move(value)));
      continue;
    }
    if (a.size() > 1 && a[0] == '-') {
      for (size_t k = 1; k < a.size(); ++k) {
        const OptionSpec* spec = FindShort(specs, a[k]);
        if (spec == nullptr) {
          return InvalidArgument(prog + ": invalid option -- '" + std::string(1, a[k]) + "'");
        }
        if (spec->arg == Arg::kNone) {
          MUSTER_RETURN_IF_ERROR(take(*spec, std::nullopt));
          continue;
        }
        std::optional<std::string> value;
        if (k + 1 < a.size()) {
          value = a.substr(k + 1);
        } else if (spec->arg == Arg::kRequired) {
          if (i + 1 >= args.size()) {
            return InvalidArgument(prog + ": option requires an argument -- '" +
                                   std::string(1, a[k]) + "'");
          }
          value = args[++i];
        } else {
          value = next_word(*spec);
        }
        MUSTER_RETURN_IF_ERROR(take(*spec, std::move(value)));
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

}  // namespace muster::util

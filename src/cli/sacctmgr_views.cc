#include "cli/sacctmgr_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "cli/render/format_util.h"
#include "core/accounts.h"
#include "util/slurm_time.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

using nlohmann::json;
using util::InvalidArgument;

std::string Lower(std::string_view s) { return util::ToLower(s); }

// Slurm's words for the entities, singular and plural.
std::string Entity(const std::string& word) {
  const std::string w = Lower(word);
  if (w == "account" || w == "accounts") return "account";
  if (w == "user" || w == "users") return "user";
  if (w == "association" || w == "associations" || w == "assoc") return "association";
  if (w == "cluster" || w == "clusters") return "cluster";
  if (w == "qos") return "qos";
  return "";
}

std::string Action(const std::string& word) {
  const std::string w = Lower(word);
  if (w == "add" || w == "create") return "add";
  if (w == "modify" || w == "update") return "modify";
  if (w == "delete" || w == "remove") return "delete";
  if (w == "list" || w == "show") return "list";
  return "";
}

constexpr const char* kEntityList =
    "No valid entity in list command\n"
    "Input line must include \"Account\", \"Association\", \"Cluster\", \"QOS\" or \"User\"";

// A key=value word as a filter of `entity`; false when it is none.
bool ApplyFilter(SacctmgrCommand* c, const std::string& key,
                 const std::vector<std::string>& values) {
  const bool plural_names = key == "name" || key == "names";
  if (key == "cluster" || key == "clusters") {
    if (c->entity == "cluster") {
      c->names.insert(c->names.end(), values.begin(), values.end());
    } else {
      c->where["cluster"] = values;
    }
    return true;
  }
  if (c->entity == "account" && (plural_names || key == "account" || key == "accounts")) {
    c->names.insert(c->names.end(), values.begin(), values.end());
    return true;
  }
  if (c->entity == "account" && key == "parent") {
    c->where["parent"] = values;
    return true;
  }
  if (c->entity == "user" && (plural_names || key == "user" || key == "users")) {
    c->names.insert(c->names.end(), values.begin(), values.end());
    return true;
  }
  if ((c->entity == "cluster" || c->entity == "qos") && plural_names) {
    c->names.insert(c->names.end(), values.begin(), values.end());
    return true;
  }
  if ((c->entity == "user" || c->entity == "association") &&
      (key == "account" || key == "accounts")) {
    c->where["accounts"] = values;
    return true;
  }
  if (c->entity == "association" && (key == "user" || key == "users")) {
    c->where["users"] = values;
    return true;
  }
  return false;
}

// A QOS setting (see ApplySetting).
util::Status ApplyQosSetting(SacctmgrCommand* c, const std::string& word, const std::string& key,
                             const std::string& value) {
  json& set = c->set;
  auto count = [&](const char* field) {
    auto n = util::ParseSignedInt(value);
    if (!n.ok() || *n < -1) return InvalidArgument("sacctmgr: error: Invalid value: " + word);
    set[field] = *n;
    return util::Status::Ok();
  };
  if (key == "description") {
    set["description"] = value;
  } else if (key == "priority") {
    return count("priority");
  } else if (key == "maxjobsperuser" || key == "maxjobspu") {
    return count("max_jobs_per_user");
  } else if (key == "maxsubmitjobsperuser" || key == "maxsubmitjobspu" || key == "maxsubmitpu") {
    return count("max_submit_jobs_per_user");
  } else if (key == "grpjobs") {
    return count("grp_jobs");
  } else if (key == "maxwall" || key == "maxwalldurationperjob") {
    if (value == "-1") {
      set["max_wall_s"] = -1;
      return util::Status::Ok();
    }
    auto s = util::ParseTimeLimitSeconds(value);
    if (!s.ok() || *s < 0) return InvalidArgument("sacctmgr: error: Invalid value: " + word);
    set["max_wall_s"] = *s;
  } else if (key == "maxtresperuser" || key == "maxtrespu") {
    set["max_tres_per_user"] = value;
  } else if (key == "maxtresperjob" || key == "maxtres") {
    set["max_tres_per_job"] = value;
  } else if (key == "grptres") {
    set["grp_tres"] = value;
  } else if (key == "flags") {
    const std::string v = Lower(value);
    if (v != "denyonlimit" && v != "-1" && v != "none") {
      return InvalidArgument("sacctmgr: error: " + word +
                             ": Muster knows the flag DenyOnLimit only");
    }
    set["deny_on_limit"] = v == "denyonlimit";
  } else if (key == "preempt" || key == "preempt+" || key == "preempt-") {
    // Preempt=a,b (also "" or -1: none), Preempt+=a, Preempt-=a.
    const std::vector<std::string> names =
        value.empty() || value == "-1" || value == "''" ? std::vector<std::string>{}
                                                        : util::Split(value, ',');
    set[key == "preempt" ? "preempt" : key == "preempt+" ? "preempt_add" : "preempt_remove"] =
        names;
  } else if (key == "preemptmode") {
    const std::string v = Lower(value);
    if (v == "cluster" || v == "off" || v.empty()) {
      set["preempt_mode"] = "OFF";
    } else if (v == "cancel" || v == "requeue") {
      set["preempt_mode"] = v;
    } else {
      return InvalidArgument(" Bad Preempt Mode given: " + word +
                             " (Muster's QOS take Cluster, Cancel or Requeue)");
    }
  } else if (key == "gracetime" || key == "preemptexempttime") {
    const char* field = key == "gracetime" ? "grace_time_s" : "preempt_exempt_time_s";
    if (value == "-1") {
      set[field] = key == "gracetime" ? 0 : -1;
      return util::Status::Ok();
    }
    // GraceTime in plain seconds, as Slurm's; either also takes a time.
    auto s = key == "gracetime" && util::ParseInt(value).ok() ? util::ParseInt(value)
                                                              : util::ParseTimeLimitSeconds(value);
    if (!s.ok() || *s < 0) return InvalidArgument("sacctmgr: error: Invalid value: " + word);
    set[field] = *s;
  } else if (key == "usagefactor") {
    char* end = nullptr;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(f >= 0)) {
      return InvalidArgument("sacctmgr: error: Invalid value: " + word);
    }
    set["usage_factor"] = f;
  } else {
    return InvalidArgument("sacctmgr: error: Unknown option: " + word);
  }
  return util::Status::Ok();
}

// An association limit of an account or user; false when `key` is none.
util::Result<bool> ApplyLimitSetting(SacctmgrCommand* c, const std::string& word,
                                     const std::string& key, const std::string& value) {
  json& set = c->set;
  auto count = [&](const char* field) -> util::Result<bool> {
    auto n = util::ParseSignedInt(value);
    if (!n.ok() || *n < -1) return InvalidArgument("sacctmgr: error: Invalid value: " + word);
    set[field] = *n;
    return true;
  };
  if (key == "grpjobs") return count("grp_jobs");
  if (key == "maxjobs") return count("max_jobs");
  if (key == "maxsubmitjobs" || key == "maxsubmit") return count("max_submit_jobs");
  if (key == "grptres") {
    set["grp_tres"] = value;
    return true;
  }
  if (key == "maxwall" || key == "maxwalldurationperjob") {
    auto s =
        value == "-1" ? util::Result<int64_t>(int64_t{-1}) : util::ParseTimeLimitSeconds(value);
    if (!s.ok() || (*s < 0 && value != "-1")) {
      return InvalidArgument("sacctmgr: error: Invalid value: " + word);
    }
    set["max_wall_s"] = *s;
    return true;
  }
  return false;
}

// A key=value word as a setting; an error naming it when it is none or bad.
util::Status ApplySetting(SacctmgrCommand* c, const std::string& word, const std::string& key,
                          const std::string& value) {
  if (c->entity == "qos") return ApplyQosSetting(c, word, key, value);
  auto limit = ApplyLimitSetting(c, word, key, value);
  if (!limit.ok()) return limit.status();
  if (*limit) return util::Status::Ok();
  json& set = c->set;
  if (key == "fairshare" || key == "share" || key == "shares") {
    auto n = util::ParseInt(value);
    if (!n.ok() || *n < 0 || *n > UINT32_MAX) {
      return InvalidArgument("sacctmgr: error: Invalid Fairshare value: " + value);
    }
    set["fairshare"] = *n;
    return util::Status::Ok();
  }
  if (c->entity == "account" && (key == "description" || key == "descr")) {
    set["description"] = value;
  } else if (c->entity == "account" && (key == "organization" || key == "org")) {
    set["organization"] = value;
  } else if (c->entity == "account" && key == "parent") {
    set["parent"] = value;
  } else if (c->entity == "user" && (key == "defaultaccount" || key == "defaccount")) {
    set["default_account"] = value;
  } else if (c->entity == "user" && c->action == "add" && (key == "account" || key == "accounts")) {
    set["accounts"] = util::Split(value, ',');
  } else if (c->entity == "user" && (key == "adminlevel" || key == "admin")) {
    const std::string v = Lower(value);
    if (v != "none" && v != "operator" && v != "administrator" && v != "admin") {
      return InvalidArgument("sacctmgr: error: Invalid AdminLevel: " + value +
                             " (None, Operator or Administrator)");
    }
    set["admin_level"] = v == "none" ? "None" : v == "operator" ? "Operator" : "Administrator";
  } else {
    return InvalidArgument("sacctmgr: error: Unknown option: " + word);
  }
  return util::Status::Ok();
}

// ---- listings

struct Field {
  const char* header;
  int width;
  std::vector<std::string> names;  // lower case, as format= may spell it
  std::function<std::string(const json& row)> value;
};

std::string Str(const json& row, const char* key) {
  return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : std::string();
}

std::string Num(const json& row, const char* key) {
  return row.contains(key) && row[key].is_number() ? std::to_string(row[key].get<int64_t>()) : "";
}

// An association's limits, as AccountTable::ToJson writes them.
std::function<std::string(const json&)> LimitCount(const char* key) {
  return [key](const json& r) {
    const int64_t v = r.contains("limits") ? r["limits"].value(key, int64_t{-1}) : -1;
    return v < 0 ? std::string() : std::to_string(v);
  };
}

std::string TresText(const json& j) {
  core::TresLimits t;
  if (j.is_object()) {
    t = {j.value("cpu", int64_t{-1}), j.value("mem_mb", int64_t{-1}), j.value("node", int64_t{-1}),
         j.value("gpu", int64_t{-1})};
  }
  return core::FormatTresLimits(t);
}

std::function<std::string(const json&)> LimitTres(const char* key) {
  return [key](const json& r) {
    return r.contains("limits") ? TresText(r["limits"].value(key, json())) : "";
  };
}

// MaxWall as sacctmgr lists it ("01:00:00", "2-00:00:00"); blank for none.
std::string Wall(int64_t s) { return s < 0 ? "" : util::FormatDurationLong(s); }

std::string LimitWall(const json& r) {
  return r.contains("limits") ? Wall(r["limits"].value("max_wall_s", int64_t{-1})) : "";
}

Field Blank(const char* header, int width) {
  return {header, width, {Lower(header)}, [](const json&) { return std::string(); }};
}

std::vector<Field> FieldsOf(const std::string& entity) {
  if (entity == "account") {
    return {
        {"Account", 10, {"account", "name"}, [](const json& r) { return Str(r, "name"); }},
        {"Descr",
         20,
         {"descr", "description"},
         [](const json& r) { return Str(r, "description"); }},
        {"Org", 20, {"org", "organization"}, [](const json& r) { return Str(r, "organization"); }},
        {"ParentName",
         10,
         {"parentname", "parent"},
         [](const json& r) { return Str(r, "parent"); }},
        {"Share", 9, {"share", "fairshare", "shares"}, [](const json& r) {
           return Num(r, "shares");
         }}};
  }
  if (entity == "user") {
    return {
        {"User", 10, {"user", "name"}, [](const json& r) { return Str(r, "name"); }},
        {"Def Acct",
         10,
         {"defaultaccount", "def acct", "defacct"},
         [](const json& r) { return Str(r, "default_account"); }},
        {"Admin", 9, {"admin", "adminlevel"}, [](const json& r) { return Str(r, "admin_level"); }}};
  }
  if (entity == "qos") {
    auto tres = [](const char* key) {
      return [key](const json& r) { return TresText(r.value(key, json())); };
    };
    auto limit = [](const char* key) {
      return [key](const json& r) {
        const int64_t v = r.value(key, int64_t{-1});
        return v < 0 ? std::string() : std::to_string(v);
      };
    };
    return {
        {"Name", 10, {"name"}, [](const json& r) { return Str(r, "name"); }},
        {"Priority", 10, {"priority"}, [](const json& r) { return Num(r, "priority"); }},
        {"GraceTime",
         10,
         {"gracetime"},
         [](const json& r) {
           return util::FormatDurationLong(r.value("grace_time_s", int64_t{0}));
         }},
        {"Preempt",
         10,
         {"preempt"},
         [](const json& r) {
           return util::Join(r.value("preempt", std::vector<std::string>{}), ",");
         }},
        {"PreemptExemptTime",
         19,
         {"preemptexempttime"},
         [](const json& r) { return Wall(r.value("preempt_exempt_time_s", int64_t{-1})); }},
        {"PreemptMode",
         11,
         {"preemptmode"},
         [](const json& r) {
           const std::string mode = Lower(r.value("preempt_mode", ""));
           return mode.empty() ? std::string("cluster") : mode;
         }},
        {"Flags",
         40,
         {"flags"},
         [](const json& r) {
           return r.value("deny_on_limit", false) ? std::string("DenyOnLimit") : "";
         }},
        Blank("UsageThres", 10),
        {"UsageFactor",
         11,
         {"usagefactor"},
         [](const json& r) { return fmt::format("{:.6f}", r.value("usage_factor", 1.0)); }},
        {"GrpTRES", 13, {"grptres"}, tres("grp_tres")},
        Blank("GrpTRESMins", 13),
        Blank("GrpTRESRunMin", 13),
        {"GrpJobs", 7, {"grpjobs"}, limit("grp_jobs")},
        Blank("GrpSubmit", 9),
        Blank("GrpWall", 11),
        {"MaxTRES", 13, {"maxtres", "maxtresperjob"}, tres("max_tres_per_job")},
        Blank("MaxTRESPerNode", 14),
        Blank("MaxTRESMins", 13),
        {"MaxWall",
         11,
         {"maxwall", "maxwalldurationperjob"},
         [](const json& r) { return Wall(r.value("max_wall_s", int64_t{-1})); }},
        {"MaxTRESPU", 13, {"maxtrespu", "maxtresperuser"}, tres("max_tres_per_user")},
        {"MaxJobsPU", 9, {"maxjobspu", "maxjobsperuser"}, limit("max_jobs_per_user")},
        {"MaxSubmitPU",
         11,
         {"maxsubmitpu", "maxsubmitjobsperuser", "maxsubmitjobspu"},
         limit("max_submit_jobs_per_user")},
        Blank("MaxTRESPA", 13),
        Blank("MaxJobsPA", 9),
        Blank("MaxSubmitPA", 11),
        Blank("MinTRES", 13),
        {"Descr", 20, {"descr", "description"}, [](const json& r) {
           return Str(r, "description");
         }}};
  }
  if (entity == "cluster") {
    return {{"Cluster", 10, {"cluster", "name"}, [](const json& r) { return Str(r, "name"); }},
            {"ControlHost", 15, {"controlhost"}, [](const json& r) { return Str(r, "host"); }},
            {"ControlPort", 12, {"controlport"}, [](const json& r) { return Num(r, "port"); }},
            {"RPC", 5, {"rpc"}, [](const json&) { return std::string("9728"); }},
            {"Share", 9, {"share", "fairshare"}, [](const json&) { return std::string("1"); }},
            Blank("GrpJobs", 7),
            Blank("GrpTRES", 13),
            Blank("GrpSubmit", 9),
            Blank("MaxJobs", 7),
            Blank("MaxTRES", 13),
            Blank("MaxSubmit", 9),
            Blank("MaxWall", 11),
            {"QOS", 20, {"qos"}, [](const json&) { return std::string("normal"); }},
            Blank("Def QOS", 9)};
  }
  // association rows: {"cluster", "account", "user", "shares", "parent"}.
  return {{"Cluster", 10, {"cluster"}, [](const json& r) { return Str(r, "cluster"); }},
          {"Account", 10, {"account"}, [](const json& r) { return Str(r, "account"); }},
          {"User", 10, {"user"}, [](const json& r) { return Str(r, "user"); }},
          Blank("Partition", 10),
          {"Share",
           9,
           {"share", "fairshare", "shares"},
           [](const json& r) { return Num(r, "shares"); }},
          Blank("Priority", 10),
          {"GrpJobs", 7, {"grpjobs"}, LimitCount("grp_jobs")},
          {"GrpTRES", 13, {"grptres"}, LimitTres("grp_tres")},
          Blank("GrpSubmit", 9),
          Blank("GrpWall", 11),
          Blank("GrpTRESMins", 13),
          {"MaxJobs", 7, {"maxjobs"}, LimitCount("max_jobs")},
          Blank("MaxTRES", 13),
          Blank("MaxTRESPerNode", 14),
          {"MaxSubmit", 9, {"maxsubmit", "maxsubmitjobs"}, LimitCount("max_submit_jobs")},
          {"MaxWall", 11, {"maxwall"}, LimitWall},
          Blank("MaxTRESMins", 13),
          {"QOS", 20, {"qos"}, [](const json&) { return std::string("normal"); }},
          Blank("Def QOS", 9),
          Blank("GrpTRESRunMin", 13),
          {"ParentName", 10, {"parentname"}, [](const json& r) { return Str(r, "parent"); }}};
}

// The default columns: every field but the extras at the end.
size_t DefaultFieldCount(const std::string& entity) {
  if (entity == "account") return 3;
  if (entity == "qos") return 26;
  if (entity == "association") return 20;
  return FieldsOf(entity).size();
}

bool Listed(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

// The association rows of the table, as sacctmgr lists them: each account,
// then its users, then its sub-accounts, by name.
std::vector<json> AssociationRows(const json& table, const std::string& cluster) {
  std::vector<json> rows;
  std::function<void(const std::string&)> visit = [&](const std::string& account) {
    for (const json& a : table.at("accounts")) {
      if (Str(a, "name") != account) continue;
      rows.push_back({{"cluster", cluster},
                      {"account", account},
                      {"user", ""},
                      {"shares", a.value("shares", int64_t{1})},
                      {"parent", Str(a, "parent")},
                      {"limits", a.value("limits", json::object())}});
    }
    for (const json& u : table.at("associations")) {
      if (Str(u, "account") != account) continue;
      rows.push_back({{"cluster", cluster},
                      {"account", account},
                      {"user", Str(u, "user")},
                      {"shares", u.value("shares", int64_t{1})},
                      {"parent", ""},
                      {"limits", u.value("limits", json::object())}});
    }
    for (const json& a : table.at("accounts")) {
      if (Str(a, "parent") == account && Str(a, "name") != account) visit(Str(a, "name"));
    }
  };
  visit("root");
  return rows;
}

}  // namespace

util::Result<SacctmgrCommand> ParseSacctmgrArgs(const std::vector<std::string>& args) {
  SacctmgrCommand c;
  std::vector<std::string> words;
  for (const std::string& a : args) {
    if (a == "-i" || a == "--immediate") {
      c.immediate = true;
    } else if (a == "-n" || a == "--noheader") {
      c.noheader = true;
    } else if (a == "-p" || a == "--parsable") {
      c.parsable = 1;
    } else if (a == "-P" || a == "--parsable2") {
      c.parsable = 2;
    } else if (a == "-V" || a == "--version") {
      c.version = true;
    } else if (a == "-h" || a == "--help" || a == "--usage") {
      c.help = true;
    } else if (a == "-v" || a == "--verbose" || a == "-Q" || a == "--quiet") {
      // accepted; nothing more to say
    } else if (a.size() > 1 && a[0] == '-' && words.empty()) {
      return InvalidArgument("sacctmgr: unrecognized option '" + a +
                             "'\nTry \"sacctmgr --help\" for more information");
    } else {
      words.push_back(a);
    }
  }
  if (c.help || c.version) return c;
  if (words.empty()) {
    return InvalidArgument("sacctmgr: error: No command given (add, modify, delete or list)");
  }
  c.action = Action(words[0]);
  if (c.action.empty()) return InvalidArgument("sacctmgr: error: Invalid command: " + words[0]);
  if (words.size() < 2 || Entity(words[1]).empty()) return InvalidArgument(kEntityList);
  c.entity = Entity(words[1]);
  if (c.action != "list" && (c.entity == "association" || c.entity == "cluster")) {
    return InvalidArgument("sacctmgr: error: " + words[0] + " " + words[1] +
                           " is not supported: the cluster is muster.conf's, and associations are "
                           "made by adding users to accounts");
  }
  bool setting = c.action == "add";
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string lw = Lower(w);
    if (lw == "where") {
      setting = false;
      continue;
    }
    if (lw == "set") {
      if (c.action != "modify") return InvalidArgument("sacctmgr: error: 'set' is for modify only");
      setting = true;
      continue;
    }
    if (lw == "withassoc" || lw == "withcoord" || lw == "withdeleted") {
      return InvalidArgument("sacctmgr: error: " + w +
                             " is not supported yet; use 'list association'");
    }
    const size_t eq = w.find('=');
    if (eq == std::string::npos) {
      for (const std::string& n : util::Split(w, ',')) c.names.push_back(n);
      continue;
    }
    std::string key = Lower(w.substr(0, eq));
    const bool list_change = c.entity == "qos" && (key == "preempt+" || key == "preempt-");
    if (!key.empty() && (key.back() == '+' || key.back() == '-') && !list_change) {
      return InvalidArgument("sacctmgr: error: " + w +
                             ": adding to or removing from a list is not supported");
    }
    const std::string value = w.substr(eq + 1);
    if (key == "format") {
      if (c.action != "list") return InvalidArgument("sacctmgr: error: Unknown option: " + w);
      c.format = util::Split(value, ',');
      continue;
    }
    if (setting) {
      MUSTER_RETURN_IF_ERROR(ApplySetting(&c, w, key, value));
    } else if (!ApplyFilter(&c, key, util::Split(value, ','))) {
      return InvalidArgument("sacctmgr: error: Unknown condition: " + w +
                             "\nUse keyword 'set' to modify value");
    }
  }
  if (c.action != "list" && c.names.empty()) {
    return InvalidArgument("sacctmgr: error: No " + c.entity + " name given");
  }
  if (c.action == "modify" && c.set.empty()) {
    return InvalidArgument("sacctmgr: error: Nothing to modify: give the changes after 'set'");
  }
  return c;
}

std::string SacctmgrUsage() {
  return "sacctmgr [<OPTION>] [<COMMAND>]\n"
         "    Valid <OPTION> values are:\n"
         "     -i or --immediate: commit changes immediately without asking\n"
         "     -n or --noheader:  no header will be added to the beginning of output\n"
         "     -p or --parsable:  output will be '|' delimited with a '|' at the end\n"
         "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
         "     -V or --version:   display tool version number\n"
         "     -h or --help:      display this usage description\n"
         "\n"
         "  Valid <COMMAND> values are:\n"
         "     add <ENTITY> <SPECS>     add entity\n"
         "     create <ENTITY> <SPECS>  same as add\n"
         "     delete <ENTITY> <SPECS>  delete the specified entities\n"
         "     list <ENTITY> [<SPECS>]  display info of specified entity\n"
         "     modify <ENTITY> <SPECS>  modify entity\n"
         "     remove <ENTITY> <SPECS>  same as delete\n"
         "     show <ENTITY> [<SPECS>]  same as list\n"
         "     update <ENTITY> <SPECS>  same as modify\n"
         "\n"
         "  <ENTITY> may be account, association, cluster, qos or user.\n"
         "\n"
         "  add account    - Description=, Fairshare=, Organization=, Parent=, and limits\n"
         "  add user       - Account=, AdminLevel=, DefaultAccount=, Fairshare=, and limits\n"
         "  (limits: GrpJobs=, GrpTRES=, MaxJobs=, MaxSubmitJobs=, MaxWall=; -1 clears)\n"
         "  modify account - (where) Names=, Parent= (set) Description=, Fairshare=,\n"
         "                   Organization=, Parent=\n"
         "  modify user    - (where) Names=, Account= (set) AdminLevel=, DefaultAccount=,\n"
         "                   Fairshare=\n"
         "  add qos        - Description=, Flags=DenyOnLimit, GraceTime=, GrpJobs=,\n"
         "                   GrpTRES=, MaxJobsPerUser=, MaxSubmitJobsPerUser=,\n"
         "                   MaxTRESPerJob=, MaxTRESPerUser=, MaxWall=, Preempt=,\n"
         "                   PreemptExemptTime=, PreemptMode=, Priority=, UsageFactor=\n"
         "  modify qos     - (where) Names= (set) as add qos, and Preempt+=, Preempt-=;\n"
         "                   -1 clears a limit\n"
         "  delete account - Names=\n"
         "  delete user    - Names=, Account=\n"
         "  list <ENTITY>  - Names=, Account=, User=, Parent=, Format=\n";
}

json SacctmgrRequest(const SacctmgrCommand& cmd, bool commit) {
  json where = json::object();
  for (const auto& [key, values] : cmd.where) where[key] = values;
  return {{"action", cmd.action}, {"entity", cmd.entity}, {"names", cmd.names},
          {"where", where},       {"set", cmd.set},       {"commit", commit}};
}

util::Result<std::string> RenderSacctmgrList(const SacctmgrCommand& cmd, const json& table,
                                             const json& cluster) {
  const std::vector<Field> all = FieldsOf(cmd.entity);
  struct Column {
    const Field* field;
    int width;
  };
  std::vector<Column> cols;
  if (cmd.format.empty()) {
    for (size_t k = 0; k < DefaultFieldCount(cmd.entity); ++k) {
      cols.push_back({&all[k], all[k].width});
    }
  }
  for (const std::string& spec : cmd.format) {
    const size_t pct = spec.find('%');
    const std::string name = Lower(util::Trim(spec.substr(0, pct)));
    auto it = std::find_if(all.begin(), all.end(), [&](const Field& f) {
      return std::find(f.names.begin(), f.names.end(), name) != f.names.end() ||
             Lower(f.header) == name;
    });
    if (it == all.end()) {
      return InvalidArgument("sacctmgr: error: Unknown field '" + spec.substr(0, pct) + "'");
    }
    int width = it->width;
    if (pct != std::string::npos) {
      auto w = util::ParseInt(spec.substr(pct + 1));
      if (!w.ok() || *w <= 0 || *w > 1000) {
        return InvalidArgument("sacctmgr: error: Invalid width in '" + spec + "'");
      }
      width = static_cast<int>(*w);
    }
    cols.push_back({&*it, width});
  }
  std::vector<json> rows;
  const std::string cluster_name = Str(cluster, "name");
  if (cmd.where.count("cluster") != 0 && !Listed(cmd.where.at("cluster"), cluster_name)) {
    return std::string();
  }
  if (cmd.entity == "account") {
    for (const json& a : table.at("accounts")) {
      if (Listed(cmd.names, Str(a, "name")) &&
          (cmd.where.count("parent") == 0 || Listed(cmd.where.at("parent"), Str(a, "parent")))) {
        rows.push_back(a);
      }
    }
  } else if (cmd.entity == "user") {
    for (const json& u : table.at("users")) {
      if (!Listed(cmd.names, Str(u, "name"))) continue;
      if (cmd.where.count("accounts") != 0) {
        const auto& accounts = cmd.where.at("accounts");
        const bool member = std::any_of(
            table.at("associations").begin(), table.at("associations").end(), [&](const json& a) {
              return Str(a, "user") == Str(u, "name") && Listed(accounts, Str(a, "account"));
            });
        if (!member) continue;
      }
      rows.push_back(u);
    }
  } else if (cmd.entity == "cluster") {
    if (Listed(cmd.names, cluster_name)) rows.push_back(cluster);
  } else if (cmd.entity == "qos") {
    for (const json& q : table.value("qos", json::array())) {
      if (Listed(cmd.names, Str(q, "name"))) rows.push_back(q);
    }
  } else {
    for (json& r : AssociationRows(table, cluster_name)) {
      const bool is_user = !Str(r, "user").empty();
      if (cmd.where.count("accounts") != 0 &&
          !Listed(cmd.where.at("accounts"), Str(r, "account"))) {
        continue;
      }
      if (cmd.where.count("users") != 0 &&
          (!is_user || !Listed(cmd.where.at("users"), Str(r, "user")))) {
        continue;
      }
      rows.push_back(std::move(r));
    }
  }
  // sacctmgr's columns are right-justified.
  auto line = [&](const std::function<std::string(const Column&)>& cell, bool header) {
    std::string out;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cmd.parsable != 0) {
        render::AppendParsableCell(&out, cell(cols[k]), k == 0, cmd.parsable);
      } else {
        render::AppendAccountingCell(&out, cell(cols[k]), cols[k].width, true, header);
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!cmd.noheader) {
    out += line([](const Column& c) { return std::string(c.field->header); }, true);
    if (cmd.parsable == 0) {
      out += line([](const Column& c) { return std::string(static_cast<size_t>(c.width), '-'); },
                  true);
    }
  }
  for (const json& r : rows) {
    out += line([&](const Column& c) { return c.field->value(r); }, false);
  }
  return out;
}

}  // namespace muster::cli

// scrontab: a user's recurring batch jobs in crontab syntax. Each entry
// ("min hour day month weekday command", or "@daily command") becomes one
// job that runs the command at each minute its schedule names (musterd
// queues it again after each run; src/ctld/crontab.cc). "#SCRON" lines give
// sbatch's options to the next entry only (a "#DISABLED:" one, which
// cancelling its job made, included); "NAME=value" lines set a
// variable for the entries after them. A file with any bad line is refused
// whole, each bad line named, and nothing changes.
//   scrontab [-u user] file     install (file "-": standard input)
//   scrontab [-u user] -l|-r|-e list, remove, edit ($VISUAL, $EDITOR, vi)
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/sbatch_parse.h"
#include "core/cron.h"
#include "core/json.h"
#include "util/hostname.h"
#include "util/strings.h"
#include "util/users.h"

extern char** environ;

namespace muster::cli {
namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "Usage: scrontab [-u user] [-e | -l | -r] | [-u user] file\n";

constexpr char kHelp[] = R"(Usage: scrontab [-u user] [-e | -l | -r] | [-u user] file
  file           install this crontab ("-": standard input)
  -e             edit the crontab ($VISUAL or $EDITOR, else vi)
  -l             print the crontab
  -r             remove the crontab and its jobs
  -u user        another user's crontab (operators)
  -v             more detail (no effect in Muster)
  -V, --version  the release

  Each entry runs its command as a batch job at the minutes its schedule
  names: "min hour day month weekday command" (*, 1-5, */10, mon-fri,
  jan-dec) or "@yearly", "@monthly", "@weekly", "@daily", "@hourly".
  "#SCRON <sbatch options>" lines apply to the next entry only;
  "NAME=value" lines set a variable for the entries after them.

Help options:
  -h, --help     this text
  --usage        a short summary
)";

struct Target {
  uint32_t uid = 0;
  std::string name;
  std::string home = "/";
};

// The entries of a crontab, or the errors of its bad lines.
struct Parsed {
  json entries = json::array();
  std::vector<std::string> errors;
};

Parsed ParseCrontab(const std::string& text, const Target& who) {
  Parsed out;
  std::vector<std::string> options;    // of #SCRON lines, for the next entry
  std::vector<std::string> variables;  // NAME=value lines so far
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    std::string line(util::Trim(raw));
    std::replace(line.begin(), line.end(), '\t', ' ');  // fields may be tab-separated
    auto bad = [&](const std::string& why) {
      out.errors.push_back(fmt::format("line {}: {}", number, why));
    };
    if (line.empty()) continue;
    if (line.starts_with("#SCRON")) {
      for (std::string& w : SplitShellWords(line.substr(6))) options.push_back(std::move(w));
      continue;
    }
    if (line.starts_with("#DISABLED:")) {
      options.clear();  // the options of the entry disabled go with it
      continue;
    }
    if (line[0] == '#') continue;
    const size_t eq = line.find('=');
    const size_t space = line.find_first_of(" \t");
    if (eq != std::string::npos && (space == std::string::npos || eq < space) && line[0] != '@' &&
        line[0] != '*' && !std::isdigit(static_cast<unsigned char>(line[0]))) {
      variables.push_back(line);
      continue;
    }
    // The schedule: one @ word, or five fields; the command is the rest.
    std::vector<std::string> words = util::Split(line, ' ');
    const size_t fields = line[0] == '@' ? 1 : 5;
    if (words.size() <= fields) {
      bad("an entry is a schedule and a command");
      options.clear();
      continue;
    }
    std::string spec;
    for (size_t i = 0; i < fields; ++i) spec += (i ? " " : "") + words[i];
    size_t at = 0;
    for (size_t i = 0; i < fields; ++i) {
      at = line.find(words[i], at) + words[i].size();
    }
    const std::string command(util::Trim(line.substr(at)));
    if (util::Result<core::CronSchedule> s = core::ParseCronSchedule(spec); !s.ok()) {
      bad(s.status().message());
      options.clear();
      continue;
    }
    SbatchInvocation inv;
    util::Result<std::vector<std::string>> rest = ApplySbatchOptions(options, &inv, "scrontab");
    options.clear();
    if (!rest.ok()) {
      bad(rest.status().message());
      continue;
    }
    if (!rest->empty()) {
      bad("#SCRON lines take options only, not " + rest->front());
      continue;
    }
    for (const std::string& w : inv.warnings) std::cerr << fmt::format("{} (line {})\n", w, number);
    core::JobRequest& req = inv.req;
    req.script = "#!/bin/sh\n" + command + "\n";
    req.command = command;
    if (req.name.empty()) {
      const std::string program = util::Split(command, ' ').front();
      req.name = program.substr(program.rfind('/') + 1);
    }
    std::vector<std::string> job_env = env;
    job_env.insert(job_env.end(), variables.begin(), variables.end());
    if (util::Status ex = FinishBatchRequest(who.home, util::HostName(), job_env, &inv); !ex.ok()) {
      bad(ex.message());
      continue;
    }
    out.entries.push_back({{"line", number}, {"spec", spec}, {"request", json(req)}});
  }
  if (!options.empty()) {
    out.errors.push_back(fmt::format("line {}: #SCRON options with no entry after them", number));
  }
  return out;
}

util::Result<std::string> Fetch(const Target& who) {
  util::Result<Response> got =
      PostToController("/v1/crontab", {{"op", "get"}, {"uid", who.uid}});
  if (!got.ok()) return got.status();
  if (got->status == 404) return std::string();
  if (got->status / 100 != 2) return util::FailedPrecondition(ErrorText(*got));
  return got->body.value("text", "");
}

// Installs `text` (empty: removes). Prints what went wrong; returns the exit code.
int Install(const std::string& text, const Target& who, const std::string& source) {
  Parsed parsed = ParseCrontab(text, who);
  if (!parsed.errors.empty()) {
    for (const std::string& e : parsed.errors) {
      std::cerr << "scrontab: error: " << source << ": " << e << "\n";
    }
    std::cerr << "scrontab: error: the crontab was not installed\n";
    return 1;
  }
  util::Result<Response> got = PostToController(
      "/v1/crontab", {{"op", "set"}, {"uid", who.uid}, {"text", text}, {"entries", parsed.entries}});
  if (!got.ok()) {
    PrintError("scrontab", got.status().message());
    return 1;
  }
  if (got->status / 100 != 2) {
    PrintError("scrontab", ErrorText(*got));
    return 1;
  }
  return 0;
}

int Edit(const Target& who) {
  util::Result<std::string> text = Fetch(who);
  if (!text.ok()) {
    PrintError("scrontab", text.status().message());
    return 1;
  }
  char path[] = "/tmp/scrontab-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) {
    PrintError("scrontab", "cannot make a temporary file");
    return 1;
  }
  ::close(fd);
  std::ofstream(path, std::ios::binary) << *text;
  const char* editor = std::getenv("VISUAL");
  if (editor == nullptr || *editor == '\0') editor = std::getenv("EDITOR");
  if (editor == nullptr || *editor == '\0') editor = "vi";
  int rc = 1;
  for (;;) {
    const int status = std::system(fmt::format("{} '{}'", editor, path).c_str());
    if (status != 0) {
      PrintError("scrontab", fmt::format("{} exited with status {}; nothing changed", editor,
                                         WIFEXITED(status) ? WEXITSTATUS(status) : status));
      break;
    }
    std::ifstream in(path, std::ios::binary);
    const std::string edited(std::istreambuf_iterator<char>(in), {});
    if (edited == *text) {
      rc = 0;  // unchanged
      break;
    }
    rc = Install(edited, who, "the edited crontab");
    if (rc == 0 || !::isatty(0)) break;
    std::cerr << "Do you want to retry the edit? (y/n) ";
    std::string answer;
    if (!std::getline(std::cin, answer) || answer.empty() || (answer[0] != 'y' && answer[0] != 'Y')) {
      break;
    }
  }
  ::unlink(path);
  return rc;
}

}  // namespace

int ScrontabMain(const std::vector<std::string>& args) {
  char mode = 0;
  std::optional<std::string> user;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-e" || a == "-l" || a == "-r") {
      if (mode != 0) {
        std::cerr << "scrontab: error: give one of -e, -l and -r\n" << kUsage;
        return 1;
      }
      mode = a[1];
    } else if (a == "-u") {
      if (i + 1 == args.size()) {
        std::cerr << "scrontab: option requires an argument -- 'u'\n" << kUsage;
        return 1;
      }
      user = args[++i];
    } else if (a.starts_with("-u") && a.size() > 2) {
      user = a.substr(2);
    } else if (a == "-h" || a == "--help") {
      std::cout << kHelp;
      return 0;
    } else if (a == "--usage") {
      std::cout << kUsage;
      return 0;
    } else if (a == "-V" || a == "--version") {
      return PrintVersion();
    } else if (a == "-v") {
      continue;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "scrontab: invalid option -- '" << a.substr(1) << "'\n" << kUsage;
      return 1;
    } else {
      files.push_back(a);
    }
  }
  if ((mode != 0 && !files.empty()) || files.size() > 1 || (mode == 0 && files.empty())) {
    std::cerr << kUsage;
    return 1;
  }
  Target who;
  who.uid = ::getuid();
  if (user) {
    std::optional<uint32_t> uid = util::LookupUid(*user);
    if (!uid) {
      PrintError("scrontab", "Invalid user: " + *user);
      return 1;
    }
    who.uid = *uid;
  }
  who.name = util::UserName(who.uid);
  if (struct passwd* pw = ::getpwuid(who.uid); pw != nullptr && pw->pw_dir != nullptr) {
    who.home = pw->pw_dir;
  }
  switch (mode) {
    case 'l': {
      util::Result<std::string> text = Fetch(who);
      if (!text.ok()) {
        PrintError("scrontab", text.status().message());
        return 1;
      }
      if (text->empty()) {
        PrintError("scrontab", "no crontab for " + who.name);
        return 1;
      }
      std::cout << *text << (text->ends_with('\n') ? "" : "\n");
      return 0;
    }
    case 'r': return Install("", who, "");
    case 'e': return Edit(who);
    default: break;
  }
  std::string text;
  if (files[0] == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(files[0], std::ios::binary);
    if (!in) {
      PrintError("scrontab", "cannot read " + files[0]);
      return 1;
    }
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  return Install(text, who, files[0]);
}

}  // namespace muster::cli

// sattach: joins a running srun step's standard I/O from any host. musterd
// says where the step's srun listens (cli/step_attach.h) and how its tasks
// are laid out; sattach then gets the output srun still holds and what
// follows, and sends its stdin to the tasks, until the step ends. As Slurm
// 22.05's sattach:
//  - --output-filter/--error-filter show one task's stdout/stderr,
//    --input-filter sends stdin to one task (the end of sattach's stdin
//    ends that task's, or every task's); -l labels lines with the rank;
//  - --layout prints the step's layout and attaches to nothing;
//  - it exits with the highest exit code of the step's tasks, naming each
//    task that failed;
//  - errors are Slurm's ("Could not get job step info: Job is pending
//    execution", "Failed to parse stepid from command line options").
// Unlike Slurm's, another user's step is refused with an error (Slurm says
// "no tasks running" and exits 0), and so is the batch step, by name.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/step_attach.h"
#include "cli/task_lines.h"
#include "util/getopt.h"
#include "util/send_all.h"
#include "util/strings.h"
#include "util/tcp.h"

namespace muster::cli {
namespace {

using nlohmann::json;

enum SattachOpt {
  kErrorFilter = 1, kHelp, kInputFilter, kLabel, kLayout, kOutputFilter, kPty, kQuiet, kUsage,
  kVerbose, kVersion,
};

const std::vector<util::OptionSpec>& Options() {
  using util::Arg;
  static const std::vector<util::OptionSpec> kOptions = {
      util::IdOption(0, "error-filter", Arg::kRequired, kErrorFilter),
      util::IdOption('h', "help", Arg::kNone, kHelp),
      util::IdOption(0, "input-filter", Arg::kRequired, kInputFilter),
      util::IdOption('l', "label", Arg::kNone, kLabel),
      util::IdOption(0, "layout", Arg::kNone, kLayout),
      util::IdOption(0, "output-filter", Arg::kRequired, kOutputFilter),
      util::IdOption(0, "pty", Arg::kNone, kPty),
      util::IdOption('Q', "quiet", Arg::kNone, kQuiet),
      util::IdOption('u', "usage", Arg::kNone, kUsage),
      util::IdOption('v', "verbose", Arg::kNone, kVerbose),
      util::IdOption('V', "version", Arg::kNone, kVersion),
  };
  return kOptions;
}

constexpr char kUsageText[] = "Usage: sattach [options] <jobid.stepid>\n";

// Slurm's layout (the usage line, the options, then the help options), in
// Muster's words.
constexpr char kHelpText[] = R"(Usage: sattach [options] <jobid.stepid>
      --input-filter=taskid  send stdin to this task alone
      --output-filter=taskid print the stdout of this task alone
      --error-filter=taskid  print the stderr of this task alone
  -l, --label        put the task's number before each line of its output
      --layout       print how the step's tasks are laid out, attach to nothing
  -Q, --quiet        print errors only
  -v, --verbose      accepted; sattach has nothing more to say
  -V, --version      print the version and exit

Help options:
  -h, --help         print this help and exit
  -u, --usage        print the usage line and exit
)";

struct SattachOptions {
  std::optional<int> input_filter, output_filter, error_filter;
  bool label = false;
  bool layout = false;
  uint32_t job = 0;
  std::string step;  // as given: a number, or "batch"
};

// "Invalid numeric value "x" for output-filter." as Slurm says it.
util::Result<int> ParseFilter(const std::string& name, const std::string& value) {
  util::Result<int64_t> n = util::ParseInt(value);
  if (!n.ok() || *n < 0 || *n > INT32_MAX) {
    return util::InvalidArgument(fmt::format("Invalid numeric value \"{}\" for {}.", value, name));
  }
  return static_cast<int>(*n);
}

// "123.4" (or "123.batch"); false for anything else.
bool ParseStepId(const std::string& text, SattachOptions* o) {
  const size_t dot = text.find('.');
  if (dot == std::string::npos) return false;
  util::Result<int64_t> job = util::ParseInt(text.substr(0, dot));
  const std::string step = text.substr(dot + 1);
  util::Result<int64_t> number = util::ParseInt(step);
  if (!job.ok() || *job <= 0 || *job > UINT32_MAX) return false;
  if (step != "batch" && (!number.ok() || *number < 0)) return false;
  o->job = static_cast<uint32_t>(*job);
  o->step = step;
  return true;
}

// Slurm's --layout text.
std::string LayoutText(const json& where) {
  const json& layout = where.at("layout");
  std::string out = fmt::format("Job step layout:\n\t{} tasks, {} nodes ({})\n\n",
                                where.value("ntasks", 0), layout.size(),
                                where.value("nodelist", ""));
  for (size_t i = 0; i < layout.size(); ++i) {
    const json& ranks = layout[i].at("ranks");
    out += fmt::format("\tNode {} ({}), {} task(s): ", i, layout[i].value("node", ""),
                       ranks.size());
    for (const json& r : ranks) out += fmt::format("{} ", r.get<int>());
    out += "\n";
  }
  return out;
}

// Connects to the step's srun at the first of its addresses that answers
// and joins with the token; -1 when none does.
int JoinStep(const json& where) {
  const int port = where.value("port", 0);
  for (const json& address : where.at("addresses")) {
    const int fd = util::ConnectTcp(address.get<std::string>(), port, 2000);
    if (fd < 0) continue;
    if (util::SendAll(fd, "HELLO " + where.value("token", "") + "\n")) return fd;
    ::close(fd);
  }
  return -1;
}

// Relays until the step ends; returns sattach's exit code.
int Relay(int fd, const SattachOptions& o, const std::string& step_id) {
  TaskLines lines(o.label, false);
  std::string in;
  bool stdin_open = true, done = false;
  int code = 0;
  const int target = o.input_filter.value_or(-1);
  while (!done) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stdin_open ? STDIN_FILENO : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) {
      char buf[65536];
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      stdin_open = n > 0;
      const std::string data = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
      util::SendAll(fd, EncodeAttachFrame({'I', target, 0, 0, data}));
    }
    if (fds[0].revents == 0) continue;
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
    AttachFrame f;
    int took;
    while ((took = TakeAttachFrame(in, &f)) > 0) {
      if (f.kind == 'O' || f.kind == 'E') {
        const bool is_out = f.kind == 'O';
        const std::optional<int>& filter = is_out ? o.output_filter : o.error_filter;
        if (!filter || *filter == f.rank) lines.Write(f.rank, is_out, f.data, is_out ? stdout : stderr);
      } else if (f.kind == 'X' && f.signal != 0) {
        std::cerr << fmt::format("sattach: error: task {}: {}\n", f.rank, strsignal(f.signal));
        code = std::max(code, 128 + f.signal);
      } else if (f.kind == 'X' && f.exit_code != 0) {
        std::cerr << fmt::format("sattach: error: task {} exited with exit code {}\n", f.rank,
                                 f.exit_code);
        code = std::max(code, f.exit_code);
      } else if (f.kind == 'D') {
        done = true;
      }
    }
    if (took < 0) break;
  }
  lines.Flush();
  ::close(fd);
  if (!done) {
    std::cerr << "sattach: error: lost the connection to StepId=" << step_id << "\n";
    return std::max(code, 1);
  }
  return code;
}

}  // namespace

int SattachMain(const std::vector<std::string>& args) {
  util::Result<util::ParseResult> parsed = util::ParseOptions("sattach", Options(), args, false);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n" << kUsageText;
    return 1;
  }
  SattachOptions o;
  for (const util::ParsedOption& opt : parsed->options) {
    const std::string value = opt.value.value_or("");
    std::optional<int>* filter = nullptr;
    switch (opt.spec->id) {
      case kErrorFilter: filter = &o.error_filter; break;
      case kInputFilter: filter = &o.input_filter; break;
      case kOutputFilter: filter = &o.output_filter; break;
      case kHelp: std::cout << kHelpText; return 0;
      case kLabel: o.label = true; break;
      case kLayout: o.layout = true; break;
      case kPty:
        PrintError("sattach", "--pty is not supported by Muster: a step started with srun --pty "
                              "has its terminal in srun alone");
        return 1;
      case kQuiet: break;    // sattach prints errors only
      case kVerbose: break;  // nothing more to tell
      case kUsage: std::cout << kUsageText; return 0;
      case kVersion: return PrintVersion();
    }
    if (filter != nullptr) {
      const std::string name = opt.spec->long_name;
      util::Result<int> n = ParseFilter(name, value);
      if (!n.ok()) {
        PrintError("sattach", n.status().message());
        return 1;
      }
      *filter = *n;
    }
  }
  if (parsed->positional.size() != 1) {
    PrintError("sattach", parsed->positional.empty()
                              ? "no job step given: sattach attaches to one, JOBID.STEPID"
                              : "too many parameters");
    std::cout << kUsageText;
    return 1;
  }
  if (!ParseStepId(parsed->positional.front(), &o)) {
    PrintError("sattach", "Failed to parse stepid from command line options");
    std::cout << kUsageText;
    return 1;
  }
  const std::string step_id = fmt::format("{}.{}", o.job, o.step);
  util::Result<Client> client = Client::Connect();
  if (!client.ok()) {
    PrintError("sattach", client.status().message());
    return 1;
  }
  util::Result<Response> got = client->Get(fmt::format("/v1/jobs/{}/steps/{}/attach", o.job, o.step));
  if (!got.ok()) {
    PrintError("sattach", got.status().message());
    return 1;
  }
  if (got->status != 200) {
    PrintError("sattach", "Could not get job step info: " + ErrorText(*got));
    return 1;
  }
  if (o.layout) {
    std::cout << LayoutText(got->body);
    return 0;
  }
  const int fd = JoinStep(got->body);
  if (fd < 0) {
    PrintError("sattach", fmt::format("cannot reach the srun of StepId={} (port {} at {}): {}",
                                      step_id, got->body.value("port", 0),
                                      util::Join(got->body.at("addresses").get<std::vector<std::string>>(), ","),
                                      std::strerror(errno)));
    return 1;
  }
  ::signal(SIGPIPE, SIG_IGN);
  return Relay(fd, o, step_id);
}

}  // namespace muster::cli

// sbcast SOURCE DEST: a copy of a file on every node of a running job, as
// the job's user. Muster sends it as a step of the job: srun --overlap, one
// task per node, the file on the tasks' standard input (srun -i all, which
// reaches tasks on other hosts through their launchers), each task writing
// a temporary file beside DEST and renaming it into place, so a reader
// never sees half a file. With -C the data travels gzip-compressed. As
// Slurm 22.05's sbcast: DEST existing is an error without -f ("File
// exists", exit 17), -p keeps the source's mode and times, the job comes
// from SLURM_JOB_ID or -j.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "util/getopt.h"
#include "util/strings.h"

namespace muster::cli {
namespace {

enum Opt { kCompress = 1, kForce, kJob, kPreserve, kFanout, kSize, kTimeout, kVerbose, kVersion,
           kHelp, kUsage, kSendLibs, kExclude };

const std::vector<util::OptionSpec>& Options() {
  using util::Arg;
  static const std::vector<util::OptionSpec> kOptions = {
      util::IdOption('C', "compress", Arg::kOptional, kCompress),
      util::IdOption('f', "force", Arg::kNone, kForce),
      util::IdOption('j', "jobid", Arg::kRequired, kJob),
      util::IdOption('p', "preserve", Arg::kNone, kPreserve),
      util::IdOption('F', "fanout", Arg::kRequired, kFanout),
      util::IdOption('s', "size", Arg::kRequired, kSize),
      util::IdOption('t', "timeout", Arg::kRequired, kTimeout),
      util::IdOption('v', "verbose", Arg::kNone, kVerbose),
      util::IdOption('V', "version", Arg::kNone, kVersion),
      util::IdOption(0, "help", Arg::kNone, kHelp),
      util::IdOption(0, "usage", Arg::kNone, kUsage),
      util::IdOption(0, "send-libs", Arg::kOptional, kSendLibs),
      util::IdOption(0, "exclude", Arg::kRequired, kExclude),
  };
  return kOptions;
}

constexpr char kUsageText[] = "Usage: sbcast [-CfFjpstvV] SOURCE DEST\n";
constexpr char kHelpText[] = R"(Usage: sbcast [OPTIONS] SOURCE DEST
  -C, --compress[=library] compress the data sent (gzip; none: do not)
  -f, --force              replace DEST where it exists
  -F, --fanout=num         messages sent at once (no effect in Muster)
  -j, --jobid=#[.#]        the job (default: $SLURM_JOB_ID)
  -p, --preserve           keep the source's mode, access and modification times
  -s, --size=num           block size (no effect in Muster)
  -t, --timeout=secs       message timeout (no effect in Muster)
  -v, --verbose            say what is done
  -V, --version            the release
      --send-libs, --exclude  [not in Muster]

Help options:
  --help                   this text
  --usage                  a short summary
)";

// The shell each task runs: DEST is $1, the rest of its settings follow.
constexpr char kTaskScript[] = R"(dest=$1 force=$2 mode=$3 times=$4 unpack=$5
if [ "$force" = 0 ] && [ -e "$dest" ]; then
  echo "sbcast: error: REQUEST_FILE_BCAST($SLURMD_NODENAME): File exists" >&2
  exit 17
fi
tmp="$dest.sbcast.$SLURMD_NODENAME.$$"
if [ "$unpack" = 1 ]; then gzip -dc > "$tmp"; else cat > "$tmp"; fi || exit 1
[ -z "$mode" ] || chmod "$mode" "$tmp" || exit 1
[ -z "$times" ] || touch -d "@$times" "$tmp" || exit 1
mv -f "$tmp" "$dest"
)";

int Fail(const std::string& message, int code = 1) {
  std::cerr << message << "\n";
  return code;
}

// Runs `argv` (this binary as argv[0]'s command) with `input` on its stdin,
// through gzip when `compress`; passes its stderr on without srun's own
// lines. Returns its exit status.
int RunStep(const std::vector<std::string>& argv, int input, bool compress) {
  int source = input;
  pid_t gzip = -1;
  if (compress) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return 255;
    gzip = ::fork();
    if (gzip == 0) {
      ::dup2(input, 0);
      ::dup2(pipe_fds[1], 1);
      ::execl("/bin/gzip", "gzip", "-c", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    source = pipe_fds[0];
  }
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) return 255;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(source, 0);
    ::dup2(err[1], 2);
    ::execv("/proc/self/exe", args.data());
    ::_exit(127);
  }
  ::close(err[1]);
  if (source != input) ::close(source);
  std::string pending;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(err[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n < 0) continue;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, nl + 1);
      pending.erase(0, nl + 1);
      if (!line.starts_with("srun: ")) std::cerr << line;
    }
  }
  ::close(err[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (gzip > 0) {
    int ignored = 0;
    while (::waitpid(gzip, &ignored, 0) < 0 && errno == EINTR) {
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

}  // namespace

int SbcastMain(const std::vector<std::string>& argv) {
  util::Result<util::ParseResult> parsed = util::ParseOptions("sbcast", Options(), argv, false);
  if (!parsed.ok()) {
    return Fail(parsed.status().message() + "\nTry \"sbcast --help\" for more information");
  }
  bool compress = false, force = false, preserve = false;
  std::string job;
  if (const char* env = std::getenv("SLURM_JOB_ID")) job = env;
  for (const util::ParsedOption& o : parsed->options) {
    const std::string v = o.value.value_or("");
    switch (o.spec->id) {
      case kCompress:
        if (v.empty() || v == "gzip" || v == "zlib" || v == "lz4") {
          compress = true;  // gzip carries it whichever library is asked for
        } else if (v == "none") {
          compress = false;
        } else {
          return Fail("sbcast: error: --compress=" + v + ": give gzip, zlib, lz4 or none");
        }
        break;
      case kForce: force = true; break;
      case kJob: job = v.substr(0, v.find('.')); break;
      case kPreserve: preserve = true; break;
      case kFanout:
      case kSize:
      case kTimeout: break;  // tuning of Slurm's tree of messages
      case kVerbose: break;
      case kVersion: return PrintVersion();
      case kHelp: std::cout << kHelpText; return 0;
      case kUsage: std::cout << kUsageText; return 0;
      case kSendLibs:
      case kExclude:
        return Fail(fmt::format("sbcast: error: --{} is not supported by Muster yet",
                                o.spec->long_name));
    }
  }
  const std::vector<std::string>& names = parsed->positional;
  if (names.size() != 2) {
    return Fail(fmt::format("Need two file names, have {} names\nTry \"sbcast --help\" for more "
                            "information",
                            names.size()));
  }
  if (job.empty() || !util::ParseInt(job).ok()) {
    return Fail("sbcast: error: Need a job id to run this command.  Run from within a Slurm job "
                "or use the --jobid option.");
  }
  const int input = ::open(names[0].c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (input < 0 || ::fstat(input, &st) != 0) {
    return Fail(fmt::format("sbcast: error: Can't open `{}`: {}", names[0], std::strerror(errno)),
                255);
  }
  std::string dest = names[1];
  if (dest[0] != '/') {
    char cwd[4096];
    dest = std::string(::getcwd(cwd, sizeof cwd) ? cwd : "/") + "/" + dest;
  }
  // One task on each of the job's nodes.
  util::Result<Client> client = Client::Connect();
  if (!client.ok()) return Fail("sbcast: error: " + client.status().message());
  util::Result<Response> got = client->Get("/v1/jobs/" + job);
  if (!got.ok()) return Fail("sbcast: error: " + got.status().message());
  const nlohmann::json& alloc = got->body.is_object() ? got->body.value("alloc", nlohmann::json())
                                                      : nlohmann::json();
  const std::string state = got->body.is_object() ? got->body.value("state", "") : "";
  if (got->status / 100 != 2 || !alloc.is_array() || alloc.empty() || state != "RUNNING") {
    return Fail("sbcast: error: Job " + job + " is not running");
  }
  const size_t nodes = alloc.size();
  const std::vector<std::string> srun = {
      "srun", "--jobid=" + job, "--overlap", "-N", std::to_string(nodes), "--ntasks-per-node=1",
      "-i", "all", "-J", "sbcast", "-Q", "/bin/sh", "-c", kTaskScript, "sbcast", dest,
      force ? "1" : "0", preserve ? fmt::format("{:o}", st.st_mode & 07777) : "",
      preserve ? std::to_string(st.st_mtime) : "", compress ? "1" : "0"};
  const int rc = RunStep(srun, input, compress);
  ::close(input);
  return rc;
}

}  // namespace muster::cli

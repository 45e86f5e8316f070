// muster up / muster down: a local cluster on this machine. `up` starts
// musterd and one muster-agent hosting every node of the configuration in
// the background (writing a configuration of emulated GPU nodes when none
// is given), waits until every node is idle and prints the line a shell
// needs. `down` stops them; jobs that are running go on under their
// muster-step and are picked up again by the next `up`.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "api/http.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "config/config.h"
#include "util/strings.h"
#include "util/hostname.h"
#include "util/users.h"

extern char** environ;

namespace muster::cli {

namespace fs = std::filesystem;

namespace {

fs::path SelfDir() {
  char buf[PATH_MAX] = {0};
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? fs::path(std::string(buf, n)).parent_path() : fs::path(".");
}

// Where the daemons are: beside this binary in a build tree, ../sbin of it
// where the package installed them (/usr/bin/muster, /usr/sbin/musterd).
fs::path DaemonDir() {
  const fs::path self = SelfDir();
  if (fs::exists(self / "musterd")) return self;
  const fs::path sbin = self.parent_path() / "sbin";
  return fs::exists(sbin / "musterd") ? sbin : self;
}

std::string DefaultStateDir() {
  const char* xdg = getenv("XDG_STATE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/muster";
  const char* home = getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.local/state/muster";
}

// The practice cluster: the handbook's layout of four 8-GPU servers and two
// CPU servers, with the same partitions as ../shared/slurm-oracle.
std::string EmulatedConfig(const std::string& dir) {
  return "# Written by `muster up`: a local cluster of emulated GPU nodes.\n"
         "ClusterName=muster\n"
         "SlurmctldHost=" + util::HostName() + "\n"
         "StateSaveLocation=" + dir + "/ctld\n"
         "SlurmdSpoolDir=" + dir + "/spool\n"
         "DefMemPerCPU=1000\n"
         "KillWait=5\n"
         "MinJobAge=300\n"
         "MaxArraySize=100001\n"
         "GresTypes=gpu\n"
         "NodeName=gpu[01-04] CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 "
         "RealMemory=64000 Gres=gpu:h100:8 Feature=h100,gpu State=UNKNOWN\n"
         "NodeName=cpu[01-02] CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 "
         "RealMemory=64000 Feature=cpu State=UNKNOWN\n"
         "PartitionName=short Nodes=gpu[01-04],cpu[01-02] Default=YES MaxTime=04:00:00 "
         "DefaultTime=01:00:00 State=UP\n"
         "PartitionName=train Nodes=gpu[01-04] MaxTime=3-00:00:00 DefaultTime=04:00:00 State=UP\n";
}

// The pid recorded in `pidfile` when that process is alive and is `comm`
// (not a zombie, not a recycled pid of another program).
std::optional<pid_t> LivePid(const std::string& pidfile, const std::string& comm) {
  std::ifstream in(pidfile);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size()) {
    return std::nullopt;
  }
  std::string name = line.substr(open + 1, close - open - 1);
  char state = line[close + 2];
  // comm is cut to 15 characters by the kernel.
  if (state == 'Z' || state == 'X' || name != comm.substr(0, 15)) return std::nullopt;
  return static_cast<pid_t>(pid);
}

util::Result<pid_t> SpawnDaemon(const fs::path& binary, const std::vector<std::string>& args,
                                const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<std::string> all{binary.string()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, binary.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return util::Internal("cannot start " + binary.string() + ": " + std::strerror(rc));
  return pid;
}

bool StopPid(const std::string& pidfile, const char* what) {
  auto pid = LivePid(pidfile, what);
  if (!pid) return false;
  kill(*pid, SIGTERM);
  for (int i = 0; i < 200 && LivePid(pidfile, what); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  if (LivePid(pidfile, what)) {
    std::cerr << "muster down: " << what << " (pid " << *pid << ") did not stop; killing it\n";
    kill(*pid, SIGKILL);
  }
  fs::remove(pidfile);
  return true;
}

struct Paths {
  std::string conf;
  std::string state;  // StateSaveLocation
};

util::Result<Paths> ResolveConf(const std::vector<std::string>& args, const char* prog,
                                bool create) {
  std::string conf, state_dir;
  auto str = [](std::string* f) {
    return [f](const std::string& v) {
      *f = v;
      return util::Status::Ok();
    };
  };
  std::vector<OptionSpec> specs = {{0, "conf", Arg::kRequired, str(&conf)},
                                   {0, "state-dir", Arg::kRequired, str(&state_dir)}};
  auto parsed = ParseOptions(prog, specs, args, false);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->positional.empty()) {
    return util::InvalidArgument(std::string(prog) + ": unexpected argument '" +
                                 parsed->positional[0] + "'");
  }
  if (conf.empty() && state_dir.empty() && getenv("MUSTER_CONF") && !create) {
    conf = getenv("MUSTER_CONF");
  }
  if (conf.empty()) {
    if (state_dir.empty()) state_dir = DefaultStateDir();
    state_dir = fs::absolute(state_dir).lexically_normal().string();
    conf = state_dir + "/muster.conf";
    if (create && !fs::exists(conf)) {
      std::error_code ec;
      fs::create_directories(state_dir, ec);
      std::ofstream out(conf);
      out << EmulatedConfig(state_dir);
      if (!out) return util::Internal("cannot write " + conf);
    }
  }
  conf = fs::absolute(conf).lexically_normal().string();
  auto cfg = config::LoadConfig(conf);
  if (!cfg.ok()) return util::InvalidArgument(std::string(prog) + ": " + cfg.status().message());
  return Paths{conf, cfg->state_save_location};
}

// A new cluster's accounts, so that it runs jobs with associations
// enforced and no setup: root in the root account and the submitting user
// (the one behind sudo, if any) in an account of their own name, their
// default, as jobs without --account are charged when nobody administers
// accounts. Left alone once any association exists.
void SeedAccounts(const std::string& sock) {
  auto current = api::HttpCall(sock, "GET", "/v1/accounts", "");
  if (!current.ok() || current->status != 200) return;
  auto table = nlohmann::json::parse(current->body, nullptr, false);
  if (!table.is_object() || !table.value("associations", nlohmann::json::array()).empty()) return;
  std::string user = util::UserName(::getuid());
  if (const char* sudo = std::getenv("SUDO_USER"); ::getuid() == 0 && sudo != nullptr && *sudo) user = sudo;
  auto add = [&](const char* entity, const std::string& name, const nlohmann::json& set) {
    const nlohmann::json req = {{"action", "add"}, {"entity", entity}, {"names", {name}},
                                {"set", set},      {"commit", true}};
    auto r = api::HttpCall(sock, "POST", "/v1/accounts", req.dump());
    if (!r.ok() || r->status != 200) {
      std::cerr << "muster up: warning: could not add " << entity << " " << name << ": "
                << (r.ok() ? r->body : r.status().message()) << "\n";
    }
  };
  add("user", "root", {{"accounts", {"root"}}});
  if (user == "root") return;
  add("account", user, {{"description", "default account of " + user}});
  add("user", user, {{"accounts", {user}}});
}

}  // namespace

int UpMain(const std::vector<std::string>& args) {
  auto paths = ResolveConf(args, "muster up", true);
  if (!paths.ok()) {
    std::cerr << paths.status().message() << "\n";
    return 1;
  }
  auto cfg = config::LoadConfig(paths->conf);
  std::error_code ec;
  fs::create_directories(paths->state, ec);
  fs::create_directories(paths->state + "/log", ec);
  fs::path bin = DaemonDir();
  std::string sock = config::ControllerSocketPath(*cfg);
  if (!LivePid(paths->state + "/musterd.pid", "musterd")) {
    auto pid = SpawnDaemon(bin / "musterd", {"--conf", paths->conf}, paths->state + "/log/musterd.log");
    if (!pid.ok()) {
      std::cerr << "muster up: " << pid.status().message() << "\n";
      return 1;
    }
  }
  if (!LivePid(paths->state + "/agent.pid", "muster-agent")) {
    auto pid = SpawnDaemon(bin / "muster-agent", {"--conf", paths->conf},
                           paths->state + "/log/agent.log");
    if (!pid.ok()) {
      std::cerr << "muster up: " << pid.status().message() << "\n";
      return 1;
    }
    std::ofstream(paths->state + "/agent.pid") << *pid << "\n";
  }
  // Ready when every configured node is registered.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto r = api::HttpCall(sock, "GET", "/v1/nodes", "");
    if (r.ok() && r->status == 200) {
      auto body = nlohmann::json::parse(r->body, nullptr, false);
      size_t ready = 0, total = 0;
      if (body.is_object()) {
        for (const auto& n : body["nodes"]) {
          ++total;
          if (n.value("registered", false)) ++ready;
        }
      }
      if (total > 0 && ready == total) break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "muster up: the cluster did not come up within 30 s; see "
                << paths->state << "/log/musterd.log and agent.log\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  SeedAccounts(sock);
  std::cerr << "muster up: cluster " << cfg->cluster_name << " is up with " << cfg->nodes.size()
            << " nodes (state in " << paths->state << ")\n";
  std::cout << "export MUSTER_CONF=" << paths->conf << "\n";
  return 0;
}

int DownMain(const std::vector<std::string>& args) {
  auto paths = ResolveConf(args, "muster down", false);
  if (!paths.ok()) {
    std::cerr << paths.status().message() << "\n";
    return 1;
  }
  bool agent = StopPid(paths->state + "/agent.pid", "muster-agent");
  bool ctld = StopPid(paths->state + "/musterd.pid", "musterd");
  if (!agent && !ctld) {
    std::cerr << "muster down: nothing was running for " << paths->conf << "\n";
    return 0;
  }
  std::cerr << "muster down: stopped\n";
  return 0;
}

}  // namespace muster::cli

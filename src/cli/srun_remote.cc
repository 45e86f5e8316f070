#include "cli/srun_remote.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "util/hostname.h"

namespace muster::cli {
namespace {

// How long the launchers have to call back before srun gives up on them.
constexpr auto kConnectWait = std::chrono::seconds(60);

std::string RandomToken() {
  unsigned char bytes[16] = {};
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n <= 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

// A listening TCP socket on every address of this host; its port in *port.
int Listen(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

// Where each task's output goes.
class Sink {
 public:
  explicit Sink(const RemoteLaunch& launch) : launch_(launch) {}
  ~Sink() {
    for (auto& [path, f] : files_) std::fclose(f);
  }

  void Write(int rank, bool is_out, const std::string& data) {
    FILE* to = Target(rank, is_out);
    if (!launch_.label || to != (is_out ? stdout : stderr)) {
      std::fwrite(data.data(), 1, data.size(), to);
      std::fflush(to);
      return;
    }
    std::string& acc = pending_[{rank, is_out}];
    acc += data;
    size_t nl;
    while ((nl = acc.find('\n')) != std::string::npos) {
      std::fprintf(to, "%d: %.*s\n", rank, static_cast<int>(nl), acc.data());
      acc.erase(0, nl + 1);
    }
    std::fflush(to);
  }

  // A task's last partial line, labelled.
  void Flush() {
    for (auto& [key, acc] : pending_) {
      if (!acc.empty())
        std::fprintf(key.second ? stdout : stderr, "%d: %s\n", key.first, acc.c_str());
    }
    pending_.clear();
    std::fflush(stdout);
    std::fflush(stderr);
  }

 private:
  // -o and -e per rank; stderr goes with the output when only -o was
  // given, as in Slurm.
  FILE* Target(int rank, bool is_out) {
    const std::string* path = nullptr;
    if (!is_out) {
      if (auto e = launch_.err_paths.find(rank); e != launch_.err_paths.end()) path = &e->second;
    }
    if (path == nullptr) {
      if (auto o = launch_.out_paths.find(rank); o != launch_.out_paths.end()) path = &o->second;
    }
    if (path == nullptr) return is_out ? stdout : stderr;
    auto open = files_.find(*path);
    if (open != files_.end()) return open->second;
    FILE* f = std::fopen(path->c_str(), "a");
    if (f == nullptr) return is_out ? stdout : stderr;
    files_[*path] = f;
    return f;
  }

  const RemoteLaunch& launch_;
  std::map<std::string, FILE*> files_;
  std::map<std::pair<int, bool>, std::string> pending_;
};

struct Caller {
  int fd = -1;
  std::string in;
  std::string node;  // set once its HELLO checked out
};

}  // namespace

util::Result<RemoteExit> RunRemoteStep(const Client& client, const RemoteLaunch& launch) {
  int port = 0;
  const int listener = Listen(&port);
  if (listener < 0) {
    return util::Unavailable(std::string("cannot listen for the tasks' output: ") +
                             std::strerror(errno));
  }
  const std::string token = RandomToken();
  nlohmann::json nodes = nlohmann::json::array();
  std::set<int> waiting;
  for (const RemoteNodeTasks& n : launch.nodes) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& [rank, env] : n.tasks) {
      tasks.push_back({{"rank", rank}, {"env", env}});
      waiting.insert(rank);
    }
    nodes.push_back({{"node", n.node}, {"tasks", tasks}});
  }
  auto resp = client.Post(fmt::format("/v1/jobs/{}/steps/{}/launch", launch.job_id, launch.step_id),
                          {{"io_host", util::HostName()},
                           {"io_port", port},
                           {"token", token},
                           {"argv", launch.argv},
                           {"work_dir", launch.work_dir},
                           {"nodes", nodes}});
  if (!resp.ok() || resp->status != 200) {
    ::close(listener);
    return util::Unavailable(resp.ok() ? ErrorText(*resp) : resp.status().message());
  }

  RemoteExit exit;
  Sink sink(launch);
  std::vector<Caller> callers;
  const auto deadline = std::chrono::steady_clock::now() + kConnectWait;
  size_t hellos = 0;
  bool terminating = false, terminate_after = false;
  while (!waiting.empty()) {
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (const Caller& c : callers) fds.push_back({c.fd, POLLIN, 0});
    if (hellos < launch.nodes.size() && std::chrono::steady_clock::now() > deadline) {
      std::cerr << "srun: error: the tasks of " << launch.nodes.size() - hellos
                << " node(s) never started (see their agents' logs)\n";
      exit.code = std::max(exit.code, 2);
      break;
    }
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) callers.push_back({fd, {}, {}});
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Caller& c = callers[i - 1];
      char buf[65536];
      ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        ::close(c.fd);
        c.fd = -1;
        continue;
      }
      c.in.append(buf, static_cast<size_t>(n));
      for (;;) {
        const size_t nl = c.in.find('\n');
        if (nl == std::string::npos) break;
        const std::string head = c.in.substr(0, nl);
        if (c.node.empty()) {
          char got[80] = "", node[256] = "";
          if (std::sscanf(head.c_str(), "HELLO %79s %255s", got, node) != 2 || token != got) {
            ::close(c.fd);  // not our launch
            c.fd = -1;
            break;
          }
          c.node = node;
          ++hellos;
          c.in.erase(0, nl + 1);
          continue;
        }
        char kind = 0;
        int rank = 0;
        long a = 0, b = 0;
        const int fields = std::sscanf(head.c_str(), "%c %d %ld %ld", &kind, &rank, &a, &b);
        if ((kind == 'O' || kind == 'E' || kind == 'F') && fields >= 3) {
          if (c.in.size() < nl + 1 + static_cast<size_t>(a)) break;  // the rest is on its way
          const std::string data = c.in.substr(nl + 1, static_cast<size_t>(a));
          c.in.erase(0, nl + 1 + static_cast<size_t>(a));
          if (kind == 'F') {
            std::cerr << "srun: error: " << data << "\n";
            exit.code = std::max(exit.code, 2);
            waiting.erase(rank);
          } else {
            sink.Write(rank, kind == 'O', data);
          }
          continue;
        }
        c.in.erase(0, nl + 1);
        if (kind != 'X' || fields != 4) continue;
        waiting.erase(rank);
        if ((a != 0 || b != 0) && launch.kill_on_bad_exit && !terminating && !waiting.empty()) {
          terminating = true;
          terminate_after = true;
        }
        if (b != 0) {
          std::cerr << "srun: error: " << c.node << ": task " << rank << ": "
                    << strsignal(static_cast<int>(b)) << "\n";
          exit.code = std::max(exit.code, 128 + static_cast<int>(b));
          exit.signal = static_cast<int>(b);
        } else if (a != 0) {
          std::cerr << "srun: error: " << c.node << ": task " << rank << ": Exited with exit code "
                    << a << "\n";
          exit.code = std::max(exit.code, static_cast<int>(a));
        }
      }
    }
    if (terminate_after) {
      // -K: the others end too (SIGTERM to every node's tasks).
      terminate_after = false;
      std::cerr << "srun: launch/slurm: _step_signal: Terminating StepId=" << launch.job_id << "."
                << launch.step_id << "\n";
      for (const Caller& other : callers) {
        if (other.fd >= 0) (void)!::send(other.fd, "S 15\n", 5, MSG_NOSIGNAL);
      }
    }
    std::erase_if(callers, [](const Caller& c) { return c.fd < 0; });
    if (!waiting.empty() && callers.empty() && hellos == launch.nodes.size()) {
      std::cerr << "srun: error: lost the connection to the tasks of " << waiting.size()
                << " task(s)\n";
      exit.code = std::max(exit.code, 2);
      break;
    }
  }
  sink.Flush();
  if (terminating) {
    std::cerr << "srun: Force Terminated StepId=" << launch.job_id << "." << launch.step_id << "\n";
  }
  for (const Caller& c : callers) ::close(c.fd);
  ::close(listener);
  return exit;
}

}  // namespace muster::cli

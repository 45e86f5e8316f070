#include "cli/srun_remote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "cli/step_attach.h"
#include "cli/step_signals.h"
#include "cli/task_ends.h"
#include "cli/task_lines.h"
#include "core/step_messages.h"
#include "util/hostname.h"
#include "util/send_all.h"
#include "util/strings.h"
#include "util/tcp.h"

namespace muster::cli {
namespace {

// How long the launchers have to call back before srun gives up on them.
constexpr auto kConnectWait = std::chrono::seconds(60);
// How long srun waits for the agent of a step's node to reconnect.
constexpr auto kAgentAwayWait = std::chrono::seconds(15);

// Where each task's output goes.
class Sink {
 public:
  // A terminal's output (--pty) goes on as it comes: a prompt ends no line.
  explicit Sink(const RemoteLaunch& launch)
      : launch_(launch), lines_(launch.label, launch.unbuffered || launch.pty) {}
  ~Sink() {
    for (auto& [path, f] : files_) std::fclose(f);
  }

  // srun's own stdout and stderr get whole lines (cli/task_lines.h);
  // a task's -o/-e file gets what comes.
  void Write(int rank, bool is_out, const std::string& data) {
    FILE* to = Target(rank, is_out);
    if (to != (is_out ? stdout : stderr)) {
      std::fwrite(data.data(), 1, data.size(), to);
      std::fflush(to);
      return;
    }
    lines_.Write(rank, is_out, data, to);
  }

  // Each task's last partial line.
  void Flush() {
    lines_.Flush();
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
  TaskLines lines_;
};

struct Caller {
  int fd = -1;
  std::string in;
  std::string node;  // set once its HELLO checked out
  std::deque<std::string> fence_parts;  // --mpi=pmix: its parts of fences to come
};

// srun's terminal in raw mode while --pty runs (every key, Ctrl-C
// included, goes to the remote program), as it was after.
class RawTerminal {
 public:
  explicit RawTerminal(int fd) : fd_(fd) {
    if (::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    active_ = ::tcsetattr(fd_, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

winsize TerminalSize() {
  winsize size{};
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &size) != 0) size = {};
  return size;
}

// --mpi=pmix: the step's nodes and their ranks, which every node's PMIx
// server registers.
nlohmann::json PmixLayout(const RemoteLaunch& launch) {
  nlohmann::json nodes = nlohmann::json::array(), ranks = nlohmann::json::array();
  for (const RemoteNodeTasks& n : launch.nodes) {
    nodes.push_back(n.node);
    nlohmann::json mine = nlohmann::json::array();
    for (const auto& [rank, env] : n.tasks) mine.push_back(rank);
    ranks.push_back(mine);
  }
  return {{"nodes", nodes}, {"ranks", ranks}};
}

nlohmann::json IoJson(const RemoteLaunch& launch, const winsize& size) {
  nlohmann::json in = launch.input.kind == StdinTarget::kAll    ? nlohmann::json("all")
                      : launch.input.kind == StdinTarget::kNone ? nlohmann::json("none")
                                                                : nlohmann::json(launch.input.rank);
  return {{"stdin", in}, {"pty", launch.pty}, {"rows", size.ws_row}, {"cols", size.ws_col}};
}

// What one step's srun keeps track of while it runs.
class StepRelay {
 public:
  StepRelay(const RemoteLaunch& launch, std::string token, AttachHub& hub)
      : launch_(launch),
        token_(std::move(token)),
        hub_(hub),
        sink_(launch),
        interrupts_(
            StepId(), launch.kill_wait_s, [this](int sig) { Signal(sig); },
            [this] { PrintTaskStates(StepId(), state_); }),
        ends_(NodesOf(launch), std::cerr) {
    if (launch.time_limit_s > 0) {
      std::vector<std::string> nodes;
      for (const RemoteNodeTasks& n : launch.nodes) nodes.push_back(n.node);
      interrupts_.SetTimeLimit(
          StepInterrupts::Clock::now() + std::chrono::seconds(launch.time_limit_s), nodes);
    }
    for (const RemoteNodeTasks& n : launch.nodes) {
      for (const auto& [rank, env] : n.tasks) {
        state_[rank] = "unknown";
        node_of_[rank] = n.node;
        if (launch.input.Takes(rank)) stdin_nodes_.insert(n.node);
      }
    }
    waiting_ = state_.size();
  }

  static std::map<int, std::string> NodesOf(const RemoteLaunch& launch) {
    std::map<int, std::string> out;
    for (const RemoteNodeTasks& n : launch.nodes) {
      for (const auto& [rank, env] : n.tasks) out[rank] = n.node;
    }
    return out;
  }

  bool Done() const { return waiting_ == 0; }
  size_t hellos() const { return hellos_; }
  std::vector<Caller>& callers() { return callers_; }
  StepExit exit() const {
    StepExit out = exit_;
    out.timed_out = interrupts_.timed_out();
    return out;
  }
  void Fail(int code) { exit_.code = std::max(exit_.code, code); }

  // Reads what a launcher sent; false once it hung up or is not ours.
  bool Receive(Caller& c) {
    char buf[65536];
    ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    c.in.append(buf, static_cast<size_t>(n));
    for (;;) {
      const size_t nl = c.in.find('\n');
      if (nl == std::string::npos) return true;
      const std::string head = c.in.substr(0, nl);
      if (c.node.empty()) {
        char got[80] = "", node[256] = "";
        if (std::sscanf(head.c_str(), "HELLO %79s %255s", got, node) != 2 || token_ != got) {
          return false;  // not our launch
        }
        c.node = node;
        ++hellos_;
        for (auto& [rank, state] : state_) {
          if (node_of_[rank] == c.node) state = "running";
        }
        // What the step's tasks were sent before this launcher called
        // (a time limit or Ctrl-C during the launch) reaches its tasks too.
        for (int sig : signalled_) util::SendAll(c.fd, fmt::format("S {}\n", sig));
        c.in.erase(0, nl + 1);
        continue;
      }
      char kind = 0;
      int rank = 0;
      long a = 0, b = 0, rss = -1, cpu = 0;
      const int fields =
          std::sscanf(head.c_str(), "%c %d %ld %ld %ld %ld", &kind, &rank, &a, &b, &rss, &cpu);
      if (kind == 'C' && fields >= 2) {
        // --mpi=pmix: a node's part of a fence.
        long length = 0;
        if (std::sscanf(head.c_str(), "C %ld", &length) != 1 || length < 0) return false;
        if (c.in.size() < nl + 1 + static_cast<size_t>(length)) return true;
        c.fence_parts.push_back(c.in.substr(nl + 1, static_cast<size_t>(length)));
        c.in.erase(0, nl + 1 + static_cast<size_t>(length));
        CompleteFence();
        continue;
      }
      if ((kind == 'O' || kind == 'E' || kind == 'F') && fields >= 3) {
        if (c.in.size() < nl + 1 + static_cast<size_t>(a)) return true;  // the rest is on its way
        const std::string data = c.in.substr(nl + 1, static_cast<size_t>(a));
        c.in.erase(0, nl + 1 + static_cast<size_t>(a));
        if (kind == 'F') {
          std::cerr << "srun: error: " << data << "\n";
          Fail(2);
          ends_.Ended(rank, "");
          Ended(rank, "exited abnormally");
          hub_.TaskEnded(rank, 2, 0);
        } else {
          sink_.Write(rank, kind == 'O', data);
          hub_.Output(rank, kind == 'O', data);
        }
        continue;
      }
      c.in.erase(0, nl + 1);
      if (kind != 'X' || fields < 4) continue;
      exit_.max_rss_kb = std::max<int64_t>(exit_.max_rss_kb, rss);
      exit_.total_cpu_ms += std::max(cpu, 0L);
      Ended(rank, a != 0 || b != 0 ? "exited abnormally" : "exited");
      hub_.TaskEnded(rank, static_cast<int>(a), static_cast<int>(b));
      if (b != 0) {
        ends_.Ended(rank, strsignal(static_cast<int>(b)));
        exit_.code = std::max(exit_.code, 128 + static_cast<int>(b));
        exit_.signal = static_cast<int>(b);
      } else if (a != 0) {
        ends_.Ended(rank, fmt::format("Exited with exit code {}", a));
        exit_.code = std::max(exit_.code, static_cast<int>(a));
      } else {
        ends_.Ended(rank, "");
      }
      if ((a != 0 || b != 0) && launch_.kill_on_bad_exit && !killing_ && waiting_ > 0) {
        killing_ = true;
        // -K: the others end too (SIGTERM to every node's tasks), once
        // Slurm's line has said which task failed.
        ends_.Flush(/*all=*/true);
        std::cerr << "srun: launch/slurm: _step_signal: Terminating StepId=" << StepId() << "\n";
        Signal(SIGTERM);
      }
    }
  }

  // Once every node gave its part of a fence: all the parts, in the
  // step's node order, to every node.
  void CompleteFence() {
    std::map<std::string, Caller*> by_node;
    for (Caller& c : callers_) {
      if (c.fd >= 0 && !c.node.empty()) by_node[c.node] = &c;
    }
    if (by_node.size() < launch_.nodes.size()) return;
    std::string all;
    for (const RemoteNodeTasks& n : launch_.nodes) {
      auto it = by_node.find(n.node);
      if (it == by_node.end() || it->second->fence_parts.empty()) return;
    }
    for (const RemoteNodeTasks& n : launch_.nodes) {
      Caller* c = by_node[n.node];
      all += c->fence_parts.front();
      c->fence_parts.pop_front();
    }
    const std::string frame = fmt::format("C {}\n", all.size()) + all;
    for (const auto& [node, c] : by_node) util::SendAll(c->fd, frame);
  }

  // A signal to every task.
  void Signal(int sig) {
    const std::string frame = fmt::format("S {}\n", sig);
    for (const Caller& c : callers_) {
      if (c.fd >= 0 && !c.node.empty()) util::SendAll(c.fd, frame);
    }
    if (hellos_ < launch_.nodes.size()) signalled_.push_back(sig);
  }

  // A piece of stdin (empty: its end) for the tasks that take srun's
  // (kAllTasks), or for task `rank` alone.
  static constexpr int kAllTasks = -1;
  void ToStdin(int rank, std::string_view data) {
    const std::string frame = EncodeAttachFrame({'I', rank, 0, 0, std::string(data)});
    auto node = node_of_.find(rank);
    for (const Caller& c : callers_) {
      if (c.fd < 0 || !stdin_nodes_.contains(c.node)) continue;
      if (rank == kAllTasks || (node != node_of_.end() && node->second == c.node)) {
        util::SendAll(c.fd, frame);
      }
    }
  }

  // The new size of srun's terminal, for task 0's.
  void Resize(const winsize& size) {
    const std::string frame = fmt::format("W {} {}\n", size.ws_row, size.ws_col);
    for (const Caller& c : callers_) {
      if (c.fd >= 0 && c.node == node_of_[0]) util::SendAll(c.fd, frame);
    }
  }

  // srun's answer to a signal of its own (see the header).
  void HandleSignal(int sig) {
    if (sig == SIGWINCH) {
      Resize(TerminalSize());
    } else {
      interrupts_.Handle(sig);
    }
  }

  void CheckDeadlines() {
    interrupts_.CheckDeadlines();
    ends_.Flush();
  }
  // The sooner of the signals' deadlines and a failed task's line (-1:
  // neither).
  int PollTimeoutMs() const {
    const int a = interrupts_.PollTimeoutMs();
    const int b = ends_.PollTimeoutMs();
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
  }

  void Finish() {
    sink_.Flush();
    ends_.Flush(/*all=*/true);
    if (killing_) std::cerr << "srun: Force Terminated StepId=" << StepId() << "\n";
  }

 private:
  std::string StepId() const { return fmt::format("{}.{}", launch_.job_id, launch_.step_id); }

  void Ended(int rank, const char* how) {
    auto it = state_.find(rank);
    if (it == state_.end() || it->second == "exited" || it->second == "exited abnormally") return;
    it->second = how;
    --waiting_;
  }

  const RemoteLaunch& launch_;
  const std::string token_;
  AttachHub& hub_;
  Sink sink_;
  std::vector<Caller> callers_;
  std::map<int, std::string> state_;  // by rank: unknown, running, exited, ...
  std::map<int, std::string> node_of_;
  std::set<std::string> stdin_nodes_;
  size_t waiting_ = 0;
  size_t hellos_ = 0;
  StepExit exit_;
  bool killing_ = false;  // -K
  // Signals sent while some launchers had not called yet, for them.
  std::vector<int> signalled_;
  StepInterrupts interrupts_;
  TaskEndLines ends_;
};

}  // namespace

util::Result<StepExit> RunRemoteStep(const Client& client, const RemoteLaunch& launch,
                                     AttachHub& hub) {
  int port = 0;
  const int listener = util::ListenTcp(&port);
  if (listener < 0) {
    return util::Unavailable(std::string("cannot listen for the tasks' output: ") +
                             std::strerror(errno));
  }
  const std::string token = util::RandomToken();
  // One launch per job: a heterogeneous step's parts are steps of their
  // components, each with its own command.
  std::vector<std::pair<const RemoteNodeTasks*, nlohmann::json>> launches;  // first node, nodes
  for (const RemoteNodeTasks& n : launch.nodes) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& [rank, env] : n.tasks) tasks.push_back({{"rank", rank}, {"env", env}});
    auto same = std::find_if(launches.begin(), launches.end(),
                             [&](const auto& l) { return l.first->job_id == n.job_id; });
    if (same == launches.end()) same = launches.insert(launches.end(), {&n, nlohmann::json::array()});
    same->second.push_back({{"node", n.node}, {"tasks", tasks}});
  }
  // Caught before the launch, so no signal in between is lost.
  SignalCatcher signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH});
  std::optional<RawTerminal> raw;
  if (launch.pty) raw.emplace(STDIN_FILENO);
  for (const auto& [first, nodes] : launches) {
    const nlohmann::json request = {{"io_host", util::HostName()},
                                    {"io_port", port},
                                    {"token", token},
                                    {"argv", first->argv.empty() ? launch.argv : first->argv},
                                    {"work_dir", launch.work_dir},
                                    {"io", IoJson(launch, launch.pty ? TerminalSize() : winsize{})},
                                    {"cpu_bind",
                                     {{"cores", launch.cpu_bind.cores},
                                      {"verbose", launch.cpu_bind.verbose},
                                      {"cpus_per_task", launch.cpu_bind.cpus_per_task}}},
                                    {"pmix", launch.pmix ? PmixLayout(launch) : nlohmann::json()},
                                    {"nodes", nodes}};
    const std::string target =
        fmt::format("/v1/jobs/{}/steps/{}/launch",
                    first->job_id.empty() ? launch.job_id : first->job_id, launch.step_id);
    util::Result<Response> resp = client.Post(target, request);
    // An agent away for a moment (reconnecting after musterd's restart) is
    // waited for, as long as it may take to come back.
    const auto give_up = std::chrono::steady_clock::now() + kAgentAwayWait;
    while (resp.ok() && resp->status != 200 &&
           ErrorText(*resp).starts_with(core::kStepAgentAway) &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      resp = client.Post(target, request);
    }
    if (!resp.ok() || resp->status != 200) {
      // Launchers already asked find no srun to call back, and start nothing.
      ::close(listener);
      return util::Unavailable(resp.ok() ? ErrorText(*resp) : resp.status().message());
    }
  }

  StepRelay relay(launch, token, hub);
  std::vector<Caller>& callers = relay.callers();
  const auto deadline = std::chrono::steady_clock::now() + kConnectWait;
  bool stdin_open = launch.input.kind != StdinTarget::kNone;
  while (!relay.Done()) {
    // srun's stdin is read once every node's tasks are there to take it.
    const bool read_stdin = stdin_open && relay.hellos() == launch.nodes.size();
    std::vector<pollfd> fds{{listener, POLLIN, 0},
                            {signals.fd(), POLLIN, 0},
                            {read_stdin ? STDIN_FILENO : -1, POLLIN, 0}};
    constexpr size_t kFirstCaller = 3;
    for (const Caller& c : callers) fds.push_back({c.fd, POLLIN, 0});
    const size_t first_hub = fds.size();
    hub.AddPollFds(&fds);
    if (relay.hellos() < launch.nodes.size() && std::chrono::steady_clock::now() > deadline) {
      std::cerr << "srun: error: the tasks of " << launch.nodes.size() - relay.hellos()
                << " node(s) never started (see their agents' logs)\n";
      relay.Fail(2);
      break;
    }
    const int wait_ms = relay.PollTimeoutMs();
    if (::poll(fds.data(), fds.size(), wait_ms < 0 ? 1000 : std::min(wait_ms, 1000)) < 0 &&
        errno != EINTR) {
      break;
    }
    if (fds[0].revents & POLLIN) {
      int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) callers.push_back({fd, {}, {}});
    }
    if (fds[1].revents & POLLIN) {
      for (int sig : signals.Take()) relay.HandleSignal(sig);
    }
    relay.CheckDeadlines();
    if (fds[2].revents != 0) {
      char buf[65536];
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
      if (n > 0) {
        relay.ToStdin(StepRelay::kAllTasks, std::string_view(buf, static_cast<size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        relay.ToStdin(StepRelay::kAllTasks, {});
        stdin_open = false;
      }
    }
    for (size_t i = kFirstCaller; i < first_hub; ++i) {
      if (fds[i].revents == 0) continue;
      Caller& c = callers[i - kFirstCaller];
      if (!relay.Receive(c)) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    hub.Serve(std::span(fds).subspan(first_hub),
              [&relay](int rank, std::string_view data) { relay.ToStdin(rank, data); });
    std::erase_if(callers, [](const Caller& c) { return c.fd < 0; });
    if (!relay.Done() && callers.empty() && relay.hellos() == launch.nodes.size()) {
      std::cerr << "srun: error: lost the connection to the tasks\n";
      relay.Fail(2);
      break;
    }
  }
  raw.reset();
  relay.Finish();
  hub.Close();
  for (const Caller& c : callers) ::close(c.fd);
  ::close(listener);
  return relay.exit();
}

}  // namespace muster::cli

// Durable submissions straight through musterd's API, without a CLI process
// per job, so the controller's own ceiling shows:
//   api_bench SOCKET WORK_DIR [--clients N] [--jobs M] [--run]
// N clients (threads, one kept-alive unix-socket connection each) POST M
// jobs in all, each request waiting for its reply, which musterd sends only
// once the submission is on disk (fdatasync). The jobs are held unless
// --run is given; then each is a trivial `true` and the figure is jobs
// completed per second, from the first submission to the last end (ends
// are read back with GET /v1/jobs/<id>). Each request carries this
// process's environment, as sbatch's default --export=ALL does. Prints one
// line of figures, or an error and exit 1.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// One kept-alive HTTP/1.1 connection; replies are read by Content-Length.
class Connection {
 public:
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool Open(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (fd_ < 0 || path.size() >= sizeof(addr.sun_path)) return false;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  // Sends one request and returns the reply's status and body (nullopt when
  // the connection broke).
  std::optional<std::pair<int, std::string>> Call(const std::string& method, const std::string& target,
                                                  const std::string& body) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: musterd\r\n";
    if (!body.empty()) req += "Content-Type: application/json\r\n";
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    for (std::string_view left = req; !left.empty();) {
      ssize_t n = ::send(fd_, left.data(), left.size(), MSG_NOSIGNAL);
      if (n <= 0) return std::nullopt;
      left.remove_prefix(static_cast<size_t>(n));
    }
    size_t head_end;
    while ((head_end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (!ReadMore()) return std::nullopt;
    }
    std::string head = in_.substr(0, head_end);
    int status = std::atoi(head.c_str() + head.find(' ') + 1);
    size_t length = 0;
    for (std::string_view key : {"Content-Length: ", "content-length: "}) {
      size_t at = head.find(key);
      if (at != std::string::npos) length = std::strtoul(head.c_str() + at + key.size(), nullptr, 10);
    }
    while (in_.size() < head_end + 4 + length) {
      if (!ReadMore()) return std::nullopt;
    }
    std::string reply = in_.substr(head_end + 4, length);
    in_.erase(0, head_end + 4 + length);
    return std::make_pair(status, std::move(reply));
  }

 private:
  bool ReadMore() {
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    in_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string in_;
};

struct Options {
  std::string socket;
  std::string work_dir;
  int clients = 1;
  int jobs = 1000;
  bool run = false;
};

std::optional<Options> ParseArgs(int argc, char** argv) {
  if (argc < 3) return std::nullopt;
  Options o;
  o.socket = argv[1];
  o.work_dir = argv[2];
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--clients" && i + 1 < argc) {
      o.clients = std::atoi(argv[++i]);
    } else if (a == "--jobs" && i + 1 < argc) {
      o.jobs = std::atoi(argv[++i]);
    } else if (a == "--run") {
      o.run = true;
    } else {
      return std::nullopt;
    }
  }
  if (o.clients < 1 || o.jobs < o.clients) return std::nullopt;
  return o;
}

std::string SubmitBody(const Options& o) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  nlohmann::json j = {{"script", "#!/bin/sh\ntrue\n"}, {"work_dir", o.work_dir}, {"name", "api"},
                      {"std_out", "/dev/null"}, {"hold", !o.run}, {"environment", env}};
  return j.dump();
}

// Waits until every job in [first, last] has ended; false on an error.
bool WaitForEnds(const Options& o, uint32_t first, uint32_t last) {
  Connection c;
  if (!c.Open(o.socket)) return false;
  for (uint32_t id = first; id <= last;) {
    auto r = c.Call("GET", "/v1/jobs/" + std::to_string(id), "");
    if (!r || r->first != 200) return false;
    nlohmann::json j = nlohmann::json::parse(r->second, nullptr, false);
    std::string state = j.is_object() ? j.value("state", "") : "";
    if (state == "PENDING" || state == "RUNNING" || state == "COMPLETING") {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    ++id;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> o = ParseArgs(argc, argv);
  if (!o) {
    std::fprintf(stderr, "usage: api_bench SOCKET WORK_DIR [--clients N] [--jobs M] [--run]\n");
    return 2;
  }
  const std::string body = SubmitBody(*o);
  std::atomic<bool> failed{false};
  // Each client's lowest and highest job id.
  std::vector<std::pair<uint32_t, uint32_t>> ids(static_cast<size_t>(o->clients), {UINT32_MAX, 0});
  std::vector<std::thread> clients;
  const auto t0 = Clock::now();
  for (int c = 0; c < o->clients; ++c) {
    const int share = o->jobs / o->clients + (c < o->jobs % o->clients ? 1 : 0);
    clients.emplace_back([&, c, share] {
      Connection conn;
      if (!conn.Open(o->socket)) {
        failed = true;
        return;
      }
      for (int i = 0; i < share && !failed; ++i) {
        auto r = conn.Call("POST", "/v1/jobs", body);
        nlohmann::json j = r ? nlohmann::json::parse(r->second, nullptr, false) : nlohmann::json();
        if (!r || r->first != 201 || !j.is_object() || !j.contains("job_id")) {
          std::fprintf(stderr, "api_bench: submission failed: %s\n",
                       r ? r->second.c_str() : "connection lost");
          failed = true;
          return;
        }
        uint32_t id = j["job_id"].get<uint32_t>();
        auto& [lo, hi] = ids[static_cast<size_t>(c)];
        lo = std::min(lo, id);
        hi = std::max(hi, id);
      }
    });
  }
  for (auto& t : clients) t.join();
  if (failed) return 1;
  const double submit_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!o->run) {
    std::printf("%d durable API submissions (held jobs), %d client(s): %.2f s = %.0f submissions/s\n",
                o->jobs, o->clients, submit_s, o->jobs / submit_s);
    return 0;
  }
  uint32_t first_id = UINT32_MAX;
  uint32_t last_id = 0;
  for (auto [lo, hi] : ids) {
    first_id = std::min(first_id, lo);
    last_id = std::max(last_id, hi);
  }
  if (!WaitForEnds(*o, first_id, last_id)) {
    std::fprintf(stderr, "api_bench: cannot read the jobs' ends\n");
    return 1;
  }
  const double all_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("%d trivial jobs through the API, %d client(s): completed in %.2f s = %.0f jobs/s "
              "(submission took %.2f s)\n",
              o->jobs, o->clients, all_s, o->jobs / all_s, submit_s);
  return 0;
}

#include "ctld/hook_runner.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <memory>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "util/subprocess.h"

namespace muster::ctld {

namespace {

struct Running {
  Running(boost::asio::io_context& io, int pidfd, int out_fd)
      : pidfd(io, pidfd), out(io, out_fd), timer(io) {}
  std::string path;
  int timeout_s = 0;
  pid_t pid = -1;
  boost::asio::posix::stream_descriptor pidfd;
  boost::asio::posix::stream_descriptor out;
  boost::asio::steady_timer timer;
  std::array<char, 1024> buf{};
  std::string output;
  bool timed_out = false;
  std::function<void(util::Status)> done;
};

void ReadOutput(const std::shared_ptr<Running>& r) {
  r->out.async_read_some(boost::asio::buffer(r->buf), [r](boost::system::error_code ec, size_t n) {
    r->output.append(r->buf.data(), n);
    if (r->output.size() > 4096) r->output.erase(0, r->output.size() - 4096);
    if (!ec) ReadOutput(r);
  });
}

}  // namespace

void HookRunner::Run(const std::string& path, const std::vector<std::string>& env, int timeout_s,
                     std::function<void(util::Status)> done) {
  util::Result<util::Child> child = util::SpawnCapturing(path, env);
  if (!child.ok()) {
    done(child.status());
    return;
  }
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child->pid, 0));
  if (pidfd < 0) {
    // Cannot watch it: wait for it here (a kernel before 5.3).
    ::close(child->out_fd);
    int status = 0;
    ::waitpid(child->pid, &status, 0);
    done(util::HookOutcome(path, status, false, timeout_s, ""));
    return;
  }
  auto r = std::make_shared<Running>(io_, pidfd, child->out_fd);
  boost::system::error_code nec;
  r->out.non_blocking(true, nec);  // drained at its end without waiting
  r->path = path;
  r->timeout_s = timeout_s;
  r->pid = child->pid;
  r->done = std::move(done);
  ReadOutput(r);
  r->timer.expires_after(std::chrono::seconds(timeout_s));
  r->timer.async_wait([r](boost::system::error_code ec) {
    if (ec) return;
    r->timed_out = true;
    ::kill(r->pid, SIGKILL);
  });
  r->pidfd.async_wait(
      boost::asio::posix::stream_descriptor::wait_read, [r](boost::system::error_code ec) {
        if (ec) return;
        int status = 0;
        ::waitpid(r->pid, &status, 0);
        r->timer.cancel();
        // What it wrote before it ended is in the pipe now.
        boost::system::error_code rec;
        std::array<char, 4096> rest{};
        for (;;) {
          const size_t n = r->out.read_some(boost::asio::buffer(rest), rec);
          if (rec || n == 0) break;
          r->output.append(rest.data(), n);
        }
        r->out.close(rec);
        r->done(util::HookOutcome(r->path, status, r->timed_out, r->timeout_s, r->output));
      });
}

}  // namespace muster::ctld

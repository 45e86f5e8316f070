#include "cli/step_attach.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "cli/client.h"
#include "util/tcp.h"

namespace muster::cli {

int TakeAttachFrame(std::string& buffer, AttachFrame* frame) {
  const size_t nl = buffer.find('\n');
  if (nl == std::string::npos) return buffer.size() > 128 ? -1 : 0;
  const std::string head = buffer.substr(0, nl);
  AttachFrame f;
  long a = 0, b = 0, c = 0;
  char kind = 0, extra = 0;
  const int fields = std::sscanf(head.c_str(), "%c %ld %ld %ld %c", &kind, &a, &b, &c, &extra);
  size_t length = 0;
  f.kind = kind;
  if (kind == 'D' && head == "D") {
  } else if (kind == 'X' && fields == 4) {
    f.rank = static_cast<int>(a);
    f.exit_code = static_cast<int>(b);
    f.signal = static_cast<int>(c);
  } else if ((kind == 'O' || kind == 'E') && fields == 3 && b >= 0) {
    f.rank = static_cast<int>(a);
    length = static_cast<size_t>(b);
  } else if (kind == 'I' && fields == 3 && a >= 0 && b >= -1) {
    length = static_cast<size_t>(a);
    f.rank = static_cast<int>(b);
  } else {
    return -1;
  }
  if (buffer.size() < nl + 1 + length) return 0;
  f.data = buffer.substr(nl + 1, length);
  buffer.erase(0, nl + 1 + length);
  *frame = std::move(f);
  return 1;
}

std::string EncodeAttachFrame(const AttachFrame& f) {
  switch (f.kind) {
    case 'I': return fmt::format("I {} {}\n", f.data.size(), f.rank) + f.data;
    case 'O':
    case 'E': return fmt::format("{} {} {}\n", f.kind, f.rank, f.data.size()) + f.data;
    case 'X': return fmt::format("X {} {} {}\n", f.rank, f.exit_code, f.signal);
    default: return "D\n";
  }
}

AttachHub::AttachHub() : token_(util::RandomToken()) { listener_ = util::ListenTcp(&port_); }

AttachHub::~AttachHub() {
  for (Attached& a : attached_) Drop(a);
  if (listener_ >= 0) ::close(listener_);
}

bool AttachHub::Register(const Client& client, const std::string& job_id, int step_id,
                         const std::vector<std::pair<std::string, std::vector<int>>>& ranks) {
  if (listener_ < 0) return false;
  nlohmann::json layout = nlohmann::json::array();
  for (const auto& [node, tasks] : ranks) layout.push_back({{"node", node}, {"ranks", tasks}});
  const nlohmann::json body = {{"addresses", util::LocalAddresses()},
                               {"port", port_},
                               {"token", token_},
                               {"layout", layout}};
  auto resp = client.Post(fmt::format("/v1/jobs/{}/steps/{}/attach", job_id, step_id), body);
  return resp.ok() && resp->status == 200;
}

void AttachHub::AddPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({listener_, POLLIN, 0});
  for (const Attached& a : attached_) {
    fds->push_back({a.fd, static_cast<short>(POLLIN | (a.out.empty() ? 0 : POLLOUT)), 0});
  }
}

void AttachHub::Serve(std::span<const pollfd> ready, const Input& input) {
  if (ready.empty()) return;
  if (ready[0].revents & POLLIN) {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) attached_.push_back({fd, false, {}, {}});
  }
  for (size_t i = 1; i < ready.size() && i - 1 < attached_.size(); ++i) {
    Attached& a = attached_[i - 1];
    if (ready[i].revents & POLLOUT) Flush(a);
    if (a.fd < 0 || !(ready[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    const ssize_t n = ::recv(a.fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      Drop(a);
      continue;
    }
    a.in.append(buf, static_cast<size_t>(n));
    if (!a.joined) {
      const size_t nl = a.in.find('\n');
      if (nl == std::string::npos) {
        if (a.in.size() > 256) Drop(a);
        continue;
      }
      if (a.in.substr(0, nl) != "HELLO " + token_) {
        Drop(a);  // not told where by musterd
        continue;
      }
      a.in.erase(0, nl + 1);
      a.joined = true;
      std::string first;
      for (const std::string& frame : replay_) first += frame;
      Send(a, first + ended_);
    }
    AttachFrame frame;
    int took;
    while (a.fd >= 0 && (took = TakeAttachFrame(a.in, &frame)) != 0) {
      if (took < 0 || frame.kind != 'I') {
        Drop(a);
        break;
      }
      input(frame.rank, frame.data);
    }
  }
  std::erase_if(attached_, [](const Attached& a) { return a.fd < 0; });
}

void AttachHub::Output(int rank, bool is_out, std::string_view data) {
  if (listener_ < 0 || data.empty()) return;
  std::string frame = EncodeAttachFrame({is_out ? 'O' : 'E', rank, 0, 0, std::string(data)});
  for (Attached& a : attached_) {
    if (a.joined) Send(a, frame);
  }
  replay_bytes_ += frame.size();
  replay_.push_back(std::move(frame));
  while (replay_bytes_ > kReplayBytes && replay_.size() > 1) {
    replay_bytes_ -= replay_.front().size();
    replay_.pop_front();
  }
}

void AttachHub::TaskEnded(int rank, int exit_code, int signal) {
  if (listener_ < 0) return;
  const std::string frame = EncodeAttachFrame({'X', rank, exit_code, signal, {}});
  ended_ += frame;
  for (Attached& a : attached_) {
    if (a.joined) Send(a, frame);
  }
}

void AttachHub::Close() {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (Attached& a : attached_) {
    if (!a.joined) continue;
    a.out += "D\n";
    while (a.fd >= 0 && !a.out.empty() && std::chrono::steady_clock::now() < give_up) {
      pollfd p{a.fd, POLLOUT, 0};
      if (::poll(&p, 1, 100) > 0) Flush(a);
    }
  }
  for (Attached& a : attached_) Drop(a);
  attached_.clear();
}

void AttachHub::Send(Attached& a, std::string_view bytes) {
  a.out.append(bytes);
  Flush(a);
  if (a.out.size() > kMaxBacklog) Drop(a);
}

void AttachHub::Flush(Attached& a) {
  while (a.fd >= 0 && !a.out.empty()) {
    const ssize_t n = ::send(a.fd, a.out.data(), a.out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      Drop(a);
      return;
    }
    a.out.erase(0, static_cast<size_t>(n));
  }
}

void AttachHub::Drop(Attached& a) {
  if (a.fd >= 0) ::close(a.fd);
  a.fd = -1;
  a.out.clear();
}

}  // namespace muster::cli

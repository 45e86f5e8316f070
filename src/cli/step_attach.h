// sattach's way into a running step. srun listens on a port of its own host
// for sattach and tells musterd where (every address of its host, the port,
// a random token) and how the step's tasks are laid out; musterd gives that
// only to the job's user and operators. srun keeps the latest output for
// sattach's that come later (Slurm replays what its step daemon cached),
// and hands what they send to the tasks' stdin.
//
// From sattach, first "HELLO <token>\n", then
//   "I <length> <rank>\n" <bytes>   stdin for task <rank> (-1: every task
//                                   that takes srun's stdin); length 0: its end
// To sattach, once its HELLO checked out:
//   "O <rank> <length>\n" <bytes>   a piece of a task's stdout (the latest
//   "E <rank> <length>\n" <bytes>   ... of its stderr          kReplayBytes first)
//   "X <rank> <exit code> <signal>\n"  a task ended (every one so far first)
//   "D\n"                           the step ended; the connection closes
#pragma once

#include <poll.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace muster::cli {

class Client;

// A piece of what reached a task's stdin or left its stdout/stderr.
struct AttachFrame {
  char kind = 0;  // 'I', 'O', 'E', 'X', 'D'
  int rank = 0;
  int exit_code = 0;  // 'X'
  int signal = 0;     // 'X'
  std::string data;   // 'I', 'O', 'E'
};

// Takes the next whole frame (any of the above but HELLO) off the front of
// `buffer` into *frame: 1 when one was taken, 0 when more must arrive
// first, -1 when the stream is not one.
int TakeAttachFrame(std::string& buffer, AttachFrame* frame);

// The frame's bytes on the wire.
std::string EncodeAttachFrame(const AttachFrame& frame);

// srun's side: the listener and the sattach's that joined.
class AttachHub {
 public:
  // Where a stdin piece from sattach goes: task `rank` (-1: every one
  // that takes stdin); empty `data` ends it.
  using Input = std::function<void(int rank, std::string_view data)>;

  // How much output a sattach that joins late is first given.
  static constexpr size_t kReplayBytes = 1 << 20;
  // A sattach that falls this far behind is let go rather than waited for.
  static constexpr size_t kMaxBacklog = 8 << 20;

  AttachHub();
  ~AttachHub();
  AttachHub(const AttachHub&) = delete;
  AttachHub& operator=(const AttachHub&) = delete;

  // Where it listens; port 0 when it could not.
  int port() const { return listener_ >= 0 ? port_ : 0; }
  const std::string& token() const { return token_; }

  // Tells musterd where sattach finds step `step_id` of job `job_id`, whose
  // nodes run the tasks `ranks` (the same order); false when it could not
  // (the step runs, only sattach cannot reach it).
  bool Register(const Client& client, const std::string& job_id, int step_id,
                const std::vector<std::pair<std::string, std::vector<int>>>& ranks);

  // The listener and every sattach, for poll; Serve then takes the same
  // entries back with what poll found.
  void AddPollFds(std::vector<pollfd>* fds) const;
  void Serve(std::span<const pollfd> ready, const Input& input);

  void Output(int rank, bool is_out, std::string_view data);
  void TaskEnded(int rank, int exit_code, int signal);
  // The step ended: each sattach gets what is left and "D" (waiting at
  // most a moment for a slow one), and is let go.
  void Close();

 private:
  struct Attached {
    int fd = -1;
    bool joined = false;  // its HELLO checked out
    std::string in, out;
  };

  void Send(Attached& a, std::string_view bytes);
  void Flush(Attached& a);
  void Drop(Attached& a);

  int listener_ = -1;
  int port_ = 0;
  std::string token_;
  std::vector<Attached> attached_;
  std::deque<std::string> replay_;  // output frames, the latest kReplayBytes
  size_t replay_bytes_ = 0;
  std::string ended_;  // every "X" frame so far
};

}  // namespace muster::cli

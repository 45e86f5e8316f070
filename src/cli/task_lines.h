// Task output as srun and sattach pass it on: by whole lines, as Slurm's
// srun does unless -u, so that the lines of tasks writing at once never
// mix; each after its task's rank with -l ("3: text").
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace muster::cli {

class TaskLines {
 public:
  // `unbuffered` (-u): pieces go on as they come (unless `label`).
  TaskLines(bool label, bool unbuffered) : label_(label), unbuffered_(unbuffered) {}
  TaskLines(const TaskLines&) = delete;
  TaskLines& operator=(const TaskLines&) = delete;
  ~TaskLines() { Flush(); }

  // A piece of task `rank`'s stdout (or stderr) for `to`.
  void Write(int rank, bool is_out, std::string_view data, FILE* to) {
    if (unbuffered_ && !label_) {
      std::fwrite(data.data(), 1, data.size(), to);
      std::fflush(to);
      return;
    }
    auto& [acc, file] = pending_[{rank, is_out}];
    file = to;
    acc.append(data);
    size_t nl;
    while ((nl = acc.find('\n')) != std::string::npos) {
      if (label_) std::fprintf(to, "%d: ", rank);
      std::fwrite(acc.data(), 1, nl + 1, to);
      acc.erase(0, nl + 1);
    }
    std::fflush(to);
  }

  // Each task's last partial line (ended, with -l).
  void Flush() {
    for (auto& [key, pending] : pending_) {
      auto& [acc, to] = pending;
      if (acc.empty()) continue;
      if (label_) std::fprintf(to, "%d: ", key.first);
      std::fwrite(acc.data(), 1, acc.size(), to);
      if (label_) std::fputc('\n', to);
      std::fflush(to);
      acc.clear();
    }
  }

 private:
  bool label_, unbuffered_;
  // By (rank, stdout): the partial line and where it goes.
  std::map<std::pair<int, bool>, std::pair<std::string, FILE*>> pending_;
};

}  // namespace muster::cli

// srun's lines for tasks that failed, as Slurm 22.05 prints them: one per
// node and way of ending, naming the node and the tasks that ended so
// together ("srun: error: cpu01: tasks 0-2: Exited with exit code 3",
// "srun: error: cpu02: task 3: Killed"). Slurm's step daemon reports the
// tasks it finds ended at once in one message; here a task's end waits
// until every task of its node has ended, or at most kGather, for others
// of that node to join its line. Single-threaded; time is an argument.
#pragma once

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace muster::cli {

class TaskEndLines {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a failed task's line waits for others of its node.
  static constexpr std::chrono::milliseconds kGather{500};

  // `node_of`: every task's node, by rank. Lines go to `out`.
  TaskEndLines(std::map<int, std::string> node_of, std::ostream& out);
  TaskEndLines(const TaskEndLines&) = delete;
  TaskEndLines& operator=(const TaskEndLines&) = delete;

  // Task `rank` ended: `how` is Slurm's words for a failure ("Exited with
  // exit code 3", strsignal's "Killed"), empty for a clean exit (or a task
  // that never started), which counts toward its node's end only.
  void Ended(int rank, const std::string& how, Clock::time_point now = Clock::now());
  // Prints the lines that are due (a node whose tasks have all ended, a
  // line that waited kGather), or every line with `all`.
  void Flush(bool all = false, Clock::time_point now = Clock::now());
  // Milliseconds until a line is due, for poll(2); -1 when none waits.
  int PollTimeoutMs(Clock::time_point now = Clock::now()) const;

  // "0-2,5": ranks (ascending) in Slurm's range form.
  static std::string Ranges(const std::vector<int>& ranks);

 private:
  struct Line {
    std::string node;
    std::string how;
    std::vector<int> ranks;
    Clock::time_point first;
  };

  std::map<int, std::string> node_of_;
  std::map<std::string, int> left_;  // by node: tasks not ended yet
  std::vector<Line> pending_;        // in the order their first task ended
  std::ostream& out_;
};

}  // namespace muster::cli

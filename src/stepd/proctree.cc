#include "stepd/proctree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <charconv>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "stepd/spool.h"

namespace muster::stepd {
namespace {

// A fork bomb can keep producing new pids; after this many rescans the
// caller's next event (a SIGCHLD, the kill deadline) sweeps again.
constexpr int kMaxRescans = 64;

// Raw system calls: glibc 2.36's <sys/pidfd.h> lacks C++ linkage guards,
// and older glibcs have no wrappers at all.
int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

bool ParsePid(std::string_view s, pid_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Reads /proc/<pid>/stat; false when the process is gone.
bool ReadProcStat(pid_t pid, ProcStat* out) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];  // pid, comm (<= 64 bytes) and the fields we need fit easily
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof(buf));
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return false;
  return ParseProcStat(std::string_view(buf, static_cast<size_t>(n)), out);
}

std::vector<ProcStat> ScanProc() {
  std::vector<ProcStat> procs;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return procs;
  while (struct dirent* e = ::readdir(dir)) {
    pid_t pid;
    if (!ParsePid(e->d_name, &pid)) continue;
    ProcStat st;
    if (ReadProcStat(pid, &st)) procs.push_back(st);
  }
  ::closedir(dir);
  return procs;
}

// Sends the signals to the process `seen` describes, if that process still
// exists. Returns true if it was signalled.
bool SignalIfSame(const ProcStat& seen, std::span<const int> signals) {
  int pidfd = PidfdOpen(seen.pid);
  if (pidfd < 0 && errno != ENOSYS) return false;  // gone
  // With the pidfd held, the pid cannot be reused until it is closed, so
  // the stat read below describes the process the signal will reach (or one
  // that already exited, in which case pidfd_send_signal fails harmlessly).
  // A different start time means the pid was recycled since the scan.
  ProcStat now;
  bool same = ReadProcStat(seen.pid, &now) && now.start_time == seen.start_time && now.state != 'Z';
  bool sent = false;
  if (same) {
    for (int sig : signals) {
      int rc = pidfd >= 0 ? PidfdSendSignal(pidfd, sig) : ::kill(seen.pid, sig);
      sent = sent || rc == 0;
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return sent;
}

}  // namespace

bool ParseProcStat(std::string_view text, ProcStat* out) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return false;
  pid_t pid;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ParsePid(pid_text, &pid)) return false;
  // Fields 3.. (proc(5) numbering) follow ") ": state, ppid, ..., starttime (22).
  std::string_view rest = text.substr(close + 1);
  constexpr int kStateField = 3, kPpidField = 4, kStartTimeField = 22;
  ProcStat st;
  st.pid = pid;
  int field = kStateField;
  size_t pos = 0;
  while (field <= kStartTimeField) {
    while (pos < rest.size() && rest[pos] == ' ') ++pos;
    size_t end = rest.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view token = rest.substr(pos, end - pos);
    if (token.empty()) return false;
    if (field == kStateField) {
      if (token.size() != 1) return false;
      st.state = token[0];
    } else if (field == kPpidField) {
      if (!ParsePid(token, &st.ppid)) return false;
    } else if (field == kStartTimeField) {
      auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), st.start_time);
      if (ec != std::errc() || p != token.data() + token.size()) return false;
    }
    pos = end;
    ++field;
  }
  *out = st;
  return true;
}

std::vector<ProcStat> DescendantsIn(pid_t root, const std::vector<ProcStat>& procs) {
  std::unordered_map<pid_t, std::vector<const ProcStat*>> children;
  for (const ProcStat& p : procs) {
    if (p.pid != root) children[p.ppid].push_back(&p);
  }
  // Breadth-first from root: parents come before their children, and a
  // malformed cycle in the input cannot loop because each pid has one ppid.
  std::vector<ProcStat> out;
  std::vector<pid_t> frontier{root};
  std::unordered_set<pid_t> seen{root};
  while (!frontier.empty()) {
    std::vector<pid_t> next;
    for (pid_t parent : frontier) {
      auto it = children.find(parent);
      if (it == children.end()) continue;
      for (const ProcStat* c : it->second) {
        if (!seen.insert(c->pid).second) continue;
        next.push_back(c->pid);
        if (c->state != 'Z' && c->state != 'X') out.push_back(*c);
      }
    }
    frontier = std::move(next);
  }
  return out;
}

std::vector<pid_t> Descendants(pid_t root) {
  std::vector<pid_t> pids;
  for (const ProcStat& p : DescendantsIn(root, ScanProc())) pids.push_back(p.pid);
  return pids;
}

int SignalDescendants(pid_t root, std::span<const int> signals, std::unordered_set<pid_t>* done,
                      const ProcessFilter& select) {
  std::unordered_set<pid_t> local;
  std::unordered_set<pid_t>& signalled = done != nullptr ? *done : local;
  int count = 0;
  for (int round = 0; round < kMaxRescans; ++round) {
    bool found_new = false;
    for (const ProcStat& p : DescendantsIn(root, ScanProc())) {
      if (!signalled.insert(p.pid).second) continue;
      found_new = true;
      if (select && !select(p.pid)) continue;
      if (SignalIfSame(p, signals)) ++count;
    }
    if (!found_new) break;
  }
  return count;
}

bool StartedWithVariable(pid_t pid, std::string_view variable) {
  auto environ_text = ReadFileAt(AT_FDCWD, "/proc/" + std::to_string(pid) + "/environ");
  if (!environ_text.ok()) return false;
  const std::string& text = *environ_text;
  // Entries are NUL-terminated "NAME=value".
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\0', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view entry(text.data() + pos, end - pos);
    if (entry.size() > variable.size() && entry.substr(0, variable.size()) == variable &&
        entry[variable.size()] == '=') {
      return true;
    }
    pos = end + 1;
  }
  return false;
}

bool InJobStep(pid_t pid) { return StartedWithVariable(pid, "SLURM_STEP_ID"); }

}  // namespace muster::stepd

#include "stepd/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>

namespace muster::stepd {
namespace {

// Same bound as SignalDescendants: a fork bomb is swept again on the next event.
constexpr int kMaxRescans = 64;
constexpr auto kRemoveRetryDelay = std::chrono::milliseconds(10);

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}


bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<std::string> ReadText(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// O_CREAT only matters for the tests' fake trees: cgroupfs files exist (or
// the open fails, which is what we want for a missing controller).
util::Status WriteText(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return util::Unavailable(fmt::format("open {}: {}", path, strerror(errno)));
  ssize_t n;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return util::Unavailable(fmt::format("write \"{}\" to {}: {}", text, path, strerror(err)));
  }
  return util::Status::Ok();
}

// Writes `text` into `path` where the kernel has that file (optional
// features: memsw, memory.swap.max, cgroup.kill), setting *present (when
// given): one open instead of an access() and an open, each of which makes
// and drops a kernfs dentry and inode. No O_CREAT: absent stays absent.
util::Status WriteIfPresent(const std::string& path, std::string_view text, bool* present = nullptr) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (present != nullptr) *present = fd >= 0;
  if (fd < 0) {
    if (errno == ENOENT) return util::Status::Ok();
    return util::Unavailable(fmt::format("open {}: {}", path, strerror(errno)));
  }
  ssize_t n;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return util::Unavailable(fmt::format("write \"{}\" to {}: {}", text, path, strerror(err)));
  }
  return util::Status::Ok();
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

uint64_t ReadU64(const std::string& path) {
  std::optional<std::string> text = ReadText(path);
  std::optional<uint64_t> v = text ? ParseU64(*text) : std::nullopt;
  return v.value_or(0);
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<pid_t> ReadPids(const std::string& path) {
  std::vector<pid_t> pids;
  std::optional<std::string> text = ReadText(path);
  if (!text) return pids;
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec == std::errc() && end == line.data() + line.size() && pid > 0) pids.push_back(pid);
  }
  return pids;
}

util::Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return util::Status::Ok();
  return util::Unavailable(fmt::format("mkdir {}: {}", path, strerror(errno)));
}

// rmdir on cgroupfs succeeds with the control files present and answers
// EBUSY while processes are still leaving. ENOTEMPTY only comes from an
// ordinary directory (the tests' fake trees): the files are removed then.
util::Status RemoveDir(const std::string& path, int tries) {
  for (int i = 0; i < tries; ++i) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return util::Status::Ok();
    if (errno == ENOTEMPTY) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
        if (e.is_regular_file(ec)) std::filesystem::remove(e.path(), ec);
      }
      if (::rmdir(path.c_str()) == 0) return util::Status::Ok();
    }
    if (errno != EBUSY || i + 1 == tries) break;
    std::this_thread::sleep_for(kRemoveRetryDelay);
  }
  return util::Unavailable(fmt::format("rmdir {}: {}", path, strerror(errno)));
}

bool HasWord(std::string_view list, std::string_view word) {
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(pos, end - pos) == word) return true;
    pos = end + 1;
  }
  return false;
}

// mkdir `path`, and its parent first when that is missing (the first job
// on this host): one mkdir per job in the usual case. 0 or the errno.
int MakeDirAndParent(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0) return 0;
  if (errno != ENOENT) return errno;
  const std::string parent = path.substr(0, path.rfind('/'));
  if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return errno;
  return ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno;
}

// Creates the job's directory under `parent` (made here when missing) and
// returns its name: `base` (job_<id>). When that exists already the name gets
// muster-step's pid: emulated nodes on one host (or two local clusters) can
// run a step of the same job id at once, and one step must neither share
// the other's limit nor kill its processes. An existing job_<id> that is
// empty and more than a minute old is a crashed step's leftover: removed
// and taken, so old limits cannot get in the way (a step just starting has
// not had time to add its process yet, so a young empty one is left alone;
// the tests' fake trees stand for the kernel's control files with old
// directories made beforehand, used as they are).
util::Result<std::string> ClaimJobDir(const std::string& parent, const std::string& base) {
  std::string name = base;
  std::string path = parent + "/" + name;
  int err = MakeDirAndParent(path);
  if (err == 0) return name;
  if (err != EEXIST) return util::Unavailable(fmt::format("mkdir {}: {}", path, strerror(err)));
  struct stat st {};
  const bool stale = ReadPids(path + "/cgroup.procs").empty() && ::stat(path.c_str(), &st) == 0 &&
                     ::time(nullptr) - st.st_mtime > 60;
  if (stale) {
    if (::rmdir(path.c_str()) == 0 && ::mkdir(path.c_str(), 0755) == 0) return name;
    // Only an ordinary directory (the tests' fake trees) is not empty here.
    if (errno == ENOTEMPTY) return name;
  }
  name = fmt::format("{}_{}", name, ::getpid());
  MUSTER_RETURN_IF_ERROR(MakeDir(parent + "/" + name));
  return name;
}

// ---- cgroup v2 ----

class V2Cgroup : public JobCgroup {
 public:
  explicit V2Cgroup(std::string dir) : dir_(std::move(dir)) {}

  std::string_view Version() const override { return "v2"; }
  util::Status OpenJoin(CgroupJoin* out) const override {
    out->clone_into_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (out->clone_into_fd < 0) return util::Unavailable(fmt::format("open {}: {}", dir_, strerror(errno)));
    return util::Status::Ok();
  }
  std::vector<pid_t> Processes() const override { return ReadPids(dir_ + "/cgroup.procs"); }
  // memory.peak came with Linux 5.19.
  bool NeedsSampling() const override { return ::access((dir_ + "/memory.peak").c_str(), F_OK) != 0; }
  void Sample() override { sampled_peak_ = std::max(sampled_peak_, ReadU64(dir_ + "/memory.current")); }
  CgroupUsage Usage() const override {
    CgroupUsage u;
    std::optional<std::string> peak = ReadText(dir_ + "/memory.peak");
    std::optional<uint64_t> peak_bytes = peak ? ParseU64(*peak) : std::nullopt;
    u.peak_bytes = peak_bytes ? *peak_bytes : std::max(sampled_peak_, ReadU64(dir_ + "/memory.current"));
    int64_t usec = KeyedValue(ReadText(dir_ + "/cpu.stat").value_or(""), "usage_usec");
    u.cpu_ns = usec > 0 ? static_cast<uint64_t>(usec) * 1000 : 0;
    std::string events = ReadText(dir_ + "/memory.events").value_or("");
    u.oom_killed = KeyedValue(events, "oom_kill") > 0 || KeyedValue(events, "oom_group_kill") > 0;
    return u;
  }
  // cgroup.kill came with Linux 5.14.
  bool KillAll() override {
    bool present = false;
    return WriteIfPresent(dir_ + "/cgroup.kill", "1", &present).ok() && present;
  }
  util::Status Remove(int tries) override { return RemoveDir(dir_, tries); }

  // Creates <root>/muster/job_<id> with the controllers enabled on the way down.
  static util::Result<std::unique_ptr<JobCgroup>> Create(const std::string& root,
                                                         const std::string& base,
                                                         const CgroupLimits& limits) {
    std::vector<std::string> wanted{"memory"};
    if (!limits.cpuset.empty()) wanted.push_back("cpuset");
    std::string available = ReadText(root + "/cgroup.controllers").value_or("");
    for (const std::string& c : wanted) {
      if (!HasWord(available, c)) {
        return util::Unavailable(fmt::format("the {} controller is not available in {}", c, root));
      }
    }
    std::string parent = root + "/muster";
    MUSTER_RETURN_IF_ERROR(EnableControllers(root, wanted));
    MUSTER_RETURN_IF_ERROR(MakeDir(parent));
    MUSTER_RETURN_IF_ERROR(EnableControllers(parent, wanted));
    util::Result<std::string> name = ClaimJobDir(parent, base);
    if (!name.ok()) return name.status();
    std::string dir = parent + "/" + *name;
    util::Status st = Apply(dir, limits);
    if (!st.ok()) {
      (void)RemoveDir(dir, kCgroupRemoveTries);
      return st;
    }
    return std::unique_ptr<JobCgroup>(new V2Cgroup(dir));
  }

 private:
  // No internal processes below the root in v2: only the root and
  // muster/ (which holds no process) delegate controllers.
  static util::Status EnableControllers(const std::string& dir, const std::vector<std::string>& wanted) {
    std::string enabled = ReadText(dir + "/cgroup.subtree_control").value_or("");
    std::string add;
    for (const std::string& c : wanted) {
      if (!HasWord(enabled, c)) add += (add.empty() ? "+" : " +") + c;
    }
    if (add.empty()) return util::Status::Ok();
    return WriteText(dir + "/cgroup.subtree_control", add);
  }

  static util::Status Apply(const std::string& dir, const CgroupLimits& limits) {
    if (limits.mem_limit_bytes > 0) {
      MUSTER_RETURN_IF_ERROR(WriteText(dir + "/memory.max", fmt::format("{}\n", limits.mem_limit_bytes)));
      // Slurm's default AllowedSwapSpace=0: the limit is not stretched by swap.
      MUSTER_RETURN_IF_ERROR(WriteIfPresent(dir + "/memory.swap.max", "0\n"));
    }
    if (!limits.cpuset.empty()) {
      MUSTER_RETURN_IF_ERROR(WriteText(dir + "/cpuset.cpus", limits.cpuset + "\n"));
    }
    if (!limits.denied_devices.empty()) {
      const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return util::Unavailable(fmt::format("open {}: {}", dir, strerror(errno)));
      util::Status st = AttachDeviceFilter(fd, limits.denied_devices);
      ::close(fd);
      MUSTER_RETURN_IF_ERROR(st);
    }
    return util::Status::Ok();
  }

  std::string dir_;
  uint64_t sampled_peak_ = 0;
};

// ---- cgroup v1 ----

class V1Cgroup : public JobCgroup {
 public:
  std::string_view Version() const override { return "v1"; }
  util::Status OpenJoin(CgroupJoin* out) const override {
    for (const std::string& dir : dirs_) {
      const std::string path = dir + "/tasks";
      int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return util::Unavailable(fmt::format("open {}: {}", path, strerror(errno)));
      out->self_fds.push_back(fd);
    }
    return util::Status::Ok();
  }
  // The memory hierarchy is always joined, so it sees every process.
  std::vector<pid_t> Processes() const override { return ReadPids(memory_ + "/cgroup.procs"); }
  CgroupUsage Usage() const override {
    CgroupUsage u;
    u.peak_bytes = ReadU64(memory_ + "/memory.max_usage_in_bytes");
    if (!cpuacct_.empty()) u.cpu_ns = ReadU64(cpuacct_ + "/cpuacct.usage");
    // The oom_kill counter came with Linux 4.13; before it, the limit
    // having been hit (failcnt) is the best sign there is.
    int64_t kills = KeyedValue(ReadText(memory_ + "/memory.oom_control").value_or(""), "oom_kill");
    u.oom_killed = kills >= 0 ? kills > 0 : ReadU64(memory_ + "/memory.failcnt") > 0;
    return u;
  }
  util::Status Remove(int tries) override {
    util::Status first = util::Status::Ok();
    for (const std::string& dir : dirs_) {
      util::Status st = RemoveDir(dir, tries);
      if (!st.ok() && first.ok()) first = st;
    }
    return first;
  }

  static util::Result<std::unique_ptr<JobCgroup>> Create(const std::string& root,
                                                         const std::string& base,
                                                         const CgroupLimits& limits) {
    std::unique_ptr<V1Cgroup> cg(new V1Cgroup);
    util::Result<std::string> job = ClaimJobDir(root + "/memory/muster", base);
    if (!job.ok()) return job.status();
    cg->memory_ = root + "/memory/muster/" + *job;
    cg->dirs_.push_back(cg->memory_);
    util::Status st = cg->MakeIn(root + "/cpuacct", *job, &cg->cpuacct_);
    // Without a cpuacct hierarchy the CPU time comes from rusage.
    if (!st.ok() && !IsDir(root + "/cpuacct")) st = util::Status::Ok();
    if (st.ok() && !limits.cpuset.empty()) st = cg->MakeCpuset(root + "/cpuset", *job, limits.cpuset);
    if (st.ok() && !limits.denied_devices.empty()) {
      st = cg->MakeDevices(root + "/devices", *job, limits.denied_devices);
    }
    if (st.ok() && limits.mem_limit_bytes > 0) {
      std::string bytes = fmt::format("{}\n", limits.mem_limit_bytes);
      st = WriteText(cg->memory_ + "/memory.limit_in_bytes", bytes);
      // memsw (memory + swap) must stay >= the memory limit, so it is set
      // second; equal means no swap, Slurm's default AllowedSwapSpace=0.
      if (st.ok()) st = WriteIfPresent(cg->memory_ + "/memory.memsw.limit_in_bytes", bytes);
    }
    if (!st.ok()) {
      (void)cg->Remove(kCgroupRemoveTries);
      return st;
    }
    return std::unique_ptr<JobCgroup>(std::move(cg));
  }

 private:
  // Creates <hierarchy>/muster/<job> (and muster/ when missing),
  // remembering it for Remove(). An existing one is used: ClaimJobDir
  // chose the name in the memory hierarchy, so one left here by a crashed
  // step holds no live process of another.
  util::Status MakeIn(const std::string& hierarchy, const std::string& job, std::string* out) {
    std::string dir = hierarchy + "/muster/" + job;
    int err = MakeDirAndParent(dir);
    if (err != 0 && err != EEXIST) {
      if (!IsDir(hierarchy)) return util::Unavailable(fmt::format("no cgroup hierarchy at {}", hierarchy));
      return util::Unavailable(fmt::format("mkdir {}: {}", dir, strerror(err)));
    }
    dirs_.push_back(dir);
    *out = dir;
    return util::Status::Ok();
  }

  // A new v1 cpuset starts with no CPUs and no memory nodes and takes no
  // process until both are set: muster/ copies its parent's, the job gets
  // the requested CPUs and muster/'s memory nodes.
  util::Status MakeCpuset(const std::string& hierarchy, const std::string& job, const std::string& cpus) {
    if (!IsDir(hierarchy)) return util::Unavailable(fmt::format("no cgroup hierarchy at {}", hierarchy));
    std::string parent = hierarchy + "/muster";
    MUSTER_RETURN_IF_ERROR(MakeDir(parent));
    // muster/ copies its parent's once; later jobs find them set.
    for (const char* file : {"/cpuset.cpus", "/cpuset.mems"}) {
      if (!Trimmed(ReadText(parent + file).value_or("")).empty()) continue;
      MUSTER_RETURN_IF_ERROR(WriteText(parent + file, Trimmed(ReadText(hierarchy + file).value_or("")) + "\n"));
    }
    std::string dir;
    MUSTER_RETURN_IF_ERROR(MakeIn(hierarchy, job, &dir));
    MUSTER_RETURN_IF_ERROR(WriteText(dir + "/cpuset.cpus", cpus + "\n"));
    return WriteText(dir + "/cpuset.mems", Trimmed(ReadText(parent + "/cpuset.mems").value_or("")) + "\n");
  }

  // A new v1 devices cgroup starts with its parent's rules (the root's
  // allow everything); each refused device is one line of devices.deny,
  // which the kernel takes one rule per write.
  util::Status MakeDevices(const std::string& hierarchy, const std::string& job,
                           const std::vector<DeviceRule>& denied) {
    std::string dir;
    MUSTER_RETURN_IF_ERROR(MakeIn(hierarchy, job, &dir));
    const std::string path = dir + "/devices.deny";
    // O_CREAT and O_APPEND for the tests' fake trees; cgroupfs ignores both.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return util::Unavailable(fmt::format("open {}: {}", path, strerror(errno)));
    util::Status st = util::Status::Ok();
    for (const DeviceRule& rule : denied) {
      const std::string line = rule.ToString() + " rwm\n";
      ssize_t n;
      do {
        n = ::write(fd, line.data(), line.size());
      } while (n < 0 && errno == EINTR);
      if (n != static_cast<ssize_t>(line.size())) {
        st = util::Unavailable(fmt::format("write \"{}\" to {}: {}", rule.ToString(), path, strerror(errno)));
        break;
      }
    }
    ::close(fd);
    return st;
  }

  std::vector<std::string> dirs_;  // every directory made, for Remove()
  std::string memory_;
  std::string cpuacct_;  // "" when the hierarchy is missing: CPU time from rusage
};

}  // namespace

CgroupJoin::CgroupJoin(CgroupJoin&& o) noexcept
    : clone_into_fd(std::exchange(o.clone_into_fd, -1)), self_fds(std::exchange(o.self_fds, {})) {}

CgroupJoin& CgroupJoin::operator=(CgroupJoin&& o) noexcept {
  if (this != &o) {
    Close();
    clone_into_fd = std::exchange(o.clone_into_fd, -1);
    self_fds = std::exchange(o.self_fds, {});
  }
  return *this;
}

void CgroupJoin::Close() {
  if (clone_into_fd >= 0) ::close(clone_into_fd);
  clone_into_fd = -1;
  for (int fd : self_fds) ::close(fd);
  self_fds.clear();
}

int64_t KeyedValue(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') continue;
    std::string_view v = line.substr(key.size() + 1);
    int64_t out = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec == std::errc() && end == v.data() + v.size()) return out;
  }
  return -1;
}

CgroupVersion DetectCgroupVersion(const std::string& root) {
  if (::access((root + "/cgroup.controllers").c_str(), F_OK) == 0) return CgroupVersion::kV2;
  if (IsDir(root + "/memory")) return CgroupVersion::kV1;
  return CgroupVersion::kNone;
}

util::Result<std::unique_ptr<JobCgroup>> CreateJobCgroup(const std::string& root, uint32_t job_id,
                                                         const CgroupLimits& limits,
                                                         const std::string& name) {
  const std::string base = name.empty() ? fmt::format("job_{}", job_id) : name;
  switch (DetectCgroupVersion(root)) {
    case CgroupVersion::kV2: return V2Cgroup::Create(root, base, limits);
    case CgroupVersion::kV1: return V1Cgroup::Create(root, base, limits);
    case CgroupVersion::kNone: break;
  }
  return util::Unavailable(fmt::format("no cgroup v1 memory hierarchy or cgroup v2 mounted at {}", root));
}

util::Result<CgroupJoin> OpenExistingJobCgroup(const std::string& root, uint32_t job_id) {
  CgroupJoin join;
  const std::string name = fmt::format("muster/job_{}", job_id);
  switch (DetectCgroupVersion(root)) {
    case CgroupVersion::kV2: {
      const std::string dir = root + "/" + name;
      join.clone_into_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (join.clone_into_fd < 0) return util::NotFound("no cgroup " + dir);
      return join;
    }
    case CgroupVersion::kV1:
      // Each hierarchy the job's cgroup is in (memory always).
      for (const char* controller : {"memory", "cpuacct", "cpuset", "devices"}) {
        const std::string tasks = fmt::format("{}/{}/{}/tasks", root, controller, name);
        const int fd = ::open(tasks.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) join.self_fds.push_back(fd);
      }
      if (join.self_fds.empty()) return util::NotFound(fmt::format("no cgroup {}/memory/{}", root, name));
      return join;
    case CgroupVersion::kNone: break;
  }
  return util::NotFound("no cgroups at " + root);
}

int JoinSelf(const CgroupJoin& join) {
  for (int fd : join.self_fds) {
    if (::write(fd, "0", 1) != 1) return errno;
  }
  if (join.clone_into_fd >= 0) {
    const int procs = ::openat(join.clone_into_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (procs < 0) return errno;
    const bool written = ::write(procs, "0", 1) == 1;
    const int err = errno;
    ::close(procs);
    if (!written) return err;
  }
  return 0;
}

int SignalCgroup(const JobCgroup& cg, std::span<const int> signals, std::unordered_set<pid_t>* done_in,
                 const std::function<bool(pid_t)>& select) {
  std::unordered_set<pid_t> local;
  std::unordered_set<pid_t>& done = done_in != nullptr ? *done_in : local;
  const pid_t self = ::getpid();
  int count = 0;
  for (int round = 0; round < kMaxRescans; ++round) {
    std::vector<std::pair<pid_t, int>> pinned;
    for (pid_t pid : cg.Processes()) {
      if (pid == self || !done.insert(pid).second) continue;
      if (select && !select(pid)) continue;
      int fd = PidfdOpen(pid);
      if (fd >= 0 || errno == ENOSYS) pinned.emplace_back(pid, fd);
    }
    if (pinned.empty()) break;
    // With the pidfds held the pids cannot be reused, so a pid still listed
    // now is the member the pidfd refers to (or that one has just exited).
    std::vector<pid_t> now = cg.Processes();
    std::unordered_set<pid_t> members(now.begin(), now.end());
    for (auto [pid, fd] : pinned) {
      bool sent = false;
      if (members.count(pid) != 0) {
        for (int sig : signals) sent = (fd >= 0 ? PidfdSendSignal(fd, sig) : ::kill(pid, sig)) == 0 || sent;
      }
      if (sent) ++count;
      if (fd >= 0) ::close(fd);
    }
  }
  return count;
}

}  // namespace muster::stepd

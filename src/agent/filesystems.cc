#include "agent/filesystems.h"

#include <sys/statvfs.h>

#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

namespace muster::agent {
namespace {

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        s.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

FilesystemUsage Statvfs(const std::string& path) {
  struct statvfs fs = {};
  FilesystemUsage u;
  if (::statvfs(path.c_str(), &fs) != 0) return u;
  const auto block = static_cast<int64_t>(fs.f_frsize);
  u.ok = true;
  u.size_bytes = static_cast<int64_t>(fs.f_blocks) * block;
  u.free_bytes = static_cast<int64_t>(fs.f_bfree) * block;
  u.avail_bytes = static_cast<int64_t>(fs.f_bavail) * block;
  u.files = static_cast<int64_t>(fs.f_files);
  u.files_free = static_cast<int64_t>(fs.f_ffree);
  return u;
}

namespace {

// stat(path) on a thread of its own; the future is ready when it answers.
// A thread that cannot be started answers at once, as a failure.
std::shared_future<FilesystemUsage> StartStat(const FilesystemWatch::StatFn& stat,
                                              const std::string& path) {
  std::promise<FilesystemUsage> promise;
  std::shared_future<FilesystemUsage> answer = promise.get_future().share();
  try {
    std::thread([stat, path, p = std::move(promise)]() mutable {
      p.set_value(stat(path));
    }).detach();
  } catch (const std::system_error&) {
    // The promise moved into the thread that never started is gone with
    // it: the future holds a broken promise, which Sample reads as failed.
  }
  return answer;
}

// A finished call's answer; a broken promise (no thread) counts as failed.
FilesystemUsage AnswerOf(const std::shared_future<FilesystemUsage>& f) {
  try {
    return f.get();
  } catch (const std::future_error&) {
    return {};
  }
}

}  // namespace

std::vector<MountEntry> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
    std::vector<std::string> f;
    std::istringstream words(line);
    for (std::string w; words >> w;) f.push_back(std::move(w));
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 6 || dash + 2 >= f.size()) continue;
    out.push_back({Unescape(f[4]), Unescape(f[dash + 2]), f[dash + 1]});
  }
  return out;
}

FilesystemWatch::FilesystemWatch(std::vector<std::string> paths, std::string mountinfo,
                                 std::chrono::milliseconds wait, StatFn stat)
    : paths_(std::move(paths)),
      mountinfo_(std::move(mountinfo)),
      wait_(wait),
      stat_(std::move(stat)) {}

std::vector<core::FilesystemSample> FilesystemWatch::Sample(const std::vector<std::string>& nodes) {
  if (paths_.empty()) return {};
  std::ifstream in(mountinfo_);
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<MountEntry> mounts = ParseMountInfo(text.str());

  struct Watched {
    const MountEntry* mount = nullptr;  // null: not a mount point
    std::shared_future<FilesystemUsage> answer;
    bool stuck = false;  // an earlier call has not answered yet
  };
  std::vector<Watched> watched(paths_.size());
  for (size_t i = 0; i < paths_.size(); ++i) {
    const std::string& path = paths_[i];
    for (const MountEntry& m : mounts) {
      if (m.mountpoint == path) watched[i].mount = &m;  // the last one is on top
    }
    if (watched[i].mount == nullptr) continue;
    if (auto it = in_flight_.find(path); it != in_flight_.end()) {
      if (it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        watched[i].stuck = true;
        continue;
      }
      in_flight_.erase(it);  // answered at last: asked afresh below
    }
    watched[i].answer = StartStat(stat_, path);
  }
  // One wait for them all, so several hung mounts cost one wait too.
  const auto deadline = std::chrono::steady_clock::now() + wait_;
  std::vector<core::FilesystemSample> per_path(paths_.size());
  for (size_t i = 0; i < paths_.size(); ++i) {
    core::FilesystemSample& s = per_path[i];
    s.mountpoint = paths_[i];
    const Watched& w = watched[i];
    if (w.mount == nullptr) continue;
    s.device = w.mount->device;
    s.fstype = w.mount->fstype;
    if (w.stuck) continue;
    if (w.answer.wait_until(deadline) != std::future_status::ready) {
      in_flight_[paths_[i]] = w.answer;
      continue;
    }
    const FilesystemUsage u = AnswerOf(w.answer);
    s.ok = u.ok;
    s.size_bytes = u.size_bytes;
    s.free_bytes = u.free_bytes;
    s.avail_bytes = u.avail_bytes;
    s.files = u.files;
    s.files_free = u.files_free;
  }
  std::vector<core::FilesystemSample> out;
  out.reserve(nodes.size() * per_path.size());
  for (const std::string& node : nodes) {
    for (core::FilesystemSample s : per_path) {
      s.node = node;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace muster::agent

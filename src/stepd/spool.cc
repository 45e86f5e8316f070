#include "stepd/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace muster::stepd {
namespace {

// A spec carries the job's whole environment; Slurm caps that near 2 MiB
// (ARG_MAX), so this bound only stops a runaway file.
constexpr size_t kMaxFileBytes = 64u << 20;

util::Status Errno(const std::string& what, const std::string& name, int err) {
  std::string msg = fmt::format("{} {}: {}", what, name, strerror(err));
  return err == EACCES || err == EPERM ? util::PermissionDenied(msg)
         : err == ENOENT               ? util::NotFound(msg)
                                       : util::Internal(msg);
}

}  // namespace

std::string ScriptFileName(uint32_t job_id) { return fmt::format("job{}.script", job_id); }
std::string StateFileName(uint32_t job_id) { return fmt::format("job{}.state", job_id); }
std::string SpecFileName(uint32_t job_id) { return fmt::format("job{}.spec", job_id); }

std::optional<uint32_t> JobOfStateFile(std::string_view name) {
  constexpr std::string_view kPrefix = "job";
  constexpr std::string_view kSuffix = ".state";
  if (name.size() <= kPrefix.size() + kSuffix.size() || name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return id;
}

namespace {

// ParseStepState, taking only results of `job_id` when it is given.
StepState ParseState(std::string_view text, std::optional<uint32_t> job_id) {
  StepState state;
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return state;  // not even the pid line yet
  std::string_view pid = text.substr(0, nl);
  pid_t value = 0;
  auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), value);
  if (ec == std::errc() && end == pid.data() + pid.size() && value > 0) state.pid = value;
  // The last complete line that is a result: the agent appends its own
  // verdict after a torn one when a step died writing it.
  for (std::string_view rest = text.substr(nl + 1); !rest.empty();) {
    nl = rest.find('\n');
    if (nl == std::string_view::npos) break;  // being written, or torn
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    util::Result<StepResult> r = StepResultFromJson(j);
    // Every field has a default; a result without a state is none.
    if (r.ok() && !r->state.empty() && (!job_id || r->job_id == *job_id)) state.result = std::move(*r);
  }
  return state;
}

}  // namespace

StepState ParseStepState(std::string_view text) { return ParseState(text, std::nullopt); }

StepState ParseStepStateOf(uint32_t job_id, std::string_view text) { return ParseState(text, job_id); }

std::string ResultLine(const StepResult& r) {
  return ToJson(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

util::Status AppendFileAt(int dir_fd, const std::string& name, std::string_view line) {
  int fd = ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("could not open", name, errno);
  // One write: a line a reader sees is whole unless the writer died inside
  // it, and then it lacks its newline. No fsync: a crash of the machine
  // ends the job anyway (musterd then records it as NODE_FAIL).
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Errno("could not write", name, err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return Errno("could not close", name, errno);
  return util::Status::Ok();
}

util::Result<std::string> ReadFileAt(int dir_fd, const std::string& name) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno("could not open", name, errno);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Errno("could not read", name, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxFileBytes) {
      ::close(fd);
      return util::InvalidArgument(fmt::format("{} is larger than {} bytes", name, kMaxFileBytes));
    }
  }
  ::close(fd);
  return out;
}

std::string ReadFileOrEmpty(const std::string& path) {
  util::Result<std::string> text = ReadFileAt(AT_FDCWD, path);
  return text.ok() ? std::move(text).value() : std::string();
}

}  // namespace muster::stepd

#include "util/signals.h"

#include <signal.h>

#include <limits>
#include <utility>

#include "util/strings.h"

namespace muster::util {

std::optional<int> ParseSignal(const std::string& text) {
  std::string name = ToUpper(text);
  if (StartsWith(name, "SIG")) name = name.substr(3);
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
      {"KILL", SIGKILL}, {"USR1", SIGUSR1},   {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
      {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},   {"TERM", SIGTERM}, {"CONT", SIGCONT},
      {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},   {"URG", SIGURG},   {"XCPU", SIGXCPU},
      {"WINCH", SIGWINCH}};
  for (const auto& [n, v] : kSignals) {
    if (name == n) return v;
  }
  auto num = ParseInt(name);
  if (num.ok() && *num > 0 && *num <= kMaxSignal) return static_cast<int>(*num);
  return std::nullopt;
}

std::optional<int> ParseSignalArgument(const std::string& text) {
  if (auto sig = ParseSignal(text)) return sig;
  auto num = ParseInt(text);
  if (num.ok() && *num > 0 && *num <= std::numeric_limits<int>::max()) {
    return static_cast<int>(*num);
  }
  return std::nullopt;
}

}  // namespace muster::util

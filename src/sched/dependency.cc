// Job dependencies: parse, evaluate, print. See dependency.h for the Slurm
// 22.05 behaviour each rule reproduces.
#include "sched/dependency.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include "util/strings.h"

namespace muster::sched {
namespace {

// Bounds a bracketed task list ("12_[0-99999]") so a typo cannot make a
// million terms; Slurm's default MaxArraySize is 1001.
constexpr int64_t kMaxTasksInList = 100000;
constexpr int64_t kMaxDelayMinutes = std::numeric_limits<int64_t>::max() / 60;

util::Status Bad(std::string_view spec, std::string_view why) {
  return util::InvalidArgument(fmt::format("invalid dependency '{}': {}", spec, why));
}

// Splits at any of `seps` outside "[...]", keeping empty parts: a task
// list ("12_[1,4-5]") may hold a ',' that does not separate terms.
std::vector<std::string_view> SplitOutsideBrackets(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '[') ++depth;
    if (i < s.size() && s[i] == ']' && depth > 0) --depth;
    if (i == s.size() || (depth == 0 && seps.find(s[i]) != std::string_view::npos)) {
      parts.push_back(s.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return parts;
}

struct TypeName {
  std::string_view name;
  DepType type;
};
constexpr TypeName kTypes[] = {
    {"after", DepType::kAfter},           {"afterany", DepType::kAfterAny},
    {"afterok", DepType::kAfterOk},       {"afternotok", DepType::kAfterNotOk},
    {"aftercorr", DepType::kAfterCorr},   {"afterburstbuffer", DepType::kAfterBurstBuffer},
    {"singleton", DepType::kSingleton},
};

// A job id as Slurm takes one: decimal, 1 .. 2^32-2 (2^32-1 means none).
util::Result<core::JobId> ParseJobId(std::string_view spec, std::string_view s) {
  auto n = util::ParseInt(s);
  if (!n.ok() || *n == 0 || *n >= std::numeric_limits<core::JobId>::max()) {
    return Bad(spec, fmt::format("'{}' is not a job id", s));
  }
  return static_cast<core::JobId>(*n);
}

util::Result<int> ParseTaskId(std::string_view spec, std::string_view s) {
  auto n = util::ParseInt(s);
  if (!n.ok() || *n > std::numeric_limits<int>::max()) {
    return Bad(spec, fmt::format("'{}' is not an array task id", s));
  }
  return static_cast<int>(*n);
}

// "1-3,5" inside "12_[...]": the task ids, ascending as written.
util::Result<std::vector<int>> ParseTaskList(std::string_view spec, std::string_view list) {
  std::vector<int> tasks;
  for (const auto& part : util::Split(list, ',', /*skip_empty=*/false)) {
    size_t dash = part.find('-');
    auto lo = ParseTaskId(spec, std::string_view(part).substr(0, dash));
    if (!lo.ok()) return lo.status();
    int hi = *lo;
    if (dash != std::string::npos) {
      auto h = ParseTaskId(spec, std::string_view(part).substr(dash + 1));
      if (!h.ok()) return h.status();
      if (*h < *lo) return Bad(spec, fmt::format("task range '{}' runs backwards", part));
      hi = *h;
    }
    if (static_cast<int64_t>(tasks.size()) + (hi - *lo) >= kMaxTasksInList) {
      return Bad(spec, fmt::format("more than {} array tasks", kMaxTasksInList));
    }
    for (int64_t t = *lo; t <= hi; ++t) tasks.push_back(static_cast<int>(t));
  }
  return tasks;
}

// One id of a term: "N", "N_T", "N_*", "N_[list]", each with "+minutes".
util::Status ParseIdPiece(std::string_view spec, DepType type, std::string_view piece,
                          std::vector<DepTerm>* out) {
  if (piece.empty()) return Bad(spec, "a job id is missing");
  int64_t delay_s = 0;
  if (size_t plus = piece.find('+'); plus != std::string_view::npos) {
    std::string_view minutes = piece.substr(plus + 1);
    auto m = util::ParseInt(minutes);
    if (!m.ok() || *m == 0 || *m > kMaxDelayMinutes) {
      return Bad(spec, fmt::format("'+{}' is not a positive number of minutes", minutes));
    }
    delay_s = *m * 60;
    piece = piece.substr(0, plus);
  }
  std::string_view task_part;
  bool has_task = false;
  if (size_t us = piece.find('_'); us != std::string_view::npos) {
    task_part = piece.substr(us + 1);
    piece = piece.substr(0, us);
    has_task = true;
  }
  auto id = ParseJobId(spec, piece);
  if (!id.ok()) return id.status();
  std::vector<int> tasks;
  bool all_tasks = has_task && task_part == "*";
  if (!has_task || all_tasks) {
    tasks.push_back(-1);
  } else if (task_part.size() >= 2 && task_part.front() == '[' && task_part.back() == ']') {
    auto list = ParseTaskList(spec, task_part.substr(1, task_part.size() - 2));
    if (!list.ok()) return list.status();
    tasks = std::move(*list);
  } else {
    auto t = ParseTaskId(spec, task_part);
    if (!t.ok()) return t.status();
    tasks.push_back(*t);
  }
  for (int t : tasks) out->push_back({type, *id, t, all_tasks, delay_s});
  return util::Status::Ok();
}

util::Status ParseElement(std::string_view spec, std::string_view el, std::vector<DepTerm>* out) {
  if (el.empty()) return Bad(spec, "an empty element (doubled or trailing separator)");
  size_t colon = el.find(':');
  std::string_view name = el.substr(0, colon);
  if (colon == std::string_view::npos && !name.empty() &&
      std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // A bare id: afterany, Slurm's default type.
    return ParseIdPiece(spec, DepType::kAfterAny, el, out);
  }
  if (util::EqualsIgnoreCase(name, "expand")) {
    return util::FailedPrecondition(
        fmt::format("invalid dependency '{}': Muster does not grow running jobs (expand)", spec));
  }
  const TypeName* type = nullptr;
  for (const auto& t : kTypes) {
    if (util::EqualsIgnoreCase(name, t.name)) type = &t;
  }
  if (type == nullptr) {
    return Bad(spec, fmt::format("unknown dependency type '{}' (after, afterany, afterok, "
                                 "afternotok, aftercorr, afterburstbuffer or singleton)",
                                 name));
  }
  if (type->type == DepType::kSingleton) {
    if (colon != std::string_view::npos) return Bad(spec, "singleton takes no job id");
    out->push_back({DepType::kSingleton, 0, -1, false, 0});
    return util::Status::Ok();
  }
  if (colon == std::string_view::npos) {
    return Bad(spec, fmt::format("'{}' needs a job id ({}:<job_id>)", el, type->name));
  }
  for (std::string_view piece : SplitOutsideBrackets(el.substr(colon + 1), ":")) {
    MUSTER_RETURN_IF_ERROR(ParseIdPiece(spec, type->type, piece, out));
  }
  return util::Status::Ok();
}

// ---- evaluation ----

bool EndedOk(const DepJob& j) {
  return j.state == core::JobState::kCompleted && j.exit_code == 0 && j.exit_signal == 0;
}

bool AnyArrayTask(const std::vector<DepJob>& recs) {
  return std::any_of(recs.begin(), recs.end(), [](const DepJob& j) { return j.array_task_id >= 0; });
}

// "job 12", "task 3 of array 12".
std::string Who(core::JobId array_or_job, const DepJob& j) {
  if (j.array_task_id >= 0) return fmt::format("task {} of array {}", j.array_task_id, array_or_job);
  return fmt::format("job {}", array_or_job);
}

std::string HowEnded(core::JobId id, const DepJob& j) {
  std::string s = fmt::format("{} ended {}", Who(id, j), core::JobStateName(j.state));
  if (j.exit_signal != 0) return s + fmt::format(" (signal {})", j.exit_signal);
  if (j.exit_code != 0) return s + fmt::format(" (exit {})", j.exit_code);
  return s;
}

// "in 4 minutes" (rounded up), for a time after now.
std::string InHowLong(int64_t seconds) {
  int64_t minutes = (seconds + 59) / 60;
  if (minutes < 120) return fmt::format("in {} minute{}", minutes, minutes == 1 ? "" : "s");
  return fmt::format("in {} h {} min", minutes / 60, minutes % 60);
}

std::string TermText(const DepTerm& t, bool target_is_array) {
  if (t.type == DepType::kSingleton) return "singleton";
  std::string s = fmt::format("{}:{}", DepTypeName(t.type), t.job_id);
  if (t.task_id >= 0) {
    s += fmt::format("_{}", t.task_id);
  } else if (target_is_array || t.all_tasks) {
    s += "_*";
  }
  if (t.delay_s > 0) s += fmt::format("+{}", t.delay_s / 60);
  return s;
}

// One term's state, and a phrase for the explanation: what it still needs
// ("job 12 to end") when unfulfilled, why it cannot be met when failed.
struct TermEval {
  DepTermState state;
  std::string phrase;
};

// The subject of a "needs ..." phrase: "job 12", "task 3 of job 12",
// "every task of array 12".
std::string Subject(const DepTerm& t, bool is_array) {
  if (t.task_id >= 0) return fmt::format("task {} of array {}", t.task_id, t.job_id);
  if (is_array) return fmt::format("every task of array {}", t.job_id);
  return fmt::format("job {}", t.job_id);
}

TermEval OkTerm(const DepTerm& t, const std::vector<DepJob>& recs, bool is_array,
                std::string_view subject) {
  TermEval e;
  e.state.target_is_array = is_array;
  // A whole array is judged once every task has ended (as Slurm): a
  // failed task may still be requeued and rerun before then.
  if (is_array && !std::all_of(recs.begin(), recs.end(),
                               [](const DepJob& j) { return core::IsFinished(j.state); })) {
    e.phrase = fmt::format("{} to end COMPLETED with exit 0", subject);
    return e;
  }
  for (const auto& j : recs) {
    if (core::IsFinished(j.state) && !EndedOk(j)) {
      e.state.status = DepTermStatus::kFailed;
      e.phrase = fmt::format("{}, so {} can never be satisfied", HowEnded(t.job_id, j),
                             TermText(t, is_array));
      return e;
    }
  }
  if (std::all_of(recs.begin(), recs.end(), EndedOk)) {
    e.state.status = DepTermStatus::kFulfilled;
  } else {
    e.phrase = fmt::format("{} to end COMPLETED with exit 0", subject);
  }
  return e;
}

TermEval EvalTerm(const DepTerm& t, const core::Job& self, const DepLookup& jobs, int64_t now) {
  TermEval e;
  if (t.type == DepType::kSingleton) {
    if (jobs.SingletonBlocked(self)) {
      e.phrase = fmt::format("the earlier job named '{}' of {} to end (singleton)", self.req.name,
                             self.req.user_name);
    } else {
      e.state.status = DepTermStatus::kFulfilled;
    }
    return e;
  }
  std::vector<DepJob> recs = jobs.Find(t.job_id, t.type == DepType::kAfterCorr ? -1 : t.task_id);
  bool is_array = t.task_id < 0 && AnyArrayTask(recs);
  e.state.target_is_array = is_array;
  if (recs.empty()) {
    // Slurm takes a job it does not know for one long finished: satisfied.
    e.state.status = DepTermStatus::kFulfilled;
    return e;
  }
  std::string subject = Subject(t, is_array);
  switch (t.type) {
    case DepType::kAfter: {
      int64_t began = 0;
      for (const auto& j : recs) {
        if (j.state == core::JobState::kPending) {
          e.phrase = fmt::format("{} to start", subject);
          return e;
        }
        // Cancelled before it started: the cancellation counts as its start.
        began = std::max(began, j.start_time > 0 ? j.start_time : j.end_time);
      }
      int64_t ready = began + t.delay_s;
      if (t.delay_s > 0 && now < ready) {
        e.state.ready_at = ready;
        e.phrase = fmt::format("{} minutes to pass since {} started ({})", t.delay_s / 60,
                               subject, InHowLong(ready - now));
        return e;
      }
      e.state.status = DepTermStatus::kFulfilled;
      return e;
    }
    case DepType::kAfterAny:
    case DepType::kAfterBurstBuffer:
      if (std::all_of(recs.begin(), recs.end(),
                      [](const DepJob& j) { return core::IsFinished(j.state); })) {
        e.state.status = DepTermStatus::kFulfilled;
      } else {
        e.phrase = fmt::format("{} to end", subject);
      }
      return e;
    case DepType::kAfterOk:
      return OkTerm(t, recs, is_array, subject);
    case DepType::kAfterNotOk: {
      if (!std::all_of(recs.begin(), recs.end(),
                       [](const DepJob& j) { return core::IsFinished(j.state); })) {
        e.phrase = fmt::format("{} to end, not all COMPLETED with exit 0", subject);
        return e;
      }
      if (std::all_of(recs.begin(), recs.end(), EndedOk)) {
        e.state.status = DepTermStatus::kFailed;
        e.phrase = fmt::format("{} ended COMPLETED with exit 0, so {} can never be satisfied",
                               is_array ? fmt::format("every task of array {}", t.job_id)
                                        : fmt::format("job {}", t.job_id),
                               TermText(t, is_array));
      } else {
        e.state.status = DepTermStatus::kFulfilled;
      }
      return e;
    }
    case DepType::kAfterCorr: {
      if (t.task_id >= 0 || !is_array || self.array_task_id < 0) {
        // One task named, a plain job, or a dependent that is not an array
        // task: afterok on what was named (observed: "aftercorr:N" from a
        // plain job prints and fails like afterok on every task of N).
        if (t.task_id >= 0) recs = jobs.Find(t.job_id, t.task_id);
        if (recs.empty()) {
          e.state.status = DepTermStatus::kFulfilled;
          return e;
        }
        return OkTerm(t, recs, is_array, subject);
      }
      std::vector<DepJob> corr;
      for (const auto& j : recs) {
        if (j.array_task_id == self.array_task_id) corr.push_back(j);
      }
      if (corr.empty()) {
        e.state.status = DepTermStatus::kFailed;
        e.phrase = fmt::format("array {} has no task {}, so {} can never be satisfied", t.job_id,
                               self.array_task_id, TermText(t, is_array));
        return e;
      }
      return OkTerm(t, corr, is_array,
                    fmt::format("task {} of array {}", self.array_task_id, t.job_id));
    }
    case DepType::kSingleton:
      break;  // handled above
  }
  return e;
}

// "a", "a and b", "a, b and c" (or "or").
std::string JoinWords(const std::vector<std::string>& parts, std::string_view last_sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) s += (i + 1 == parts.size()) ? fmt::format(" {} ", last_sep) : std::string(", ");
    s += parts[i];
  }
  return s;
}

}  // namespace

std::string_view DepTypeName(DepType t) {
  for (const auto& n : kTypes) {
    if (n.type == t) return n.name;
  }
  return "unknown";
}

util::Result<Dependency> ParseDependency(std::string_view text) {
  Dependency d;
  if (text.empty()) return d;
  // As Slurm 22.05 does: one '?' anywhere makes the whole spec "any".
  d.any = text.find('?') != std::string_view::npos;
  std::vector<DepTerm> terms;
  for (std::string_view el : SplitOutsideBrackets(text, ",?")) {
    MUSTER_RETURN_IF_ERROR(ParseElement(text, el, &terms));
    if (static_cast<int64_t>(terms.size()) > kMaxTasksInList) {
      return Bad(text, fmt::format("more than {} terms", kMaxTasksInList));
    }
  }
  // Slurm keeps one term per (type, job, task): the first, with its time.
  std::set<std::tuple<DepType, core::JobId, int>> seen;
  for (const auto& t : terms) {
    if (seen.emplace(t.type, t.job_id, t.task_id).second) d.terms.push_back(t);
  }
  return d;
}

std::string_view SlurmSubmitErrorText(const util::Status& parse_error) {
  if (parse_error.code() == util::Code::kFailedPrecondition) {
    return "Requested operation not supported on this system";
  }
  return "Job dependency problem";
}

DepVerdict EvaluateDependency(const Dependency& d, const core::Job& self, const DepLookup& jobs,
                              int64_t now) {
  DepVerdict v;
  if (d.terms.empty()) return v;
  std::vector<std::string> waiting, failed;
  bool any_fulfilled = false;
  bool all_fulfilled = true;
  bool all_failed = true;
  // By the clock alone: ',' needs the last of the timed terms, and only if
  // nothing else is waiting; '?' the first of them.
  bool clock_suffices = true;
  int64_t latest = 0;
  int64_t earliest = 0;
  for (const auto& t : d.terms) {
    TermEval e = EvalTerm(t, self, jobs, now);
    switch (e.state.status) {
      case DepTermStatus::kFulfilled:
        any_fulfilled = true;
        all_failed = false;
        break;
      case DepTermStatus::kFailed:
        all_fulfilled = false;
        failed.push_back(std::move(e.phrase));
        break;
      case DepTermStatus::kUnfulfilled:
        all_fulfilled = false;
        all_failed = false;
        waiting.push_back(std::move(e.phrase));
        if (e.state.ready_at == 0) {
          clock_suffices = false;
        } else {
          latest = std::max(latest, e.state.ready_at);
          earliest = earliest == 0 ? e.state.ready_at : std::min(earliest, e.state.ready_at);
        }
        break;
    }
    v.states.push_back(e.state);
  }
  if (d.any) {
    if (any_fulfilled) return v;
    if (all_failed) {
      v.status = DepStatus::kNeverSatisfied;
      v.explanation = "no alternative can be satisfied any more: " + util::Join(failed, "; ");
      return v;
    }
    v.status = DepStatus::kWaiting;
    v.ready_at = earliest;
    v.explanation = "needs " + JoinWords(waiting, "or");
    return v;
  }
  if (!failed.empty()) {
    v.status = DepStatus::kNeverSatisfied;
    v.explanation = failed.front();
    return v;
  }
  if (all_fulfilled) return v;
  v.status = DepStatus::kWaiting;
  v.ready_at = clock_suffices ? latest : 0;
  v.explanation = "needs " + JoinWords(waiting, "and");
  return v;
}

core::PendingReason DependencyReason(const DepVerdict& v) {
  switch (v.status) {
    case DepStatus::kSatisfied:
      return core::PendingReason::kNone;
    case DepStatus::kWaiting:
      return core::PendingReason::kDependency;
    case DepStatus::kNeverSatisfied:
      return core::PendingReason::kDependencyNeverSatisfied;
  }
  return core::PendingReason::kNone;
}

std::string FormatDependency(const Dependency& d, const std::vector<DepTermState>& states) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < d.terms.size(); ++i) {
    DepTermState st = i < states.size() ? states[i] : DepTermState{};
    if (st.status == DepTermStatus::kFulfilled) {
      // One fulfilled alternative satisfies a '?' dependency: nothing is left.
      if (d.any) return "(null)";
      continue;
    }
    parts.push_back(TermText(d.terms[i], st.target_is_array) +
                    (st.status == DepTermStatus::kFailed ? "(failed)" : "(unfulfilled)"));
  }
  if (parts.empty()) return "(null)";
  return util::Join(parts, d.any ? "?" : ",");
}

namespace {

bool HasSingleton(const Dependency& d) {
  return std::any_of(d.terms.begin(), d.terms.end(),
                     [](const DepTerm& t) { return t.type == DepType::kSingleton; });
}

bool OneTaskAtATime(const Dependency& d) {
  return std::any_of(d.terms.begin(), d.terms.end(), [](const DepTerm& t) {
    return t.type == DepType::kAfterCorr || t.type == DepType::kSingleton;
  });
}

}  // namespace

DepGate GateDependency(const Dependency& d, const core::Job& job, const DepLookup& jobs,
                       int64_t now, int max_paired_starts) {
  // An array's pending part: the task that would start next decides
  // (aftercorr pairs it with the same task of the other array).
  core::Job self_view;
  const core::Job* self = &job;
  if (job.IsArrayPendingPart() && !job.array_pending.empty()) {
    self_view.id = job.id;
    self_view.req.uid = job.req.uid;
    self_view.req.name = job.req.name;
    self_view.array_job_id = job.array_job_id;
    self_view.array_task_id = job.array_pending.front();
    self = &self_view;
  }
  const DepVerdict v = EvaluateDependency(d, *self, jobs, now);
  const bool per_task = job.IsArrayPendingPart() && OneTaskAtATime(d);
  DepGate gate;
  gate.dependency_state = v.status == DepStatus::kSatisfied ? "" : FormatDependency(d, v.states);
  gate.ready_at = v.ready_at;
  gate.reason = DependencyReason(v);
  if (gate.reason == core::PendingReason::kNone) {
    if (!per_task) {
      gate.action = DepGate::Action::kDrop;
      return gate;
    }
    // aftercorr / singleton: the next task may go. With aftercorr alone, so
    // may the ones after it whose own partners have ended OK (a bounded run
    // per pass; the pass after the starts looks again).
    gate.start_count = 1;
    if (HasSingleton(d)) return gate;
    for (size_t i = 1; i < job.array_pending.size() && gate.start_count < max_paired_starts; ++i) {
      self_view.array_task_id = job.array_pending[i];
      const DepVerdict next = EvaluateDependency(d, self_view, jobs, now);
      if (DependencyReason(next) != core::PendingReason::kNone) {
        gate.cut_reason = core::PendingReason::kDependency;
        gate.cut_why = next.explanation;
        break;
      }
      ++gate.start_count;
    }
    return gate;
  }
  gate.explanation = v.explanation;
  if (gate.reason == core::PendingReason::kDependencyNeverSatisfied) {
    gate.action = per_task && job.array_pending.size() > 1 ? DepGate::Action::kSplitFailedTask
                                                           : DepGate::Action::kFail;
  }
  return gate;
}

}  // namespace muster::sched

// Job dependencies against what the real Slurm 22.05 on the oracle cluster
// (../shared/slurm-oracle, as root) did. The job ids are the oracle's: the
// dependent jobs were submitted with
//   sbatch --parsable --begin=now+1hour --dependency=SPEC --wrap true
// (the begin time keeps them pending while the dependency is evaluated) and
// read back with `scontrol show job J | grep -o 'Dependency=[^ ]*'` and
// `squeue -h -j J -o %r`. The jobs they name:
//   14271 `--wrap true`       COMPLETED 0:0
//   14272 `--wrap "exit 3"`   FAILED 3:0
//   14273 `--hold`, scancel   CANCELLED before it started
//   14274 `--wrap "sleep 300"` RUNNING
//   14275 sleep, scancel      CANCELLED while running
//   14276 `--hold`            PENDING
//   14349 `--time=1 sleep 200` TIMEOUT
//   14350 `--array=0-3 --wrap 'exit $((SLURM_ARRAY_TASK_ID==2))'`: tasks 0 1 3
//         COMPLETED, 2 FAILED 1:0
//   14351 `--array=0-3 --wrap true`: all COMPLETED
//   14352 `--array=0-3 --hold`: all PENDING
#include "sched/dependency.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace muster::sched {
namespace {

using core::JobState;

constexpr int64_t kNow = 1'000'000;

// The oracle's jobs as the controller would describe them.
class FakeJobs : public DepLookup {
 public:
  FakeJobs() {
    Add(14271, {Rec(14271, JobState::kCompleted, 0)});
    Add(14272, {Rec(14272, JobState::kFailed, 3)});
    DepJob cancelled_pending = Rec(14273, JobState::kCancelled, 0);
    cancelled_pending.start_time = 0;
    Add(14273, {cancelled_pending});
    DepJob running = Rec(14274, JobState::kRunning, 0);
    running.end_time = 0;
    Add(14274, {running});
    Add(14275, {Rec(14275, JobState::kCancelled, 0)});
    Add(14276, {Pending(14276, -1)});
    Add(14349, {Rec(14349, JobState::kTimeout, 0)});
    Add(14350, {Task(14371, 0, JobState::kCompleted, 0), Task(14372, 1, JobState::kCompleted, 0),
                Task(14373, 2, JobState::kFailed, 1), Task(14350, 3, JobState::kCompleted, 0)});
    Add(14351, {Task(14374, 0, JobState::kCompleted, 0), Task(14375, 1, JobState::kCompleted, 0),
                Task(14376, 2, JobState::kCompleted, 0), Task(14351, 3, JobState::kCompleted, 0)});
    Add(14352, {Pending(14352, 0), Pending(14352, 1), Pending(14352, 2), Pending(14352, 3)});
  }

  std::vector<DepJob> Find(core::JobId id, int task) const override {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return {};
    if (task < 0) return it->second;
    std::vector<DepJob> out;
    for (const auto& j : it->second) {
      if (j.array_task_id == task) out.push_back(j);
    }
    return out;
  }
  bool SingletonBlocked(const core::Job& self) const override {
    return singleton_blocked_.count(self.id) > 0;
  }

  void Add(core::JobId id, std::vector<DepJob> recs) { jobs_[id] = std::move(recs); }
  void BlockSingleton(core::JobId id) { singleton_blocked_.insert(id); }

  static DepJob Rec(core::JobId id, JobState s, int exit_code) {
    DepJob j;
    j.id = id;
    j.state = s;
    j.start_time = kNow - 120;
    j.end_time = kNow - 60;
    j.exit_code = exit_code;
    return j;
  }
  static DepJob Task(core::JobId id, int task, JobState s, int exit_code) {
    DepJob j = Rec(id, s, exit_code);
    j.array_task_id = task;
    return j;
  }
  static DepJob Pending(core::JobId id, int task) {
    DepJob j;
    j.id = id;
    j.array_task_id = task;
    return j;
  }

 private:
  std::map<core::JobId, std::vector<DepJob>> jobs_;
  std::set<core::JobId> singleton_blocked_;
};

core::Job Self(core::JobId id = 20000, int array_task = -1) {
  core::Job j;
  j.id = id;
  j.req.name = "train";
  j.req.user_name = "alice";
  if (array_task >= 0) {
    j.array_job_id = id;
    j.array_task_id = array_task;
  }
  return j;
}

Dependency Parse(std::string_view spec) {
  auto d = ParseDependency(spec);
  EXPECT_TRUE(d.ok()) << spec << ": " << d.status().message();
  return d.ok() ? *d : Dependency{};
}

struct Shown {
  std::string dependency;  // scontrol's Dependency=
  core::PendingReason reason;
};

Shown Show(const FakeJobs& jobs, std::string_view spec, const core::Job& self = Self(),
           int64_t now = kNow) {
  Dependency d = Parse(spec);
  DepVerdict v = EvaluateDependency(d, self, jobs, now);
  EXPECT_EQ(v.states.size(), d.terms.size()) << spec;
  return {FormatDependency(d, v.states), DependencyReason(v)};
}

constexpr auto kNone = core::PendingReason::kNone;
constexpr auto kDep = core::PendingReason::kDependency;
constexpr auto kNever = core::PendingReason::kDependencyNeverSatisfied;

struct EvalCase {
  const char* spec;
  const char* dependency;  // Dependency= on the oracle
  core::PendingReason reason;
};

void RunCases(const FakeJobs& jobs, const std::vector<EvalCase>& cases) {
  for (const auto& c : cases) {
    Shown s = Show(jobs, c.spec);
    EXPECT_EQ(s.dependency, c.dependency) << c.spec;
    EXPECT_EQ(s.reason, c.reason) << c.spec << " gave " << core::PendingReasonName(s.reason);
  }
}

TEST(DependencyEvalTest, EachTypeAgainstEachEnd) {
  // Reason kNone: on the oracle the job showed BeginTime, its dependency gone.
  RunCases(FakeJobs(), {
                           {"after:14271", "(null)", kNone},
                           {"after:14272", "(null)", kNone},
                           {"after:14273", "(null)", kNone},
                           {"after:14274", "(null)", kNone},
                           {"after:14275", "(null)", kNone},
                           {"after:14276", "after:14276(unfulfilled)", kDep},
                           {"afterany:14271", "(null)", kNone},
                           {"afterany:14272", "(null)", kNone},
                           {"afterany:14273", "(null)", kNone},
                           {"afterany:14274", "afterany:14274(unfulfilled)", kDep},
                           {"afterany:14275", "(null)", kNone},
                           {"afterany:14276", "afterany:14276(unfulfilled)", kDep},
                           {"afterok:14271", "(null)", kNone},
                           {"afterok:14272", "afterok:14272(failed)", kNever},
                           {"afterok:14273", "afterok:14273(failed)", kNever},
                           {"afterok:14274", "afterok:14274(unfulfilled)", kDep},
                           {"afterok:14275", "afterok:14275(failed)", kNever},
                           {"afterok:14276", "afterok:14276(unfulfilled)", kDep},
                           {"afterok:14349", "afterok:14349(failed)", kNever},
                           {"afternotok:14271", "afternotok:14271(failed)", kNever},
                           {"afternotok:14272", "(null)", kNone},
                           {"afternotok:14273", "(null)", kNone},
                           {"afternotok:14274", "afternotok:14274(unfulfilled)", kDep},
                           {"afternotok:14275", "(null)", kNone},
                           {"afternotok:14276", "afternotok:14276(unfulfilled)", kDep},
                           {"afternotok:14349", "(null)", kNone},
                           {"aftercorr:14271", "(null)", kNone},
                           {"aftercorr:14272", "aftercorr:14272(failed)", kNever},
                           {"aftercorr:14273", "aftercorr:14273(failed)", kNever},
                           {"aftercorr:14274", "aftercorr:14274(unfulfilled)", kDep},
                           {"aftercorr:14275", "aftercorr:14275(failed)", kNever},
                           {"aftercorr:14276", "aftercorr:14276(unfulfilled)", kDep},
                           {"afterburstbuffer:14272", "(null)", kNone},
                           {"afterburstbuffer:14274", "afterburstbuffer:14274(unfulfilled)", kDep},
                           {"afterany:14349", "(null)", kNone},
                       });
}

TEST(DependencyEvalTest, AllAndAny) {
  RunCases(FakeJobs(),
           {
               {"afterok:14272?afterok:14274",
                "afterok:14272(failed)?afterok:14274(unfulfilled)", kDep},
               {"afterok:14272,afterok:14274",
                "afterok:14272(failed),afterok:14274(unfulfilled)", kNever},
               // The satisfied term is dropped.
               {"afterok:14271,afterok:14274", "afterok:14274(unfulfilled)", kDep},
               {"afterok:14272:14274", "afterok:14272(failed),afterok:14274(unfulfilled)", kNever},
               {"afterok:14274?afterok:14276",
                "afterok:14274(unfulfilled)?afterok:14276(unfulfilled)", kDep},
               {"afterok:14274,afterany:14276",
                "afterok:14274(unfulfilled),afterany:14276(unfulfilled)", kDep},
               {"afterok:14272?afternotok:14271",
                "afterok:14272(failed)?afternotok:14271(failed)", kNever},
               {"afterok:14274:14276", "afterok:14274(unfulfilled),afterok:14276(unfulfilled)",
                kDep},
               {"afterok:14271?afterok:14274", "(null)", kNone},
               {"afterok:14274:14350_*",
                "afterok:14274(unfulfilled),afterok:14350_*(failed)", kNever},
               // Written twice, kept once.
               {"afterok:14274,afterok:14274", "afterok:14274(unfulfilled)", kDep},
               {"afterok:14274?afterok:14274", "afterok:14274(unfulfilled)", kDep},
           });
}

TEST(DependencyEvalTest, UnknownJobsCountAsSatisfied) {
  // afterok:999999 (no such job) printed Dependency=(null); so did
  // afterok:14204_1 (14204 not an array) and afterok:14352_7 (no task 7).
  RunCases(FakeJobs(), {
                           {"afterok:999999", "(null)", kNone},
                           {"afterok:12?afterany:13", "(null)", kNone},
                           {"afterok:14274,afterok:999999", "afterok:14274(unfulfilled)", kDep},
                           {"afterok:14274?afterok:999999", "(null)", kNone},
                           {"afterok:14274_1", "(null)", kNone},
                           {"afterok:14352_7", "(null)", kNone},
                       });
}

TEST(DependencyEvalTest, Arrays) {
  RunCases(FakeJobs(), {
                           {"afterok:14350", "afterok:14350_*(failed)", kNever},
                           {"afterok:14350_1", "(null)", kNone},
                           {"afterok:14350_2", "afterok:14350_2(failed)", kNever},
                           {"afterok:14350_*", "afterok:14350_*(failed)", kNever},
                           {"afterok:14350_[1-2]", "afterok:14350_2(failed)", kNever},
                           {"afterany:14350", "(null)", kNone},
                           {"afternotok:14350", "(null)", kNone},
                           {"afternotok:14350_2", "(null)", kNone},
                           {"afternotok:14350_1", "afternotok:14350_1(failed)", kNever},
                           {"afterok:14351", "(null)", kNone},
                           {"afterok:14352", "afterok:14352_*(unfulfilled)", kDep},
                           {"afterok:14352_2", "afterok:14352_2(unfulfilled)", kDep},
                           {"after:14352", "after:14352_*(unfulfilled)", kDep},
                           // From a job that is not an array task: afterok on all.
                           {"aftercorr:14350", "aftercorr:14350_*(failed)", kNever},
                           {"aftercorr:14352", "aftercorr:14352_*(unfulfilled)", kDep},
                       });
}

TEST(DependencyEvalTest, AfterCorrFromArrayTasks) {
  // sbatch --array=0-4 --dependency=aftercorr:14350 --wrap true: tasks 0 1 3
  // ran; 2 (failed in 14350) and 4 (no task 4 there) showed
  // DependencyNeverSatisfied, Dependency=aftercorr:14350_*(failed).
  FakeJobs jobs;
  for (int task : {0, 1, 3}) {
    Shown s = Show(jobs, "aftercorr:14350", Self(14424, task));
    EXPECT_EQ(s.dependency, "(null)") << task;
    EXPECT_EQ(s.reason, kNone) << task;
  }
  for (int task : {2, 4}) {
    Shown s = Show(jobs, "aftercorr:14350", Self(14424, task));
    EXPECT_EQ(s.dependency, "aftercorr:14350_*(failed)") << task;
    EXPECT_EQ(s.reason, kNever) << task;
  }
  // --dependency=aftercorr:14352 (pending array): every task
  // aftercorr:14352_*(unfulfilled); aftercorr:14274 (a running plain job):
  // aftercorr:14274(unfulfilled).
  EXPECT_EQ(Show(jobs, "aftercorr:14352", Self(14425, 3)).dependency,
            "aftercorr:14352_*(unfulfilled)");
  EXPECT_EQ(Show(jobs, "aftercorr:14274", Self(14427, 4)).dependency,
            "aftercorr:14274(unfulfilled)");
  // Once the plain job has ended OK, every task may go.
  EXPECT_EQ(Show(jobs, "aftercorr:14271", Self(14427, 4)).reason, kNone);

  DepVerdict v = EvaluateDependency(Parse("aftercorr:14350"), Self(14424, 4), jobs, kNow);
  EXPECT_EQ(v.explanation, "array 14350 has no task 4, so aftercorr:14350_* can never be satisfied");
}

// The pass's decision for a pending job: a met dependency is dropped, a
// failed one fails the job, one still waiting is kept.
TEST(DependencyGateTest, PlainJobs) {
  FakeJobs jobs;
  DepGate met = GateDependency(Parse("afterok:14271"), Self(), jobs, kNow, 256);
  EXPECT_EQ(met.reason, kNone);
  EXPECT_EQ(met.action, DepGate::Action::kDrop);
  EXPECT_EQ(met.dependency_state, "");
  DepGate failed = GateDependency(Parse("afterok:14272"), Self(), jobs, kNow, 256);
  EXPECT_EQ(failed.reason, kNever);
  EXPECT_EQ(failed.action, DepGate::Action::kFail);
  EXPECT_EQ(failed.dependency_state, "afterok:14272(failed)");
  EXPECT_FALSE(failed.explanation.empty());
  DepGate waits = GateDependency(Parse("afterok:14274"), Self(), jobs, kNow, 256);
  EXPECT_EQ(waits.reason, kDep);
  EXPECT_EQ(waits.action, DepGate::Action::kKeep);
  EXPECT_EQ(waits.dependency_state, "afterok:14274(unfulfilled)");
  EXPECT_EQ(waits.start_count, 0);
  // after+time waits for the clock only: when, so the controller looks then.
  DepGate timed = GateDependency(Parse("after:14271+10"), Self(), jobs, kNow, 256);
  EXPECT_EQ(timed.reason, kDep);
  EXPECT_EQ(timed.ready_at, kNow - 120 + 600);
}

// An array's pending part with aftercorr: as many of its next tasks start
// as have partners that ended OK; a next task whose partner failed is
// split off failed (or fails the part when it is the last).
TEST(DependencyGateTest, ArrayPartsWithAfterCorr) {
  FakeJobs jobs;  // 14350: tasks 0, 1, 3 COMPLETED, 2 FAILED
  core::Job part = Self(14424);
  part.array_job_id = 14424;
  part.array_task_id = -1;
  part.array_pending = {0, 1, 2, 3};
  DepGate run = GateDependency(Parse("aftercorr:14350"), part, jobs, kNow, 256);
  EXPECT_EQ(run.reason, kNone);
  EXPECT_EQ(run.action, DepGate::Action::kKeep);  // kept for the tasks after
  EXPECT_EQ(run.start_count, 2);
  EXPECT_EQ(run.cut_reason, kDep);
  EXPECT_NE(run.cut_why.find("14350"), std::string::npos) << run.cut_why;
  EXPECT_EQ(GateDependency(Parse("aftercorr:14350"), part, jobs, kNow, 1).start_count, 1);
  part.array_pending = {2, 3};
  DepGate split = GateDependency(Parse("aftercorr:14350"), part, jobs, kNow, 256);
  EXPECT_EQ(split.reason, kNever);
  EXPECT_EQ(split.action, DepGate::Action::kSplitFailedTask);
  part.array_pending = {2};
  EXPECT_EQ(GateDependency(Parse("aftercorr:14350"), part, jobs, kNow, 256).action,
            DepGate::Action::kFail);
  // All partners ended OK: the whole run, no cut.
  part.array_pending = {0, 1, 2, 3};
  DepGate all = GateDependency(Parse("aftercorr:14351"), part, jobs, kNow, 256);
  EXPECT_EQ(all.start_count, 4);
  EXPECT_EQ(all.cut_reason, core::PendingReason::kNone);
}

TEST(DependencyEvalTest, AfterWithTime) {
  FakeJobs jobs;
  // after:14274+5: RUNNING since 18:36:56, Dependency=after:14274+5(unfulfilled)
  // at 18:39:53. The fake's jobs started at kNow - 120.
  Dependency d = Parse("after:14274+5");
  DepVerdict v = EvaluateDependency(d, Self(), jobs, kNow);
  EXPECT_EQ(v.status, DepStatus::kWaiting);
  EXPECT_EQ(v.ready_at, kNow - 120 + 300);
  EXPECT_EQ(FormatDependency(d, v.states), "after:14274+5(unfulfilled)");
  EXPECT_EQ(v.explanation, "needs 5 minutes to pass since job 14274 started (in 3 minutes)");
  v = EvaluateDependency(d, Self(), jobs, kNow + 180);
  EXPECT_EQ(v.status, DepStatus::kSatisfied);
  EXPECT_EQ(FormatDependency(d, v.states), "(null)");

  RunCases(jobs, {
                     // A pending job: no time yet.
                     {"after:14276+5", "after:14276+5(unfulfilled)", kDep},
                     // Completed 14271 and cancelled-before-start 14273 both wait
                     // out +60 from their start or cancellation.
                     {"after:14271+60", "after:14271+60(unfulfilled)", kDep},
                     {"after:14273+60", "after:14273+60(unfulfilled)", kDep},
                     {"after:14274+5:14276+3", "after:14274+5(unfulfilled),after:14276+3(unfulfilled)",
                      kDep},
                     // Slurm prints the time on other types but does not wait for it.
                     {"afterok:14271+2", "(null)", kNone},
                     {"afterany:14271+2", "(null)", kNone},
                     {"afternotok:14272+2", "(null)", kNone},
                     {"afterany:14276+3", "afterany:14276+3(unfulfilled)", kDep},
                     {"afterok:14274+2", "afterok:14274+2(unfulfilled)", kDep},
                     // The second time for the same job is dropped.
                     {"after:14274+5,after:14274+6", "after:14274+5(unfulfilled)", kDep},
                 });

  // 14273 was cancelled (end_time kNow - 60) without starting.
  v = EvaluateDependency(Parse("after:14273+60"), Self(), jobs, kNow);
  EXPECT_EQ(v.ready_at, kNow - 60 + 3600);
  // ',': the last of the clocks; '?': the first.
  v = EvaluateDependency(Parse("after:14271+60,after:14274+5"), Self(), jobs, kNow);
  EXPECT_EQ(v.ready_at, kNow - 120 + 3600);
  v = EvaluateDependency(Parse("after:14271+60?after:14274+5"), Self(), jobs, kNow);
  EXPECT_EQ(v.ready_at, kNow - 120 + 300);
  // Waiting for an event as well: the clock alone does not tell.
  v = EvaluateDependency(Parse("after:14274+5,afterok:14276"), Self(), jobs, kNow);
  EXPECT_EQ(v.status, DepStatus::kWaiting);
  EXPECT_EQ(v.ready_at, 0);
}

TEST(DependencyEvalTest, Singleton) {
  // `-J sing --dependency=singleton` behind other pending "sing" jobs:
  // Dependency=singleton(unfulfilled); with a unique name: (null).
  FakeJobs jobs;
  jobs.BlockSingleton(20000);
  EXPECT_EQ(Show(jobs, "singleton").dependency, "singleton(unfulfilled)");
  EXPECT_EQ(Show(jobs, "singleton").reason, kDep);
  EXPECT_EQ(Show(jobs, "afterok:14274,singleton").dependency,
            "afterok:14274(unfulfilled),singleton(unfulfilled)");
  EXPECT_EQ(Show(jobs, "afterok:14271?singleton").dependency, "(null)");
  DepVerdict v = EvaluateDependency(Parse("singleton"), Self(), jobs, kNow);
  EXPECT_EQ(v.explanation, "needs the earlier job named 'train' of alice to end (singleton)");

  EXPECT_EQ(Show(jobs, "singleton", Self(20001)).dependency, "(null)");
  EXPECT_EQ(Show(jobs, "singleton", Self(20001)).reason, kNone);
}

TEST(DependencyEvalTest, Explanations) {
  FakeJobs jobs;
  auto explain = [&](std::string_view spec) {
    return EvaluateDependency(Parse(spec), Self(), jobs, kNow).explanation;
  };
  EXPECT_EQ(explain("afterok:14274"), "needs job 14274 to end COMPLETED with exit 0");
  EXPECT_EQ(explain("afterany:14274:14276"), "needs job 14274 to end and job 14276 to end");
  EXPECT_EQ(explain("afterok:14274?after:14276"),
            "needs job 14274 to end COMPLETED with exit 0 or job 14276 to start");
  EXPECT_EQ(explain("afterok:14352"), "needs every task of array 14352 to end COMPLETED with exit 0");
  EXPECT_EQ(explain("afterok:14272"),
            "job 14272 ended FAILED (exit 3), so afterok:14272 can never be satisfied");
  EXPECT_EQ(explain("afterok:14350"),
            "task 2 of array 14350 ended FAILED (exit 1), so afterok:14350_* can never be "
            "satisfied");
  EXPECT_EQ(explain("afternotok:14271"),
            "job 14271 ended COMPLETED with exit 0, so afternotok:14271 can never be satisfied");
  EXPECT_EQ(explain("afterok:14272?afternotok:14271"),
            "no alternative can be satisfied any more: job 14272 ended FAILED (exit 3), so "
            "afterok:14272 can never be satisfied; job 14271 ended COMPLETED with exit 0, so "
            "afternotok:14271 can never be satisfied");
  EXPECT_EQ(explain("afterok:14271"), "");
}

TEST(DependencyEvalTest, NoDependency) {
  // sbatch --dependency= --wrap true: Dependency=(null).
  FakeJobs jobs;
  Dependency d = Parse("");
  EXPECT_TRUE(d.terms.empty());
  DepVerdict v = EvaluateDependency(d, Self(), jobs, kNow);
  EXPECT_EQ(v.status, DepStatus::kSatisfied);
  EXPECT_EQ(FormatDependency(d, v.states), "(null)");
}

TEST(DependencyParseTest, Accepted) {
  struct Case {
    const char* spec;
    bool any;
    std::vector<DepTerm> terms;
    const char* shown;  // Dependency= while none is fulfilled (--hold on the oracle)
  };
  using T = DepType;
  const std::vector<Case> cases = {
      {"afterok:12:13,afterany:14", false,
       {{T::kAfterOk, 12}, {T::kAfterOk, 13}, {T::kAfterAny, 14}},
       "afterok:12(unfulfilled),afterok:13(unfulfilled),afterany:14(unfulfilled)"},
      {"afterok:12?afternotok:13", true,
       {{T::kAfterOk, 12}, {T::kAfterNotOk, 13}},
       "afterok:12(unfulfilled)?afternotok:13(unfulfilled)"},
      // Mixed separators: Slurm joined all three with '?'.
      {"afterok:12?afterany:13,afterok:14", true,
       {{T::kAfterOk, 12}, {T::kAfterAny, 13}, {T::kAfterOk, 14}},
       "afterok:12(unfulfilled)?afterany:13(unfulfilled)?afterok:14(unfulfilled)"},
      {"after:12+5", false, {{T::kAfter, 12, -1, false, 300}}, "after:12+5(unfulfilled)"},
      {"afterany:12+5", false, {{T::kAfterAny, 12, -1, false, 300}}, "afterany:12+5(unfulfilled)"},
      {"singleton", false, {{T::kSingleton, 0}}, "singleton(unfulfilled)"},
      {"SINGLETON", false, {{T::kSingleton, 0}}, "singleton(unfulfilled)"},
      {"aftercorr:20", false, {{T::kAfterCorr, 20}}, "aftercorr:20(unfulfilled)"},
      {"afterok:20_3", false, {{T::kAfterOk, 20, 3}}, "afterok:20_3(unfulfilled)"},
      {"afterok:12_*", false, {{T::kAfterOk, 12, -1, true}}, "afterok:12_*(unfulfilled)"},
      {"afterok:12_[1-3]", false,
       {{T::kAfterOk, 12, 1}, {T::kAfterOk, 12, 2}, {T::kAfterOk, 12, 3}},
       "afterok:12_1(unfulfilled),afterok:12_2(unfulfilled),afterok:12_3(unfulfilled)"},
      {"afterok:12_[1,4-5]", false,
       {{T::kAfterOk, 12, 1}, {T::kAfterOk, 12, 4}, {T::kAfterOk, 12, 5}},
       "afterok:12_1(unfulfilled),afterok:12_4(unfulfilled),afterok:12_5(unfulfilled)"},
      // Slurm put the +5 on the last task only
      // (afterok:12_1(unfulfilled),afterok:12_2(unfulfilled),afterok:12_3+5(unfulfilled));
      // Muster gives it to every task the list names.
      {"afterok:12_[1-2]+5", false,
       {{T::kAfterOk, 12, 1, false, 300}, {T::kAfterOk, 12, 2, false, 300}},
       "afterok:12_1+5(unfulfilled),afterok:12_2+5(unfulfilled)"},
      {"AFTEROK:12", false, {{T::kAfterOk, 12}}, "afterok:12(unfulfilled)"},
      {"AfterOK:12", false, {{T::kAfterOk, 12}}, "afterok:12(unfulfilled)"},
      {"12", false, {{T::kAfterAny, 12}}, "afterany:12(unfulfilled)"},
      {"afterburstbuffer:12", false, {{T::kAfterBurstBuffer, 12}},
       "afterburstbuffer:12(unfulfilled)"},
      {"afterok:12,afterok:12", false, {{T::kAfterOk, 12}}, "afterok:12(unfulfilled)"},
      {"after:12+5,after:12+6", false, {{T::kAfter, 12, -1, false, 300}}, "after:12+5(unfulfilled)"},
  };
  for (const auto& c : cases) {
    auto d = ParseDependency(c.spec);
    ASSERT_TRUE(d.ok()) << c.spec << ": " << d.status().message();
    EXPECT_EQ(d->any, c.any) << c.spec;
    EXPECT_EQ(d->terms, c.terms) << c.spec;
    EXPECT_EQ(FormatDependency(*d, {}), c.shown) << c.spec;
  }
}

TEST(DependencyParseTest, Refused) {
  // Each printed "sbatch: error: Batch job submission failed: Job dependency
  // problem" on the oracle (sbatch --hold --dependency=SPEC --wrap true),
  // except expand, which printed "... failed: Requested operation not
  // supported on this system". The last four Slurm let through (afterok:-1
  // as job 4294967295, "afterok: 12" as 12, "+5m" as 5 minutes, "12_" as
  // satisfied); Muster refuses them.
  struct Case {
    const char* spec;
    util::Code code;
    const char* message;
  };
  constexpr auto kBad = util::Code::kInvalidArgument;
  const std::vector<Case> cases = {
      {"bogus", kBad,
       "invalid dependency 'bogus': unknown dependency type 'bogus' (after, afterany, afterok, "
       "afternotok, aftercorr, afterburstbuffer or singleton)"},
      {"afterok:abc", kBad, "invalid dependency 'afterok:abc': 'abc' is not a job id"},
      {"afterok:", kBad, "invalid dependency 'afterok:': a job id is missing"},
      {"afterok:0", kBad, "invalid dependency 'afterok:0': '0' is not a job id"},
      {"afterok:12::13", kBad, "invalid dependency 'afterok:12::13': a job id is missing"},
      {"afterok:12,", kBad,
       "invalid dependency 'afterok:12,': an empty element (doubled or trailing separator)"},
      {"afterok:12?", kBad,
       "invalid dependency 'afterok:12?': an empty element (doubled or trailing separator)"},
      {",afterok:12", kBad,
       "invalid dependency ',afterok:12': an empty element (doubled or trailing separator)"},
      {"afterok:12,,afterok:13", kBad,
       "invalid dependency 'afterok:12,,afterok:13': an empty element (doubled or trailing "
       "separator)"},
      {"afterok:12??afterok:13", kBad,
       "invalid dependency 'afterok:12??afterok:13': an empty element (doubled or trailing "
       "separator)"},
      {"afterok:12 ", kBad, "invalid dependency 'afterok:12 ': '12 ' is not a job id"},
      {"singleton:5", kBad, "invalid dependency 'singleton:5': singleton takes no job id"},
      {"aftercorr", kBad, "invalid dependency 'aftercorr': 'aftercorr' needs a job id "
                          "(aftercorr:<job_id>)"},
      {"after:12+x", kBad,
       "invalid dependency 'after:12+x': '+x' is not a positive number of minutes"},
      {"after:12+0", kBad,
       "invalid dependency 'after:12+0': '+0' is not a positive number of minutes"},
      {"after:12+", kBad, "invalid dependency 'after:12+': '+' is not a positive number of minutes"},
      {"after:12+-1", kBad,
       "invalid dependency 'after:12+-1': '+-1' is not a positive number of minutes"},
      {"afterok:12_x", kBad, "invalid dependency 'afterok:12_x': 'x' is not an array task id"},
      {"afterok:12_[3-1]", kBad,
       "invalid dependency 'afterok:12_[3-1]': task range '3-1' runs backwards"},
      {"afterok:12_[0-999999]", kBad,
       "invalid dependency 'afterok:12_[0-999999]': more than 100000 array tasks"},
      // Each list within the bound, together beyond it.
      {"afterok:12_[0-60000],afterok:13_[0-60000]", kBad,
       "invalid dependency 'afterok:12_[0-60000],afterok:13_[0-60000]': more than 100000 terms"},
      // Slurm took the step oddly (afterok:12_1,afterok:12_3); Muster refuses it.
      {"afterok:12_[1-5:2]", kBad,
       "invalid dependency 'afterok:12_[1-5:2]': '5:2' is not an array task id"},
      {"expand:12", util::Code::kFailedPrecondition,
       "invalid dependency 'expand:12': Muster does not grow running jobs (expand)"},
      {"afterok:-1", kBad, "invalid dependency 'afterok:-1': '-1' is not a job id"},
      {"afterok: 12", kBad, "invalid dependency 'afterok: 12': ' 12' is not a job id"},
      {"after:12+5m", kBad,
       "invalid dependency 'after:12+5m': '+5m' is not a positive number of minutes"},
      {"afterok:12_", kBad, "invalid dependency 'afterok:12_': '' is not an array task id"},
  };
  for (const auto& c : cases) {
    auto d = ParseDependency(c.spec);
    ASSERT_FALSE(d.ok()) << c.spec;
    EXPECT_EQ(d.status().code(), c.code) << c.spec;
    EXPECT_EQ(d.status().message(), c.message) << c.spec;
    EXPECT_EQ(SlurmSubmitErrorText(d.status()), c.code == kBad
                                                    ? "Job dependency problem"
                                                    : "Requested operation not supported on this system")
        << c.spec;
  }
}

// The largest list a spec may hold is kept whole, duplicates once each: a
// submission's dependency is read by musterd, so this must stay cheap
// (the check once compared every pair of terms).
TEST(DependencyParseTest, LargeTaskListsDeduplicate) {
  auto d = ParseDependency("afterok:12_[0-49998],afterok:12_[0-49998],afterok:12_5");
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->terms.size(), 49999u);
  EXPECT_EQ(d->terms.front().task_id, 0);
  EXPECT_EQ(d->terms.back().task_id, 49998);
}

}  // namespace
}  // namespace muster::sched

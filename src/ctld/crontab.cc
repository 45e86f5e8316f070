// scrontab in musterd: each user's crontab is kept as its text in
// StateSaveLocation/crontab/<uid>, and each of its entries is one job
// (JobRequest::cron_spec) that waits for its schedule's next minute
// (BeginTime) and, when a run ends, goes back to the queue for the next
// one, under the same id, as in Slurm: a run still going when the next
// minute comes is never started twice. Installing a crontab replaces the
// old one's jobs (pending ones are cancelled, running ones finish their
// run and are not queued again) once every new entry's job is accepted;
// one refused leaves the old crontab as it was. Cancelling a cron job
// disables its line ("#DISABLED: "), as Slurm does.
#include <pwd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/cron.h"
#include "core/json.h"
#include "ctld/controller.h"
#include "util/atomic_file.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using nlohmann::json;

namespace {

std::string CrontabDir(const config::Config& cfg) { return cfg.state_save_location + "/crontab"; }
std::string CrontabPath(const config::Config& cfg, uint32_t uid) {
  return fmt::format("{}/{}", CrontabDir(cfg), uid);
}

}  // namespace

util::Result<std::string> Controller::CrontabOf(uint32_t uid, const Caller& caller) const {
  if (!caller.admin && caller.uid != uid) return util::PermissionDenied("Access/permission denied");
  std::ifstream in(CrontabPath(cfg_, uid), std::ios::binary);
  if (!in) return util::NotFound("no crontab for " + util::UserName(uid));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

util::Result<std::vector<core::JobId>> Controller::InstallCrontab(uint32_t uid,
                                                                  const std::string& text,
                                                                  const json& entries,
                                                                  const Caller& caller) {
  if (!caller.admin && caller.uid != uid) return util::PermissionDenied("Access/permission denied");
  // Checked before anything changes.
  std::vector<core::JobRequest> requests;
  for (const json& e : entries) {
    const std::string spec = e.at("spec").get<std::string>();
    util::Result<core::CronSchedule> schedule = core::ParseCronSchedule(spec);
    if (!schedule.ok()) {
      return util::InvalidArgument(
          fmt::format("line {}: {}", e.at("line").get<int>(), schedule.status().message()));
    }
    core::JobRequest req = e.at("request").get<core::JobRequest>();
    req.cron_spec = spec;
    req.cron_line = e.at("line").get<int>();
    req.begin_time = core::NextCronTime(*schedule, Now());
    if (req.begin_time < 0) {
      return util::InvalidArgument(fmt::format("line {}: '{}' never comes", req.cron_line, spec));
    }
    requests.push_back(std::move(req));
  }
  struct passwd* pw = ::getpwuid(uid);
  if (pw == nullptr) return util::InvalidArgument(fmt::format("no user {}", uid));
  const Caller owner{uid, static_cast<uint32_t>(pw->pw_gid), false};
  // The old crontab's jobs, before the new ones join them.
  std::vector<Job*> old;
  for (Job& job : cluster_.jobs()) {
    if (job.req.uid == uid && !job.req.cron_spec.empty() && !core::IsFinished(job.state)) {
      old.push_back(&job);
    }
  }
  auto cancel = [&](Job& job) {
    job.req.cron_spec.clear();
    if (job.state == JobState::kPending) CancelPending(job, caller.uid);
    MarkJob(job.id);
  };
  // The new entries' jobs first: one that is refused (a partition that
  // does not exist, say) takes back those made before it, and the old
  // crontab stays as it was.
  std::vector<core::JobId> ids;
  for (core::JobRequest& req : requests) {
    sched::SubmitRefusal why;
    const int line = req.cron_line;
    util::Result<core::JobId> id = Submit(std::move(req), owner, &why);
    if (!id.ok()) {
      for (core::JobId made : ids) {
        if (Job* job = cluster_.jobs().Find(made)) cancel(*job);
      }
      return util::InvalidArgument(fmt::format("line {}: {}", line, id.status().message()));
    }
    ids.push_back(*id);
  }
  std::error_code ec;
  std::filesystem::create_directories(CrontabDir(cfg_), ec);
  util::Status saved = text.empty() ? util::Status::Ok()
                                    : util::WriteFileAtomically(CrontabPath(cfg_, uid), text);
  if (text.empty()) std::filesystem::remove(CrontabPath(cfg_, uid), ec);
  if (!saved.ok()) {
    for (core::JobId made : ids) {
      if (Job* job = cluster_.jobs().Find(made)) cancel(*job);
    }
    return saved;
  }
  // The pending ones go; the running ones finish this run only.
  for (Job* job : old) cancel(*job);
  util::LogInfo("crontab of {} installed: {} entries", util::UserName(uid), ids.size());
  return ids;
}

bool Controller::RequeueCronJob(Job& job, JobState state) {
  if (job.req.cron_spec.empty() || state == JobState::kCancelled) return false;
  util::Result<core::CronSchedule> schedule = core::ParseCronSchedule(job.req.cron_spec);
  const int64_t next = schedule.ok() ? core::NextCronTime(*schedule, Now()) : -1;
  if (next < 0) return false;
  PutBackInQueue(job, false, "");
  // Its next minute, not the rerun's credential delay: the same job never
  // runs twice at once, so nothing of the old run can be mistaken.
  job.req.begin_time = next;
  util::LogInfo("job {}: cron job ended {}, queued again for {}", job.id,
                core::JobStateName(state), next);
  return true;
}

void Controller::DisableCronLine(const Job& job) {
  if (job.req.cron_spec.empty() || job.req.cron_line <= 0) return;
  Caller self{job.req.uid, job.req.gid, true};
  util::Result<std::string> text = CrontabOf(job.req.uid, self);
  if (!text.ok()) return;
  std::vector<std::string> lines = util::Split(*text, '\n', false);
  const size_t i = static_cast<size_t>(job.req.cron_line - 1);
  if (i >= lines.size() || lines[i].starts_with("#DISABLED: ")) return;
  lines[i] = "#DISABLED: " + lines[i];
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) out += (k ? "\n" : "") + lines[k];
  if (util::Status st = util::WriteFileAtomically(CrontabPath(cfg_, job.req.uid), out); !st.ok()) {
    util::LogError("{}", st.message());
  }
}

}  // namespace muster::ctld

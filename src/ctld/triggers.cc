// strigger in musterd: triggers are set, listed and cleared through the
// API and kept in StateSaveLocation/triggers.json. Unlike Slurm, which
// looks for events every 15 seconds, musterd sees them as they are
// committed (CheckTriggers, from the commit writer): a node's state
// change, a job's end. Job time limits and offsets have a timer.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "ctld/controller.h"
#include "util/atomic_file.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/spawn.h"
#include "util/strings.h"
#include "util/users.h"

namespace muster::ctld {

using core::Job;
using core::JobState;
using core::Trigger;
using core::TriggerResource;
using nlohmann::json;

namespace {

std::string Path(const config::Config& cfg) { return cfg.state_save_location + "/triggers.json"; }

// The job a job trigger is about (null: gone, or not a job id).
const Job* JobOf(const cluster::JobTable& jobs, const Trigger& t) {
  const util::Result<int64_t> id = util::ParseInt(t.resource_id);
  if (!id.ok() || *id <= 0 || *id > UINT32_MAX) return nullptr;
  return jobs.Find(static_cast<core::JobId>(*id));
}

bool NodeIn(const std::string& hostlist, const std::string& node) {
  if (hostlist == "*") return true;
  util::Result<std::vector<std::string>> names = util::ExpandHostlist(hostlist);
  return names.ok() && std::find(names->begin(), names->end(), node) != names->end();
}

}  // namespace

util::Status Controller::LoadTriggers() {
  std::ifstream in(Path(cfg_));
  if (!in) return util::Status::Ok();  // none set yet
  json saved = json::parse(in, nullptr, false);
  if (saved.is_discarded() || !saved.is_object()) {
    return util::Internal(Path(cfg_) + ": not a triggers file");
  }
  next_trigger_id_ = saved.value("next_id", 1u);
  for (const json& j : saved.value("triggers", json::array())) {
    util::Result<Trigger> t = core::TriggerFromJson(j);
    if (!t.ok()) return util::Internal(Path(cfg_) + ": " + t.status().message());
    triggers_.push_back(std::move(*t));
  }
  return util::Status::Ok();
}

util::Status Controller::SaveTriggers() const {
  json list = json::array();
  for (const Trigger& t : triggers_) list.push_back(core::ToJson(t));
  return util::WriteFileAtomically(Path(cfg_),
                                   json{{"next_id", next_trigger_id_}, {"triggers", list}}.dump());
}

void Controller::SnapshotTriggerNodes() {
  trigger_nodes_.clear();
  for (const core::Node& n : cluster_.nodes()) {
    const bool down = n.Base() == core::NodeBase::kDown;
    trigger_nodes_[n.config.name] = {down, !down && n.drain && n.running_jobs == 0, n.fail};
  }
}

util::Result<uint32_t> Controller::SetTrigger(Trigger t, const Caller& caller) {
  if (!core::TriggerTypeValid(t.resource, t.type)) {
    return util::InvalidArgument(fmt::format("a {} trigger cannot be --{}",
                                             core::TriggerResourceName(t.resource), t.type));
  }
  if (t.program.empty() || t.program[0] != '/') {
    return util::InvalidArgument("The --program value must start with \"/\"");
  }
  if (t.resource == TriggerResource::kJob) {
    const Job* job = JobOf(cluster_.jobs(), t);
    if (job == nullptr || core::IsFinished(job->state)) {
      return util::NotFound("Invalid job id specified");
    }
    if (!caller.admin && job->req.uid != caller.uid) {
      return util::PermissionDenied("Access/permission denied");
    }
  } else if (!caller.admin) {
    return util::PermissionDenied("Access/permission denied: only operators set node and "
                                  "controller triggers");
  }
  if (t.resource == TriggerResource::kNode && t.resource_id != "*") {
    util::Result<std::vector<std::string>> names = util::ExpandHostlist(t.resource_id);
    if (!names.ok() || names->empty()) {
      return util::InvalidArgument("Invalid node name specified: " + t.resource_id);
    }
    for (const std::string& n : *names) {
      if (cluster_.FindNode(n) == nullptr)
        return util::InvalidArgument("Invalid node name specified: " + n);
    }
  }
  // Run as the one who set it: only root can be someone else.
  if (::geteuid() != 0 && caller.uid != ::geteuid()) {
    return util::PermissionDenied(
        fmt::format("Access/permission denied: musterd runs as {}, not root, so it runs trigger "
                    "programs as {} only",
                    util::UserName(::geteuid()), util::UserName(::geteuid())));
  }
  t.uid = caller.uid;
  t.gid = caller.gid;
  t.user = util::UserName(caller.uid);
  t.id = next_trigger_id_++;
  if (triggers_.empty()) SnapshotTriggerNodes();
  triggers_.push_back(t);
  if (util::Status saved = SaveTriggers(); !saved.ok()) {
    triggers_.pop_back();
    return saved;
  }
  util::LogInfo("trigger {} set by {}: {} {} {} -> {}", t.id, t.user,
                core::TriggerResourceName(t.resource), t.resource_id, t.type, t.program);
  ArmTriggerTimer();
  return t.id;
}

util::Result<int> Controller::ClearTriggers(uint32_t id, core::JobId job,
                                            std::optional<uint32_t> uid, const Caller& caller) {
  int cleared = 0;
  bool refused = false;
  std::vector<Trigger> kept;
  for (Trigger& t : triggers_) {
    const bool match = (id == 0 || t.id == id) &&
                       (job == 0 || (t.resource == TriggerResource::kJob &&
                                     t.resource_id == std::to_string(job))) &&
                       (!uid || t.uid == *uid);
    if (match && !caller.admin && t.uid != caller.uid) refused = true;
    if (match && (caller.admin || t.uid == caller.uid)) {
      ++cleared;
    } else {
      kept.push_back(std::move(t));
    }
  }
  triggers_ = std::move(kept);
  if (cleared == 0) {
    if (refused) return util::PermissionDenied("Access/permission denied");
    return util::NotFound("No such process");  // Slurm's words for "no such trigger"
  }
  MUSTER_RETURN_IF_ERROR(SaveTriggers());
  ArmTriggerTimer();
  return cleared;
}

void Controller::RunTriggerProgram(const Trigger& t, const std::string& argument) {
  const std::vector<std::string> argv = core::TriggerCommand(t, argument);
  util::SpawnIdentity as;
  as.uid = t.uid;
  as.gid = t.gid;
  for (uint32_t g : util::UserGroups(t.uid, t.gid)) as.groups.push_back(g);
  std::string home = "/";
  if (struct passwd* pw = ::getpwuid(t.uid); pw != nullptr && pw->pw_dir != nullptr) {
    home = pw->pw_dir;
  }
  const std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                        "HOME=" + home, "USER=" + t.user, "LOGNAME=" + t.user};
  util::Status st = util::SpawnDetached(argv, env, as);
  if (!st.ok()) {
    util::LogWarn("trigger {}: {}", t.id, st.message());
    return;
  }
  util::LogInfo("trigger {} ({} {} {}): ran {} {} as {}", t.id,
                core::TriggerResourceName(t.resource), t.resource_id, t.type, t.program, argument,
                t.user);
}

void Controller::FireTrigger(const Trigger& t, const std::string& argument) {
  if (t.offset > 0 && t.type != "time") {
    delayed_firings_.push_back({Now() + t.offset, t, argument});
    return;
  }
  RunTriggerProgram(t, argument);
}

void Controller::CheckTriggers() {
  if (triggers_.empty()) return;
  // The nodes whose state may have changed: those written, and those of
  // jobs written (a job's end can leave its draining node drained).
  std::set<std::string> candidates = dirty_nodes_;
  for (core::JobId id : cluster_.changed_jobs()) {
    if (const Job* job = cluster_.jobs().Find(id)) {
      for (const core::NodeAlloc& a : job->alloc) candidates.insert(a.node);
    }
  }
  // The nodes of each trigger's events.
  std::map<uint32_t, std::vector<std::string>> hits;
  for (const std::string& name : candidates) {
    const core::Node* node = cluster_.FindNode(name);
    if (node == nullptr) continue;
    const bool down = node->Base() == core::NodeBase::kDown;
    const TriggerNodeState now{down, !down && node->drain && node->running_jobs == 0, node->fail};
    auto [it, fresh] = trigger_nodes_.emplace(name, now);
    const TriggerNodeState before = fresh ? now : it->second;
    it->second = now;
    const bool went_down = !before.down && now.down, came_up = before.down && !now.down;
    const bool drained = !before.drained && now.drained;
    const bool failed = !before.fail && now.fail;
    if (!went_down && !came_up && !drained && !failed) continue;
    for (const Trigger& t : triggers_) {
      const bool event = (t.type == "down" && went_down) || (t.type == "up" && came_up) ||
                         (t.type == "drained" && drained) || (t.type == "fail" && failed) ||
                         t.type == "reconfig";
      if (!event) continue;
      bool watched = false;
      if (t.resource == TriggerResource::kNode) {
        watched = NodeIn(t.resource_id, name);
      } else if (t.resource == TriggerResource::kJob && (t.type == "down" || t.type == "up")) {
        const Job* job = JobOf(cluster_.jobs(), t);
        watched = job != nullptr && std::any_of(job->alloc.begin(), job->alloc.end(),
                                                [&](const core::NodeAlloc& a) {
                                                  return a.node == name;
                                                });
      }
      if (watched) hits[t.id].push_back(name);
    }
  }
  // Jobs that ended: their fini triggers fire; their other triggers can no
  // longer, and go.
  std::set<std::string> ended;
  for (core::JobId id : cluster_.changed_jobs()) {
    const Job* job = cluster_.jobs().Find(id);
    if (job != nullptr && core::IsFinished(job->state)) ended.insert(std::to_string(id));
  }
  SweepTriggers([&](const Trigger& t) {
    bool fired = false;
    if (auto hit = hits.find(t.id); hit != hits.end()) {
      FireTrigger(t, util::CompressHostlist(hit->second));
      fired = true;
    }
    const bool job_over = t.resource == TriggerResource::kJob && ended.contains(t.resource_id);
    if (job_over && t.type == "fini") {
      FireTrigger(t, t.resource_id);
      fired = true;
    }
    return job_over || (fired && !t.perm);
  });
  // A job that started has a time limit to watch now.
  ArmTriggerTimer();
}

void Controller::FireEventTriggers(std::string_view type, TriggerResource resource) {
  SweepTriggers([&](const Trigger& t) {
    if (t.resource != resource || t.type != type) return false;
    FireTrigger(t, "");
    return !t.perm;
  });
}

void Controller::SweepTriggers(const std::function<bool(const Trigger&)>& visit) {
  const size_t before = triggers_.size();
  std::erase_if(triggers_, visit);  // visits each one once, in order
  if (triggers_.size() == before) return;
  if (util::Status st = SaveTriggers(); !st.ok()) util::LogError("{}", st.message());
}

void Controller::RunDueTriggers() {
  const int64_t now = Now();
  std::vector<DelayedFiring> later;
  for (DelayedFiring& f : delayed_firings_) {
    if (f.due <= now) {
      RunTriggerProgram(f.trigger, f.argument);
    } else {
      later.push_back(std::move(f));
    }
  }
  delayed_firings_ = std::move(later);
  // Job time limits: the offset before (negative) or after the limit.
  SweepTriggers([&](const Trigger& t) {
    if (t.resource != TriggerResource::kJob || t.type != "time") return false;
    const Job* job = JobOf(cluster_.jobs(), t);
    if (job == nullptr || job->state != JobState::kRunning || job->time_limit_s <= 0 ||
        job->start_time + job->time_limit_s + t.offset > now) {
      return false;
    }
    RunTriggerProgram(t, t.resource_id);
    return true;  // a job reaches its limit once: PERM or not
  });
  ArmTriggerTimer();
}

void Controller::ArmTriggerTimer() {
  std::optional<int64_t> due;
  auto consider = [&](int64_t when) { due = due ? std::min(*due, when) : when; };
  for (const DelayedFiring& f : delayed_firings_) consider(f.due);
  for (const Trigger& t : triggers_) {
    if (t.resource != TriggerResource::kJob || t.type != "time") continue;
    const Job* job = JobOf(cluster_.jobs(), t);
    if (job != nullptr && job->state == JobState::kRunning && job->time_limit_s > 0) {
      consider(job->start_time + job->time_limit_s + t.offset);
    }
  }
  if (!due) {
    if (trigger_timer_) trigger_timer_->Disarm();
    return;
  }
  if (!trigger_timer_) trigger_timer_ = time_.MakeTimer([this] { RunDueTriggers(); });
  trigger_timer_->ArmAt(*due);
}

}  // namespace muster::ctld

// squeue -s and scontrol show step, as Slurm 22.05 prints them (checked on
// the oracle).
#include <algorithm>

#include <fmt/format.h>

#include "cli/render/render.h"
#include "util/slurm_time.h"
#include "util/strings.h"
#include "util/user_db.h"

namespace muster::render {
namespace {

const core::Job* JobOf(const ClusterView& view, uint32_t id) {
  auto it = std::lower_bound(view.jobs.begin(), view.jobs.end(), id,
                             [](const core::Job* j, uint32_t v) { return j->id < v; });
  return it != view.jobs.end() && (*it)->id == id ? *it : nullptr;
}

// Whether `step` is named by one of -s's values ("12.0", or "12" for all
// of job 12's); every step when there are none.
bool Selected(const StepInfo& step, const std::vector<std::string>& ids) {
  if (ids.empty()) return true;
  const std::string job = std::to_string(step.job_id);
  const std::string full = job + "." + step.step_id;
  return std::any_of(ids.begin(), ids.end(),
                     [&](const std::string& id) { return id == full || id == job; });
}

std::string Field(char letter, const StepInfo& step, const core::Job* job,
                  const ClusterView& view) {
  switch (letter) {
    case 'i':
      return std::to_string(step.job_id) + "." + step.step_id;
    case 'j':
      return step.name;
    case 'P':
      return job != nullptr ? job->partition : "";
    case 'u':
      return job != nullptr ? view.users->UserName(job->req.uid) : "";
    case 'M':
      return util::FormatDuration(std::max<int64_t>(0, view.now - step.start_time));
    case 'N':
      return step.nodelist;
    default:
      return "";
  }
}

std::string Header(char letter) {
  switch (letter) {
    case 'i':
      return "STEPID";
    case 'j':
      return "NAME";
    case 'P':
      return "PARTITION";
    case 'u':
      return "USER";
    case 'M':
      return "TIME";
    case 'N':
      return "NODELIST";
    default:
      return "";
  }
}

// One -o column: "%.15i" (right-aligned in 15), "%15i" (left), "%i".
struct Column {
  std::string before;  // literal text before it
  char letter = 0;
  int width = 0;
  bool right = false;
};

std::vector<Column> ParseFormat(const std::string& format, std::string* tail) {
  std::vector<Column> out;
  Column c;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      c.before += format[i];
      continue;
    }
    size_t j = i + 1;
    if (format[j] == '.') {
      c.right = true;
      ++j;
    }
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) {
      c.width = c.width * 10 + (format[j] - '0');
      ++j;
    }
    if (j >= format.size()) break;
    c.letter = format[j];
    out.push_back(c);
    c = Column{};
    i = j;
  }
  *tail = c.before;
  return out;
}

std::string Cell(const Column& c, const std::string& value) {
  std::string v =
      c.width > 0 && static_cast<int>(value.size()) > c.width ? value.substr(0, c.width) : value;
  if (c.width <= 0) return v;
  return c.right ? fmt::format("{:>{}}", v, c.width) : fmt::format("{:<{}}", v, c.width);
}

}  // namespace

std::string RenderSqueueSteps(const SqueueRequest& req, const ClusterView& view) {
  std::string tail;
  const std::vector<Column> columns =
      ParseFormat(req.format.empty() ? kSqueueStepsFormat : req.format, &tail);
  std::string out;
  auto row = [&](auto value) {
    for (const Column& c : columns) out += c.before + Cell(c, value(c.letter));
    out += tail;
    // Trailing blanks of the last column are Slurm's too; only the newline.
    out += '\n';
  };
  if (!req.noheader) row([](char letter) { return Header(letter); });
  // Each job's numbered steps, then its batch step: Slurm 22.05's order.
  for (int pass_job_start = 0, i = 0; i < static_cast<int>(view.steps.size()); i = pass_job_start) {
    int end = i;
    while (end < static_cast<int>(view.steps.size()) &&
           view.steps[end].job_id == view.steps[i].job_id)
      ++end;
    pass_job_start = end;
    const core::Job* job = JobOf(view, view.steps[i].job_id);
    for (bool batch : {false, true}) {
      for (int k = i; k < end; ++k) {
        const StepInfo& step = view.steps[k];
        if ((step.step_id == "batch") != batch || !Selected(step, req.step_ids)) continue;
        if (!req.job_ids.empty() && std::find(req.job_ids.begin(), req.job_ids.end(),
                                              std::to_string(step.job_id)) == req.job_ids.end()) {
          continue;
        }
        if (!req.users.empty() && job != nullptr &&
            std::find(req.users.begin(), req.users.end(), view.users->UserName(job->req.uid)) ==
                req.users.end()) {
          continue;
        }
        row([&](char letter) { return Field(letter, step, job, view); });
      }
    }
  }
  return out;
}

util::Result<std::string> RenderShowSteps(const std::string& name, const ClusterView& view) {
  std::vector<std::string> ids;
  if (!name.empty()) ids.push_back(name);
  if (!name.empty()) {
    const std::string job = name.substr(0, name.find('.'));
    const bool known = std::any_of(view.steps.begin(), view.steps.end(), [&](const StepInfo& s) {
      return std::to_string(s.job_id) == job;
    });
    if (!known) return util::NotFound("slurm_get_job_steps error: Invalid job id specified");
  }
  std::string out;
  for (const StepInfo& step : view.steps) {
    if (!Selected(step, ids)) continue;
    const core::Job* job = JobOf(view, step.job_id);
    out += fmt::format("StepId={}.{} UserId={} StartTime={} TimeLimit=UNLIMITED\n", step.job_id,
                       step.step_id, job != nullptr ? job->req.uid : 0,
                       util::FormatTimestamp(step.start_time));
    out += fmt::format("   State=RUNNING Partition={} NodeList={}\n",
                       job != nullptr ? job->partition : "", step.nodelist);
    out += fmt::format("   Nodes={} CPUs={} Tasks={} Name={} Network=(null)\n", step.nodes,
                       step.cpus, step.tasks, step.name);
    out += "   TRES=" + (step.tres.empty() ? std::string("(null)") : step.tres) + "\n";
    out += "   ResvPorts=(null)\n";
    // Muster lays tasks out in blocks (sched/step_layout.h).
    out +=
        step.step_id == "batch" ? "   CPUFreqReq=Default\n" : "   CPUFreqReq=Default Dist=Block\n";
    out += fmt::format("   SrunHost:Pid={}:{}\n\n",
                       step.srun_host.empty() ? "(null)" : step.srun_host, step.srun_pid);
  }
  if (out.empty()) return std::string("No job steps in the system\n");
  return out;
}

}  // namespace muster::render

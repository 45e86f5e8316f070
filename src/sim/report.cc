#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "util/version.h"

namespace muster::sim {
namespace {

// The nearest-rank percentile of sorted values (none: 0).
int64_t Percentile(const std::vector<int64_t>& sorted, int pct) {
  if (sorted.empty()) return 0;
  size_t rank = (sorted.size() * static_cast<size_t>(pct) + 99) / 100;
  return sorted[std::max<size_t>(rank, 1) - 1];
}

bool Ended(const JobOutcome& j) { return j.start >= 0 && j.end >= j.start; }

double BoundedSlowdown(const JobOutcome& j) {
  double run = static_cast<double>(j.end - j.start);
  double wait = static_cast<double>(j.start - j.submit);
  return std::max(1.0, (wait + run) / std::max(run, static_cast<double>(kSlowdownBoundS)));
}

GroupFigures Group(const std::vector<const JobOutcome*>& jobs) {
  GroupFigures g;
  std::vector<int64_t> waits;
  double slowdown_sum = 0;
  int ended = 0;
  for (const JobOutcome* j : jobs) {
    ++g.jobs;
    if (j->backfilled) ++g.backfilled;
    if (j->preemptions > 0) ++g.preempted;
    if (j->start < 0) continue;
    ++g.started;
    waits.push_back(j->start - j->submit);
    if (Ended(*j)) {
      ++ended;
      slowdown_sum += BoundedSlowdown(*j);
    }
  }
  std::sort(waits.begin(), waits.end());
  g.wait_p50 = Percentile(waits, 50);
  g.wait_p90 = Percentile(waits, 90);
  g.wait_p99 = Percentile(waits, 99);
  g.wait_max = waits.empty() ? 0 : waits.back();
  double sum = 0;
  for (int64_t w : waits) sum += static_cast<double>(w);
  g.wait_mean = waits.empty() ? 0 : sum / static_cast<double>(waits.size());
  g.bounded_slowdown = ended == 0 ? 0 : slowdown_sum / ended;
  return g;
}

std::string GroupLine(const std::string& name, const GroupFigures& g) {
  return fmt::format(
      "{:<16} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10.1f} {:>9.2f} {:>9} {:>9}\n", name,
      g.jobs, g.started, g.wait_p50, g.wait_p90, g.wait_p99, g.wait_max, g.wait_mean,
      g.bounded_slowdown, g.backfilled, g.preempted);
}

std::string GroupTable(const std::string& title,
                       const std::map<std::string, GroupFigures>& groups) {
  std::string out =
      fmt::format("{:<16} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}\n",
                  title, "Jobs", "Started", "WaitP50", "WaitP90", "WaitP99", "WaitMax", "WaitMean",
                  "BSld", "Backfill", "Preempt");
  for (const auto& [name, g] : groups) out += GroupLine(name.empty() ? "(none)" : name, g);
  return out;
}

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

Figures Summarize(const std::vector<JobOutcome>& jobs, const ClusterSize& cluster) {
  Figures f;
  std::vector<const JobOutcome*> all;
  std::map<std::string, std::vector<const JobOutcome*>> by_partition, by_account;
  int64_t first_submit = std::numeric_limits<int64_t>::max(), last_end = 0;
  double cpu_seconds = 0, gpu_seconds = 0;
  for (const JobOutcome& j : jobs) {
    all.push_back(&j);
    by_partition[j.partition].push_back(&j);
    by_account[j.account].push_back(&j);
    first_submit = std::min(first_submit, j.submit);
    if (Ended(j)) {
      last_end = std::max(last_end, j.end);
      double run = static_cast<double>(j.end - j.start);
      cpu_seconds += run * j.cpus;
      gpu_seconds += run * j.gpus;
    }
  }
  f.all = Group(all);
  for (const auto& [name, list] : by_partition) f.by_partition[name] = Group(list);
  for (const auto& [name, list] : by_account) f.by_account[name] = Group(list);
  f.makespan = jobs.empty() ? 0 : std::max<int64_t>(0, last_end - first_submit);
  if (f.makespan > 0 && cluster.cpus > 0) {
    f.cpu_utilisation = cpu_seconds / (static_cast<double>(cluster.cpus) * f.makespan);
  }
  if (f.makespan > 0 && cluster.gpus > 0) {
    f.gpu_utilisation = gpu_seconds / (static_cast<double>(cluster.gpus) * f.makespan);
  }
  return f;
}

std::string FormatFigures(const Figures& f) {
  std::string out = fmt::format(
      "Jobs {} (started {}), makespan {} s, CPU utilisation {:.1f}%, GPU utilisation {:.1f}%\n"
      "Wait (s): p50 {}  p90 {}  p99 {}  max {}  mean {:.1f}; bounded slowdown {:.2f}; "
      "backfilled {}; preempted {}\n\n",
      f.all.jobs, f.all.started, f.makespan, 100 * f.cpu_utilisation, 100 * f.gpu_utilisation,
      f.all.wait_p50, f.all.wait_p90, f.all.wait_p99, f.all.wait_max, f.all.wait_mean,
      f.all.bounded_slowdown, f.all.backfilled, f.all.preempted);
  out += GroupTable("Partition", f.by_partition);
  out += "\n";
  out += GroupTable("Account", f.by_account);
  return out;
}

std::string FormatComparison(const std::vector<LabelledFigures>& runs) {
  struct Row {
    std::string name;
    std::function<double(const Figures&)> value;
    int decimals;
  };
  const std::vector<Row> rows = {
      {"Jobs started", [](const Figures& f) { return f.all.started; }, 0},
      {"Wait mean (s)", [](const Figures& f) { return f.all.wait_mean; }, 1},
      {"Wait p50 (s)", [](const Figures& f) { return f.all.wait_p50; }, 0},
      {"Wait p90 (s)", [](const Figures& f) { return f.all.wait_p90; }, 0},
      {"Wait p99 (s)", [](const Figures& f) { return f.all.wait_p99; }, 0},
      {"Wait max (s)", [](const Figures& f) { return f.all.wait_max; }, 0},
      {"Bounded slowdown", [](const Figures& f) { return f.all.bounded_slowdown; }, 2},
      {"Makespan (s)", [](const Figures& f) { return f.makespan; }, 0},
      {"CPU utilisation %", [](const Figures& f) { return 100 * f.cpu_utilisation; }, 1},
      {"GPU utilisation %", [](const Figures& f) { return 100 * f.gpu_utilisation; }, 1},
      {"Backfilled", [](const Figures& f) { return f.all.backfilled; }, 0},
      {"Preempted", [](const Figures& f) { return f.all.preempted; }, 0},
  };
  size_t width = 14;
  for (const LabelledFigures& run : runs) width = std::max(width, run.label.size() + 2);
  const bool difference = runs.size() == 2;
  std::string out = fmt::format("{:<20}", "");
  for (const LabelledFigures& run : runs) out += fmt::format("{:>{}}", run.label, width);
  if (difference) out += fmt::format("{:>{}}", "Difference", width);
  out += "\n";
  for (const Row& row : rows) {
    out += fmt::format("{:<20}", row.name);
    for (const LabelledFigures& run : runs) {
      out += fmt::format("{:>{}.{}f}", row.value(run.figures), width, row.decimals);
    }
    if (difference) {
      const double before = row.value(runs[0].figures);
      const double after = row.value(runs[1].figures);
      std::string change = fmt::format("{:+.{}f}", after - before, row.decimals);
      if (before != 0) change += fmt::format(" ({:+.1f}%)", 100 * (after - before) / before);
      out += fmt::format("{:>{}}", change, width + 10);
    }
    out += "\n";
  }
  return out;
}

std::string JobsCsv(const std::vector<JobOutcome>& jobs) {
  std::string out =
      "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
      "requested_time,success,final_state,starting_time,execution_time,finish_time,"
      "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n";
  for (const JobOutcome& j : jobs) {
    bool ended = Ended(j);
    int64_t exec = ended ? j.end - j.start : 0;
    int64_t turnaround = ended ? j.end - j.submit : 0;
    std::string stretch =
        ended && exec > 0 ? fmt::format("{:.6f}", static_cast<double>(turnaround) / exec) : "";
    // Batsim's final states; Slurm's state goes in metadata.
    std::string final_state;
    if (j.start < 0)
      final_state = j.state == "PENDING" ? "SUBMITTED" : "REJECTED";
    else if (j.state == "COMPLETED")
      final_state = "COMPLETED_SUCCESSFULLY";
    else if (j.state == "TIMEOUT")
      final_state = "COMPLETED_WALLTIME_REACHED";
    else if (j.state == "FAILED")
      final_state = "COMPLETED_FAILED";
    else if (j.end >= 0)
      final_state = "COMPLETED_KILLED";
    else
      final_state = "RUNNING";
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", CsvField(j.id),
        CsvField(j.workload), "", j.submit, j.cpus, j.requested_time,
        j.state == "COMPLETED" ? 1 : 0, final_state, j.start >= 0 ? std::to_string(j.start) : "",
        ended ? std::to_string(exec) : "", ended ? std::to_string(j.end) : "",
        j.start >= 0 ? std::to_string(j.start - j.submit) : "",
        ended ? std::to_string(turnaround) : "", stretch, CsvField(j.nodes), "", CsvField(j.state));
  }
  return out;
}

std::string ScheduleCsv(const std::vector<JobOutcome>& jobs, const Figures& f,
                        const ClusterSize& cluster, double scheduling_seconds) {
  int finished = 0, killed = 0, success = 0, rejected = 0;
  double turnaround_sum = 0, max_turnaround = 0, max_slowdown = 0, slowdown_sum = 0;
  for (const JobOutcome& j : jobs) {
    if (j.start < 0 && j.state != "PENDING") ++rejected;
    if (!Ended(j)) continue;
    ++finished;
    if (j.state == "COMPLETED")
      ++success;
    else
      ++killed;
    double turnaround = static_cast<double>(j.end - j.submit);
    turnaround_sum += turnaround;
    max_turnaround = std::max(max_turnaround, turnaround);
    double slowdown = turnaround / std::max<double>(1, static_cast<double>(j.end - j.start));
    slowdown_sum += slowdown;
    max_slowdown = std::max(max_slowdown, slowdown);
  }
  return fmt::format(
      "batsim_version,makespan,max_slowdown,max_turnaround_time,max_waiting_time,"
      "mean_slowdown,mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_jobs,"
      "nb_jobs_finished,nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,scheduling_time,"
      "simulation_time\n"
      "muster {},{},{:.6f},{:.6f},{},{:.6f},{:.6f},{:.6f},{},{},{},{},{},{},{:.6f},{}\n",
      util::MusterVersion(), f.makespan, max_slowdown, max_turnaround, f.all.wait_max,
      finished ? slowdown_sum / finished : 0.0, finished ? turnaround_sum / finished : 0.0,
      f.all.wait_mean, cluster.nodes, jobs.size(), finished, killed, rejected, success,
      scheduling_seconds, f.makespan);
}

}  // namespace muster::sim

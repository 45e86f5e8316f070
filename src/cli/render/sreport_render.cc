// sreport: cluster Utilization, cluster AccountUtilizationByUser, user
// TopUsage, computed from job records, and Muster's `job OverRequest`.
//
// Observed on Slurm 22.05.8 (see sreport_render_test.cc): an 80-dash banner,
// the report title with the window's last second ("16:00:00 - 16:59:59"),
// "Usage reported in CPU Minutes" (Hours, Seconds, "Percentage of Total";
// "TRES Minutes" for another --tres), then the table: right-justified
// columns each followed by a space, headers cut to the width without '+';
// -P joins with '|', -p ends each field with '|', -n drops banner and
// header. Minutes and hours are rounded to the nearest unit; percentages
// are of the cluster's capacity over the window, two decimals.
//
// Usage is allocated TRES-seconds overlapping the window (CPUs, or the
// count of the --tres item in AllocTRES). Slurm's "Planned" (idle capacity
// that eligible pending jobs waited for) is approximated by the jobs'
// TRES x wait time inside the window, capped by the idle capacity; "Down"
// and "PLND Down" are 0 (Muster keeps no node-down history in accounting).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/render/format_util.h"
#include "cli/render/render.h"
#include "util/strings.h"

namespace muster::render {
namespace {

using store::JobRecord;
using util::InvalidArgument;
using util::Result;

const std::string kBanner(80, '-');

struct Col {
  const char* name;
  int width;
};

// Count of `tres` ("cpu", "gres/gpu", "mem" in MB, "node") in a TRES string.
int64_t TresCount(const JobRecord& j, const std::string& tres) {
  if (tres == "cpu" && j.ncpus > 0) return j.ncpus;
  for (const std::string& item : util::Split(j.alloc_tres, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || item.substr(0, eq) != tres) continue;
    const std::string v = item.substr(eq + 1);
    if (tres == "mem") {
      auto mb = util::ParseMemoryMb(v);
      return mb.ok() ? *mb : 0;
    }
    return std::atoll(v.c_str());
  }
  return 0;
}

int64_t Overlap(int64_t a, int64_t b, int64_t s, int64_t e) {
  return std::max<int64_t>(0, std::min(b, e) - std::max(a, s));
}

// Allocated TRES-seconds of a job inside [s, e).
int64_t UsedSeconds(const JobRecord& j, const std::string& tres, int64_t s, int64_t e,
                    int64_t now) {
  if (j.start_time <= 0) return 0;
  const int64_t end = j.end_time > 0 ? j.end_time : now;
  return Overlap(j.start_time, end, s, e) * TresCount(j, tres);
}

class Table {
 public:
  Table(const SreportRequest& req, std::vector<Col> cols) : req_(req), cols_(std::move(cols)) {}
  void Header(std::string* out) const {
    if (req_.noheader) return;
    if (req_.parsable || req_.parsable2) {
      std::vector<std::string> names;
      for (const auto& c : cols_) names.push_back(c.name);
      Row(out, names, /*header=*/true);
      return;
    }
    std::vector<std::string> names;
    for (const auto& c : cols_) names.push_back(std::string(c.name).substr(0, static_cast<size_t>(c.width)));
    Row(out, names, true);
    for (const auto& c : cols_) *out += std::string(static_cast<size_t>(c.width), '-') + ' ';
    *out += '\n';
  }
  void Row(std::string* out, const std::vector<std::string>& v, bool = false) const {
    for (size_t i = 0; i < cols_.size(); ++i) {
      const std::string& s = i < v.size() ? v[i] : std::string();
      if (req_.parsable2) {
        if (i) *out += '|';
        *out += s;
      } else if (req_.parsable) {
        *out += s + '|';
      } else {
        *out += FitField(s, cols_[i].width, /*right=*/true) + ' ';
      }
    }
    *out += '\n';
  }

 private:
  const SreportRequest& req_;
  std::vector<Col> cols_;
};

std::string UnitName(const SreportRequest& r) {
  const std::string kind = r.tres == "cpu" ? "CPU" : "TRES";
  if (r.time_format == "percent") return "Percentage of Total";
  if (r.time_format == "hours") return kind + " Hours";
  if (r.time_format == "seconds") return kind + " Seconds";
  return kind + " Minutes";
}

// A TRES-seconds figure in the request's unit; `total` is the percentage's base.
std::string Amount(const SreportRequest& r, int64_t secs, int64_t total) {
  if (r.time_format == "percent")
    return fmt::format("{:.2f}%", total > 0 ? static_cast<double>(secs) * 100.0 / static_cast<double>(total) : 0.0);
  if (r.time_format == "hours") return std::to_string((secs + 1800) / 3600);
  if (r.time_format == "seconds") return std::to_string(secs);
  return std::to_string((secs + 30) / 60);
}

void Banner(std::string* out, const SreportRequest& req, const std::string& title) {
  if (req.noheader) return;
  *out += kBanner + "\n" + title + "\nUsage reported in " + UnitName(req) + "\n" + kBanner + "\n";
}

bool Wanted(const SreportRequest& req, const JobRecord& j) {
  auto in = [](const std::vector<std::string>& l, const std::string& v) {
    return l.empty() || std::find(l.begin(), l.end(), v) != l.end();
  };
  return in(req.users, j.user) && in(req.accounts, j.account);
}

}  // namespace

nlohmann::json ToJson(const SreportRequest& r) {
  return {{"report", r.report}, {"start", r.start}, {"end", r.end},
          {"time_format", r.time_format}, {"tres", r.tres}, {"parsable", r.parsable},
          {"parsable2", r.parsable2}, {"noheader", r.noheader}, {"top_count", r.top_count},
          {"days", r.days}, {"users", r.users}, {"accounts", r.accounts}};
}

Result<SreportRequest> SreportRequestFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("sreport request: not an object");
  SreportRequest r;
  try {
    r.report = j.value("report", r.report);
    r.start = j.value("start", r.start);
    r.end = j.value("end", r.end);
    r.time_format = j.value("time_format", r.time_format);
    r.tres = j.value("tres", r.tres);
    r.parsable = j.value("parsable", false);
    r.parsable2 = j.value("parsable2", false);
    r.noheader = j.value("noheader", false);
    r.top_count = j.value("top_count", 10);
    r.days = j.value("days", 7);
    r.users = j.value("users", r.users);
    r.accounts = j.value("accounts", r.accounts);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("sreport request: ") + e.what());
  }
  return r;
}

Result<std::pair<int64_t, int64_t>> SreportWindow(const SreportRequest& req, int64_t now) {
  if (req.report == "job OverRequest") return std::pair<int64_t, int64_t>(now - int64_t{req.days} * 86400, now);
  // Slurm's default: yesterday midnight to today midnight.
  auto today = ParseSlurmTime("midnight", now);
  if (!today.ok()) return today.status();
  int64_t start = *today - 86400, end = *today;
  if (!req.start.empty()) {
    auto t = ParseSlurmTime(req.start, now);
    if (!t.ok()) return t.status();
    start = *t;
  }
  if (!req.end.empty()) {
    auto t = ParseSlurmTime(req.end, now);
    if (!t.ok()) return t.status();
    end = *t;
  }
  // Slurm reports whole hours of its rollup: start and end move up to the
  // next hour boundary, and the end back to the last complete hour before
  // now (observed: start=15:54 end=16:10 -> 16:00:00 - 16:59:59; end=now at
  // 17:16 -> ... - 16:59:59). Boundaries are taken in UTC, which equals
  // local time for zones with whole-hour offsets.
  auto ceil_hour = [](int64_t t) { return (t + 3599) / 3600 * 3600; };
  start = ceil_hour(start);
  end = std::min(ceil_hour(end), now / 3600 * 3600);
  if (end <= start) return InvalidArgument("sreport: error: start time is after end time");
  return std::pair<int64_t, int64_t>(start, end);
}

store::AccountingQuery SreportQuery(const SreportRequest& req, int64_t now) {
  store::AccountingQuery q;
  auto w = SreportWindow(req, now);
  if (w.ok()) {
    q.window_start = w->first;
    q.window_end = w->second;
  }
  q.accounts = req.accounts;
  q.include_steps = req.report == "job OverRequest";
  // Every run of a requeued job used the cluster.
  q.duplicates = true;
  return q;
}

Result<std::string> RenderSreport(const SreportRequest& req, const std::vector<JobRecord>& jobs,
                                  const std::vector<store::StepRecord>& steps,
                                  const SreportCluster& cluster, int64_t now) {
  auto w = SreportWindow(req, now);
  if (!w.ok()) return w.status();
  const auto [s, e] = *w;
  TimestampFormatter tf;
  const std::string range = tf.Format(s) + " - " + tf.Format(e - 1);
  const int64_t capacity =
      (req.tres == "cpu" ? cluster.cpus : req.tres == "gres/gpu" ? cluster.gpus : 0) * (e - s);
  const bool other_tres = req.tres != "cpu";
  std::string out;
  auto proper = [&](const std::string& login) {
    auto it = cluster.proper_names.find(login);
    return it != cluster.proper_names.end() ? it->second : login;
  };

  if (req.report == "cluster Utilization") {
    int64_t alloc = 0, planned = 0;
    for (const auto& j : jobs) {
      alloc += UsedSeconds(j, req.tres, s, e, now);
      // Waiting time of eligible jobs inside the window.
      if (j.eligible_time > 0) {
        const int64_t until = j.start_time > 0 ? j.start_time : (j.end_time > 0 ? j.end_time : now);
        planned += Overlap(j.eligible_time, until, s, e) * TresCount(j, req.tres);
      }
    }
    planned = std::min(planned, std::max<int64_t>(0, capacity - alloc));
    const int64_t idle = std::max<int64_t>(0, capacity - alloc - planned);
    Banner(&out, req, "Cluster Utilization " + range);
    std::vector<Col> cols = {{"Cluster", 9}};
    if (other_tres) cols.push_back({"TRES Name", 14});
    for (Col c : {Col{"Allocated", 8}, Col{"Down", 8}, Col{"PLND Down", 8}, Col{"Idle", 8},
                  Col{"Planned", 8}, Col{"Reported", 8}})
      cols.push_back(c);
    Table t(req, cols);
    t.Header(&out);
    std::vector<std::string> row = {cluster.name};
    if (other_tres) row.push_back(req.tres);
    for (int64_t v : {alloc, int64_t{0}, int64_t{0}, idle, planned, capacity})
      row.push_back(Amount(req, v, capacity));
    t.Row(&out, row);
    return out;
  }

  if (req.report == "cluster AccountUtilizationByUser" || req.report == "user TopUsage") {
    std::map<std::pair<std::string, std::string>, int64_t> by_ua;  // (account, user)
    std::map<std::string, int64_t> by_account, by_user;
    for (const auto& j : jobs) {
      if (!Wanted(req, j)) continue;
      const int64_t u = UsedSeconds(j, req.tres, s, e, now);
      if (u <= 0 && j.start_time <= 0) continue;
      if (UsedSeconds(j, req.tres, s, e, now) == 0 && Overlap(j.start_time, j.end_time > 0 ? j.end_time : now, s, e) == 0)
        continue;
      by_ua[{j.account, j.user}] += u;
      by_account[j.account] += u;
      by_user[j.user] += u;
    }
    const std::string secs = fmt::format(" ({} secs)", e - s);
    auto desc = [](const auto& m) {
      std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
      std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      return v;
    };
    if (req.report == "cluster AccountUtilizationByUser") {
      Banner(&out, req, "Cluster/Account/User Utilization " + range + secs);
      std::vector<Col> cols = {{"Cluster", 9}, {"Account", 15}, {"Login", 9}, {"Proper Name", 15}};
      if (other_tres) cols.push_back({"TRES Name", 14});
      cols.push_back({"Used", 8});
      if (!other_tres) cols.push_back({"Energy", 8});
      Table t(req, cols);
      t.Header(&out);
      auto line = [&](const std::string& acct, const std::string& login, const std::string& pn, int64_t used) {
        std::vector<std::string> row = {cluster.name, acct, login, pn};
        if (other_tres) row.push_back(req.tres);
        row.push_back(Amount(req, used, capacity));
        if (!other_tres) row.push_back(Amount(req, 0, capacity));
        t.Row(&out, row);
      };
      for (const auto& [acct, used] : desc(by_account)) {
        line(acct, "", "", used);
        std::map<std::string, int64_t> users;
        for (const auto& [k, v] : by_ua)
          if (k.first == acct) users[k.second] = v;
        for (const auto& [login, u] : desc(users)) line(acct, login, proper(login), u);
      }
      return out;
    }
    Banner(&out, req, fmt::format("Top {} Users ", req.top_count) + range + secs);
    std::vector<Col> cols = {{"Cluster", 9}, {"Login", 9}, {"Proper Name", 15}, {"Account", 15}};
    if (other_tres) cols.push_back({"TRES Name", 14});
    cols.push_back({"Used", 8});
    if (!other_tres) cols.push_back({"Energy", 8});
    Table t(req, cols);
    t.Header(&out);
    std::set<std::string> top;
    for (const auto& [login, used] : desc(by_user)) {
      if (static_cast<int>(top.size()) >= req.top_count) break;
      top.insert(login);
    }
    std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> rows(by_ua.begin(), by_ua.end());
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      if (by_user[a.first.second] != by_user[b.first.second]) return by_user[a.first.second] > by_user[b.first.second];
      if (a.first.second != b.first.second) return a.first.second < b.first.second;
      return a.second > b.second;
    });
    for (const auto& [k, used] : rows) {
      if (!top.count(k.second)) continue;
      std::vector<std::string> row = {cluster.name, k.second, proper(k.second), k.first};
      if (other_tres) row.push_back(req.tres);
      row.push_back(Amount(req, used, capacity));
      if (!other_tres) row.push_back(Amount(req, 0, capacity));
      t.Row(&out, row);
    }
    return out;
  }

  if (req.report == "job OverRequest") {
    std::map<int64_t, int64_t> step_rss;
    for (const auto& st : steps) step_rss[st.job_id] = std::max(step_rss[st.job_id], st.max_rss_kb);
    struct Agg {
      int64_t jobs = 0, over = 0, req_mb = 0, rss_kb = 0;
      double wasted_gbh = 0;
    };
    std::map<std::string, Agg> by_account;
    for (const auto& j : jobs) {
      if (!Wanted(req, j) || j.end_time <= 0 || j.end_time < s || j.end_time > e) continue;
      int64_t rss = j.max_rss_kb;
      if (auto it = step_rss.find(j.job_id); it != step_rss.end()) rss = std::max(rss, it->second);
      if (rss <= 0 || j.req_mem_mb <= 0) continue;  // never sampled: nothing to judge
      Agg& a = by_account[j.account];
      ++a.jobs;
      const int64_t req_kb = j.req_mem_mb * 1024;
      if (req_kb <= 3 * rss) continue;
      ++a.over;
      a.req_mb += j.req_mem_mb;
      a.rss_kb += rss;
      const int64_t wall = j.start_time > 0 ? std::max<int64_t>(0, j.end_time - j.start_time) : 0;
      a.wasted_gbh += static_cast<double>(req_kb - rss) / (1024.0 * 1024.0) * static_cast<double>(wall) / 3600.0;
    }
    std::vector<std::pair<std::string, Agg>> rows;
    for (const auto& [k, v] : by_account)
      if (v.over > 0) rows.emplace_back(k, v);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second.wasted_gbh > b.second.wasted_gbh;
    });
    if (!req.noheader) {
      out += kBanner + "\nJob Memory Over-Requests " + range +
             fmt::format(" ({} days)\nJobs whose ReqMem exceeds 3x their MaxRSS, by account\n", req.days) +
             kBanner + "\n";
    }
    Table t(req, {{"Account", 15}, {"Jobs", 8}, {"OverReq", 8}, {"ReqMem", 10}, {"MaxRSS", 10},
                  {"Ratio", 8}, {"WastedGBh", 10}});
    t.Header(&out);
    for (const auto& [acct, a] : rows) {
      const double ratio = a.rss_kb > 0 ? static_cast<double>(a.req_mb) * 1024.0 / static_cast<double>(a.rss_kb) : 0.0;
      t.Row(&out, {acct, std::to_string(a.jobs), std::to_string(a.over), FormatMemoryMb(a.req_mb),
                   FormatMemoryMb((a.rss_kb + 1023) / 1024), fmt::format("{:.1f}x", ratio),
                   fmt::format("{:.2f}", a.wasted_gbh)});
    }
    return out;
  }
  return InvalidArgument("sreport: error: Not valid report " + req.report);
}

}  // namespace muster::render

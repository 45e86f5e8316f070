// sdiag: musterd's statistics (GET /v1/stats) in Slurm 22.05's layout, and
// sdiag -r (POST /v1/stats/reset). Which figure means what in Muster is in
// docs/sdiag.md.
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/render/format_util.h"
#include "util/clock.h"
#include "util/getopt.h"
#include "util/users.h"

namespace muster::cli {
namespace {

using nlohmann::json;

enum class RpcOrder { kCount, kId, kTotalTime, kAverageTime };

struct SdiagOptions {
  bool reset = false;
  RpcOrder order = RpcOrder::kCount;
  std::string cluster;  // -M
  bool help = false;
  bool usage = false;
  bool version = false;
};

util::Result<SdiagOptions> ParseSdiagArgs(const std::vector<std::string>& args) {
  SdiagOptions o;
  auto set = [](bool* field) {
    return [field](const std::string&) {
      *field = true;
      return util::Status::Ok();
    };
  };
  auto order = [&o](RpcOrder by) {
    return [&o, by](const std::string&) {
      o.order = by;
      return util::Status::Ok();
    };
  };
  const std::vector<util::OptionSpec> specs = {
      {'a', "all", util::Arg::kNone, nullptr},  // every figure is always shown
      {'r', "reset", util::Arg::kNone, set(&o.reset)},
      {'M', "cluster", util::Arg::kRequired,
       [&o](const std::string& v) {
         o.cluster = v;
         return util::Status::Ok();
       }},
      {'i', "sort-by-id", util::Arg::kNone, order(RpcOrder::kId)},
      {'t', "sort-by-time", util::Arg::kNone, order(RpcOrder::kTotalTime)},
      {'T', "sort-by-time2", util::Arg::kNone, order(RpcOrder::kAverageTime)},
      {'V', "version", util::Arg::kNone, set(&o.version)},
      {0, "help", util::Arg::kNone, set(&o.help)},
      {0, "usage", util::Arg::kNone, set(&o.usage)},
  };
  // Other words are ignored, as Slurm's sdiag does.
  auto parsed = util::ParseOptions("sdiag", specs, args, false);
  if (!parsed.ok()) return parsed.status();
  return o;
}

constexpr const char* kUsage = "Usage: sdiag [-M cluster] [-aritT]\n";
// Slurm's layout (the usage line, the options, the help options), in
// Muster's words.
constexpr const char* kHelp =
    "Usage: sdiag [OPTIONS]\n"
    "  -a, --all           every figure (the default)\n"
    "  -r, --reset         set the counters back to zero (operators)\n"
    "  -M, --cluster       the cluster to ask (this one)\n"
    "  -i, --sort-by-id    list the requests by their number\n"
    "  -t, --sort-by-time  list the requests by the time they took in all\n"
    "  -T, --sort-by-time2 list the requests by the time each took on average\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "Help options:\n"
    "  --help          print this help and exit\n"
    "  --usage         print the usage line and exit\n";

// "Sun Dec 06 19:37:31 2026 (1796585851)", local time.
std::string When(int64_t t) { return fmt::format("{} ({})", render::CtimeDate(t), t); }

int64_t Mean(int64_t sum, int64_t n) { return n > 0 ? sum / n : 0; }

// What 1000 calls to gettimeofday(2) take here, in microseconds, as
// Slurm's sdiag measures on the client.
int64_t GettimeofdayLatency() {
  const util::Stopwatch took;
  struct timeval tv;
  for (int i = 0; i < 1000; ++i) gettimeofday(&tv, nullptr);
  return took.ElapsedMicros();
}

// The RPC rows of `rows` in `order` (by count, the default: the most first,
// ties in the order musterd first saw them).
std::vector<json> Sorted(const json& rows, RpcOrder order) {
  std::vector<json> out(rows.begin(), rows.end());
  auto average = [](const json& r) {
    return Mean(r.value("micros", int64_t{0}), r.value("count", int64_t{0}));
  };
  std::stable_sort(out.begin(), out.end(), [&](const json& a, const json& b) {
    switch (order) {
      case RpcOrder::kId:  // a message type's id, a user's uid
        return a.value("id", a.value("uid", 0)) < b.value("id", b.value("uid", 0));
      case RpcOrder::kTotalTime:
        return a.value("micros", int64_t{0}) > b.value("micros", int64_t{0});
      case RpcOrder::kAverageTime:
        return average(a) > average(b);
      case RpcOrder::kCount:
        break;
    }
    return a.value("count", int64_t{0}) > b.value("count", int64_t{0});
  });
  return out;
}

std::string RpcFigures(const json& r) {
  const int64_t count = r.value("count", int64_t{0});
  const int64_t micros = r.value("micros", int64_t{0});
  return fmt::format("count:{:<6} ave_time:{:<6} total_time:{}", count, Mean(micros, count),
                     micros);
}

std::string Render(const json& s, RpcOrder order) {
  const int64_t now = s.value("now", int64_t{0});
  const int64_t since = s.value("since", int64_t{0});
  const json& jobs = s.at("jobs");
  const json& main = s.at("main");
  const json& bf = s.at("backfill");
  auto n = [](const json& j, const char* key) { return j.value(key, int64_t{0}); };
  std::string out;
  auto line = [&out](const std::string& text) {
    out += text;
    out += '\n';
  };
  line("*******************************************************");
  line("sdiag output at " + When(now));
  line("Data since      " + When(since));
  line("*******************************************************");
  // One thread (the event loop) serves every RPC; messages to agents and
  // accounting records go out without queues of their own.
  line("Server thread count:  1");
  line("Agent queue size:     0");
  line("Agent count:          0");
  line("Agent thread count:   0");
  line("DBD Agent queue size: 0");
  line("");
  line(fmt::format("Jobs submitted: {}", n(jobs, "submitted")));
  line(fmt::format("Jobs started:   {}", n(jobs, "started")));
  line(fmt::format("Jobs completed: {}", n(jobs, "completed")));
  line(fmt::format("Jobs canceled:  {}", n(jobs, "canceled")));
  line(fmt::format("Jobs failed:    {}", n(jobs, "failed")));
  line("");
  line("Job states ts:  " + When(now));
  line(fmt::format("Jobs pending:   {}", n(jobs, "pending")));
  line(fmt::format("Jobs running:   {}", n(jobs, "running")));
  line("");
  const int64_t cycles = n(main, "cycles");
  line("Main schedule statistics (microseconds):");
  line(fmt::format("\tLast cycle:   {}", n(main, "last_cycle")));
  line(fmt::format("\tMax cycle:    {}", n(main, "max_cycle")));
  line(fmt::format("\tTotal cycles: {}", cycles));
  if (cycles > 0) {
    line(fmt::format("\tMean cycle:   {}", Mean(n(main, "cycle_sum"), cycles)));
    line(fmt::format("\tMean depth cycle:  {}", Mean(n(main, "depth_sum"), cycles)));
  }
  if (now - since >= 60) {
    line(fmt::format("\tCycles per minute: {}", cycles / ((now - since) / 60)));
  }
  line(fmt::format("\tLast queue length: {}", n(main, "last_queue_length")));
  line("");
  const int64_t bf_cycles = n(bf, "cycles");
  const int64_t last_when = n(bf, "last_when") > 0 ? n(bf, "last_when") : n(s, "started");
  line("Backfilling stats");
  line(fmt::format("\tTotal backfilled jobs (since last slurm start): {}",
                   n(bf, "backfilled_total")));
  line(fmt::format("\tTotal backfilled jobs (since last stats cycle start): {}",
                   n(bf, "backfilled")));
  line("\tTotal backfilled heterogeneous job components: 0");
  line(fmt::format("\tTotal cycles: {}", bf_cycles));
  line("\tLast cycle when: " + When(last_when));
  line(fmt::format("\tLast cycle: {}", n(bf, "last_cycle")));
  line(fmt::format("\tMax cycle:  {}", n(bf, "max_cycle")));
  if (bf_cycles > 0) line(fmt::format("\tMean cycle: {}", Mean(n(bf, "cycle_sum"), bf_cycles)));
  line(fmt::format("\tLast depth cycle: {}", n(bf, "last_depth")));
  line(fmt::format("\tLast depth cycle (try sched): {}", n(bf, "last_depth")));
  if (bf_cycles > 0) {
    line(fmt::format("\tDepth Mean: {}", Mean(n(bf, "depth_sum"), bf_cycles)));
    line(fmt::format("\tDepth Mean (try depth): {}", Mean(n(bf, "depth_sum"), bf_cycles)));
  }
  line(fmt::format("\tLast queue length: {}", n(bf, "last_queue_length")));
  if (bf_cycles > 0) {
    line(fmt::format("\tQueue length mean: {}", Mean(n(bf, "queue_length_sum"), bf_cycles)));
  }
  line(fmt::format("\tLast table size: {}", n(bf, "last_table_size")));
  if (bf_cycles > 0) {
    line(fmt::format("\tMean table size: {}", Mean(n(bf, "table_size_sum"), bf_cycles)));
  }
  line("");
  line(fmt::format("Latency for 1000 calls to gettimeofday(): {} microseconds",
                   GettimeofdayLatency()));
  line("");
  line("Remote Procedure Call statistics by message type");
  for (const json& r : Sorted(s.at("rpc_by_type"), order)) {
    line(fmt::format("\t{:<40}({:>5}) {}", r.value("name", ""), r.value("id", 0), RpcFigures(r)));
  }
  line("");
  line("Remote Procedure Call statistics by user");
  for (const json& r : Sorted(s.at("rpc_by_user"), order)) {
    const uint32_t uid = r.value("uid", uint32_t{0});
    line(fmt::format("\t{:<16}({:>8}) {}", util::UserName(uid), uid, RpcFigures(r)));
  }
  line("");
  line("Pending RPC statistics");
  line("\tNo pending RPCs");
  return out;
}

}  // namespace

int SdiagMain(const std::vector<std::string>& args) {
  auto opts = ParseSdiagArgs(args);
  if (!opts.ok()) {
    std::cerr << opts.status().message() << "\nTry \"sdiag --help\" for more information\n";
    return 1;
  }
  if (opts->version) return PrintVersion();
  if (opts->help) {
    std::cout << kHelp;
    return 0;
  }
  if (opts->usage) {
    std::cout << kUsage;
    return 0;
  }
  auto client = Client::Connect();
  if (!client.ok()) {
    PrintCallError("sdiag", client.status());
    return 1;
  }
  if (!opts->cluster.empty()) {
    // One cluster: -M names it or nothing.
    auto ping = client->Get("/v1/ping");
    if (ping.ok() && ping->status / 100 == 2 && ping->body.value("cluster", "") != opts->cluster) {
      PrintError("sdiag", "No cluster '" + opts->cluster + "' known by database.");
      PrintError("sdiag", "'" + opts->cluster +
                              "' can't be reached now, or it is an invalid entry for --cluster.  "
                              "Use 'sacctmgr list clusters' to see available clusters.");
      return 1;
    }
  }
  if (opts->reset) {
    auto resp = client->Post("/v1/stats/reset", json::object());
    if (!resp.ok()) {
      PrintCallError("sdiag", resp.status());
      return 1;
    }
    if (resp->status / 100 != 2) {
      std::cerr << "slurm_reset_statistics: " << ErrorText(*resp) << "\n";
      return 1;
    }
    std::cout << "Reset scheduling statistics\n";
    return 0;
  }
  auto resp = client->Get("/v1/stats");
  if (!resp.ok()) {
    PrintCallError("sdiag", resp.status());
    return 1;
  }
  if (resp->status / 100 != 2) {
    std::cerr << "slurm_get_statistics: " << ErrorText(*resp) << "\n";
    return 1;
  }
  std::cout << Render(resp->body, opts->order);
  return 0;
}

}  // namespace muster::cli

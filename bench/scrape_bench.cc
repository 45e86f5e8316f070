// musterd's /metrics on a big cluster: one agent's samples for NODES nodes
// of GPUS GPUs each, and RUNNING jobs running (one GPU each while GPUs
// last, then CPU-only), then the time and bytes of a scrape and its series
// count; then half the jobs end and the series are counted again (none of
// an ended job may be left).
//   scrape_bench [NODES] [GPUS] [RUNNING]     (default 1000 8 10000)
// The controller runs in this process on simulated time, as in its unit
// tests; the jobs are allocations (they need no agent to run).
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <fmt/format.h>

#include "api/line_conn.h"
#include "config/config.h"
#include "core/node_samples.h"
#include "ctld/controller.h"
#include "sched/refusal.h"
#include "util/clock.h"

namespace {

using namespace muster;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Scrape {
  double ms = 0;
  size_t bytes = 0;
  size_t series = 0;
  size_t job_series = 0;  // series with a job's labels
};

Scrape Measure(const ctld::Controller& ctl) {
  Scrape best;
  best.ms = 1e18;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    const std::string text = ctl.MetricsText();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (ms < best.ms) {
      best.ms = ms;
      best.bytes = text.size();
      best.series = 0;
      best.job_series = 0;
      size_t start = 0;
      while (start < text.size()) {
        const size_t end = text.find('\n', start);
        if (text[start] != '#') {
          ++best.series;
          const std::string_view line(text.data() + start, end - start);
          if (line.find("hpc_job=\"") != std::string_view::npos) ++best.job_series;
        }
        start = end + 1;
      }
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int gpus = argc > 2 ? std::atoi(argv[2]) : 8;
  const int running = argc > 3 ? std::atoi(argv[3]) : 10000;
  const fs::path dir = fs::temp_directory_path() / fmt::format("scrape-bench-{}", ::getpid());
  fs::create_directories(dir);
  const std::string text = fmt::format(
      "ClusterName=bench\nStateSaveLocation={0}\nSlurmdSpoolDir={0}/spool\nGresTypes=gpu\n"
      "MinJobAge=3600\nMaxJobCount=1000000\nJobAcctGatherFrequency=30\nDefMemPerCPU=1000\n"
      "NodeName=n[1-{1}] CPUs=64 RealMemory=512000 Gres=gpu:h100:{2} State=UNKNOWN\n"
      "PartitionName=p Nodes=ALL Default=YES MaxTime=UNLIMITED State=UP\n",
      dir.string(), nodes, gpus);
  auto cfg = config::ParseConfig(text, (dir / "muster.conf").string(), "", false);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().message().c_str());
    return 1;
  }
  boost::asio::io_context io;
  util::SimulatedTimeSystem time(1'800'000'000);
  auto owner = std::make_unique<ctld::Controller>(io, *cfg, time);
  ctld::Controller& ctl = *owner;
  if (!ctl.Recover().ok()) return 1;
  auto run = [&](auto done) {
    for (int i = 0; i < 600000 && !done(); ++i) {
      io.poll();
      io.restart();
      if (i % 100 == 99) ::usleep(1000);
    }
  };
  // One agent holding every node, over a socketpair.
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return 1;
  api::LineConn::Socket socket(io);
  socket.assign(boost::asio::local::stream_protocol(), fds[0]);
  ctl.AcceptAgent(std::make_shared<api::LineConn>(std::move(socket)));
  nlohmann::json names = nlohmann::json::array();
  for (int n = 1; n <= nodes; ++n) names.push_back(fmt::format("n{}", n));
  auto send = [&](std::string line) {
    // A writer thread: the loop must read while a long line goes in.
    std::thread writer([&fds, line = std::move(line)] {
      size_t off = 0;
      while (off < line.size()) {
        const ssize_t w = ::write(fds[1], line.data() + off, line.size() - off);
        if (w <= 0) return;
        off += static_cast<size_t>(w);
      }
    });
    return writer;
  };
  std::thread reg = send(
      nlohmann::json({{"type", "register"}, {"host", "bench"}, {"nodes", names}}).dump() + "\n");
  run([&] { return ctl.nodes().back().registered; });
  reg.join();
  // Drain what musterd sends the agent (nothing here needs it).
  std::thread sink([&] {
    char buf[65536];
    while (::read(fds[1], buf, sizeof buf) > 0) {
    }
  });

  const auto t_submit = Clock::now();
  for (int i = 0; i < running; ++i) {
    core::JobRequest req;
    req.interactive = true;
    req.name = "bench";
    req.work_dir = "/";
    req.time_limit_s = 86400;
    req.min_nodes = 1;
    if (i < nodes * gpus) req.gres.push_back({"gpu", "", 1, false});
    sched::SubmitRefusal why;
    auto id = ctl.Submit(req, ctld::Caller{0, 0, true}, &why);
    if (!id.ok()) {
      std::fprintf(stderr, "submit: %s\n", id.status().message().c_str());
      return 1;
    }
    if (i % 1000 == 999) run([] { return true; });
  }
  auto count_running = [&] {
    int n = 0;
    for (const core::Job& j : ctl.jobs()) n += j.state == core::JobState::kRunning;
    return n;
  };
  run([&] { return count_running() == running; });
  const double start_s = std::chrono::duration<double>(Clock::now() - t_submit).count();

  // One agent's samples: every GPU, every job.
  core::NodeSamples s;
  s.time = time.Now();
  for (int n = 1; n <= nodes; ++n) {
    for (int g = 0; g < gpus; ++g) {
      core::GpuSample gs;
      gs.node = fmt::format("n{}", n);
      gs.index = g;
      gs.uuid = fmt::format("GPU-{:08x}-0000-0000-0000-{:012x}", n, g);
      gs.model = "NVIDIA H100 80GB HBM3";
      gs.emulated = true;
      gs.utilization_pct = (n + g) % 100;
      gs.memory_total_bytes = 80LL << 30;
      gs.memory_used_bytes = 40LL << 30;
      gs.temperature_c = 60;
      gs.power_mw = 500000;
      gs.power_limit_mw = 700000;
      gs.sm_clock_mhz = gs.sm_clock_max_mhz = 1980;
      s.gpus.push_back(gs);
    }
  }
  for (const core::Job& j : ctl.jobs()) {
    if (j.state != core::JobState::kRunning || j.alloc.empty()) continue;
    s.jobs.push_back({j.id, j.alloc.front().node, 1000, 1 << 30, 2LL << 30});
  }
  const std::string samples =
      nlohmann::json({{"type", "samples"}, {"samples", core::ToJson(s)}}).dump() + "\n";
  const size_t samples_bytes = samples.size();
  std::thread w = send(samples);
  run([&] { return ctl.MetricsText().find("hpc_job=\"1\"") != std::string::npos; });
  w.join();

  const Scrape full = Measure(ctl);
  // Half the jobs end.
  std::vector<std::string> ids;
  for (const core::Job& j : ctl.jobs()) {
    if (j.state == core::JobState::kRunning && j.id % 2 == 0) ids.push_back(std::to_string(j.id));
  }
  ctl.Cancel({{"job_ids", ids}}, ctld::Caller{0, 0, true});
  run([&] { return count_running() == running - static_cast<int>(ids.size()); });
  const Scrape half = Measure(ctl);

  std::printf(
      "cluster: %d nodes, %d GPUs, %d running jobs (started in %.1f s); samples line %.1f MB\n",
      nodes, nodes * gpus, running, start_s, samples_bytes / 1e6);
  std::printf("scrape, all running:  %.1f ms, %.1f MB, %zu series (%zu with job labels)\n", full.ms,
              full.bytes / 1e6, full.series, full.job_series);
  std::printf("scrape, half ended:   %.1f ms, %.1f MB, %zu series (%zu with job labels)\n", half.ms,
              half.bytes / 1e6, half.series, half.job_series);
  ::shutdown(fds[1], SHUT_RDWR);
  sink.join();
  owner.reset();
  fs::remove_all(dir);
  return 0;
}

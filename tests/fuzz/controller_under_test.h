// The stateful targets' controller: a real ctld::Controller on a small
// cluster like the end-to-end tests' (two GPU nodes, one CPU node, two
// partitions), with its own event loop and time that stands still.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "ctld/controller.h"
#include "fuzz_support.h"
#include "util/clock.h"

namespace muster::fuzz {

// The cluster, its state under `state_dir`. Only agent_proto_fuzz plays an
// agent, and what it is sent (launches among it) goes nowhere: nothing is
// ever run.
inline config::Config ClusterConfig(const std::string& state_dir) {
  const std::string text =
      "ClusterName=fuzz\nSlurmctldHost=localhost\nStateSaveLocation=" + state_dir +
      "\nSlurmdSpoolDir=" + state_dir +
      "/spool\nDefMemPerCPU=1000\nMinJobAge=300\nGresTypes=gpu\n"
      "NodeName=gpu[01-02] CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 "
      "RealMemory=64000 Gres=gpu:h100:8 Feature=h100,gpu State=UNKNOWN\n"
      "NodeName=cpu01 CPUs=16 RealMemory=32000 State=UNKNOWN\n"
      "PartitionName=short Nodes=gpu[01-02],cpu01 Default=YES MaxTime=04:00:00 State=UP\n"
      "PartitionName=train Nodes=gpu[01-02] MaxTime=3-00:00:00 State=UP\n";
  auto cfg = config::ParseConfig(text, ScratchDir() + "/muster.conf", "", false);
  if (!cfg.ok()) std::abort();
  return *cfg;
}

// A controller on `state_dir` after Recover(), with its loop.
struct ControllerUnderTest {
  explicit ControllerUnderTest(const std::string& state_dir)
      : time(1'800'000'000), ctl(io, ClusterConfig(state_dir), time) {}

  // Runs the loop until it is quiet: every commit synced (the journal's
  // syncer is a thread of its own) and what followed it (replies, agent
  // messages, the commits those made) done.
  void Drain() {
    for (int round = 0; round < 64; ++round) {
      auto settled = std::make_shared<bool>(false);
      ctl.AfterCommit([settled] { *settled = true; });
      size_t ran = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      for (;;) {
        ran += io.poll();
        io.restart();
        if (*settled) break;
        if (std::chrono::steady_clock::now() > deadline) std::abort();  // a commit never synced
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      if (ran == 0) return;
    }
  }

  boost::asio::io_context io;
  util::SimulatedTimeSystem time;  // never advanced: no timer fires
  ctld::Controller ctl;
};

}  // namespace muster::fuzz

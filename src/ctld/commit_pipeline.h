// Group commit of the controller's journal (docs/ARCHITECTURE.md,
// "Durability"). Changes marked while the loop handles the events that are
// ready now share one posted commit: its writer turns them into journal
// records, the records are written on the loop, and a thread of the
// pipeline's own fdatasyncs them while the loop goes on (generation N is
// synced while N+1 is collected). What waits for a commit (replies, agent
// messages, accounting) runs once its generation is on disk. A journal that
// cannot be written or synced stops the process: acknowledging what is not
// on disk would break the one promise that matters.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "ctld/journal.h"
#include "util/status.h"

namespace muster::ctld {

class CommitPipeline {
 public:
  using Callbacks = std::vector<std::function<void()>>;
  // Appends the records of everything marked since the last commit to the
  // journal; returns what must run once they are durable.
  using Writer = std::function<Callbacks(Journal&)>;

  // `on_quiet` runs when every written generation is synced and no commit
  // is pending (the controller snapshots there when the journal is long).
  CommitPipeline(boost::asio::io_context& io, Journal& journal, Writer writer,
                 std::function<void()> on_quiet);
  ~CommitPipeline();
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // A commit is posted (once, however often this is called before it runs).
  void Request();
  // Runs `fn` once everything marked so far is on disk: at once when
  // nothing is pending.
  void AfterCommit(std::function<void()> fn);
  // Writes what is marked and waits for it to be synced, then runs what
  // waited for it (recovery, shutdown).
  util::Status CommitNow();

  uint64_t written() const { return written_gen_; }
  uint64_t synced() const { return synced_gen_; }

 private:
  class Syncer;
  util::Status Write();
  void OnSynced(uint64_t gen, const util::Status& st);

  boost::asio::io_context& io_;
  Journal& journal_;
  Writer writer_;
  std::function<void()> on_quiet_;
  bool posted_ = false;
  Callbacks after_commit_;  // for the posted commit
  uint64_t written_gen_ = 0;
  uint64_t synced_gen_ = 0;
  std::map<uint64_t, Callbacks> waiting_;  // by generation
  std::unique_ptr<Syncer> syncer_;         // last: its thread stops first
};

}  // namespace muster::ctld

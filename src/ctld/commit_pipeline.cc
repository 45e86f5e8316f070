#include "ctld/commit_pipeline.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "util/log.h"

namespace muster::ctld {

// The fdatasync thread. Request(gen) asks for a sync covering generation
// `gen`; requests that arrive while a sync runs are merged into the next
// one. Completion is posted back to the event loop.
class CommitPipeline::Syncer {
 public:
  Syncer(boost::asio::io_context& io, const Journal& journal, CommitPipeline& pipeline)
      : io_(io), journal_(journal), pipeline_(pipeline), thread_([this] { Run(); }) {}
  ~Syncer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Request(uint64_t gen) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      wanted_ = std::max(wanted_, gen);
    }
    cv_.notify_all();
  }
  // Blocks until every requested generation is synced; returns the outcome
  // of the first failed sync, else ok.
  util::Status Drain() {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return done_ >= wanted_; });
    return last_;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || wanted_ > done_; });
      if (wanted_ <= done_ && stop_) return;
      const uint64_t gen = wanted_;
      lock.unlock();
      util::Status st = journal_.Sync({});
      lock.lock();
      done_ = gen;
      if (last_.ok()) last_ = st;
      done_cv_.notify_all();
      boost::asio::post(io_, [this, gen, st] { pipeline_.OnSynced(gen, st); });
    }
  }

  boost::asio::io_context& io_;
  const Journal& journal_;
  CommitPipeline& pipeline_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  uint64_t wanted_ = 0;
  uint64_t done_ = 0;
  util::Status last_;
  bool stop_ = false;
  std::thread thread_;
};

namespace {

[[noreturn]] void StopOnJournalFailure(const util::Status& st) {
  util::LogError("journal: {}; stopping", st.message());
  std::abort();
}

}  // namespace

CommitPipeline::CommitPipeline(boost::asio::io_context& io, Journal& journal, Writer writer,
                               std::function<void()> on_quiet)
    : io_(io),
      journal_(journal),
      writer_(std::move(writer)),
      on_quiet_(std::move(on_quiet)),
      syncer_(std::make_unique<Syncer>(io, journal, *this)) {}

CommitPipeline::~CommitPipeline() = default;

void CommitPipeline::Request() {
  if (posted_) return;
  posted_ = true;
  // Posted, so every change made while handling the events that are ready
  // now shares one write and one fdatasync.
  boost::asio::post(io_, [this] {
    if (util::Status st = Write(); !st.ok()) StopOnJournalFailure(st);
  });
}

void CommitPipeline::AfterCommit(std::function<void()> fn) {
  if (posted_) {
    after_commit_.push_back(std::move(fn));
  } else if (synced_gen_ < written_gen_) {
    waiting_[written_gen_].push_back(std::move(fn));
  } else {
    fn();
  }
}

util::Status CommitPipeline::Write() {
  Callbacks durable = writer_(journal_);
  posted_ = false;
  MUSTER_RETURN_IF_ERROR(journal_.Write());
  const uint64_t gen = ++written_gen_;
  Callbacks& callbacks = waiting_[gen];
  for (auto& fn : durable) callbacks.push_back(std::move(fn));
  for (auto& fn : after_commit_) callbacks.push_back(std::move(fn));
  after_commit_.clear();
  syncer_->Request(gen);
  return util::Status::Ok();
}

void CommitPipeline::OnSynced(uint64_t gen, const util::Status& st) {
  if (!st.ok()) StopOnJournalFailure(st);
  synced_gen_ = std::max(synced_gen_, gen);
  while (!waiting_.empty() && waiting_.begin()->first <= synced_gen_) {
    Callbacks callbacks = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    for (auto& fn : callbacks) fn();
  }
  if (synced_gen_ == written_gen_ && !posted_ && on_quiet_) on_quiet_();
}

util::Status CommitPipeline::CommitNow() {
  MUSTER_RETURN_IF_ERROR(Write());
  util::Status synced = syncer_->Drain();
  // What waits for these generations (accounting among it) runs now, not
  // when the loop gets to the syncer's posted completion: at shutdown it may
  // never do.
  OnSynced(written_gen_, synced);
  return util::Status::Ok();
}

}  // namespace muster::ctld

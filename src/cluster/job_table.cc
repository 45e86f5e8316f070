#include "cluster/job_table.h"

#include <algorithm>

#include "util/check.h"

namespace muster::cluster {

using core::Job;
using core::JobId;

size_t JobTable::SlotOf(JobId id) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) return static_cast<size_t>(-1);
  return static_cast<size_t>(it - ids_.begin());
}

Job* JobTable::Find(JobId id) {
  size_t i = SlotOf(id);
  return i < slots_.size() ? slots_[i].get() : nullptr;
}

const Job* JobTable::Find(JobId id) const {
  size_t i = SlotOf(id);
  return i < slots_.size() ? slots_[i].get() : nullptr;
}

Job& JobTable::At(JobId id) {
  Job* job = Find(id);
  MUSTER_CHECK(job != nullptr);
  return *job;
}

const Job& JobTable::At(JobId id) const {
  const Job* job = Find(id);
  MUSTER_CHECK(job != nullptr);
  return *job;
}

Job& JobTable::Put(Job job) {
  const JobId id = job.id;
  auto owned = std::make_unique<Job>(std::move(job));
  Job& in_table = *owned;
  if (ids_.empty() || ids_.back() < id) {
    ids_.push_back(id);
    slots_.push_back(std::move(owned));
  } else {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    size_t i = static_cast<size_t>(it - ids_.begin());
    if (it != ids_.end() && *it == id) {
      if (slots_[i] != nullptr) {
        Unindex(*slots_[i]);
        --live_;
      }
      slots_[i] = std::move(owned);
    } else {
      ids_.insert(it, id);
      slots_.insert(slots_.begin() + static_cast<std::ptrdiff_t>(i), std::move(owned));
    }
  }
  ++live_;
  Index(in_table);
  return in_table;
}

void JobTable::Erase(JobId id) {
  size_t i = SlotOf(id);
  if (i >= slots_.size() || slots_[i] == nullptr) return;
  Unindex(*slots_[i]);
  slots_[i].reset();
  --live_;
  if (slots_.size() > 2 * live_ + 64) Compact();
}

const std::set<JobId>* JobTable::OfUser(uint32_t uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : &it->second;
}

const std::set<JobId>* JobTable::OfArray(JobId array_id) const {
  auto it = by_array_.find(array_id);
  return it == by_array_.end() ? nullptr : &it->second;
}

void JobTable::Index(const Job& job) {
  by_uid_[job.req.uid].insert(job.id);
  if (job.array_job_id != 0) by_array_[job.array_job_id].insert(job.id);
}

void JobTable::Unindex(const Job& job) {
  auto drop = [&](auto& index, auto key) {
    auto it = index.find(key);
    if (it == index.end()) return;
    it->second.erase(job.id);
    if (it->second.empty()) index.erase(it);
  };
  drop(by_uid_, job.req.uid);
  if (job.array_job_id != 0) drop(by_array_, job.array_job_id);
}

void JobTable::Compact() {
  size_t out = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i] == nullptr) continue;
    ids_[out] = ids_[i];
    slots_[out] = std::move(slots_[i]);
    ++out;
  }
  ids_.resize(out);
  slots_.resize(out);
}

}  // namespace muster::cluster

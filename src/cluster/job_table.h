// The controller's jobs, in id order, with the indexes that follow from what
// a job never changes once it is made: its owner (squeue -u reads only one
// user's jobs) and its array (every record of an array: the pending part
// and the tasks split off it). Owned by cluster::Cluster; event-loop thread
// only, no locks.
//
// Each job is a heap object of its own, so a Job& stays valid while other
// jobs come and go. The table is a vector of those pointers in id order
// beside a vector of their ids: a listing of every job is a linear scan the
// CPU runs ahead on, where a walk of a red-black tree was one dependent
// cache miss per job (a fifth of a 100,000-job squeue). Lookups by id are a
// binary search over the ids. Ids only grow (the controller's counter), so
// an insert appends; only recovery inserts out of order.
//
// An erase leaves a hole that iteration skips; holes are closed once they
// outnumber the jobs. So: never erase while iterating (collect the ids
// first). Appending while iterating is safe (iterators hold an index); a
// range-for does not reach the jobs appended during it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "core/job.h"

namespace muster::cluster {

class JobTable {
 public:
  // Forward iteration in id order over the jobs (holes skipped).
  template <class T, class Table>
  class Iter {
   public:
    Iter(Table* table, size_t i) : table_(table), i_(i) { Skip(); }
    T& operator*() const { return *table_->slots_[i_]; }
    T* operator->() const { return table_->slots_[i_].get(); }
    Iter& operator++() {
      ++i_;
      Skip();
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    void Skip() {
      while (i_ < table_->slots_.size() && table_->slots_[i_] == nullptr) ++i_;
    }
    Table* table_;
    size_t i_;
  };
  using iterator = Iter<core::Job, JobTable>;
  using const_iterator = Iter<const core::Job, const JobTable>;

  JobTable() = default;
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  // The job with this id, or null.
  core::Job* Find(core::JobId id);
  const core::Job* Find(core::JobId id) const;
  // The job with this id, which must be in the table (CHECKed).
  core::Job& At(core::JobId id);
  const core::Job& At(core::JobId id) const;
  bool Contains(core::JobId id) const { return Find(id) != nullptr; }

  // Adds `job`, replacing a job with the same id (recovery applies journal
  // records over the snapshot's); the indexes follow. Returns the job in
  // the table.
  core::Job& Put(core::Job job);
  // Removes the job with this id, if any. Not while iterating.
  void Erase(core::JobId id);

  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

  // The ids of one user's jobs, ascending; null when the user has none.
  const std::set<core::JobId>* OfUser(uint32_t uid) const;
  // Every record of array `array_id` (its pending part, split tasks and
  // tasks that ran), ascending; null when it has none (or is no array).
  const std::set<core::JobId>* OfArray(core::JobId array_id) const;
  // Every array with records, by array id.
  const std::map<core::JobId, std::set<core::JobId>>& arrays() const { return by_array_; }

  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, slots_.size()); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, slots_.size()); }

 private:
  // The slot of `id` in ids_/slots_, or npos; a hole's id stays in ids_
  // (so ids_ stays sorted) with a null slot.
  size_t SlotOf(core::JobId id) const;
  void Index(const core::Job& job);
  void Unindex(const core::Job& job);
  // Drops the holes (ids_ and slots_ stay in step and sorted).
  void Compact();

  std::vector<core::JobId> ids_;                   // ascending
  std::vector<std::unique_ptr<core::Job>> slots_;  // slots_[i]->id == ids_[i], or null
  size_t live_ = 0;
  std::map<uint32_t, std::set<core::JobId>> by_uid_;
  std::map<core::JobId, std::set<core::JobId>> by_array_;
};

}  // namespace muster::cluster

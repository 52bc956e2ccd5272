#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <tuple>

#include "whatif/detail/cluster.hpp"

namespace capsim::whatif::detail {

// The jobs waiting for GPUs, highest priority first and by submission time within a priority,
// with a count by the smallest GPU count each could start at (so a scheduling pass can stop
// once nothing queued could fit).
class JobQueue {
 public:
  using Entry = std::tuple<int, double, int>;  // (-priority, submit time, job index)
  using Iterator = std::set<Entry>::const_iterator;

  // Queues job `j`.
  void add(int j, const Job& job);
  // Removes the entry at `it`, which holds `job`; returns the entry after it.
  Iterator remove(Iterator it, const Job& job);
  // Returns the smallest GPU count any queued job could start with (scenario jobs count as 1).
  [[nodiscard]] int min_start_gpus() const;

  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] Iterator begin() const { return entries_.begin(); }
  [[nodiscard]] Iterator end() const { return entries_.end(); }

 private:
  std::set<Entry> entries_;
  std::map<int, int> by_start_gpus_;  // queued jobs by their smallest start size
};

}  // namespace capsim::whatif::detail

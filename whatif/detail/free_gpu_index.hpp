#pragma once

#include <cstddef>
#include <set>
#include <utility>
#include <vector>

#include "whatif/detail/cluster.hpp"

namespace capsim::whatif::detail {

// The free GPUs of one pool's ready nodes, bucketed by count, so that the scale-down pass finds
// the best fit for a job to re-place (the ready node with the fewest free GPUs that hold it, the
// first in the pool's order among equals) in O(GPUs per node x log nodes) instead of a scan of
// the pool, and tries a node's re-placement without copying the pool's free GPUs. Slots are the
// indices of the pool's nodes; changes are logged so a failed or trial re-placement rolls back.
// Built from the cluster at its first use: most passes re-place nothing and never pay for it.
class FreeGpuIndex {
 public:
  FreeGpuIndex(const Cluster& cluster, int pool) : cluster_(cluster), pool_(pool) {}

  [[nodiscard]] int free_gpus(std::size_t slot) {
    build();
    return free_[slot];
  }

  // The best fit for `gpus` GPUs among the ready nodes other than `skip`, or -1.
  [[nodiscard]] long best_fit(int gpus, std::size_t skip);

  // Sets a slot's free GPUs (logged).
  void set(std::size_t slot, int free_gpus);
  // The slot's node has left the ready state (scaled down): it takes no more jobs.
  void retire(std::size_t slot);

  // A point to roll back to, and the rollback: every set() since `mark` undone.
  [[nodiscard]] std::size_t mark() const { return log_.size(); }
  void rollback(std::size_t mark);

 private:
  const Cluster& cluster_;
  int pool_;
  bool built_ = false;
  std::vector<int> free_;
  std::vector<bool> ready_;
  std::vector<std::set<std::size_t>> by_free_;    // [free GPUs] -> ready slots
  std::vector<std::pair<std::size_t, int>> log_;  // (slot, its earlier free GPUs)

  void build();
  void move(std::size_t slot, int from, int to);
};

}  // namespace capsim::whatif::detail

#include "whatif/detail/free_gpu_index.hpp"

#include <algorithm>

namespace capsim::whatif::detail {

// Reads the pool as it is now: a node retired before the first use has left the ready state.
void FreeGpuIndex::build() {
  if (built_)
    return;
  built_ = true;
  const std::vector<int>& nodes = cluster_.pool(pool_).nodes;
  int most = cluster_.spec(pool_).gpus_per_node();
  free_.reserve(nodes.size());
  ready_.reserve(nodes.size());
  for (const int id : nodes) {
    free_.push_back(cluster_.node(id).free_gpus);
    ready_.push_back(usable(cluster_.node(id)));
    most = std::max(most, free_.back());
  }
  by_free_.resize(static_cast<std::size_t>(std::max(0, most)) + 1);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (ready_[k] && free_[k] >= 0)
      by_free_[static_cast<std::size_t>(free_[k])].insert(k);
  }
}

long FreeGpuIndex::best_fit(int gpus, std::size_t skip) {
  build();
  for (std::size_t v = static_cast<std::size_t>(std::max(gpus, 0)); v < by_free_.size(); ++v) {
    for (const std::size_t k : by_free_[v]) {
      if (k != skip)
        return static_cast<long>(k);
    }
  }
  return -1;
}

void FreeGpuIndex::move(std::size_t slot, int from, int to) {
  if (!ready_[slot])
    return;
  if (from >= 0)
    by_free_[static_cast<std::size_t>(from)].erase(slot);
  if (to >= 0) {
    if (static_cast<std::size_t>(to) >= by_free_.size())
      by_free_.resize(static_cast<std::size_t>(to) + 1);
    by_free_[static_cast<std::size_t>(to)].insert(slot);
  }
}

void FreeGpuIndex::set(std::size_t slot, int free_gpus) {
  build();
  log_.emplace_back(slot, free_[slot]);
  move(slot, free_[slot], free_gpus);
  free_[slot] = free_gpus;
}

void FreeGpuIndex::retire(std::size_t slot) {
  if (!built_)
    return;
  move(slot, free_[slot], -1);
  ready_[slot] = false;
}

void FreeGpuIndex::rollback(std::size_t mark) {
  while (log_.size() > mark) {
    const auto [slot, earlier] = log_.back();
    log_.pop_back();
    move(slot, free_[slot], earlier);
    free_[slot] = earlier;
  }
}

}  // namespace capsim::whatif::detail

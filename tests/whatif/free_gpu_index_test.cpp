// The scale-down pass's index of free GPUs: its best fit is the scan's (the ready node with the
// fewest free GPUs that hold the job, the first in pool order among equals, never the node being
// emptied), and a rollback restores every slot, after any sequence of changes.
#include "whatif/detail/free_gpu_index.hpp"

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "whatif/detail/cluster.hpp"

namespace capsim::whatif::detail {
namespace {

// The scan the index replaces.
long scan_best_fit(const std::vector<int>& free, const std::vector<bool>& ready, int gpus,
                   std::size_t skip) {
  long best = -1;
  for (std::size_t k = 0; k < free.size(); ++k) {
    if (k == skip || !ready[k] || free[k] < gpus)
      continue;
    if (best < 0 || free[k] < free[static_cast<std::size_t>(best)])
      best = static_cast<long>(k);
  }
  return best;
}

TEST(FreeGpuIndexTest, BestFitIsTheScansAndRollbackRestores) {
  WhatIf w;
  NodePool p;
  p.name = "a";
  p.instance = *builtin_catalog().find_instance("p4d.24xlarge");
  p.max_nodes = 60;
  w.pools.push_back(p);
  Cluster c(w);
  c.pools.resize(1);
  for (int k = 0; k < 60; ++k)
    (void)c.add_node(0);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> gpus(0, 8);
  std::uniform_int_distribution<int> slot(0, 59);
  std::uniform_int_distribution<int> state(0, static_cast<int>(kNodeStates) - 1);
  for (int id = 0; id < 60; ++id) {
    c.set_state(id, static_cast<NodeState>(state(rng)));
    c.set_free_gpus(id, gpus(rng));
  }
  FreeGpuIndex index(c, 0);
  std::vector<int> free;
  std::vector<bool> ready;
  for (int id : c.pool(0).nodes) {
    free.push_back(c.node(id).free_gpus);
    ready.push_back(usable(c.node(id)));
  }
  int retired = 0;
  for (int step = 0; step < 4000; ++step) {
    const auto s = static_cast<std::size_t>(slot(rng));
    const int need = 1 + gpus(rng) % 8;
    ASSERT_EQ(index.best_fit(need, s), scan_best_fit(free, ready, need, s)) << step;
    const std::size_t mark = index.mark();
    const std::vector<int> before = free;
    for (int change = 0; change < 3; ++change) {
      const auto k = static_cast<std::size_t>(slot(rng));
      const int v = gpus(rng);
      index.set(k, v);
      free[k] = v;
    }
    if (step % 3 == 0) {
      index.rollback(mark);
      free = before;
    }
    for (std::size_t k = 0; k < free.size(); ++k)
      ASSERT_EQ(index.free_gpus(k), free[k]);
    if (step % 500 == 499 && retired < 5) {
      index.retire(s);
      ready[s] = false;
      ++retired;
    }
  }
}

}  // namespace
}  // namespace capsim::whatif::detail

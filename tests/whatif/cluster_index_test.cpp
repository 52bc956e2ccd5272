// The cluster's per-pool counts and its index of ready nodes by free GPUs, kept by its setters,
// agree with a walk over every node after any sequence of changes; the index's placement is
// the walk's best fit.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "whatif/detail/cluster.hpp"
#include "whatif/detail/placement.hpp"

namespace capsim::whatif::detail {
namespace {

WhatIf two_pools() {
  WhatIf w;
  for (const char* name : {"a", "b"}) {
    NodePool p;
    p.name = name;
    p.instance = *builtin_catalog().find_instance("p4d.24xlarge");
    p.max_nodes = 40;
    w.pools.push_back(p);
  }
  return w;
}

int walk_count(const Cluster& c, int pool, bool include_draining) {
  int n = 0;
  for (int id : c.pool(pool).nodes) {
    const NodeState s = c.node(id).state;
    n += s == NodeState::kBooting || s == NodeState::kReady ||
                 (include_draining && (s == NodeState::kDraining || s == NodeState::kShutdown))
             ? 1
             : 0;
  }
  return n;
}

int walk_first_off(const Cluster& c, int pool) {
  for (int id : c.pool(pool).nodes) {
    if (c.node(id).state == NodeState::kOff)
      return id;
  }
  return -1;
}

TEST(ClusterIndexTest, CountsAndPlacementsMatchAWalkOverEveryNode) {
  const WhatIf w = two_pools();
  Cluster c(w);
  c.pools.resize(w.pools.size());
  for (int p = 0; p < 2; ++p) {
    for (int k = 0; k < 40; ++k)
      (void)c.add_node(p);
  }
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> node(0, 79);
  std::uniform_int_distribution<int> state(0, static_cast<int>(kNodeStates) - 1);
  std::uniform_int_distribution<int> gpus(0, 8);
  std::uniform_int_distribution<int> request(1, 40);
  for (int step = 0; step < 5000; ++step) {
    const int id = node(rng);
    if (step % 2 == 0)
      c.set_state(id, static_cast<NodeState>(state(rng)));
    else
      c.set_free_gpus(id, gpus(rng));
    for (int p = 0; p < 2; ++p) {
      ASSERT_EQ(c.count(p, false), walk_count(c, p, false));
      ASSERT_EQ(c.count(p, true), walk_count(c, p, true));
      ASSERT_EQ(c.off_slot(p), walk_first_off(c, p));
      int ready_free = 0;
      for (int n : c.pool(p).nodes)
        ready_free += usable(c.node(n)) ? c.node(n).free_gpus : 0;
      ASSERT_EQ(c.ready_free_gpus(p), ready_free);
      const int g = request(rng);
      std::vector<Piece> indexed, walked;
      const bool found = find_ready_place(c, p, g, indexed);
      ASSERT_EQ(found, find_place(c, p, g, c.free_vector(p), walked)) << g;
      if (found) {
        ASSERT_EQ(indexed.size(), walked.size());
        for (std::size_t i = 0; i < indexed.size(); ++i) {
          EXPECT_EQ(indexed[i].node, walked[i].node);
          EXPECT_EQ(indexed[i].gpus, walked[i].gpus);
        }
      }
    }
  }
}

}  // namespace
}  // namespace capsim::whatif::detail

#pragma once

#include "sim/detail/rank_layout.hpp"

namespace capsim::sim::detail {

// Which flows of a training layout leave their leaf switch on an oversubscribed fabric, where
// nodes [k*L, (k+1)*L) hang under leaf k (L = nodes_per_leaf) and only traffic between leaves
// uses the oversubscribed uplinks. The flows are the event engine's: PP sends between
// neighbouring stages (and from the last stage to the first for interleaved chunks) and the DP
// ring's sends to the next node (RankLayout::dp_ring_peer).
class LeafCrossings {
 public:
  LeafCrossings(const RankLayout& layout, int nodes_per_leaf, bool dp_through_nics);

  [[nodiscard]] int leaf_of_gpu(int gpu) const;
  // Returns whether the PP sends from stage `from` to stage `to` leave the leaf for any TP rank
  // and DP replica (the reduced run stands for all of them, so it takes the slowest).
  [[nodiscard]] bool pp_crosses(int from, int to) const;
  // Returns whether stage `s`'s DP ring leaves a leaf anywhere (a ring is as slow as its
  // slowest edge).
  [[nodiscard]] bool dp_ring_crosses(int s) const;
  // Returns the largest number of GPUs under one leaf that send (or receive) flows of one class
  // (PP or DP) across the leaf boundary: the reduced run gives each simulated GPU this share of
  // the leaf's uplinks, carrying both of its classes. 0 if no flow crosses. Conservative when
  // the classes run at once (each flow then gets share/2 <= the leaf's capacity over both
  // classes' flows) or when one class has fewer crossing GPUs than the other (it is held to the
  // larger count).
  [[nodiscard]] int max_crossing_gpus_per_leaf() const { return max_crossing_gpus_; }
  // Returns whether both PP and DP flows leave leaves: only then is the reduced run's share
  // conservative rather than exact.
  [[nodiscard]] bool both_classes_cross() const { return both_classes_cross_; }

 private:
  [[nodiscard]] bool crosses(int a, int b) const { return leaf_of_gpu(a) != leaf_of_gpu(b); }

  RankLayout layout_;
  int nodes_per_leaf_ = 1;
  bool dp_through_nics_ = false;
  int max_crossing_gpus_ = 0;
  bool both_classes_cross_ = false;
};

}  // namespace capsim::sim::detail

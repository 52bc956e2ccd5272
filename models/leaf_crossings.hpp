#pragma once

#include <array>
#include <vector>

#include "models/rank_layout.hpp"

namespace capsim {

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
  // Returns the largest number of GPUs under one leaf that send (or receive) PP flows, or DP
  // ring flows, across the leaf boundary: the reduced run gives each simulated GPU a share of
  // the leaf's uplinks for each class, the leaf's capacity over that count. 0 if none crosses.
  [[nodiscard]] int max_pp_crossing_gpus_per_leaf() const { return max_crossing_gpus_[kPp]; }
  [[nodiscard]] int max_dp_crossing_gpus_per_leaf() const { return max_crossing_gpus_[kDp]; }
  // Returns whether both PP and DP flows leave leaves.
  [[nodiscard]] bool both_classes_cross() const {
    return max_crossing_gpus_[kPp] > 0 && max_crossing_gpus_[kDp] > 0;
  }
  // Returns whether every GPU that sends (receives) one class out of (into) its leaf does so for
  // the other class too, or only one class crosses: then one share carries both classes
  // exactly. Otherwise the per-class shares are exact while the classes take turns and
  // optimistic while they overlap (each then gets its whole share of a capacity they split).
  [[nodiscard]] bool classes_leave_from_the_same_gpus() const { return same_gpus_; }

 private:
  [[nodiscard]] bool crosses(int a, int b) const { return leaf_of_gpu(a) != leaf_of_gpu(b); }

  RankLayout layout_;
  int nodes_per_leaf_ = 1;
  bool dp_through_nics_ = false;
  enum { kPp = 0, kDp = 1, kClasses = 2 };
  std::array<int, kClasses> max_crossing_gpus_{};
  bool same_gpus_ = true;

  // Per flow class, the GPUs with a flow out of their leaf and those with a flow into it.
  struct CrossingGpus {
    std::array<std::vector<bool>, kClasses> sends_out;
    std::array<std::vector<bool>, kClasses> receives_in;
  };
  [[nodiscard]] CrossingGpus mark_crossing_gpus() const;
  [[nodiscard]] int most_marked_gpus_per_leaf(const std::vector<bool>& marked) const;
};

// Returns the largest number of GPUs under one leaf whose context-parallel ring sends to, or
// receives from, a GPU under another leaf (the CP ranks of one TP rank, DP replica and stage
// are consecutive in the data-parallel index, Megatron's "tp-cp-dp-pp" order; `layout.dpc`
// counts data x context). Every ring exchanges at once in steady state, so those GPUs share the
// leaf's uplinks. 0 when no ring leaves its leaf.
[[nodiscard]] int max_cp_crossing_gpus_per_leaf(const RankLayout& layout, int context,
                                                int nodes_per_leaf);

}  // namespace capsim

#include "models/leaf_crossings.hpp"

#include <algorithm>
#include <vector>

namespace capsim {

// Counts, per flow class and direction, the GPUs under each leaf that the class's flows
// leave (or enter) it from: the reduced run shares a leaf's uplinks among that many GPUs.
LeafCrossings::LeafCrossings(const RankLayout& layout, int nodes_per_leaf, bool dp_through_nics)
    : layout_(layout),
      nodes_per_leaf_(std::max(nodes_per_leaf, 1)),
      dp_through_nics_(dp_through_nics) {
  const CrossingGpus marked = mark_crossing_gpus();
  same_gpus_ = marked.sends_out[kPp] == marked.sends_out[kDp] &&
               marked.receives_in[kPp] == marked.receives_in[kDp];
  for (int cls = 0; cls < kClasses; ++cls) {
    for (const auto* gpus : {&marked.sends_out[cls], &marked.receives_in[cls]})
      max_crossing_gpus_[cls] = std::max(max_crossing_gpus_[cls], most_marked_gpus_per_leaf(*gpus));
  }
  same_gpus_ = same_gpus_ || !both_classes_cross();
}

// Marks both ends of every PP and DP ring flow that crosses a leaf boundary.
LeafCrossings::CrossingGpus LeafCrossings::mark_crossing_gpus() const {
  const RankLayout& l = layout_;
  const auto n = static_cast<size_t>(l.num_gpus());
  CrossingGpus marked;
  marked.sends_out.fill(std::vector<bool>(n));
  marked.receives_in.fill(std::vector<bool>(n));
  const auto flow = [&](int cls, int from, int to) {
    if (from != to && crosses(from, to)) {
      marked.sends_out[cls][static_cast<size_t>(from)] = true;
      marked.receives_in[cls][static_cast<size_t>(to)] = true;
    }
  };
  const bool wraps = l.chunks > 1 && l.pp > 1;  // interleaved: the last stage feeds the first
  for (int s = 0; s < l.pp; ++s) {
    for (int r = 0; r < l.dpc; ++r) {
      for (int t = 0; t < l.tp; ++t) {
        const int gpu = l.rank(t, r, s);
        if (s + 1 < l.pp || wraps)
          flow(kPp, gpu, l.rank(t, r, (s + 1) % l.pp));
        if (s > 0 || wraps)
          flow(kPp, gpu, l.rank(t, r, (s + l.pp - 1) % l.pp));
        if (dp_through_nics_)
          flow(kDp, gpu, l.dp_ring_peer(t, r, s));
      }
    }
  }
  return marked;
}

namespace {

// Returns the largest number of marked GPUs under one leaf of `leaf_gpus` consecutive GPUs (a
// counter per leaf: a plan's layouts on thousands of GPUs count them once each).
int most_marked_per_leaf(const std::vector<bool>& marked, int leaf_gpus) {
  std::vector<int> per_leaf(marked.size() / static_cast<size_t>(leaf_gpus) + 1, 0);
  int most = 0;
  for (size_t g = 0; g < marked.size(); ++g) {
    if (marked[g])
      most = std::max(most, ++per_leaf[g / static_cast<size_t>(leaf_gpus)]);
  }
  return most;
}

}  // namespace

// Returns the largest number of marked GPUs under one leaf.
int LeafCrossings::most_marked_gpus_per_leaf(const std::vector<bool>& marked) const {
  return most_marked_per_leaf(marked, nodes_per_leaf_ * layout_.gpus_per_node);
}

int max_cp_crossing_gpus_per_leaf(const RankLayout& l, int context, int nodes_per_leaf) {
  const int c = std::max(context, 1);
  const int leaf_gpus = std::max(nodes_per_leaf, 1) * l.gpus_per_node;
  const auto n = static_cast<size_t>(l.num_gpus());
  std::vector<bool> sends_out(n);
  std::vector<bool> receives_in(n);
  for (int s = 0; s < l.pp; ++s) {
    for (int r = 0; r < l.dpc; ++r) {
      const int next = r - r % c + (r % c + 1) % c;  // the ring's next CP rank
      for (int t = 0; t < l.tp; ++t) {
        const int from = l.rank(t, r, s);
        const int to = l.rank(t, next, s);
        if (from / leaf_gpus != to / leaf_gpus) {
          sends_out[static_cast<size_t>(from)] = true;
          receives_in[static_cast<size_t>(to)] = true;
        }
      }
    }
  }
  return std::max(most_marked_per_leaf(sends_out, leaf_gpus),
                  most_marked_per_leaf(receives_in, leaf_gpus));
}

int LeafCrossings::leaf_of_gpu(int gpu) const {
  return layout_.node(gpu) / nodes_per_leaf_;
}

bool LeafCrossings::pp_crosses(int from, int to) const {
  for (int r = 0; r < layout_.dpc; ++r) {
    for (int t = 0; t < layout_.tp; ++t) {
      if (crosses(layout_.rank(t, r, from), layout_.rank(t, r, to)))
        return true;
    }
  }
  return false;
}

bool LeafCrossings::dp_ring_crosses(int s) const {
  if (!dp_through_nics_)
    return false;
  for (int r = 0; r < layout_.dpc; ++r) {
    for (int t = 0; t < layout_.tp; ++t) {
      if (crosses(layout_.rank(t, r, s), layout_.dp_ring_peer(t, r, s)))
        return true;
    }
  }
  return false;
}

}  // namespace capsim

#pragma once

namespace capsim {

// Ranks in Megatron-LM's order (parallel_state.py, order "tp-cp-dp-pp"): TP fastest, then the
// data-parallel index (DP x CP), then the pipeline stage. GPU id = rank; node = id / G.
struct RankLayout {
  int tp = 1;
  int dpc = 1;  // data x context
  int pp = 1;
  int chunks = 1;  // virtual pipeline stages per GPU
  int gpus_per_node = 8;

  [[nodiscard]] int rank(int t, int r, int s) const { return t + tp * (r + dpc * s); }
  [[nodiscard]] int node(int gpu) const { return gpu / gpus_per_node; }
  [[nodiscard]] int num_gpus() const { return tp * dpc * pp; }

  // Returns the GPU that receives the DP ring traffic of rank (t, r, s) through the NICs: the
  // same local GPU on the next node of its DP group, wrapping to the group's first node
  // (rail-aligned, as NCCL builds its rings). The group has G/tp ranks per node (one when TP
  // spans nodes, and then its nodes are tp/G apart). Equals the rank's own GPU if the group
  // has one node.
  [[nodiscard]] int dp_ring_peer(int t, int r, int s) const {
    const int per_node = tp >= gpus_per_node ? 1 : gpus_per_node / tp;
    if (dpc <= per_node)
      return rank(t, r, s);
    return rank(t, (r + per_node) % dpc, s);
  }
};

}  // namespace capsim

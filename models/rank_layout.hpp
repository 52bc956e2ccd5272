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
  int nvlink_domain = 0;  // GPUs of one NVLink domain spanning nodes; 0: the node

  [[nodiscard]] int rank(int t, int r, int s) const { return t + tp * (r + dpc * s); }
  [[nodiscard]] int node(int gpu) const { return gpu / gpus_per_node; }
  [[nodiscard]] int domain_gpus() const {
    return nvlink_domain > 0 ? nvlink_domain : gpus_per_node;
  }
  // The NVLink domain of `gpu`: GPUs of one domain reach each other without the NICs.
  [[nodiscard]] int domain(int gpu) const { return gpu / domain_gpus(); }
  [[nodiscard]] int num_gpus() const { return tp * dpc * pp; }

  // Returns the GPU that receives the DP ring traffic of rank (t, r, s) through the NICs: the
  // same local GPU on the next NVLink domain (node) of its DP group, wrapping to the group's
  // first one (rail-aligned, as NCCL builds its rings). The group has D/tp ranks per domain
  // (one when TP spans domains, and then its domains are tp/D apart). Equals the rank's own GPU
  // if the group has one domain.
  [[nodiscard]] int dp_ring_peer(int t, int r, int s) const {
    const int per_node = tp >= domain_gpus() ? 1 : domain_gpus() / tp;
    if (dpc <= per_node)
      return rank(t, r, s);
    return rank(t, (r + per_node) % dpc, s);
  }
};

}  // namespace capsim

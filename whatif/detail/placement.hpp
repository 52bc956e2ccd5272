#pragma once

#include <vector>

#include "whatif/detail/cluster.hpp"

namespace capsim::whatif::detail {

// Where a job's GPUs go: the sizes it may run at, the nodes that hold them, and the
// bookkeeping of handing them out and back. Pure functions of the cluster state.

// Returns the sizes the job may run at in `pool`, best first: the request, then smaller
// admissible ones (elastic jobs: one node's share or whole nodes; scenario jobs: the sizes
// their throughput table lists).
[[nodiscard]] std::vector<int> sizes(const Cluster& c, const Job& job, int pool);

// Finds ready nodes of `pool` for `gpus` GPUs given each node's `free` GPUs: best fit on one
// node, or whole free nodes. Returns false when they do not fit; `out` gets the pieces.
[[nodiscard]] bool find_place(const Cluster& c, int pool, int gpus, const std::vector<int>& free,
                              std::vector<Piece>& out);

// Same as find_place with the pool's nodes' own free GPUs, from the pool's index of ready
// nodes by free GPUs: the scheduler's placement, which runs at every wake of the engine.
[[nodiscard]] bool find_ready_place(const Cluster& c, int pool, int gpus, std::vector<Piece>& out);

// Gives job `j` the `pieces` of `pool`, allocated from `now`.
void take(Cluster& c, int j, int pool, const std::vector<Piece>& pieces, double now);

// Returns job `j`'s GPUs to the nodes still up and clears its allocation.
void release_pieces(Cluster& c, int j);

// Finds a new size for an elastic job at a checkpoint: shrink to its minimum when
// `others_wait`, otherwise grow into the pool's free GPUs when enough work is left to pay the
// restart. Returns false to keep the current size; `place` gets the new pieces.
[[nodiscard]] bool find_resize(const Cluster& c, const Job& job, bool others_wait,
                               std::vector<Piece>& place);

}  // namespace capsim::whatif::detail

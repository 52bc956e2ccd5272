#pragma once

#include "whatif/detail/run_state.hpp"

namespace capsim::whatif::detail {

// Launches one node of `pool`; returns false on insufficient capacity (the pool backs off). An
// `instant` node is one the cluster starts with: ready at once, never counted as a scale-up.
// Otherwise the node boots for the pool's sampled provisioning delay, or times out.
[[nodiscard]] bool launch_node(RunState& run, int pool, bool instant);

// Makes booted node `id` ready: its GPUs take work, and its failure, spot interruption and
// expiry events are drawn.
void become_ready(RunState& run, int id);

}  // namespace capsim::whatif::detail

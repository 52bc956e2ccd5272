#pragma once

#include "models/iteration_costs.hpp"
#include "sim/detail/replay_state.hpp"

namespace capsim::sim::detail {

// Builds each stage's op list and the collectives its gradients and parameters need.
// REQUIRES: sim's scenario, costs, layout, zero3 and zero12 are set.
void plan_stages(Sim& sim);

// Returns the two-rank group a PP send/recv between neighbouring stages forms, inside a node or
// across two.
[[nodiscard]] GroupShape pp_shape(const Sim& sim, bool inter_node);

// Flow bytes that take the profile's uncontended send/recv time (minus its latency, paid as
// route latency) on an otherwise idle path of `bandwidth`.
[[nodiscard]] double pp_wire_bytes(const Sim& sim, double bytes, bool inter_node, double bandwidth);

}  // namespace capsim::sim::detail

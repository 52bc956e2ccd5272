#pragma once

#include "models/cluster_spec.hpp"

namespace capsim {

// What the datasheet collective model needs to know about an inter-node fabric that no measured
// profile covers: the latency its NCCL transport adds to every network step, and the bus
// bandwidth a ring and a tree all-reduce reach as fractions of the node's NIC line rate.
// Plain values; each figure's source is cited in models/fabric_figures.cpp.
struct FabricFigures {
  double net_step_extra_latency_s = 0.0;  // added to NCCL's 14 us (ring) / 5 us (tree) NET step
  double ring_bus_bandwidth_fraction = 0.0;
  double tree_bus_bandwidth_fraction = 0.0;
};

// Returns the datasheet figures of `fabric` (kNvSwitch, which never leaves a node, gets the
// InfiniBand figures).
[[nodiscard]] FabricFigures fabric_figures(Fabric fabric);

}  // namespace capsim

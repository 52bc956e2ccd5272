#pragma once

#include <map>
#include <string>
#include <tuple>

#include "models/fabric_placement.hpp"

#include "io/json_reader.hpp"

namespace capsim::whatif {

struct WhatIf;

// The what-if's opt-in fabric (`"fabric"` key, docs/whatif.md): every pool's nodes sit in
// leaves of `nodes_per_leaf` (a node's leaf is its position in the pool / nodes_per_leaf) whose
// uplinks are `oversubscription` times thinner than their downlinks, and multi-node jobs are
// placed by `placement` (packed, spread or leaf-aligned).
struct WhatIfFabric {
  int nodes_per_leaf = 1;
  double oversubscription = 1.0;
  PlacementPolicy placement = PlacementPolicy::kPacked;
};

// A placement's shape: a scenario job's size on an instance type and the most of its nodes one
// leaf holds (nodes / leaves spanned, rounded up). Its slowdown is cached per shape.
using FabricShape = std::tuple<std::string, std::string, int, int>;  // scenario, instance, GPUs,
                                                                     // nodes per leaf

// Returns the fabric of a what-if's `"fabric"` object; throws InputError with its pointer.
[[nodiscard]] WhatIfFabric read_whatif_fabric(io::JsonReader& r);

// Returns the job's nodes per leaf when `nodes` of them span `leaves` leaves.
[[nodiscard]] int nodes_per_leaf_of(int nodes, int leaves);

// Fills whatif.fabric_slowdowns for every shape a scenario job can take on each pool: the
// event engine's iteration time with the job's crossing flows on its share of oversubscribed
// leaf uplinks (its nodes per leaf x node NIC bandwidth / oversubscription, the share a busy
// cluster leaves it) over its time on a non-blocking fabric. Each distinct shape runs once, in
// a forked child (sim::run_forked, two at once). REQUIRES: whatif.fabric is set and the
// scenario models are filled; called from the main thread before any simulation.
void fill_fabric_slowdowns(WhatIf& whatif);

}  // namespace capsim::whatif

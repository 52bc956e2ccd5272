#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/json_reader.hpp"

namespace capsim::planner {

struct PlanSpec;
struct PlanResult;

// The plan's opt-in `"shared_fabric"` (docs/planner.md): the winner's nodes sit in leaves of
// `nodes_per_leaf` nodes, `oversubscription` times thinner upwards, shared with other jobs.
struct SharedFabric {
  int nodes_per_leaf = 1;
  double oversubscription = 1.0;
};

// One placement of the winner on the shared fabric: the most of its nodes one leaf holds, its
// iteration time over its time on a non-blocking fabric, and its days and cost stretched by it.
struct SharedFabricPlacement {
  int nodes_per_leaf = 1;
  double slowdown = 1.0;
  double wall_time_s = 0.0;
  double cost_usd = 0.0;
};

// What the shared fabric does to the winner: packed (whole leaves, the fewest) and
// fragmented (one node per leaf, the most its flows can cross).
struct SharedFabricEffect {
  SharedFabricPlacement packed;
  SharedFabricPlacement fragmented;
};

// Returns the plan's `"shared_fabric"` object; throws InputError with its pointer.
[[nodiscard]] SharedFabric read_shared_fabric(io::JsonReader& r);

// Returns the shared fabric's effect on the winner: the event engine's iteration times with
// its crossing flows on its share of the leaves' uplinks (its nodes per leaf x node NIC
// bandwidth / oversubscription, what busy leaves leave it; sim/forked_iterations.hpp), over its
// time on a non-blocking fabric, in forked children. None without a winner or a fabric.
// REQUIRES: called from the main thread.
[[nodiscard]] std::optional<SharedFabricEffect> assess_shared_fabric(const PlanSpec& plan,
                                                                     const PlanResult& result);

// Returns the effect as the JSON's "shared_fabric" object and as the table's line.
[[nodiscard]] nlohmann::json shared_fabric_json(const SharedFabric& fabric,
                                                const SharedFabricEffect& effect);
[[nodiscard]] std::string shared_fabric_line(const SharedFabric& fabric,
                                             const SharedFabricEffect& effect);

}  // namespace capsim::planner

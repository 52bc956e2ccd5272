#pragma once

#include <vector>

#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim::sim {

// Returns `scenario` with its nodes under oversubscribed leaf switches of `nodes_per_leaf`
// nodes each: a leaf's uplinks carry nodes_per_leaf x node NIC bandwidth / oversubscription.
// A job holding `nodes_per_leaf` nodes of each busy leaf it spans gets that share of the
// leaf's uplinks, the rest going to its neighbours (docs/cluster.md, "Placement slowdowns").
[[nodiscard]] Scenario on_leaf_share(Scenario scenario, int nodes_per_leaf,
                                     double oversubscription);

// One event-engine run: a scenario and the profile it is costed with.
struct ScenarioRun {
  Scenario scenario;
  HardwareProfile profile;
};

// Returns each run's iteration time (s) from the event engine (the reduced run), each
// simulated in a forked child, `parallel` at once. Throws std::runtime_error naming the
// scenario whose run failed. REQUIRES: called from the main thread (run_forked).
[[nodiscard]] std::vector<double> simulate_iteration_times(const std::vector<ScenarioRun>& runs,
                                                           int parallel);

}  // namespace capsim::sim

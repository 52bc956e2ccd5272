#pragma once

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Returns the per-stage, per-chunk costs of one iteration: the workload lowered to GEMMs,
// attention and memory-bound ops, costed with the profile, plus the communicator shapes.
// Both engines (analytic and event) start from this.
// REQUIRES: the scenario passed check_layout.
[[nodiscard]] IterationCosts compute_iteration_costs(const Scenario& scenario,
                                                     const HardwareProfile& profile);

}  // namespace capsim

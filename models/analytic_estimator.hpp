#pragma once

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"

namespace capsim {

// Returns the closed-form estimate of one iteration: per-stage compute, TP/CP collectives on the
// critical path, PP transfers, the schedule's bubble, DP reduction with bucket overlap, ZeRO
// gathers and the optimizer step. Contention between concurrent flows is not modelled (the
// event engine sees it); the result's notes say so. Pure and thread-safe.
[[nodiscard]] SimulationResult estimate_iteration(const Scenario& scenario,
                                                  const HardwareProfile& profile);

// Same, from costs already computed (the planner reuses them).
[[nodiscard]] SimulationResult estimate_iteration(const Scenario& scenario,
                                                  const IterationCosts& costs,
                                                  const HardwareProfile& profile);

// Fills throughput, MFU/HFU and memory fields of `result` from its iteration time; shared by
// both engines so they report identically.
void finish_result(const Scenario& scenario, const IterationCosts& costs, SimulationResult& result);

}  // namespace capsim

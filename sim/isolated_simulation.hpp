#pragma once

#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"
#include "sim/iteration_simulator.hpp"

namespace capsim::sim {

// Returns simulate_iteration(scenario, profile, options) computed in a forked child process
// (run_forked), so that one process can run many event-level simulations (SimGrid allows one
// per process): `capsim validate`, the benchmarks. The numbers arrive bit for bit.
// options.trace must be null. Throws std::runtime_error with the child's message when the
// child fails. REQUIRES: called from the main thread (run_forked).
[[nodiscard]] SimulationResult simulate_iteration_in_child(const Scenario& scenario,
                                                           const HardwareProfile& profile,
                                                           const SimOptions& options = {});

}  // namespace capsim::sim

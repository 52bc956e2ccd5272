#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/leaf_crossings.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"
#include "sim/detail/platform.hpp"
#include "sim/detail/replay_state.hpp"
#include "sim/iteration_simulator.hpp"

namespace capsim::sim::detail {

// The steps of one job's replay, shared by the one-job run (simulate_iteration) and the run of
// several jobs on one fabric (simulate_fabric). Each runs inside the process's one simulation.

// The platform to build, and the leaf crossings that decide which of its routes take the
// leaf uplinks.
struct PlatformPlan {
  PlatformSpec spec;
  std::optional<LeafCrossings> leaves;
};

// Throws std::logic_error unless this is the process's first simulation.
void claim_engine();
// The arguments SimGrid's Engine takes in place of the process's: capsim's name alone, kept for
// the engine's lifetime.
struct EngineArguments {
  int* argc;
  char** argv;
};
[[nodiscard]] EngineArguments engine_arguments();
// Selects the flow-exact network model; `deadlock` is set if the replay deadlocks.
void configure_engine(bool& deadlock);
// Fills the replay's inputs, layout and switches, and plans every stage.
void set_up_replay(Sim& sim, const Scenario& scenario, const IterationCosts& costs,
                   const HardwareProfile& profile, const SimOptions& options);
// Returns the platform's links and leaf crossings for the job's scenario; records in `sim` the
// PP latencies and whether its DP flows go through the NICs or the NVLink ports.
[[nodiscard]] PlatformPlan build_platform_spec(Sim& sim, const SimOptions& options);
// Adds the simulated ranks (their GPUs on sim.platform).
void create_ranks(Sim& sim, const SimOptions& options);
// Gives every rank its PP neighbours and DP peer; the platform gets the routes between them.
void wire_ranks(Sim& sim, const PlatformPlan& fabric, const SimOptions& options);
// Records the DP route's latency. REQUIRES: sim.platform is built.
void set_dp_route_latency(Sim& sim);
// Sizes the actors' stacks for `ranks` simulated GPUs in the whole simulation.
void configure_actor_stacks(std::size_t ranks);
// Starts every rank's actors.
void launch_actors(Sim& sim);
// Starts the job's next iteration now: clears every rank's accounts and times and starts its
// actors again. REQUIRES: the previous iteration's actors all ended.
void relaunch_actors(Sim& sim);
// Returns every actor of the job's ranks (to join the iteration's end).
[[nodiscard]] std::vector<ActorPtr> rank_actors(const Sim& sim);
// Returns the job's result once the simulation ran.
[[nodiscard]] SimulationResult collect_result(const Sim& sim, const PlatformPlan& fabric,
                                              const SimOptions& options);
// Orders the trace's slices by start time.
void sort_trace(traces::ChromeTrace& trace);

}  // namespace capsim::sim::detail

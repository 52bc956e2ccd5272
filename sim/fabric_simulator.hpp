#pragma once

#include <vector>

#include "models/fabric_result.hpp"
#include "models/fabric_schedule.hpp"
#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/shared_cluster.hpp"
#include "models/simulation_result.hpp"
#include "sim/iteration_simulator.hpp"
#include "traces/chrome_trace.hpp"

namespace capsim::sim {

// One job of a shared-fabric run: its scenario and nodes, its lowered costs, and where its
// trace goes (null: none).
struct FabricJobInput {
  const FabricJob* job = nullptr;
  const IterationCosts* costs = nullptr;
  traces::ChromeTrace* trace = nullptr;
  double start_s = 0.0;  // when its first iteration starts
};

// What one shared-fabric run produces: per job (input order) its measured iterations' mean, and
// the inter-node links that carried traffic with the bytes each job put on them over the run.
struct FabricRun {
  std::vector<SimulationResult> jobs;
  std::vector<LinkLoad> links;
  double makespan_s = 0.0;  // when the run's last iteration ends
};

// Returns every job's iteration replayed at once on ONE SimGrid platform built for `fabric`:
// every GPU of every job simulated on its fabric node, each job's PP and DP flows on its own
// NICs and, between leaves of an oversubscribed fabric, on the leaf uplinks they share with the
// other jobs' flows (max-min fair sharing, docs/cluster.md). Each job starts at its start_s and
// runs its iterations back to back as `schedule` says (its start_s values are the caller's).
// REQUIRES: called at most once per process (as simulate_iteration); jobs on distinct nodes of
// `fabric`, every job's costs from its scenario; the total GPU count at most kMaxEveryGpuRanks;
// schedule.measured_iterations >= 1, schedule.warmup_iterations >= 0.
[[nodiscard]] FabricRun simulate_fabric(const ClusterSpec& fabric,
                                        const std::vector<FabricJobInput>& jobs,
                                        const HardwareProfile& profile,
                                        const FabricSchedule& schedule = FabricSchedule::aligned(),
                                        SimStats* stats = nullptr);

}  // namespace capsim::sim

#pragma once

#include <vector>

#include "models/fabric_result.hpp"
#include "models/hardware_profile.hpp"
#include "models/shared_cluster.hpp"
#include "sim/iteration_simulator.hpp"
#include "traces/chrome_trace.hpp"

namespace capsim::sim {

// Returns how much the jobs of `cluster` slow each other down on its fabric: each job's
// iteration alone on its placement (one forked child process per job, run_forked, two at once)
// and all jobs together (simulate_fabric, in this process), with the inter-node links' loads of
// the shared run. A cluster of one job runs once: alone and shared are the same run.
// `traces`, when not null, receives one trace per job (cluster order) of the shared run;
// `stats` the shared run's counters. Deterministic: the same cluster and profile give the same
// numbers bit for bit. REQUIRES: no simulation ran in this process yet (SimGrid runs one per
// process); called from the main thread (run_forked).
[[nodiscard]] FabricContention measure_fabric_contention(
    const SharedCluster& cluster, const HardwareProfile& profile,
    std::vector<traces::ChromeTrace>* traces = nullptr, SimStats* stats = nullptr);

}  // namespace capsim::sim

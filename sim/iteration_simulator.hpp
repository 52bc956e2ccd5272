#pragma once

#include <cstddef>
#include <limits>

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"
#include "traces/chrome_trace.hpp"

namespace capsim::sim {

// How to run the event-level replay.
struct SimOptions {
  // Simulate one TP rank per stage and one DP replica (exact on symmetric fabrics, see
  // docs/simulator.md); false simulates every GPU (small clusters, the symmetry test).
  bool exploit_symmetry = true;
  // Fill a Chrome trace (one track per simulated GPU, compute and communication streams).
  traces::ChromeTrace* trace = nullptr;
  // Most simulated GPUs in one routing zone; above it the platform routes through groups
  // (sim/detail/platform.hpp): the same links, slower lookups. The one zone keeps only the
  // routes it is given, so by default every size uses it.
  std::size_t one_zone_max_gpus = std::numeric_limits<std::size_t>::max();
};

// The largest cluster simulated GPU by GPU (`exploit_symmetry` false): Llama-3 405B takes
// 0.6 GB and 8-14 s at 16,384 GPUs and 1.2 GB and 26 s at 32,768, and time grows faster than the
// GPU count (docs/simulator.md). The reduced run has no such limit.
inline constexpr int kMaxEveryGpuRanks = 32768;

// Counters of one replay, for benchmarks and docs/performance.md.
struct SimStats {
  int simulated_gpus = 0;
  long long activities = 0;  // sleeps + flows + mailbox messages started
  double build_wall_s = 0.0;
  double run_wall_s = 0.0;
};

// Returns the simulated iteration of `scenario` on a SimGrid platform built from its cluster:
// pipeline schedule replayed per stage, PP/DP/ZeRO traffic as flows that share NICs and fabric,
// TP/CP collectives on the critical path. Engine "event".
// REQUIRES: called at most once per process (SimGrid keeps one simulation per process); a second
// call throws std::logic_error. The scenario breaks no layout rule
// (estimate/layout_rules.hpp).
[[nodiscard]] SimulationResult simulate_iteration(const Scenario& scenario,
                                                  const HardwareProfile& profile,
                                                  const SimOptions& options = {},
                                                  SimStats* stats = nullptr);

// Same, from costs already computed (tests use hand-made costs).
[[nodiscard]] SimulationResult simulate_iteration(const Scenario& scenario,
                                                  const IterationCosts& costs,
                                                  const HardwareProfile& profile,
                                                  const SimOptions& options = {},
                                                  SimStats* stats = nullptr);

}  // namespace capsim::sim

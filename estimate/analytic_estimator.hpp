#pragma once

#include <optional>

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/memory_model.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"

namespace capsim::estimate {

// What estimate_iteration works out beyond the iteration time.
enum class EstimateDetail {
  kBreakdown,  // the whole breakdown
  // Overlapped pipeline sends' waits counted as bubble: the split takes a second schedule
  // replay, which callers that use the time alone (the planner's screen, `validate`, the
  // in-situ fit, the what-if throughput) skip.
  kTimeOnly,
};

// Returns the closed-form estimate of one iteration: per-stage compute, TP/CP collectives on the
// critical path, PP transfers, the schedule's bubble, DP reduction with bucket overlap, ZeRO
// gathers and the optimizer step. Contention between concurrent flows is not modelled (the
// event engine sees it); the result's notes say so. Pure and thread-safe.
[[nodiscard]] SimulationResult estimate_iteration(
    const Scenario& scenario, const HardwareProfile& profile,
    EstimateDetail detail = EstimateDetail::kBreakdown);

// Same, from costs already computed (the planner reuses them), and optionally the memory
// estimate_memory gives for this scenario (the planner has it from pruning).
[[nodiscard]] SimulationResult estimate_iteration(
    const Scenario& scenario, const IterationCosts& costs, const HardwareProfile& profile,
    const MemoryEstimate* memory = nullptr, EstimateDetail detail = EstimateDetail::kBreakdown);

// What the planner's screen ranks a layout by: estimate_iteration's figures of the same name.
struct ScreenEstimate {
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  double busiest_over_mean_busy = 1.0;  // TimeBreakdown's
};

// The planner's screen: estimate_iteration's time, throughput and MFU, or nullopt as soon as a
// lower bound on the iteration time, from the stages' work before the schedule is replayed,
// shows that the layout delivers at most `tokens_per_s` (when every candidate the screen keeps
// is faster and the target is missed anyway). The bound never exceeds the estimate's time, so a
// layout that could run faster always gets the full estimate.
[[nodiscard]] std::optional<ScreenEstimate> estimate_iteration_faster_than(
    const Scenario& scenario, const IterationCosts& costs, const HardwareProfile& profile,
    double tokens_per_s);

// Fills throughput, MFU/HFU and memory fields of `result` from its iteration time; shared by
// both engines so they report identically. `memory`, when given, is the scenario's
// estimate_memory.
void finish_result(const Scenario& scenario, const IterationCosts& costs, SimulationResult& result,
                   const MemoryEstimate* memory = nullptr);

}  // namespace capsim::estimate

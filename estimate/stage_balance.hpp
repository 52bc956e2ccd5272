#pragma once

#include <optional>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/memory_model.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"

namespace capsim::estimate {

// A layer split over the pipeline stages that the analytic estimator times faster than the
// scenario's own, and by how much.
struct StageBalance {
  std::vector<int> stage_layers;  // per stage, as `parallelism.stage_layers` takes it
  double iteration_time_s = 0.0;  // analytic estimate with that split
  double current_time_s = 0.0;    // analytic estimate with the scenario's split
  double peak_bytes = 0.0;        // per-GPU memory peak with that split
  bool fits = false;              // in the GPU's memory, with that split
  bool current_fits = false;      // with the scenario's split
  bool search_capped = false;     // stopped at kMaxBalanceWork: a faster split may exist
};

// Work one layer-split search may spend, in layers lowered plus schedule steps (stage x
// micro-batch x virtual chunk) replayed over all its timings: about 5 s of one core.
inline constexpr double kMaxBalanceWork = 2e8;

// A layer split over the pipeline stages and the memory model's estimate for it.
struct FittedSplit {
  std::vector<int> stage_layers;
  MemoryEstimate memory;
};

// Returns a split of the layers over the pipeline stages whose per-GPU memory peak is at most
// `max_peak_bytes`: from the scenario's split (`parallelism`'s), the layers over what a stage
// can hold move to the stages with the most room. 1F1B's first stages hold the most
// micro-batches' activations, so a split can fit where the even one does not. Nothing when the
// scenario's split already fits or no split does. Uses the memory model
// only, cheap enough for the planner's screen: two or three memory estimates, one fewer when
// `current` (the scenario's estimate_memory) is given; the last, the split's own, is returned.
[[nodiscard]] std::optional<FittedSplit> split_that_fits(const ModelSpec& model,
                                                         const Parallelism& parallelism,
                                                         const GpuSpec& gpu, double max_peak_bytes,
                                                         const MemoryEstimate* current = nullptr);

// Searches for the layer split that evens the stages' work: from the scenario's split, moves
// one layer at a time off the busiest stage to wherever the estimated iteration is fastest,
// while that gains, keeping each stage at least one layer per virtual chunk and the per-GPU
// memory peak at most `max_peak_bytes` (by default the GPU's capacity when the scenario fits
// it). The embedding and the output layer make the first and last stages heavier than their
// layer count says (Llama 3's 128K-vocabulary head weighs about a layer of a 70B model).
// Without a bound, a scenario that does not fit starts from split_that_fits() when there is
// one. Returns nothing without pipeline parallelism or when no split is faster or fits where the
// scenario's does not. Pure. Each move costs and sizes every destination (no schedule replay)
// and, under 1F1B and GPipe, times only a few of each run of alike destinations (the estimate
// runs monotonically along one); under the interleaved and zero-bubble schedules it times every
// destination. The answer is the one timing every destination gives (StageBalanceTest) unless
// the search spends `max_work` (kMaxBalanceWork's units) first: it then keeps the best split so
// far and sets search_capped. `current`, when given, is estimate_iteration(scenario, profile)
// (EstimateDetail::kBreakdown), which the caller has already: the search starts from it.
[[nodiscard]] std::optional<StageBalance> balance_stage_layers(
    const Scenario& scenario, const HardwareProfile& profile,
    std::optional<double> max_peak_bytes = std::nullopt, double max_work = kMaxBalanceWork,
    const SimulationResult* current = nullptr);

}  // namespace capsim::estimate

#include "models/stage_balance.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "models/analytic_estimator.hpp"
#include "models/memory_model.hpp"

namespace capsim {
namespace {

struct Timed {
  double iteration_s = 0.0;
  bool fits = false;
  double peak_bytes = 0.0;
  std::vector<double> stage_busy_s;
};

Timed time_split(Scenario& scenario, const HardwareProfile& profile,
                 const std::vector<int>& split) {
  scenario.parallelism.stage_layers = split;
  const SimulationResult r = estimate_iteration(scenario, profile);
  return {r.iteration_time_s, r.memory.fits, r.memory.peak_bytes, r.breakdown.stage_busy_s};
}

// The split one layer moved `from` -> `to` gives.
std::vector<int> moved(std::vector<int> split, size_t from, size_t to) {
  --split[from];
  ++split[to];
  return split;
}

}  // namespace

std::optional<FittedSplit> split_that_fits(const ModelSpec& model, const Parallelism& parallelism,
                                           const GpuSpec& gpu, double max_peak_bytes,
                                           const MemoryEstimate* current) {
  const int p = parallelism.pipeline;
  if (p <= 1)
    return std::nullopt;
  Parallelism trial = parallelism;
  trial.stage_layers = layers_per_stage(model, parallelism);
  const MemoryEstimate at =
      current != nullptr ? *current : estimate_memory(model, trial, gpu, model.attention);
  if (at.peak_bytes <= max_peak_bytes)
    return std::nullopt;
  // A stage's memory grows linearly with its own layers (their weights, gradients, optimizer
  // state and activations; how many micro-batches it holds depends on its place in the
  // pipeline, not on its layers), so one more layer on every stage gives each stage's slope,
  // and with it the most layers each can hold.
  Parallelism more = trial;
  for (int& layers : more.stage_layers)
    ++layers;
  const MemoryEstimate above = estimate_memory(model, more, gpu, model.attention);
  std::vector<int> most(static_cast<size_t>(p));
  long long room = 0;
  for (size_t s = 0; s < most.size(); ++s) {
    const double slope = above.stages[s].total_bytes() - at.stages[s].total_bytes();
    if (!(slope > 0.0))
      return std::nullopt;
    // Clamped so that a tiny slope cannot overflow the int: no stage holds more than the model.
    const double spare_layers =
        std::clamp(std::floor((max_peak_bytes - at.stages[s].total_bytes()) / slope),
                   -static_cast<double>(model.num_layers), static_cast<double>(model.num_layers));
    most[s] = trial.stage_layers[s] + static_cast<int>(spare_layers);
    if (most[s] < parallelism.virtual_pipeline_stages)
      return std::nullopt;
    room += most[s];
  }
  if (room < model.num_layers)
    return std::nullopt;
  // The layers over a stage's most go, one at a time, to the stage with the most room left.
  std::vector<int>& split = trial.stage_layers;
  int excess = 0;
  for (size_t s = 0; s < split.size(); ++s) {
    excess += std::max(0, split[s] - most[s]);
    split[s] = std::min(split[s], most[s]);
  }
  for (; excess > 0; --excess) {
    size_t roomiest = 0;
    for (size_t s = 1; s < split.size(); ++s) {
      if (most[s] - split[s] > most[roomiest] - split[roomiest])
        roomiest = s;
    }
    ++split[roomiest];
  }
  // The interleaved schedule's chunks make the slope a little uneven: check the split itself.
  MemoryEstimate memory = estimate_memory(model, trial, gpu, model.attention);
  if (memory.peak_bytes > max_peak_bytes)
    return std::nullopt;
  return FittedSplit{std::move(split), std::move(memory)};
}

std::optional<StageBalance> balance_stage_layers(const Scenario& scenario,
                                                 const HardwareProfile& profile,
                                                 std::optional<double> max_peak_bytes) {
  const int p = scenario.parallelism.pipeline;
  if (p <= 1)
    return std::nullopt;
  const int least_layers = scenario.parallelism.virtual_pipeline_stages;
  Scenario trial = scenario;
  std::vector<int> split = layers_per_stage(scenario.model, scenario.parallelism);
  Timed best = time_split(trial, profile, split);
  const double current_s = best.iteration_s;
  const bool current_fits = best.fits;
  if (!max_peak_bytes && !best.fits) {
    const GpuSpec& gpu = *find_gpu(scenario.cluster.gpu);
    if (auto fitting =
            split_that_fits(scenario.model, scenario.parallelism, gpu, gpu.hbm_capacity_bytes)) {
      split = std::move(fitting->stage_layers);
      best = time_split(trial, profile, split);
    }
  }
  const bool must_fit = max_peak_bytes.has_value() || best.fits;
  const auto allowed = [&](const Timed& t) {
    return !must_fit || (max_peak_bytes ? t.peak_bytes <= *max_peak_bytes : t.fits);
  };
  // Each accepted move makes the estimate strictly faster, so the search ends; the bound only
  // guards against rounding.
  for (int moves = 0; moves < scenario.model.num_layers; ++moves) {
    const auto busiest =
        static_cast<size_t>(std::max_element(best.stage_busy_s.begin(), best.stage_busy_s.end()) -
                            best.stage_busy_s.begin());
    if (split[busiest] <= least_layers)
      break;
    std::vector<int> best_move;
    Timed best_moved = best;
    for (size_t to = 0; to < split.size(); ++to) {
      if (to == busiest)
        continue;
      std::vector<int> candidate = moved(split, busiest, to);
      const Timed t = time_split(trial, profile, candidate);
      if (t.iteration_s < best_moved.iteration_s * (1.0 - 1e-9) && allowed(t)) {
        best_moved = t;
        best_move = std::move(candidate);
      }
    }
    if (best_move.empty())
      break;
    split = best_move;
    best = best_moved;
  }
  const bool made_fit = best.fits && !current_fits;
  if (!made_fit && best.iteration_s >= current_s * (1.0 - 1e-9))
    return std::nullopt;
  return StageBalance{split, best.iteration_s, current_s, best.peak_bytes, best.fits, current_fits};
}

}  // namespace capsim

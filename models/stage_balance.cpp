#include "models/stage_balance.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "models/analytic_estimator.hpp"
#include "models/iteration_model.hpp"

namespace capsim {
namespace {

struct Timed {
  double iteration_s = 0.0;
  bool fits = false;
  double peak_bytes = 0.0;
  int fullest_stage = 0;
  std::vector<double> stage_busy_s;
};

Timed time_split(Scenario& scenario, const HardwareProfile& profile,
                 const std::vector<int>& split) {
  scenario.parallelism.stage_layers = split;
  const SimulationResult r = estimate_iteration(scenario, profile);
  return {r.iteration_time_s, r.memory.fits, r.memory.peak_bytes, r.memory.worst_stage,
          r.breakdown.stage_busy_s};
}

// The split the scenario runs: its `stage_layers`, or the one the rules derive (even, or
// Megatron's split counting the embedding and the loss as layers).
std::vector<int> current_split(const Scenario& scenario, const HardwareProfile& profile) {
  std::vector<int> split;
  for (const StageCosts& stage : compute_iteration_costs(scenario, profile).stages) {
    int layers = 0;
    for (const ChunkCosts& chunk : stage.chunks)
      layers += chunk.num_layers;
    split.push_back(layers);
  }
  return split;
}

// The split one layer moved `from` -> `to` gives.
std::vector<int> moved(std::vector<int> split, size_t from, size_t to) {
  --split[from];
  ++split[to];
  return split;
}

// Moves layers off the fullest stage while that lowers the peak, until the split fits: each
// move to the stage where the peak ends lowest (then the fastest). Every accepted move lowers
// the peak or, at the same peak, the time, so the search ends; the bound only guards it.
void move_until_it_fits(Scenario& trial, const HardwareProfile& profile, int least_layers,
                        std::vector<int>& split, Timed& best) {
  for (size_t moves = 0; !best.fits && moves < split.size() * split.size(); ++moves) {
    const auto fullest = static_cast<size_t>(best.fullest_stage);
    if (split[fullest] <= least_layers)
      return;
    std::vector<int> best_move;
    Timed best_moved = best;
    for (size_t to = 0; to < split.size(); ++to) {
      if (to == fullest)
        continue;
      std::vector<int> candidate = moved(split, fullest, to);
      const Timed t = time_split(trial, profile, candidate);
      if (t.peak_bytes < best_moved.peak_bytes ||
          (t.peak_bytes == best_moved.peak_bytes && t.iteration_s < best_moved.iteration_s)) {
        best_moved = t;
        best_move = std::move(candidate);
      }
    }
    if (best_move.empty())
      return;
    split = std::move(best_move);
    best = best_moved;
  }
}

}  // namespace

std::optional<StageBalance> balance_stage_layers(const Scenario& scenario,
                                                 const HardwareProfile& profile,
                                                 std::optional<double> max_peak_bytes) {
  const int p = scenario.parallelism.pipeline;
  if (p <= 1)
    return std::nullopt;
  const int least_layers = scenario.parallelism.virtual_pipeline_stages;
  Scenario trial = scenario;
  std::vector<int> split = current_split(scenario, profile);
  Timed best = time_split(trial, profile, split);
  const double current_s = best.iteration_s;
  const bool current_fits = best.fits;
  if (!max_peak_bytes && !best.fits)
    move_until_it_fits(trial, profile, least_layers, split, best);
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

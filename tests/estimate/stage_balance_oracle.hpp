#pragma once

// The layer-split search as first written, kept as the oracle of balance_stage_layers: every
// move times every destination with a full estimate (about (stages - 1) estimates per layer
// moved, so it grows with the cube of the pipeline depth).

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "models/gpu_catalog.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/stage_balance.hpp"

namespace capsim::test {

struct OracleTimed {
  double iteration_s = 0.0;
  bool fits = false;
  double peak_bytes = 0.0;
  std::vector<double> stage_busy_s;
};

inline OracleTimed oracle_time_split(Scenario& scenario, const HardwareProfile& profile,
                                     const std::vector<int>& split) {
  scenario.parallelism.stage_layers = split;
  const SimulationResult r = estimate::estimate_iteration(scenario, profile);
  return {r.iteration_time_s, r.memory.fits, r.memory.peak_bytes, r.breakdown.stage_busy_s};
}

// balance_stage_layers' contract, by trying every destination of every move.
inline std::optional<estimate::StageBalance> exhaustive_balance_stage_layers(
    const Scenario& scenario, const HardwareProfile& profile,
    std::optional<double> max_peak_bytes = std::nullopt) {
  const int p = scenario.parallelism.pipeline;
  if (p <= 1)
    return std::nullopt;
  const int least_layers = scenario.parallelism.virtual_pipeline_stages;
  Scenario trial = scenario;
  std::vector<int> split = layers_per_stage(scenario.model, scenario.parallelism);
  OracleTimed best = oracle_time_split(trial, profile, split);
  const double current_s = best.iteration_s;
  const bool current_fits = best.fits;
  if (!max_peak_bytes && !best.fits) {
    const GpuSpec& gpu = scenario.cluster.gpu;
    if (auto fitting = estimate::split_that_fits(scenario.model, scenario.parallelism, gpu,
                                                 gpu.hbm_capacity_bytes)) {
      split = std::move(fitting->stage_layers);
      best = oracle_time_split(trial, profile, split);
    }
  }
  const bool must_fit = max_peak_bytes.has_value() || best.fits;
  const auto allowed = [&](const OracleTimed& t) {
    return !must_fit || (max_peak_bytes ? t.peak_bytes <= *max_peak_bytes : t.fits);
  };
  for (int moves = 0; moves < scenario.model.num_layers; ++moves) {
    const auto busiest =
        static_cast<size_t>(std::max_element(best.stage_busy_s.begin(), best.stage_busy_s.end()) -
                            best.stage_busy_s.begin());
    if (split[busiest] <= least_layers)
      break;
    std::vector<int> best_move;
    OracleTimed best_moved = best;
    for (size_t to = 0; to < split.size(); ++to) {
      if (to == busiest)
        continue;
      std::vector<int> candidate = split;
      --candidate[busiest];
      ++candidate[to];
      const OracleTimed t = oracle_time_split(trial, profile, candidate);
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
  return estimate::StageBalance{split,           best.iteration_s, current_s,
                                best.peak_bytes, best.fits,        current_fits};
}

}  // namespace capsim::test

#pragma once

#include <vector>

#include "models/analytic_estimator.hpp"
#include "models/io/profile_io.hpp"
#include "planner/confirm.hpp"

namespace capsim::planner::testing {

// A stand-in for the event engine: the screen's numbers slowed by `pipeline_penalty` per
// pipeline stage beyond the first, like contention would, so the confirmed ranking differs from
// the screen's.
inline ConfirmFn skewed_confirmer(double pipeline_penalty) {
  return [pipeline_penalty](const std::vector<Scenario>& scenarios, const ProgressFn&) {
    ConfirmBatch batch;
    for (const auto& sc : scenarios) {
      const SimulationResult r = estimate_iteration(sc, resolve_profile(sc));
      const double factor = 1.0 + pipeline_penalty * (sc.parallelism.pipeline - 1);
      ConfirmOutcome o;
      o.ok = true;
      o.evaluation = {"event",        r.iteration_time_s * factor, r.tokens_per_s / factor,
                      r.mfu / factor, r.memory.peak_bytes,         r.memory.capacity_bytes};
      batch.outcomes.push_back(o);
    }
    return batch;
  };
}

}  // namespace capsim::planner::testing

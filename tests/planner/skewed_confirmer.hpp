#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "planner/confirm.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/profile_io.hpp"

namespace capsim::planner::testing {

// A stand-in for the event engine: the screen's numbers with each scenario's step slowed by
// `slowdown(scenario)` (at least 1, as contention would: the screen prices no link sharing).
inline ConfirmFn slowing_confirmer(std::function<double(const Scenario&)> slowdown) {
  return
      [slowdown = std::move(slowdown)](const std::vector<Scenario>& scenarios, const ProgressFn&) {
        ConfirmBatch batch;
        for (const auto& sc : scenarios) {
          const SimulationResult r = estimate::estimate_iteration(sc, io::resolve_profile(sc));
          const double factor = slowdown(sc);
          ConfirmOutcome o;
          o.ok = true;
          o.evaluation = {"event",        r.iteration_time_s * factor, r.tokens_per_s / factor,
                          r.mfu / factor, r.memory.peak_bytes,         r.memory.capacity_bytes};
          batch.outcomes.push_back(o);
        }
        return batch;
      };
}

// The screen's numbers slowed by `pipeline_penalty` per pipeline stage beyond the first, so the
// confirmed ranking differs from the screen's.
inline ConfirmFn skewed_confirmer(double pipeline_penalty) {
  return slowing_confirmer([pipeline_penalty](const Scenario& sc) {
    return 1.0 + pipeline_penalty * (sc.parallelism.pipeline - 1);
  });
}

}  // namespace capsim::planner::testing

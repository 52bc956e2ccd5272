#include "tests/fuzz/targets/analytic_check.hpp"

#include "models/analytic_estimator.hpp"
#include "models/io/result_io.hpp"

#include "tests/fuzz/targets/fuzz_support.hpp"

namespace capsim::fuzz {

void check_estimate(const Scenario& scenario, const HardwareProfile& profile) {
  const SimulationResult result = estimate_iteration(scenario, profile);
  require_finite(result_to_json(result), "estimate_iteration");
  require(result.iteration_time_s > 0.0, "estimate_iteration: iteration time not positive");
}

}  // namespace capsim::fuzz

#include "tests/fuzz/targets/analytic_check.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/result_io.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace capsim::fuzz {

void check_estimate(const Scenario& scenario, const HardwareProfile& profile) {
  const SimulationResult result = estimate::estimate_iteration(scenario, profile);
  require_finite(io::result_to_json(result), "estimate_iteration");
  require(result.iteration_time_s > 0.0, "estimate_iteration: iteration time not positive");
}

}  // namespace capsim::fuzz

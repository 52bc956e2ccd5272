#include "sim/isolated_simulation.hpp"

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

#include "sim/forked_work.hpp"
#include "sim/simulated_report.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"

namespace capsim::sim {

SimulationResult simulate_iteration_in_child(const Scenario& scenario,
                                             const HardwareProfile& profile,
                                             const SimOptions& options) {
  if (options.trace != nullptr) {
    throw std::invalid_argument("simulate_iteration_in_child: traces stay in-process");
  }
  const IterationCosts costs = estimate::compute_iteration_costs(scenario, profile);
  ChildOutcome child;
  run_forked(
      1, 1,
      [&](std::size_t) {
        try {
          const SimulationResult r = simulate_iteration(scenario, costs, profile, options);
          return ChildReport{0, encode_simulated(r)};
        } catch (const std::exception& e) {
          return ChildReport{1, e.what()};
        }
      },
      [&](std::size_t, ChildOutcome outcome) { child = std::move(outcome); });
  if (child.exit_code == 1 && !child.bytes.empty())
    throw std::runtime_error(child.bytes);
  if (child.exit_code != 0) {
    const std::string first_line = child.console.substr(0, child.console.find('\n'));
    throw std::runtime_error("event engine child process: " + describe_exit(child.exit_code) +
                             (first_line.empty() ? "" : ": " + first_line));
  }
  SimulationResult r = decode_simulated(child.bytes);
  r.engine = "event";
  r.set_profile(profile);
  estimate::finish_result(scenario, costs, r);
  return r;
}

}  // namespace capsim::sim

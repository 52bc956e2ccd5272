#include "sim/forked_iterations.hpp"

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>

#include "sim/forked_work.hpp"
#include "sim/iteration_simulator.hpp"
#include "sim/simulated_report.hpp"

namespace capsim::sim {

Scenario on_leaf_share(Scenario scenario, int nodes_per_leaf, double oversubscription) {
  ClusterSpec& c = scenario.cluster;
  c.topology = Topology::kOversubscribed;
  c.oversubscription = oversubscription;
  c.nodes_per_leaf = nodes_per_leaf;
  return scenario;
}

std::vector<double> simulate_iteration_times(const std::vector<ScenarioRun>& runs, int parallel) {
  std::vector<double> times(runs.size(), 0.0);
  run_forked(
      runs.size(), parallel,
      [&](std::size_t i) {
        try {
          return ChildReport{
              0, encode_simulated(simulate_iteration(runs[i].scenario, runs[i].profile))};
        } catch (const std::exception& e) {
          return ChildReport{1, e.what()};
        }
      },
      [&](std::size_t i, ChildOutcome outcome) {
        if (outcome.exit_code != 0) {
          throw std::runtime_error(
              "event engine: the run of " + runs[i].scenario.name + " failed: " +
              (outcome.exit_code == 1 ? outcome.bytes : describe_exit(outcome.exit_code)));
        }
        times[i] = decode_simulated(outcome.bytes).iteration_time_s;
      });
  return times;
}

}  // namespace capsim::sim

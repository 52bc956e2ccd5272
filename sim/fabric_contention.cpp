#include "sim/fabric_contention.hpp"

#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/fabric_simulator.hpp"
#include "sim/forked_work.hpp"
#include "sim/simulated_report.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"

namespace capsim::sim {
namespace {

// Fills in what is a pure function of the simulated numbers (throughput, MFU, memory).
SimulationResult finished(SimulationResult r, const Scenario& scenario, const IterationCosts& costs,
                          const HardwareProfile& profile) {
  r.engine = "event";
  r.set_profile(profile);
  estimate::finish_result(scenario, costs, r);
  return r;
}

// Each job alone on its placement, in its own child process.
std::vector<SimulationResult> simulate_alone(const SharedCluster& cluster,
                                             const std::vector<IterationCosts>& costs,
                                             const HardwareProfile& profile) {
  std::vector<SimulationResult> alone(cluster.jobs.size());
  run_forked(
      cluster.jobs.size(), 2,
      [&](std::size_t i) {
        try {
          const FabricRun run =
              simulate_fabric(cluster.fabric, {{&cluster.jobs[i], &costs[i], nullptr}}, profile);
          return ChildReport{0, encode_simulated(run.jobs.front())};
        } catch (const std::exception& e) {
          return ChildReport{1, e.what()};
        }
      },
      [&](std::size_t i, ChildOutcome outcome) {
        if (outcome.exit_code == 1 && !outcome.bytes.empty())
          throw std::runtime_error(outcome.bytes);
        if (outcome.exit_code != 0) {
          const std::string first_line = outcome.console.substr(0, outcome.console.find('\n'));
          throw std::runtime_error(
              "event engine child process: " + describe_exit(outcome.exit_code) +
              (first_line.empty() ? "" : ": " + first_line));
        }
        alone[i] =
            finished(decode_simulated(outcome.bytes), cluster.jobs[i].scenario, costs[i], profile);
      });
  return alone;
}

}  // namespace

FabricContention measure_fabric_contention(const SharedCluster& cluster,
                                           const HardwareProfile& profile,
                                           std::vector<traces::ChromeTrace>* traces,
                                           SimStats* stats) {
  std::vector<IterationCosts> costs;
  for (const FabricJob& job : cluster.jobs)
    costs.push_back(estimate::compute_iteration_costs(job.scenario, profile));
  std::vector<SimulationResult> alone;
  if (cluster.jobs.size() > 1)
    alone = simulate_alone(cluster, costs, profile);
  if (traces != nullptr)
    traces->assign(cluster.jobs.size(), {});
  // A job alone has no neighbour to reach a steady state with: one iteration is every one.
  const FabricSchedule schedule =
      cluster.jobs.size() > 1 ? cluster.schedule : FabricSchedule::aligned();
  const auto job_count = static_cast<double>(cluster.jobs.size());
  std::vector<FabricJobInput> inputs;
  for (std::size_t i = 0; i < cluster.jobs.size(); ++i) {
    const double start_s =
        schedule.staggered ? static_cast<double>(i) / job_count * alone[i].iteration_time_s : 0.0;
    inputs.push_back(
        {&cluster.jobs[i], &costs[i], traces != nullptr ? &(*traces)[i] : nullptr, start_s});
  }
  FabricRun shared = simulate_fabric(cluster.fabric, inputs, profile, schedule, stats);

  FabricContention out;
  out.name = cluster.name;
  out.makespan_s = shared.makespan_s;
  out.schedule = schedule;
  out.links = std::move(shared.links);
  for (std::size_t i = 0; i < cluster.jobs.size(); ++i) {
    JobContention job;
    job.name = cluster.jobs[i].name;
    job.nodes = cluster.jobs[i].nodes;
    job.shared = std::move(shared.jobs[i]);
    job.alone = alone.empty() ? job.shared : std::move(alone[i]);
    out.jobs.push_back(std::move(job));
  }
  return out;
}

}  // namespace capsim::sim

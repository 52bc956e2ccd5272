#include "sim/isolated_simulation.hpp"

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

#include "sim/forked_work.hpp"
#include "sim/report_bytes.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"

namespace capsim::sim {
namespace {

// What the child hands back: the simulated numbers (iteration time, breakdown, per-stage busy
// times) and the notes. The parent recomputes everything that is a pure function of them
// (finish_result), so the report stays small.
std::string encode_simulated(const SimulationResult& r) {
  const TimeBreakdown& b = r.breakdown;
  ReportWriter out;
  for (const double v : {r.iteration_time_s, b.compute_s, b.tp_comm_exposed_s, b.cp_comm_exposed_s,
                         b.ep_comm_exposed_s, b.pp_comm_exposed_s, b.dp_comm_exposed_s, b.bubble_s,
                         b.optimizer_s, b.other_s})
    out.put_double(v);
  out.put_int(b.stage);
  out.put_int(static_cast<std::int64_t>(b.stage_busy_s.size()));
  for (const double s : b.stage_busy_s)
    out.put_double(s);
  out.put_int(static_cast<std::int64_t>(r.notes.size()));
  for (const std::string& note : r.notes)
    out.put_string(note);
  return out.bytes();
}

// Returns a count read from a report (the reads it counts throw when the report is shorter).
std::size_t get_count(ReportReader& in) {
  const std::int64_t n = in.get_int();
  if (n < 0)
    throw std::runtime_error("child report has a negative count");
  return static_cast<std::size_t>(n);
}

// The parent's side of encode_simulated: the event engine's numbers and notes, the rest unset.
SimulationResult decode_simulated(const std::string& bytes) {
  ReportReader in(bytes);
  SimulationResult r;
  TimeBreakdown& b = r.breakdown;
  for (double* v : {&r.iteration_time_s, &b.compute_s, &b.tp_comm_exposed_s, &b.cp_comm_exposed_s,
                    &b.ep_comm_exposed_s, &b.pp_comm_exposed_s, &b.dp_comm_exposed_s, &b.bubble_s,
                    &b.optimizer_s, &b.other_s})
    *v = in.get_double();
  b.stage = static_cast<int>(in.get_int());
  for (std::size_t i = get_count(in); i > 0; --i)
    b.stage_busy_s.push_back(in.get_double());
  for (std::size_t i = get_count(in); i > 0; --i)
    r.notes.push_back(in.get_string());
  in.finish();
  return r;
}

}  // namespace

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

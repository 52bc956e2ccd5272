#include "planner/confirm.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/forked_work.hpp"
#include "sim/iteration_simulator.hpp"

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/profile_reference.hpp"
#include "io/result_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The exit code of a child whose scenario was bad input, as `capsim simulate` exits.
constexpr int kBadInputExit = 2;

// Child side: the simulation's JSON text, or the error's message with its exit code.
sim::ChildReport run_simulate(const SimulateJsonFn& simulate, const Scenario& scenario) {
  try {
    return {0, simulate(scenario)};
  } catch (const io::InputError& e) {
    return {kBadInputExit, e.what()};
  } catch (const std::exception& e) {
    return {1, e.what()};
  }
}

// Why a child failed: how it ended, then its message (or the first line it printed).
std::string failure_text(const sim::ChildOutcome& outcome) {
  std::string message = outcome.bytes;
  if (outcome.killed_by_signal() || message.empty())
    message = outcome.console.substr(0, outcome.console.find('\n'));
  const std::string how = sim::describe_exit(outcome.exit_code);
  return message.empty() ? how : how + ": " + message;
}

ConfirmOutcome outcome_of(const sim::ChildOutcome& child) {
  if (child.exit_code == 0)
    return parse_simulate_json(child.bytes);
  ConfirmOutcome o;
  o.error = failure_text(child);
  return o;
}

// Runs the scenarios from `first` on, `jobs` at a time, storing each outcome as its child ends.
void run_children(const SimulateJsonFn& simulate, int jobs, const std::vector<Scenario>& scenarios,
                  size_t first, size_t count, ConfirmBatch& batch, const ProgressFn& progress,
                  long long& done) {
  const auto total = static_cast<long long>(scenarios.size());
  sim::run_forked(
      count, jobs, [&](size_t i) { return run_simulate(simulate, scenarios[first + i]); },
      [&](size_t i, sim::ChildOutcome child) {
        if (first == 0 && i == 0 && child.exit_code == kBadInputExit) {
          batch.available = false;
          batch.reason = child.bytes;
          return;
        }
        batch.outcomes[first + i] = outcome_of(child);
        if (progress)
          progress("confirm", ++done, total);
      });
}

}  // namespace

std::string simulate_event_json(const Scenario& scenario) {
  // As `capsim simulate` reads the file scenario_to_json's text would be written to: the numbers
  // as that text has them, the profile path resolved from a file in no folder of its own.
  const std::string file = "<confirmation of " + scenario.name + ">";
  const nlohmann::json doc = nlohmann::json::parse(io::scenario_to_json(scenario).dump());
  io::JsonReader reader(doc, file);
  Scenario read = io::read_scenario(reader, true);
  read.profile_path = io::resolve_profile_path(read.profile_path, file, "/profile");
  const HardwareProfile profile = io::resolve_profile(read);
  return io::result_to_json(sim::simulate_iteration(read, profile)).dump();
}

ConfirmOutcome parse_simulate_json(const std::string& text) {
  ConfirmOutcome o;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    o.evaluation.engine = j.at("engine").get<std::string>();
    o.evaluation.iteration_time_s = j.at("iteration_time_s").get<double>();
    o.evaluation.tokens_per_s = j.at("tokens_per_s").get<double>();
    o.evaluation.mfu = j.at("mfu").get<double>();
    const auto& mem = j.at("memory");
    o.evaluation.peak_memory_bytes = mem.at("peak_gib_per_gpu").get<double>() * kGiB;
    o.evaluation.capacity_bytes = mem.at("capacity_gib").get<double>() * kGiB;
    o.ok = o.evaluation.iteration_time_s > 0.0 && o.evaluation.tokens_per_s > 0.0;
    if (!o.ok)
      o.error = "non-positive iteration time in simulate output";
  } catch (const nlohmann::json::exception& e) {
    o.ok = false;
    o.error = std::string("unreadable simulate output: ") + e.what();
  }
  return o;
}

ConfirmFn forked_confirmer(int jobs, SimulateJsonFn simulate) {
  return [jobs, simulate = std::move(simulate)](const std::vector<Scenario>& scenarios,
                                                const ProgressFn& progress) {
    ConfirmBatch batch;
    if (scenarios.empty())
      return batch;
    batch.outcomes.resize(scenarios.size());
    long long done = 0;
    // The probe: alone, so that an engine that cannot run stops the batch after one child.
    run_children(simulate, 1, scenarios, 0, 1, batch, progress, done);
    if (!batch.available) {
      batch.outcomes.clear();
      return batch;
    }
    run_children(simulate, jobs, scenarios, 1, scenarios.size() - 1, batch, progress, done);
    return batch;
  };
}

}  // namespace capsim::planner

#include "planner/confirm.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "models/memory_model.hpp"
#include "sim/forked_work.hpp"
#include "sim/iteration_simulator.hpp"
#include "sim/report_bytes.hpp"

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/profile_reference.hpp"
#include "io/result_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim::planner {
namespace {

// The exit code of a child whose scenario was bad input, as `capsim simulate` exits.
constexpr int kBadInputExit = 2;

// Child side: the evaluation's bytes, or the error's message with its exit code.
sim::ChildReport run_evaluate(const EvaluateFn& evaluate, const Scenario& scenario) {
  try {
    return {0, encode_evaluation(evaluate(scenario))};
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

// An evaluation ranks only with a positive time and throughput and finite figures.
bool usable(const Evaluation& e) {
  for (const double v :
       {e.iteration_time_s, e.tokens_per_s, e.mfu, e.peak_memory_bytes, e.capacity_bytes}) {
    if (!std::isfinite(v))
      return false;
  }
  return e.iteration_time_s > 0.0 && e.tokens_per_s > 0.0;
}

ConfirmOutcome outcome_of(const sim::ChildOutcome& child) {
  ConfirmOutcome o;
  if (child.exit_code != 0) {
    o.error = failure_text(child);
    return o;
  }
  try {
    o.evaluation = decode_evaluation(child.bytes);
  } catch (const std::runtime_error& e) {
    o.error = std::string("unreadable event engine result: ") + e.what();
    return o;
  }
  o.ok = usable(o.evaluation);
  if (!o.ok)
    o.error = "event engine result without a positive, finite iteration time and throughput";
  return o;
}

// Runs the scenarios from `first` on, `jobs` at a time, storing each outcome as its child ends.
void run_children(const EvaluateFn& evaluate, int jobs, const std::vector<Scenario>& scenarios,
                  size_t first, size_t count, ConfirmBatch& batch, const ProgressFn& progress,
                  long long& done) {
  const auto total = static_cast<long long>(scenarios.size());
  sim::run_forked(
      count, jobs, [&](size_t i) { return run_evaluate(evaluate, scenarios[first + i]); },
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

Evaluation evaluate_event(const Scenario& scenario) {
  // As `capsim simulate` reads the file scenario_to_json's text would be written to: the numbers
  // as that text has them, the profile path resolved from a file in no folder of its own.
  const std::string file = "<confirmation of " + scenario.name + ">";
  const nlohmann::json doc = nlohmann::json::parse(io::scenario_to_json(scenario).dump());
  io::JsonReader reader(doc, file);
  Scenario read = io::read_scenario(reader, true);
  read.profile_path = io::resolve_profile_path(read.profile_path, file, "/profile");
  const HardwareProfile profile = io::resolve_profile(read);
  const SimulationResult r = sim::simulate_iteration(read, profile);
  // The confirmations rank on the figures `capsim simulate --json` prints (result_to_json).
  const auto printed = [](double v) { return io::round_significant(v); };
  Evaluation e;
  e.engine = r.engine;
  e.iteration_time_s = printed(r.iteration_time_s);
  e.tokens_per_s = printed(r.tokens_per_s);
  e.mfu = printed(r.mfu);
  e.peak_memory_bytes = printed(r.memory.peak_bytes / kGiB) * kGiB;
  e.capacity_bytes = printed(r.memory.capacity_bytes / kGiB) * kGiB;
  return e;
}

std::string encode_evaluation(const Evaluation& evaluation) {
  sim::ReportWriter out;
  out.put_string(evaluation.engine);
  for (const double v : {evaluation.iteration_time_s, evaluation.tokens_per_s, evaluation.mfu,
                         evaluation.peak_memory_bytes, evaluation.capacity_bytes})
    out.put_double(v);
  return out.bytes();
}

Evaluation decode_evaluation(const std::string& bytes) {
  sim::ReportReader in(bytes);
  Evaluation e;
  e.engine = in.get_string();
  for (double* v :
       {&e.iteration_time_s, &e.tokens_per_s, &e.mfu, &e.peak_memory_bytes, &e.capacity_bytes})
    *v = in.get_double();
  in.finish();
  return e;
}

ConfirmFn forked_confirmer(int jobs, EvaluateFn evaluate) {
  return [jobs, evaluate = std::move(evaluate)](const std::vector<Scenario>& scenarios,
                                                const ProgressFn& progress) {
    ConfirmBatch batch;
    if (scenarios.empty())
      return batch;
    batch.outcomes.resize(scenarios.size());
    long long done = 0;
    // The probe: alone, so that an engine that cannot run stops the batch after one child.
    run_children(evaluate, 1, scenarios, 0, 1, batch, progress, done);
    if (!batch.available) {
      batch.outcomes.clear();
      return batch;
    }
    run_children(evaluate, jobs, scenarios, 1, scenarios.size() - 1, batch, progress, done);
    return batch;
  };
}

}  // namespace capsim::planner

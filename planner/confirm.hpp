#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace capsim::planner {

// The numbers the planner ranks on, from either engine.
struct Evaluation {
  std::string engine;  // "analytic" or "event"
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  double peak_memory_bytes = 0.0;
  double capacity_bytes = 0.0;
  // The analytic screen's TimeBreakdown::busiest_over_mean_busy (1 from the event engine).
  double busiest_over_mean_busy = 1.0;
};

// The event engine's verdict on one candidate.
struct ConfirmOutcome {
  bool ok = false;
  Evaluation evaluation;
  std::string error;  // why it failed: how the child ended and its message
};

// Outcomes of a batch of confirmations, in the order of the scenarios. When the engine is not
// available at all, `available` is false and `reason` says why; outcomes are then empty.
struct ConfirmBatch {
  bool available = true;
  std::string reason;
  std::vector<ConfirmOutcome> outcomes;
};

// Reports progress: phase ("screen", "confirm"), items done, items in total.
using ProgressFn = std::function<void(const char* phase, long long done, long long total)>;

// Confirms scenarios with the event engine; must be deterministic in its outcomes.
using ConfirmFn =
    std::function<ConfirmBatch(const std::vector<Scenario>& scenarios, const ProgressFn& progress)>;

// Returns the event engine's evaluation of a scenario (run in a child process: it may run one
// simulation). Throws InputError on bad input.
using EvaluateFn = std::function<Evaluation(const Scenario& scenario)>;

// Returns the evaluation `capsim simulate FILE --engine event --json` prints for the scenario
// written to FILE by scenario_to_json (its numbers as written, its profile path as resolved
// there): its figures as printed, to 6 significant digits.
// REQUIRES: called at most once per process (SimGrid).
[[nodiscard]] Evaluation evaluate_event(const Scenario& scenario);

// Returns a ConfirmFn that runs `evaluate` on each scenario in a forked child process
// (sim::run_forked: results on pipes, nothing on disk; no child outlives the planner), `jobs`
// at a time. A child that throws InputError exits 2, any other exception 1; an outcome's error
// reads "exit N: message" or "killed by signal N (NAME)"; an evaluation without a positive,
// finite time and throughput fails too. The first scenario runs alone as a probe: when it
// exits 2, the batch is unavailable with its message as the reason.
// REQUIRES: jobs >= 1; called from the main thread.
[[nodiscard]] ConfirmFn forked_confirmer(int jobs, EvaluateFn evaluate = evaluate_event);

// Returns the bytes a confirmation child hands back for `evaluation` (sim/report_bytes.hpp:
// numbers bit for bit).
[[nodiscard]] std::string encode_evaluation(const Evaluation& evaluation);

// Returns the evaluation encode_evaluation wrote. Throws std::runtime_error on bytes it did not
// write (too few or too many).
[[nodiscard]] Evaluation decode_evaluation(const std::string& bytes);

}  // namespace capsim::planner

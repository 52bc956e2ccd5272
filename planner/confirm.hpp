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
};

// The event engine's verdict on one candidate.
struct ConfirmOutcome {
  bool ok = false;
  Evaluation evaluation;
  std::string error;  // why it failed (child's stderr, exit status)
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

// Returns a ConfirmFn that runs `binary simulate FILE --engine event --json` in child processes
// (SimGrid allows one simulation per process), `jobs` at a time, with scenario files in a fresh
// temporary folder that it removes afterwards. The first scenario runs alone as a probe: if it
// exits 2 (bad input: e.g. a build without the event engine), the batch is unavailable.
// REQUIRES: jobs >= 1.
[[nodiscard]] ConfirmFn subprocess_confirmer(std::string binary, int jobs);

// Returns the outcome parsed from `capsim simulate --json` output text.
[[nodiscard]] ConfirmOutcome parse_simulate_json(const std::string& text);

}  // namespace capsim::planner

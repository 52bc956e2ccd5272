#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/validation_io.hpp"

namespace capsim::planner {

// One validation case predicted: its time against the measured one and its memory.
struct CaseOutcome {
  const io::ValidationCase* vc;  // points into the ValidationFile predicted
  double predicted_s;
  double error_pct;  // 100 (predicted - measured) / measured
  // Every case was measured, so it did fit: a predicted overflow is a memory-model miss.
  double peak_memory_gib;
  bool fits_in_memory;
};

// The cases predicted, and those left out: rejected by a check (bad input) or failed in the
// estimator or simulation (internal error).
struct Predictions {
  std::vector<CaseOutcome> outcomes;
  std::vector<io::RejectedCase> rejected;
  std::vector<std::pair<std::string, std::string>> failed;  // id, what went wrong
};

// Predicts every case of `file` with `engine` ("event": each case in a forked child, SimGrid
// allowing one simulation per process; "analytic"), case by case: a case that fails a check (or
// whose simulation fails) is recorded and left out, and the others are still predicted.
// REQUIRES: called from the main thread (sim::run_forked) for the event engine.
[[nodiscard]] Predictions predict_cases(const io::ValidationFile& file, const std::string& engine);

// Returns the JSON of `capsim validate --json` without its "overrides": engine, cases, summary
// (overall and by group) and not_predicted (docs/validation.md).
[[nodiscard]] nlohmann::json validation_report_json(const Predictions& predictions,
                                                    const std::string& engine);

}  // namespace capsim::planner

#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/simulation_result.hpp"

namespace capsim::io {

// Returns the JSON of `capsim simulate --json` (docs/design/json-output.md §1): iteration time,
// throughput, MFU/HFU, memory, breakdown, engine, notes. Numbers are rounded to 6 significant
// digits so output is stable across platforms.
[[nodiscard]] nlohmann::json result_to_json(const SimulationResult& result);

// Returns the human-readable table `capsim simulate` prints.
[[nodiscard]] std::string result_table(const SimulationResult& result);

// Rounds to `digits` significant digits (stable, human-sized numbers in JSON output).
[[nodiscard]] double round_significant(double value, int digits = 6);

}  // namespace capsim::io

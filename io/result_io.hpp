#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/simulation_result.hpp"

#include "io/rounding.hpp"  // round_significant, the rounding of result_to_json's numbers

namespace capsim::io {

// Returns the JSON of `capsim simulate --json` (docs/design/json-output.md §1): iteration time,
// throughput, MFU/HFU, memory, breakdown, engine, notes. Numbers are rounded to 6 significant
// digits (round_significant) so output is stable across platforms.
[[nodiscard]] nlohmann::json result_to_json(const SimulationResult& result);

// Returns the human-readable table `capsim simulate` prints.
[[nodiscard]] std::string result_table(const SimulationResult& result);

}  // namespace capsim::io

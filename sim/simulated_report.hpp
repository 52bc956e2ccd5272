#pragma once

#include <string>

#include "models/simulation_result.hpp"

namespace capsim::sim {

// The numbers an event-engine run in a child process hands back to its parent (run_forked):
// iteration time, breakdown, per-stage busy times and notes, bit for bit. The parent recomputes
// everything that is a pure function of them (estimate::finish_result).

// Returns the report of `result`'s simulated numbers.
[[nodiscard]] std::string encode_simulated(const SimulationResult& result);

// Returns the result a report describes: engine numbers and notes, the rest unset. Throws
// std::runtime_error when the report is malformed.
[[nodiscard]] SimulationResult decode_simulated(const std::string& bytes);

}  // namespace capsim::sim

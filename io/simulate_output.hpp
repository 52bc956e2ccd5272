#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"
#include "models/simulation_result.hpp"

#include "estimate/stage_balance.hpp"

namespace capsim::io {

// Returns the note on what `profile` rests on when it is not a measured one (docs/calibration.md,
// "Which profile a scenario gets"), or nullopt for a measured profile.
[[nodiscard]] std::optional<std::string> profile_note(const HardwareProfile& profile);

// Returns the layer split the analytic estimator finds faster (or fitting) for a pipelined
// scenario, or nullopt. The search starts from the analytic estimate of the scenario's own split:
// `result` itself when the analytic engine produced it, else one estimate from `costs`.
[[nodiscard]] std::optional<estimate::StageBalance> suggested_stage_balance(
    const Scenario& scenario, const IterationCosts& costs, const HardwareProfile& profile,
    const SimulationResult& result);

// Returns the "stage_balance" object of `capsim simulate --json`.
[[nodiscard]] nlohmann::json stage_balance_to_json(const estimate::StageBalance& balance);

// Returns the object `capsim simulate --json` prints for `result` (a run of `scenario` lowered to
// `costs` with `profile`): the result, its suggested stage balance and, when `kernels`, the
// kernel table (docs/usage.md).
[[nodiscard]] nlohmann::json simulate_output_json(const SimulationResult& result,
                                                  const Scenario& scenario,
                                                  const IterationCosts& costs,
                                                  const HardwareProfile& profile, bool kernels);

}  // namespace capsim::io

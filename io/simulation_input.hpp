#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

#include "io/scenario_io.hpp"

namespace capsim::io {

// What one simulation reads: a scenario and the profile it runs with.
struct SimulationInput {
  Scenario scenario;
  HardwareProfile profile;
};

// Reads the scenario file `scenario_path` (after `overrides`, as load_scenario does) and the
// profile it runs with (resolve_profile), parsing each file once. `profile_path`, when given,
// replaces the scenario's own profile (an empty one: the profile the scenario's hardware gets);
// when it describes new hardware it defines the GPU, so the scenario may name it. Errors come
// in this order: that profile file missing, unparsable or defining a bad GPU; the scenario;
// the profile's contents or its fit to the scenario.
[[nodiscard]] SimulationInput load_simulation_input(const std::string& scenario_path,
                                                    const std::vector<ScenarioOverride>& overrides,
                                                    const std::optional<std::string>& profile_path);

// Same, from a scenario document already parsed, attributed to `file` in errors; its profile
// path is resolved against the folder of `file` (an empty folder: the working one).
[[nodiscard]] SimulationInput read_simulation_input(const nlohmann::json& scenario_doc,
                                                    const std::string& file);

}  // namespace capsim::io

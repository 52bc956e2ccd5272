#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario.hpp"

namespace capsim::planner {

// The launch files capsim writes for a scenario (`capsim export FORMAT`, `capsim plan --emit`).
enum class LaunchFormat { kMegatron, kBridge, kSbatch };

// Returns the format named "megatron", "bridge" or "sbatch", or nullopt.
[[nodiscard]] std::optional<LaunchFormat> launch_format_from_string(std::string_view name);

// Returns the file name `capsim plan --emit` gives the format: megatron.args, bridge.yaml,
// train.sbatch.
[[nodiscard]] const char* launch_file_name(LaunchFormat format);

// Returns the file's text: the complete Megatron-LM argument list one argument per line (an
// argument file), bridge_overrides_yaml, or sbatch_script.
[[nodiscard]] std::string launch_file_text(LaunchFormat format, const Scenario& scenario);

// Returns the scenario settings the format cannot carry (megatron_unexpressed or
// bridge_unexpressed).
[[nodiscard]] std::vector<std::string> launch_file_unexpressed(LaunchFormat format,
                                                               const Scenario& scenario);

}  // namespace capsim::planner

#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace capsim::io {

// Megatron-Bridge's named mixed-precision recipes (megatron/bridge/training/mixed_precision.py):
// the MixedPrecisionConfig fields each sets that change the step (bf16, fp16, fp8, fp8_recipe,
// fp8_param_gather, first_last_layers_bf16 and its layer counts, grad_reduce_in_fp32).

// Returns the fields of the recipe `name` ("bf16_mixed"; hyphens read as underscores, as Bridge
// does), or nullopt for a name Bridge does not define.
[[nodiscard]] std::optional<nlohmann::json> bridge_precision_recipe(const std::string& name);

// Returns every recipe name, in the table's order.
[[nodiscard]] std::vector<std::string> bridge_precision_recipe_names();

// Returns the name of the recipe whose fields are exactly `fields` (absent and false booleans
// alike), or nullopt when no recipe sets them.
[[nodiscard]] std::optional<std::string> bridge_precision_recipe_of(const nlohmann::json& fields);

}  // namespace capsim::io

#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace capsim::planner {

// Returns `scenario`'s model and layout as Megatron-Bridge recipe overrides: the ConfigContainer
// sections model, train, ddp, optimizer, dist, comm_overlap and mixed_precision (a named recipe
// where one sets exactly the scenario's precision, else its fields). The complete Megatron-LM
// argument list (megatron_arguments) mapped key by key (io/bridge_keys.hpp), so that
// `capsim import bridge` reads it back as `scenario` whenever megatron_unexpressed is empty.
[[nodiscard]] nlohmann::ordered_json bridge_overrides(const Scenario& scenario);

// Returns the scenario settings no Bridge key carries: megatron_unexpressed's, and gradients
// reduced in bf16 in fp16 training (Bridge's grad_reduce_in_fp32 false is fp16 reduction there).
// bridge_overrides reads back as `scenario` exactly when this is empty.
[[nodiscard]] std::vector<std::string> bridge_unexpressed(const Scenario& scenario);

// Returns bridge_overrides as YAML, with a comment naming the scenario.
[[nodiscard]] std::string bridge_overrides_yaml(const Scenario& scenario);

}  // namespace capsim::planner

#pragma once

#include <string>

#include "models/scenario.hpp"

namespace capsim::planner {

// Returns the Megatron-LM (Megatron-Core) command-line arguments that run `scenario`'s model
// and layout: parallel sizes, virtual stages, batch sizes, recompute, the distributed optimizer
// or FSDP for the ZeRO stage, precision, and an uneven split of the layers over the stages as
// --pipeline-model-parallel-layout (Megatron-Core 0.13: "E" the embedding, "t" a layer, "L" the
// loss, "|" between virtual stages in pipeline order). One line, arguments separated by spaces.
[[nodiscard]] std::string megatron_arguments(const Scenario& scenario);

}  // namespace capsim::planner

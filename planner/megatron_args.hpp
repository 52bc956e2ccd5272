#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace capsim::planner {

// Which arguments megatron_arguments writes: those that lay a plan's winner out, or every
// argument that carries a scenario key (what `capsim import megatron` reads back).
enum class MegatronArgumentSet { kLayout, kComplete };

// Returns the Megatron-LM (Megatron-Core) command-line arguments that run `scenario`'s model
// and layout: parallel sizes, virtual stages, batch sizes, recompute, the distributed optimizer
// or FSDP for the ZeRO stage, precision, and an uneven split of the layers over the stages as
// --pipeline-model-parallel-layout (Megatron-Core 0.13: "E" the embedding, "t" a layer, "m" a
// multi-token-prediction layer, "L" the loss, "|" between virtual stages in pipeline order).
// kComplete adds the model's vocabulary, embeddings, head size, MoE, MLA, MTP and windows and
// the training stack (overlap, reduction and optimizer precisions, token dispatcher). One line,
// arguments separated by spaces.
[[nodiscard]] std::string megatron_arguments(
    const Scenario& scenario, MegatronArgumentSet set = MegatronArgumentSet::kLayout);

// Returns the scenario settings no Megatron-LM argument carries (a schedule other than
// Megatron's, ZeRO-2, MoE load imbalance, ...), one description each; the complete argument
// list reads back as `scenario` exactly when this is empty (the name and cluster aside).
[[nodiscard]] std::vector<std::string> megatron_unexpressed(const Scenario& scenario);

}  // namespace capsim::planner

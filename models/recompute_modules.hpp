#pragma once

#include <optional>
#include <string_view>

namespace capsim {

// The parts of a layer that selective recomputation replays in the backward pass instead of
// storing their activations: Megatron-Core's --recompute-modules (transformer_config.py
// recompute_modules; TransformerLayer and MoELayer apply them). A bit set, as an op can belong
// to several (an MoE expert's activation is in both moe_act and moe).
enum RecomputeModule : unsigned {
  kRecomputeCoreAttention = 1u << 0,    // "core_attn": the attention core
  kRecomputeLayernorm = 1u << 1,        // "layernorm": the input and pre-MLP norms
  kRecomputeMoeActivation = 1u << 2,    // "moe_act": the experts' activation function
  kRecomputeMlaUpProjection = 1u << 3,  // "mla_up_proj": MLA's query and key-value up projections
  kRecomputeMlp = 1u << 4,              // "mlp": a dense layer's MLP
  kRecomputeMoe = 1u << 5,              // "moe": the whole MoE layer, dispatch and combine included
  kRecomputeSharedExperts = 1u << 6,    // "shared_experts": the shared expert
};

// Megatron-Core's default when recompute_granularity is selective: ["core_attn"].
inline constexpr unsigned kDefaultRecomputeModules = kRecomputeCoreAttention;

// The modules in Megatron-Core's spelling, in the order the scenario writer lists them.
inline constexpr RecomputeModule kAllRecomputeModules[] = {
    kRecomputeCoreAttention,   kRecomputeLayernorm, kRecomputeMoeActivation,
    kRecomputeMlaUpProjection, kRecomputeMlp,       kRecomputeMoe,
    kRecomputeSharedExperts};

[[nodiscard]] const char* to_string(RecomputeModule module);
[[nodiscard]] std::optional<RecomputeModule> recompute_module_from_string(std::string_view name);

}  // namespace capsim

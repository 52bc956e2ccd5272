#pragma once

#include "models/scenario.hpp"

namespace capsim {

// Parameter counts of a decoder under its family's conventions: GeLU models follow GPT/Megatron
// (biases on every linear layer, LayerNorm with bias, learned positions, tied embeddings by
// default); SwiGLU models follow Llama (no biases, RMSNorm, RoPE, untied embeddings).
// GPT-3 175B: 174.6B; Llama-2 70B: 68.98B; Llama-3 405B: 405.85B (tests pin these).

// Returns the parameters of one transformer layer (attention + MLP + norms), unsharded.
[[nodiscard]] double layer_parameters(const ModelSpec& model);
// Returns the input embedding parameters (token + learned positions for GPT).
[[nodiscard]] double input_embedding_parameters(const ModelSpec& model);
// Returns the output head parameters (0 when tied to the input embedding) plus the final norm.
[[nodiscard]] double head_parameters(const ModelSpec& model);
// Returns the whole model's parameters.
[[nodiscard]] double total_parameters(const ModelSpec& model);
// Returns the parameters that take part in matmuls per token (no positions, no norms, no
// biases), the N of the 6N FLOPs rule (Kaplan et al. 2020; PaLM appendix B).
[[nodiscard]] double matmul_parameters(const ModelSpec& model);
// Returns true when the model uses GPT conventions (biases, LayerNorm, learned positions).
[[nodiscard]] bool is_gpt_family(const ModelSpec& model);
// Returns whether the model trains with dropout: as the scenario says, else the family's
// convention (GPT/Megatron: 0.1 attention and hidden dropout; Llama: none, Touvron et al. 2023).
[[nodiscard]] bool has_dropout(const ModelSpec& model);

}  // namespace capsim

#pragma once

#include <vector>

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
// biases), the N of the 6N FLOPs rule (Kaplan et al. 2020; PaLM appendix B); for MoE layers the
// router, the shared expert and top_k routed experts.
[[nodiscard]] double matmul_parameters(const ModelSpec& model);
// Megatron pads the vocabulary so that each tensor-parallel rank's slice is a multiple of 128
// rows (--make-vocab-size-divisible-by 128, _vocab_size_with_padding): GPT-2's 50257 becomes
// 50304 on one rank, 51200 over 8. The embedding, the logits GEMM and the loss run on it.
inline constexpr int kVocabPaddingMultiple = 128;
// Returns the padded vocabulary for `tensor` ranks (a vocabulary already a multiple of 128 x
// tensor is unchanged).
[[nodiscard]] double padded_vocab_size(const ModelSpec& model, int tensor);
// Per tensor-parallel rank (Megatron): one layer's split weights and column-parallel biases
// divided by `tensor`, plus what every rank replicates (norms, row-parallel biases).
[[nodiscard]] double layer_parameters_per_rank(const ModelSpec& model, int tensor);
// Per tensor-parallel rank: the parameter tensors of one layer outside its routed experts, as
// Megatron's modules hold them: the two norms (GPT: LayerNorm weight and bias each), the fused
// QKV projection (MLA: query and key-value down and up projections and the latent norms), the
// output projection, then the MLP's up (gate and up fused) and down projections (a MoE layer: the
// router and the shared expert's), a dense GPT layer with a bias beside each weight. They sum to
// layer_parameters_per_rank (moe_layer_dense_parameters_per_rank for a MoE layer).
[[nodiscard]] std::vector<double> layer_parameter_tensors_per_rank(const ModelSpec& model,
                                                                   int tensor, bool moe_layer);
// Per tensor-parallel rank: one layer's GEMM weights (QKV, output projection, MLP up and down;
// no norms or biases), divided by `tensor`.
[[nodiscard]] double layer_matmul_parameters_per_rank(const ModelSpec& model, int tensor);
// Per rank: its slice of the padded word embedding (vocab-parallel).
[[nodiscard]] double word_embedding_parameters_per_rank(const ModelSpec& model, int tensor);
// Per rank: the word-embedding slice plus the replicated learned positions (GPT).
[[nodiscard]] double input_embedding_parameters_per_rank(const ModelSpec& model, int tensor);
// Per rank: the replicated final norm plus, when untied, the output layer's slice.
[[nodiscard]] double head_parameters_per_rank(const ModelSpec& model, int tensor);
// Mixture-of-experts (MoeSpec): a MoE layer's routed experts are sharded over expert x
// expert-tensor parallelism; everything else of the layer (attention, router, shared expert,
// norms) is split over TP like a dense layer. DeepSeek-V3: 671B total, 37B active; Mixtral
// 8x7B: 46.7B / 12.9B; Qwen3-235B-A22B: 235B / 22B (tests pin these).

// Returns the width of the query projection: heads x explicit head_dim, else hidden_size.
[[nodiscard]] double query_width(const ModelSpec& model);
// Returns the routed experts' parameters of one MoE layer (0 for a dense model).
[[nodiscard]] double expert_parameters(const ModelSpec& model);
// Returns one MoE layer's parameters, unsharded.
[[nodiscard]] double moe_layer_parameters(const ModelSpec& model);
// Per tensor-parallel rank: one MoE layer without its routed experts.
[[nodiscard]] double moe_layer_dense_parameters_per_rank(const ModelSpec& model, int tensor);
// Per rank: one MoE layer's routed experts over expert x expert-tensor parallelism.
[[nodiscard]] double expert_parameters_per_rank(const ModelSpec& model,
                                                const Parallelism& parallelism);
// Returns what one multi-token-prediction module adds to its transformer layer: the norms of
// its two inputs and their 2h x h projection (its embedding and head are the model's).
[[nodiscard]] double mtp_extra_parameters(const ModelSpec& model);
// Returns the parameters one token passes through: every layer with only its top_k routed
// experts (plus shared ones), and the embeddings (as DeepSeek and Mixtral count "active").
// Both totals leave out MTP modules (DeepSeek-V3's 671B excludes its 14B MTP module).
[[nodiscard]] double active_parameters(const ModelSpec& model);
// Returns true when the model uses GPT conventions (biases, LayerNorm, learned positions).
[[nodiscard]] bool is_gpt_family(const ModelSpec& model);
// Returns whether the model trains with dropout: as the scenario says, else the family's
// convention (GPT/Megatron: 0.1 attention and hidden dropout; Llama: none, Touvron et al. 2023).
[[nodiscard]] bool has_dropout(const ModelSpec& model);

}  // namespace capsim

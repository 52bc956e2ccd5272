#pragma once

#include <string_view>
#include <vector>

#include "models/gemm_cost.hpp"
#include "models/scenario.hpp"

namespace capsim {

// What bounds a kernel's time: tensor-core FLOPs (shape-dependent), attention FLOPs, or HBM bytes.
enum class KernelKind { kGemm, kAttention, kMemoryBound };
// ZB-H1 splits the backward pass into input gradients (B) and weight gradients (W).
enum class Pass { kForward, kBackwardInput, kBackwardWeight };

// One kernel of one micro-batch on one GPU. GEMMs carry their exact shape; attention carries
// its executed FLOPs (causal FlashAttention) and head dimension; memory-bound ops their HBM
// bytes. Plain value type.
struct Op {
  const char* name = "";
  KernelKind kind = KernelKind::kGemm;
  Pass pass = Pass::kForward;
  GemmShape gemm;
  double flop = 0.0;   // executed FLOPs (GEMM: 2MNK x batch)
  double bytes = 0.0;  // HBM traffic of memory-bound ops and attention
  int head_dim = 0;
  AttentionKernel attention_kernel = AttentionKernel::kFlash;  // of a kAttention op
  bool attention_core = false;  // replayed by selective recompute (Korthikanti et al. §5)
  bool fp8_attention = false;   // a kAttention op run in fp8 (Parallelism::fp8_attention)
  // The recompute modules (RecomputeModule bits) whose selective recompute replays this op.
  unsigned recompute_modules = 0;
  // GEMMs: how many times `gemm` runs one after another (a grouped GEMM's rounds); `flop`
  // counts them all.
  double rounds = 1.0;
  // Memory-bound ops: the kernels it launches one after another, each paying the launch term
  // (a grouped linear's per-expert quantization, split_quantize_kernels); `bytes` counts them all.
  double kernels = 1.0;
  // kAttention ops of a windowed layer: the causal sequence length whose queries see as many
  // keys on average (2 x windowed_keys), at which the kernel's efficiency is read; 0: the run's.
  double attention_seq_length = 0.0;
};

// Whether `op` is the GEMM `name` (lower_layer's "qkv", "mlp_up", ...) of `pass`.
[[nodiscard]] inline bool is_gemm(const Op& op, std::string_view name, Pass pass) {
  return op.kind == KernelKind::kGemm && op.pass == pass && name == op.name;
}

// Returns the kernels of one transformer layer for one micro-batch on one GPU under the
// layout's TP/SP/CP split (Megatron-LM layer structure, Shoeybi et al. 2019 §3):
// QKV, attention core, output projection, MLP up (GeLU) or gate+up (SwiGLU), MLP down, with
// norms, activation, dropout and residual adds as memory-bound ops; each GEMM's backward as a
// data-gradient and a weight-gradient GEMM.
[[nodiscard]] std::vector<Op> lower_layer(const ModelSpec& model, const Parallelism& parallelism);

// Which kind of layer a layer is: its FFN a mixture of experts (ModelSpec::is_moe_layer), its
// attention a causal window (ModelSpec::window_attention: every `every`-th layer, from layer 0).
struct LayerKind {
  bool moe = false;
  bool windowed = false;
  [[nodiscard]] bool operator==(const LayerKind& other) const = default;
};

// Returns the kind of layer `layer` (0-based) of `model`.
[[nodiscard]] LayerKind layer_kind(const ModelSpec& model, int layer);

// Same as lower_layer above for a layer of `kind`: a MoE layer's FFN is the router, the token
// permutation, the grouped GEMMs of the rank's experts and the shared expert (workload.cpp,
// add_moe_ffn); MLA replaces the QKV projection (add_mla_projections); a windowed layer's
// attention sees at most window_attention.size keys.
[[nodiscard]] std::vector<Op> lower_layer(const ModelSpec& model, const Parallelism& parallelism,
                                          LayerKind kind);

// Keys a query of a causal window attends on average: w - w²/2s (s/2 without a window).
[[nodiscard]] double windowed_keys(const ModelSpec& model);

// Rows the busiest expert-parallel rank's grouped GEMMs take per micro-batch: its
// sequence-parallel share of the tokens x top_k (x ETP, which gathers its group's tokens), times
// load_imbalance, padded to rank_capacity_factor x the balanced count when that is set (the
// fused grouped MLP, moe.fused_grouped_mlp, computes only the unpadded rows).
// REQUIRES: model.moe
[[nodiscard]] double routed_rows(const ModelSpec& model, const Parallelism& parallelism);

// Returns the input-embedding kernels (first stage): lookup and its gradient scatter.
[[nodiscard]] std::vector<Op> lower_embedding(const ModelSpec& model,
                                              const Parallelism& parallelism);

// Returns the head kernels (last stage): final norm, vocab-parallel logits GEMM, cross-entropy.
[[nodiscard]] std::vector<Op> lower_head(const ModelSpec& model, const Parallelism& parallelism);

// Returns the kernels of one multi-token-prediction module (DeepSeek-V3 §2.2; Megatron-Core's
// MTP block): its input norms and projection, a transformer layer of the last layer's kind, and
// another logits GEMM and loss.
[[nodiscard]] std::vector<Op> lower_mtp_module(const ModelSpec& model,
                                               const Parallelism& parallelism);

// Model FLOPs per token: 6N + 12·l·h·s (PaLM appendix B; Korthikanti et al. 2022 §6), with N
// the matmul parameters (non-causal attention, as the convention counts it). MoE and MLA models:
// Megatron-LM's num_floating_point_operations (active experts, causal and window-aware
// attention, MTP modules), the figure Megatron-Bridge's tables print as model TFLOP/s.
[[nodiscard]] double model_flop_per_token(const ModelSpec& model);

// Hardware FLOPs per token including recomputation: full recompute reproduces Megatron's
// 96·B·s·l·h²(1 + s/6h + V/16lh) / (B·s) exactly for GPT shapes (Narayanan et al. 2021 §5.1);
// selective adds the attention core's forward again (Korthikanti et al. 2022 §5).
[[nodiscard]] double hardware_flop_per_token(const ModelSpec& model, Recompute recompute);

}  // namespace capsim

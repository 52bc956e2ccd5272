#pragma once

#include <optional>
#include <string>

namespace capsim {

// The MLP's activation. GeLU and squared ReLU (Nemotron-4: relu(x)^2) act on one up-projection;
// SwiGLU and GeGLU gate one up-projection by the SiLU or GeLU of another (Shazeer 2020), three
// matrices in all.
enum class FfnActivation { kGelu, kSwiglu, kSquaredRelu, kGeglu };

// Returns true for the gated linear units (SwiGLU, GeGLU): gate and up projections, 3 matrices.
[[nodiscard]] constexpr bool is_gated(FfnActivation activation) {
  return activation == FfnActivation::kSwiglu || activation == FfnActivation::kGeglu;
}
// FlashAttention (Dao et al. 2022; the default) never writes the s x s scores; materialized
// attention (Megatron-LM's fused softmax before 2023) runs QK^T and PV as batched GEMMs and
// softmax/dropout over the scores in HBM; triton is FlashAttention written in Triton
// (llm-foundry's attn_impl: triton, 2022-23), cudnn cuDNN's fused flash attention (Transformer
// Engine's FusedAttention): the same work at other rates (op_cost.hpp).
enum class AttentionKernel { kFlash, kMaterialized, kTriton, kCudnn };
// The loss over the vocabulary: Megatron-Core's vocab-parallel cross-entropy as separate kernels
// (its default; PyTorch's nn.CrossEntropyLoss makes about as many passes), Megatron-Core's fused
// version (--cross-entropy-loss-fusion; NeMo 2's GPTConfig default), or one kernel each way
// that keeps the 16-bit logits (flash-attn's / Apex's xentropy; llm-foundry's default loss).
enum class CrossEntropyKernel { kUnfused, kFused, kSingleKernel };

// How a mixture-of-experts router turns its logits into scores before the top-k: softmax
// (Mixtral, Qwen3, GPT-OSS) or sigmoid (DeepSeek-V3, Megatron-Core --moe-router-score-function).
enum class RouterScore { kSoftmax, kSigmoid };

// The feed-forward block of the layers after the first `first_dense_layers`, or of one in every
// `layer_interval` of them, is `num_experts` experts of `ffn_hidden_size` with top-`top_k`
// routing, plus a shared expert when `shared_expert_ffn_hidden_size` > 0 (Megatron-Core
// --num-experts, --moe-router-topk, --moe-ffn-hidden-size,
// --moe-shared-expert-intermediate-size, --moe-layer-freq). The experts use the model's FFN
// activation.
struct MoeSpec {
  int num_experts = 0;
  int top_k = 0;
  int ffn_hidden_size = 0;
  int shared_expert_ffn_hidden_size = 0;  // 0: no shared expert
  int first_dense_layers = 0;
  // The busiest expert-parallel rank's routed tokens over the mean: 1.0 is forced-balanced
  // routing, as published benchmarks run.
  double load_imbalance = 1.0;
  RouterScore router_score = RouterScore::kSoftmax;
  // Tokens each expert-parallel rank pads its experts' input to, over the balanced count
  // (Megatron-Core --moe-expert-rank-capacity-factor, used with full-iteration CUDA graphs);
  // 0: dropless without padding.
  double rank_capacity_factor = 0.0;
  // Group-limited routing (DeepSeek-V3 §2.1.2, Megatron-Core --moe-router-num-groups and
  // --moe-router-group-topk): the experts form `router_groups` equal groups and each token's
  // experts come from its best `router_group_top_k` of them; 1 and 1: no groups.
  int router_groups = 1;
  int router_group_top_k = 1;
  // GPT-OSS's experts clamp their gated activation's inputs to +-activation_clamp (the gate
  // from above only; Megatron-Core activation_func_clamp_value, run as PyTorch ops outside the
  // fused activation); 0: no clamp.
  double activation_clamp = 0.0;
  // The experts' linears carry biases (GPT-OSS): the first's runs in its GEMM's epilogue, the
  // second's Megatron-Core adds with the routing probability in PyTorch, expert by expert
  // (TEGroupedMLP._apply_bias).
  bool linear_bias = false;
  // The experts run Transformer Engine's fused grouped MLP (cuDNN frontend's CuTe DSL kernels;
  // Megatron-Core --use-transformer-engine-op-fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1;
  // Blackwell, mxfp8 or nvfp4): one grouped GEMM per linear over the rank's experts, the
  // activation and the quantization between the linears in the GEMMs' epilogues.
  bool fused_grouped_mlp = false;
  // Of the layers after the dense ones, the last of every `layer_interval` has experts and the
  // others a dense FFN (Llama 4 Maverick: 2, experts on layers 1, 3, 5, ...; transformers'
  // interleave_moe_layer_step); 1: every one.
  int layer_interval = 1;

  [[nodiscard]] bool operator==(const MoeSpec& other) const = default;
};

// DeepSeek's multi-head latent attention (DeepSeek-V2 §2.1): queries through a rank
// `q_lora_rank` bottleneck (0: none), keys and values through a shared rank `kv_lora_rank`
// latent; each head attends with `qk_head_dim` + `qk_pos_emb_head_dim` (the decoupled rotary
// part) and produces `v_head_dim` values. Replaces GQA's projections (Megatron-Core
// --multi-latent-attention, --q-lora-rank, --kv-lora-rank, --qk-head-dim,
// --qk-pos-emb-head-dim, --v-head-dim).
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_head_dim = 0;
  int qk_pos_emb_head_dim = 0;
  int v_head_dim = 0;

  [[nodiscard]] bool operator==(const MlaSpec& other) const = default;
};

// Every `every`-th layer attends only the last `size` tokens (GPT-OSS alternates windowed and
// full layers: every 2, size 128).
struct WindowAttention {
  int size = 0;
  int every = 1;

  [[nodiscard]] bool operator==(const WindowAttention& other) const = default;
};

// A decoder-only transformer (GPT, Llama, and mixture-of-experts families). Sizes in elements,
// not bytes.
struct ModelSpec {
  std::string name;
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_kv_heads = 0;
  int ffn_hidden_size = 0;
  FfnActivation ffn_activation = FfnActivation::kGelu;
  int seq_length = 0;
  int vocab_size = 0;
  bool tied_embeddings = false;
  AttentionKernel attention = AttentionKernel::kFlash;
  // Fused by default: NeMo 2, Megatron-Bridge and NeMo-1's Llama/Nemotron recipes run
  // Megatron-Core's fused loss (docs/scenario.md); Megatron-LM needs --cross-entropy-loss-fusion.
  CrossEntropyKernel cross_entropy = CrossEntropyKernel::kFused;
  // Dropout layers (attention, hidden, embedding); unset means the family's convention
  // (has_dropout in parameter_count.hpp).
  std::optional<bool> dropout = std::nullopt;
  // The attention head dimension when it is not hidden_size / num_attention_heads (Megatron
  // --kv-channels; Qwen3 and GPT-OSS); 0: that quotient.
  int explicit_head_dim = 0;
  std::optional<MoeSpec> moe = std::nullopt;
  std::optional<MlaSpec> mla = std::nullopt;
  int mtp_layers = 0;  // DeepSeek-V3's multi-token-prediction layers, on the last stage
  std::optional<WindowAttention> window_attention = std::nullopt;
  // Rotary embeddings in one fused kernel each way (Megatron-Core --apply-rope-fusion, its
  // default); false: as separate PyTorch ops (--no-rope-fusion, and YaRN's scaled rotary
  // embedding on multi-head and grouped-query attention, which no fused kernel takes).
  bool rope_fusion = true;

  [[nodiscard]] int head_dim() const {
    return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_attention_heads;
  }
  // Whether layer `layer` (0-based) has a mixture-of-experts FFN.
  [[nodiscard]] bool is_moe_layer(int layer) const {
    return moe.has_value() && layer >= moe->first_dense_layers &&
           (layer - moe->first_dense_layers) % moe->layer_interval == moe->layer_interval - 1;
  }
  // Whether some layer has a dense FFN (of `ffn_hidden_size`).
  [[nodiscard]] bool has_dense_ffn_layers() const {
    return !moe.has_value() || moe->first_dense_layers > 0 || moe->layer_interval > 1;
  }

  [[nodiscard]] bool operator==(const ModelSpec& other) const = default;
};

// Canonical names used in JSON and tables.
[[nodiscard]] const char* to_string(FfnActivation activation);
[[nodiscard]] const char* to_string(AttentionKernel attention);
[[nodiscard]] const char* to_string(CrossEntropyKernel cross_entropy);
[[nodiscard]] const char* to_string(RouterScore score);

}  // namespace capsim

#pragma once

#include <optional>
#include <string>

namespace capsim {

enum class FfnActivation { kGelu, kSwiglu };
// FlashAttention (Dao et al. 2022; the default) never writes the s x s scores; materialized
// attention (Megatron-LM's fused softmax before 2023) runs QK^T and PV as batched GEMMs and
// softmax/dropout over the scores in HBM.
enum class AttentionKernel { kFlash, kMaterialized };
// The loss over the vocabulary: Megatron-Core's vocab-parallel cross-entropy as separate kernels
// (its default; PyTorch's nn.CrossEntropyLoss makes about as many passes), Megatron-Core's fused
// version (--cross-entropy-loss-fusion; NeMo 2's GPTConfig default), or one kernel each way
// that keeps the 16-bit logits (flash-attn's / Apex's xentropy; llm-foundry's default loss).
enum class CrossEntropyKernel { kUnfused, kFused, kSingleKernel };

// A decoder-only transformer (GPT and Llama families). Sizes in elements, not bytes.
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

  [[nodiscard]] int head_dim() const { return hidden_size / num_attention_heads; }

  [[nodiscard]] bool operator==(const ModelSpec& other) const = default;
};

// Canonical names used in JSON and tables.
[[nodiscard]] const char* to_string(FfnActivation activation);
[[nodiscard]] const char* to_string(AttentionKernel attention);
[[nodiscard]] const char* to_string(CrossEntropyKernel cross_entropy);

}  // namespace capsim

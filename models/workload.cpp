#include "models/workload.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "models/as_double.hpp"
#include "models/low_precision.hpp"
#include "models/parameter_count.hpp"

namespace capsim {
namespace {

// The forward GEMM of `batch` independent products (rows x out = rows x in . in x out) and its
// two backward GEMMs, data gradient (rows x in = rows x out . out x in) and weight gradient
// (in x out = in x rows . rows x out), each with its FLOPs; the weight gradient runs in
// `weight_pass`.
std::array<Op, 3> linear_gemms(const char* name, double rows, double in, double out, double batch,
                               Pass weight_pass = Pass::kBackwardWeight) {
  std::array<Op, 3> gemms{
      Op{name, KernelKind::kGemm, Pass::kForward, {rows, out, in, batch}, 0.0, 0.0, 0},
      Op{name, KernelKind::kGemm, Pass::kBackwardInput, {rows, in, out, batch}, 0.0, 0.0, 0},
      Op{name, KernelKind::kGemm, weight_pass, {in, out, rows, batch}, 0.0, 0.0, 0}};
  for (Op& op : gemms)
    op.flop = op.gemm.flop();
  return gemms;
}

// Appends a linear layer's three GEMMs (linear_gemms).
void add_linear(std::vector<Op>& ops, const char* name, double rows, double in, double out) {
  for (const Op& op : linear_gemms(name, rows, in, out, 1.0))
    ops.push_back(op);
}

// Marks ops[first..] as replayed by the recompute `module`.
void tag_recompute(std::vector<Op>& ops, size_t first, RecomputeModule module) {
  for (size_t i = first; i < ops.size(); ++i)
    ops[i].recompute_modules |= module;
}

// Appends a memory-bound op whose forward and backward move the given bytes.
void add_memory_op(std::vector<Op>& ops, const char* name, double fwd_bytes, double bwd_bytes) {
  ops.push_back({name, KernelKind::kMemoryBound, Pass::kForward, {}, 0.0, fwd_bytes, 0});
  ops.push_back({name, KernelKind::kMemoryBound, Pass::kBackwardInput, {}, 0.0, bwd_bytes, 0});
}

// Appends a memory-bound op with `fwd_bytes` of forward traffic; its backward moves about
// twice as much (reads the saved input and the incoming gradient, writes one gradient).
void add_elementwise(std::vector<Op>& ops, const char* name, double fwd_bytes) {
  add_memory_op(ops, name, fwd_bytes, 2.0 * fwd_bytes);
}

// Rotary embeddings on `elements` query and key values. Fused (one kernel each way): read and
// write each. Unfused (Megatron-Core _apply_rotary_pos_emb_bshd): t * cos, the rotation's negate
// and concatenation, * sin, the sum and the concatenation with the unrotated part, 12 reads and
// writes of each element forward; backward the products' and rotation's gradients and the sum of
// the two paths, about 17.
void add_rope(std::vector<Op>& ops, const ModelSpec& m, double elements, double e) {
  if (m.rope_fusion)
    add_elementwise(ops, "rope", 2.0 * elements * e);
  else
    add_memory_op(ops, "rope", 12.0 * elements * e, 17.0 * elements * e);
}

// activation_input_fp8: SwiGLU's `elements` inputs are cast to fp8 for the backward by a kernel
// of their own (Megatron-Core fused_bias_swiglu.py, input.to(torch.float8_e4m3fn)), read e and
// write 1 B, and cast back before the backward, read 1 and write e.
void add_activation_input_store(std::vector<Op>& ops, const char* name, const Parallelism& p,
                                double elements, double e) {
  if (!p.activation_input_fp8)
    return;
  const double bytes = elements * (e + 1.0);
  add_memory_op(ops, name, bytes, bytes);
}

// Transformer Engine's fp8 linear layers: each GEMM input and output gradient is cast to fp8
// and also written transposed for the other GEMM of the pair (TE's fused cast-transpose: read
// 2 B, write 1 + 1 B per element), unless the kernel that produces the tensor casts it itself:
// TE's LayerNormLinear / LayerNormMLP normalise straight to fp8 (layernorm_fwd_fp8), its fp8 GeLU
// /SwiGLU write fp8, and the activation's backward is fused with the cast-transpose of the up
// projection's output gradient (fp8_cast_transpose_bgrad_dgelu_fused). A fused producer writes
// 1 B less and the transpose reads and writes 1 B: 1 B per element extra. Weight casts are cached
// across micro-batches (once per iteration): neglected. The other low-precision recipes move
// the bytes cast_bytes_per_element gives (scale factors, amax passes).
// `kernels`: the kernels each cast launches (a grouped linear's per-expert quantization).
void add_fp8_casts(std::vector<Op>& ops, const char* name, double rows, double in, double out,
                   CastBy input, CastBy gradient, Precision precision, double kernels = 1.0) {
  const double fwd_bytes_per_element = cast_bytes_per_element(precision, input, CastOf::kInput);
  const double bwd_bytes_per_element =
      cast_bytes_per_element(precision, gradient, CastOf::kGradient);
  ops.push_back({name,
                 KernelKind::kMemoryBound,
                 Pass::kForward,
                 {},
                 0.0,
                 fwd_bytes_per_element * rows * in,
                 0});
  ops.back().kernels = kernels;
  if (bwd_bytes_per_element > 0.0) {
    ops.push_back({name,
                   KernelKind::kMemoryBound,
                   Pass::kBackwardInput,
                   {},
                   0.0,
                   bwd_bytes_per_element * rows * out,
                   0});
    ops.back().kernels = kernels;
  }
}

// Megatron-LM before FlashAttention (Shoeybi et al. 2019; Korthikanti et al. 2022 §4.1): per
// (micro-batch x head) a QK^T GEMM (s x s x d), a fused scale-mask-softmax and a dropout over
// the full s x s scores in HBM, and a PV GEMM (s x d x s); the causal mask does not save work.
void add_materialized_attention(std::vector<Op>& ops, const ModelSpec& m, const Parallelism& p,
                                double tokens, double e) {
  const double batch = d(p.micro_batch_size) * d(m.num_attention_heads) / d(p.tensor);
  const double queries = tokens / d(p.micro_batch_size);
  const double keys = m.seq_length;
  const double hd = m.head_dim();
  // Both operands are activations: the second gradient is an input gradient too.
  const auto add_batched = [&](const char* name, double rows, double in, double out) {
    for (const Op& op : linear_gemms(name, rows, in, out, batch, Pass::kBackwardInput))
      ops.push_back(op);
  };
  const size_t first = ops.size();
  const double scores = batch * queries * keys;
  add_batched("attention_scores", queries, hd, keys);
  // Softmax reads and writes the scores; dropout reads them, writes the output and a 1-byte mask.
  add_elementwise(ops, "softmax", 2.0 * scores * e);
  if (has_dropout(m))
    add_elementwise(ops, "attention_dropout", scores * (2.0 * e + 1.0));
  add_batched("attention_values", queries, keys, hd);
  for (size_t i = first; i < ops.size(); ++i)
    ops[i].attention_core = true;
  tag_recompute(ops, first, kRecomputeCoreAttention);
}

// The cross-entropy's HBM traffic per logit, e bytes per 16-bit element.
// Unfused, Megatron-Core's default (megatron/core/tensor_parallel/cross_entropy.py): forward the
// fp32 copy of the logits (read e, write 4), max (read 4), in-place subtract, exp and divide
// (read and write 4 each), the exp-sum (read 4); backward the in-place multiply by the loss
// gradient (read and write 4) and the cast back (read 4, write e). PyTorch's nn.CrossEntropyLoss
// under autocast makes about as many passes. Fused (megatron/core/fusions/
// fused_cross_entropy.py): the copy with the max, the subtract with the exp; backward as above.
// Single kernel (flash-attn's CrossEntropyLoss, Apex xentropy): forward reads the 16-bit logits
// for the max and for the exp-sum, backward reads them once and writes the gradient.
void add_cross_entropy(std::vector<Op>& ops, CrossEntropyKernel kernel, double logits, double e) {
  double fwd = 0.0;
  double bwd = 0.0;
  switch (kernel) {
    case CrossEntropyKernel::kUnfused:
      fwd = e + 4.0 + 4.0 + 3.0 * 8.0 + 4.0;
      bwd = 8.0 + 4.0 + e;
      break;
    case CrossEntropyKernel::kFused:
      fwd = e + 4.0 + 8.0 + 4.0 + 8.0;
      bwd = 8.0 + 4.0 + e;
      break;
    case CrossEntropyKernel::kSingleKernel:
      fwd = 2.0 * e;
      bwd = 2.0 * e;
      break;
  }
  ops.push_back(
      {"cross_entropy", KernelKind::kMemoryBound, Pass::kForward, {}, 0.0, logits * fwd, 0});
  ops.push_back(
      {"cross_entropy", KernelKind::kMemoryBound, Pass::kBackwardInput, {}, 0.0, logits * bwd, 0});
}

// Rows an expert-parallel rank's grouped GEMMs receive per micro-batch under balanced routing:
// its sequence-parallel share of the tokens x top_k (x ETP, which gathers its group's tokens).
double balanced_routed_rows(const ModelSpec& m, const Parallelism& p) {
  const double tokens = d(p.micro_batch_size) * d(m.seq_length) / d(p.context) / d(p.tensor);
  return tokens * d(m.moe->top_k) * d(p.expert_tensor_or_default());
}

// The busiest rank's routed rows, load_imbalance x the balanced count, before any padding.
double busiest_routed_rows(const ModelSpec& m, const Parallelism& p) {
  return balanced_routed_rows(m, p) * std::max(m.moe->load_imbalance, 1.0);
}

// Transformer Engine's grouped linear layers on Hopper run one cuBLAS GEMM per expert, issued
// round-robin on its compute streams (transformer_engine/common/gemm/cublaslt_gemm.cpp,
// multi_stream_cublas_gemm; the CUTLASS grouped GEMM is opt-in, NVTE_USE_CUTLASS_GROUPED_GEMM):
// kGroupedGemmStreams GEMMs share the GPU at a time.
constexpr double kGroupedGemmStreams = 4.0;

// Appends a grouped GEMM of `experts` equal GEMMs (rows tokens each, in x out weights) and its
// two backward grouped GEMMs: rounds of kGroupedGemmStreams concurrent GEMMs (the last round
// costed full when the streams do not divide the experts).
void add_grouped_linear(std::vector<Op>& ops, const char* name, double experts, double rows,
                        double in, double out) {
  const double concurrent = std::min(experts, kGroupedGemmStreams);
  const double rounds = std::ceil(experts / concurrent);
  for (Op op : linear_gemms(name, rows, in, out, concurrent)) {
    op.rounds = rounds;
    op.flop = op.gemm.flop() / concurrent * experts;
    ops.push_back(op);
  }
}

// A memory-bound op whose backward moves as much as its forward (a permutation's inverse).
void add_copy(std::vector<Op>& ops, const char* name, double bytes) {
  add_memory_op(ops, name, bytes, bytes);
}

// MLA's projections (DeepSeek-V2 §2.1; Megatron-Core MLASelfAttention): the query through its
// latent (down, norm, up) or one projection; the key-value latent plus the shared rotary key
// (down), its norm, and the up projection to heads x (qk_head_dim + v_head_dim); rotary
// embeddings on the rotary parts. Heads split over TP; the down projections are small and
// costed split too.
void add_mla_projections(std::vector<Op>& ops, const ModelSpec& m, const Parallelism& p,
                         double tokens, double e) {
  const MlaSpec& a = *m.mla;
  const double t = p.tensor;
  const double h = m.hidden_size;
  const double heads = m.num_attention_heads;
  const double q_width = heads * d(a.qk_head_dim + a.qk_pos_emb_head_dim);
  if (a.q_lora_rank > 0) {
    add_linear(ops, "q_down", tokens, h, d(a.q_lora_rank) / t);
    add_elementwise(ops, "q_norm", 2.0 * tokens * d(a.q_lora_rank) * e);
    const size_t up = ops.size();
    add_linear(ops, "q_up", tokens, d(a.q_lora_rank), q_width / t);
    tag_recompute(ops, up, kRecomputeMlaUpProjection);
  } else {
    add_linear(ops, "q_proj", tokens, h, q_width / t);
  }
  add_linear(ops, "kv_down", tokens, h, d(a.kv_lora_rank + a.qk_pos_emb_head_dim) / t);
  add_elementwise(ops, "kv_norm", 2.0 * tokens * d(a.kv_lora_rank) * e);
  // Megatron-Core's mla_up_proj recompute replays the up projections and the rotary embedding.
  const size_t up = ops.size();
  add_linear(ops, "kv_up", tokens, d(a.kv_lora_rank), heads * d(a.qk_head_dim + a.v_head_dim) / t);
  add_rope(ops, m, tokens * (heads + 1.0) * d(a.qk_pos_emb_head_dim) / t, e);
  tag_recompute(ops, up, kRecomputeMlaUpProjection);
}

// The experts' MLP as Megatron-Core's TEGroupedMLP runs it: Transformer Engine's grouped
// linears (add_grouped_linear) around the activation, with the fp8 recipes' casts.
void add_grouped_mlp(std::vector<Op>& ops, const ModelSpec& m, const Parallelism& p, double rows,
                     double local_experts, double ffn, double e) {
  const MoeSpec& moe = *m.moe;
  const bool gated = is_gated(m.ffn_activation);
  const bool fp8 = is_low_precision(p.precision);
  const double h = m.hidden_size;
  const double rows_per_expert = rows / local_experts;
  add_grouped_linear(ops, "expert_up", local_experts, rows_per_expert, h,
                     (gated ? 2.0 : 1.0) * ffn);
  const size_t activation_first = ops.size();
  if (moe.activation_clamp > 0.0) {
    // Two clamps of the up projection's halves and their concatenation (Megatron-Core
    // weighted_bias_quick_geglu_impl): 8 reads and writes per element of a half forward.
    add_elementwise(ops, "expert_activation_clamp", 8.0 * rows * ffn * e);
  }
  add_elementwise(ops, "expert_activation", (gated ? 3.0 : 2.0) * rows * ffn * e);
  add_activation_input_store(ops, "expert_activation_input_fp8", p, 2.0 * rows * ffn, e);
  tag_recompute(ops, activation_first, kRecomputeMoeActivation);
  add_grouped_linear(ops, "expert_down", local_experts, rows_per_expert, ffn, h);
  if (moe.linear_bias) {
    // t + b * p per expert, then the concatenation: 6 reads and writes per output element
    // forward; backward the gradients of b and p (a product and a sum each) and the split, 8.
    add_memory_op(ops, "expert_down_bias", 6.0 * rows * h * e, 8.0 * rows * h * e);
  }
  if (fp8) {
    // Transformer Engine's grouped fp8 linears cast each GEMM input and output gradient, split
    // by expert, in kernels of their own: the activation between them is Megatron-Core's
    // (bias_swiglu_impl and its kin), which reads and writes 16 bits either way.
    const double kernels = split_quantize_kernels(p.precision, local_experts);
    add_fp8_casts(ops, "expert_up_fp8_cast", rows, h, (gated ? 2.0 : 1.0) * ffn, CastBy::kOwnKernel,
                  CastBy::kOwnKernel, p.precision, kernels);
    add_fp8_casts(ops, "expert_down_fp8_cast", rows, ffn, h, CastBy::kOwnKernel, CastBy::kOwnKernel,
                  p.precision, kernels);
  }
}

// Rows per expert Transformer Engine's fused grouped MLP pads to: its kernels' 256-row tiles.
constexpr double kFusedGroupedMlpRowAlignment = 256.0;

// Transformer Engine's fused grouped MLP (te.pytorch.ops with NVTE_CUTEDSL_FUSED_GROUPED_MLP,
// cuDNN frontend's CuTe DSL kernels): each linear one persistent grouped GEMM over the rank's
// experts, each expert's rows padded to kFusedGroupedMlpRowAlignment. The first GEMM's epilogue
// applies the bias, the gated activation with its clamp and the routing probability and
// quantizes the second's input; backward the second's data-gradient GEMM applies the
// activation's gradient and quantizes the first's. Kernels of their own quantize only the first
// linear's input and the second's incoming gradient.
void add_fused_grouped_mlp(std::vector<Op>& ops, double experts, double rows_per_expert, double h,
                           double up_width, double ffn, Precision precision) {
  const double rows =
      std::ceil(rows_per_expert / kFusedGroupedMlpRowAlignment) * kFusedGroupedMlpRowAlignment;
  for (const auto& [name, in, out] :
       {std::tuple{"expert_up", h, up_width}, std::tuple{"expert_down", ffn, h}}) {
    for (const Op& op : linear_gemms(name, rows, in, out, experts))
      ops.push_back(op);
  }
  const double routed = rows_per_expert * experts;
  add_fp8_casts(ops, "expert_up_fp8_cast", routed, h, up_width, CastBy::kOwnKernel,
                CastBy::kProducer, precision);
  add_fp8_casts(ops, "expert_down_fp8_cast", routed, ffn, h, CastBy::kProducer, CastBy::kOwnKernel,
                precision);
}

// A mixture-of-experts FFN on one GPU (Megatron-Core MoELayer): the router GEMM (h x experts)
// and its score and top-k (fp32 logits, memory bound); the permutation of top_k copies of the
// tokens into expert order and its inverse with the probability weighting; the grouped GEMMs of
// the rank's num_experts / EP experts on the routed rows (routed_rows: the busiest rank's, the
// FFN split over ETP as TP splits an MLP); the shared expert as a dense MLP. With TP the layer
// runs on the rank's sequence-parallel share of the tokens.
void add_moe_ffn(std::vector<Op>& ops, const ModelSpec& m, const Parallelism& p, double tokens,
                 double e) {
  const MoeSpec& moe = *m.moe;
  const bool gated = is_gated(m.ffn_activation);
  const double h = m.hidden_size;
  const double local = tokens / d(p.tensor);
  const double experts = d(moe.num_experts);
  const size_t first = ops.size();
  add_linear(ops, "router", local, h, experts);
  // Score function, top-k and the auxiliary statistics over fp32 logits: about three passes.
  add_elementwise(ops, "router_topk", 3.0 * local * experts * 4.0);
  const double rows = routed_rows(m, p);
  const double copies = local * d(moe.top_k);
  // Permute: read the tokens, write top_k copies; un-permute: read the copies and their
  // probabilities, write the weighted sum.
  add_copy(ops, "permute", (local + copies) * h * e);
  const double local_experts = experts / d(p.expert);
  // Megatron-Core's all-to-all dispatcher receives its rows grouped by source rank and sorts
  // them by local expert before the experts (and back after them): each sort reads and writes
  // every routed row, the forward one with its probability (MoEAlltoAllTokenDispatcher
  // dispatch_postprocess / combine_preprocess, sort_chunks_by_idxs).
  const bool sorts_chunks = p.token_dispatcher == TokenDispatcher::kAllToAll && local_experts > 1.0;
  if (sorts_chunks)
    add_copy(ops, "sort_chunks", 2.0 * rows * (h * e + 4.0));
  const double ffn = d(moe.ffn_hidden_size) / d(p.expert_tensor_or_default());
  if (moe.fused_grouped_mlp) {
    // Its kernels read the experts' token counts on the device and run only the routed rows,
    // whatever capacity the rank pads its buffers to.
    add_fused_grouped_mlp(ops, local_experts, busiest_routed_rows(m, p) / local_experts, h,
                          (gated ? 2.0 : 1.0) * ffn, ffn, p.precision);
  } else {
    add_grouped_mlp(ops, m, p, rows, local_experts, ffn, e);
  }
  if (sorts_chunks)
    add_copy(ops, "unsort_chunks", 2.0 * rows * h * e);
  add_copy(ops, "unpermute", (copies + local) * h * e + copies * 4.0);
  if (moe.shared_expert_ffn_hidden_size > 0) {
    const double shared = d(moe.shared_expert_ffn_hidden_size) / d(p.tensor);
    const size_t shared_first = ops.size();
    add_linear(ops, "shared_up", tokens, h, (gated ? 2.0 : 1.0) * shared);
    add_elementwise(ops, "shared_activation", (gated ? 3.0 : 2.0) * tokens * shared * e);
    add_activation_input_store(ops, "shared_activation_input_fp8", p, 2.0 * tokens * shared, e);
    add_linear(ops, "shared_down", tokens, shared, h);
    tag_recompute(ops, shared_first, kRecomputeSharedExperts);
  }
  tag_recompute(ops, first, kRecomputeMoe);
}

}  // namespace

std::vector<Op> lower_layer(const ModelSpec& m, const Parallelism& p) {
  return lower_layer(m, p, LayerKind{});
}

std::vector<Op> lower_layer(const ModelSpec& m, const Parallelism& p, LayerKind kind) {
  const double e = element_bytes(is_low_precision(p.precision) ? Precision::kBf16 : p.precision);
  const double t = p.tensor;
  const double tokens = d(p.micro_batch_size) * d(m.seq_length) / d(p.context);
  const double h = m.hidden_size;
  const double kv_width = d(m.num_kv_heads) * d(m.head_dim());
  const double q_width = query_width(m);
  const double ffn = m.ffn_hidden_size;
  const bool gated = is_gated(m.ffn_activation);
  // With sequence parallelism, norms, dropout and residuals run on tokens / t.
  const double norm_tokens = p.sequence_parallel ? tokens / t : tokens;

  const bool fp8 = is_low_precision(p.precision);
  std::vector<Op> ops;
  ops.reserve(48);
  // fp8 casts of the input and of the output gradient: by their own kernel or by the kernel
  // that produces the tensor (add_fp8_casts).
  const auto linear = [&](const char* name, const char* cast, double in, double out, CastBy input,
                          CastBy gradient) {
    add_linear(ops, name, tokens, in, out);
    if (fp8)
      add_fp8_casts(ops, cast, tokens, in, out, input, gradient, p.precision);
  };
  // Pre-attention norm: read and write tokens x h.
  add_elementwise(ops, "norm1", 2.0 * norm_tokens * h * e);
  tag_recompute(ops, 0, kRecomputeLayernorm);
  // The attention's query/key width (the QK^T contraction) and value width, summed over heads.
  double qk_width = q_width;
  double v_width = q_width;
  int attention_head_dim = m.head_dim();
  if (m.mla) {
    add_mla_projections(ops, m, p, tokens, e);
    const MlaSpec& a = *m.mla;
    qk_width = d(m.num_attention_heads) * d(a.qk_head_dim + a.qk_pos_emb_head_dim);
    v_width = d(m.num_attention_heads) * d(a.v_head_dim);
    attention_head_dim = a.qk_head_dim + a.qk_pos_emb_head_dim;
  } else {
    linear("qkv", "qkv_fp8_cast", h, (q_width + 2.0 * kv_width) / t, CastBy::kProducer,
           CastBy::kOwnKernel);
    if (!is_gpt_family(m)) {
      // Rotary embeddings on Q and K: read and write.
      add_rope(ops, m, tokens * (q_width + kv_width) / t, e);
    }
  }
  if (m.attention != AttentionKernel::kMaterialized) {
    // Causal FlashAttention: QK^T and PV over the lower triangle (half of 4·b·s²·h), each rank
    // holding heads/t and, with CP, s/c queries against all s keys. Backward recomputes the
    // scores and runs 5 matmuls where forward runs 2 (Dao 2023, §3.1): 2.5x forward FLOPs.
    // A causal window of w keys leaves w - w²/2s of the s/2 keys a query sees on average.
    double attn_fwd_flop = 0.5 * 4.0 * tokens * m.seq_length * q_width / t;
    if (m.mla)
      attn_fwd_flop = 2.0 * tokens * (0.5 * m.seq_length) * (qk_width + v_width) / t;
    if (kind.windowed)
      attn_fwd_flop *= windowed_keys(m) / (0.5 * m.seq_length);
    const double kv_bytes_width = m.mla ? qk_width + v_width : 2.0 * kv_width;
    const double qkv_bytes = tokens * (qk_width + kv_bytes_width) / t * e;
    const double out_bytes = tokens * v_width / t * e;
    ops.push_back({"attention",
                   KernelKind::kAttention,
                   Pass::kForward,
                   {},
                   attn_fwd_flop,
                   qkv_bytes + out_bytes,
                   attention_head_dim});
    ops.push_back({"attention",
                   KernelKind::kAttention,
                   Pass::kBackwardInput,
                   {},
                   2.5 * attn_fwd_flop,
                   2.0 * (qkv_bytes + out_bytes),
                   attention_head_dim});
    for (size_t i = ops.size() - 2; i < ops.size(); ++i) {
      ops[i].attention_core = true;
      ops[i].attention_kernel = m.attention;
      ops[i].fp8_attention = p.fp8_attention;
      if (kind.windowed)
        ops[i].attention_seq_length = 2.0 * windowed_keys(m);
    }
    tag_recompute(ops, ops.size() - 2, kRecomputeCoreAttention);
  } else {
    add_materialized_attention(ops, m, p, tokens, e);
  }
  linear("attn_proj", "attn_proj_fp8_cast", v_width / t, h, CastBy::kOwnKernel, CastBy::kOwnKernel);
  // Dropout + residual add (GPT: bias-dropout-add fused; without dropout a residual add): read
  // two tensors, write one, plus a 1-byte mask for dropout.
  const double residual_bytes = norm_tokens * h * (3.0 * e + (has_dropout(m) ? 1.0 : 0.0));
  add_elementwise(ops, "residual1", residual_bytes);
  add_elementwise(ops, "norm2", 2.0 * norm_tokens * h * e);
  tag_recompute(ops, ops.size() - 2, kRecomputeLayernorm);
  const size_t ffn_first = ops.size();
  if (kind.moe) {
    add_moe_ffn(ops, m, p, tokens, e);
  } else {
    linear("mlp_up", "mlp_up_fp8_cast", h, (gated ? 2.0 : 1.0) * ffn / t, CastBy::kProducer,
           CastBy::kProducer);
    // GeLU and squared ReLU (one jit-fused kernel in Megatron-Core, megatron/core/activations.py):
    // read f, write f. SwiGLU and GeGLU: read gate and up, write f.
    add_elementwise(ops, "activation", (gated ? 3.0 : 2.0) * tokens * ffn / t * e);
    add_activation_input_store(ops, "activation_input_fp8", p, 2.0 * tokens * ffn / t, e);
    linear("mlp_down", "mlp_down_fp8_cast", ffn / t, h, CastBy::kProducer, CastBy::kOwnKernel);
    tag_recompute(ops, ffn_first, kRecomputeMlp);
  }
  add_elementwise(ops, "residual2", residual_bytes);
  return ops;
}

LayerKind layer_kind(const ModelSpec& m, int layer) {
  LayerKind kind;
  kind.moe = m.is_moe_layer(layer);
  kind.windowed = m.window_attention.has_value() && m.window_attention->size > 0 &&
                  m.window_attention->size < m.seq_length &&
                  layer % std::max(m.window_attention->every, 1) == 0;
  return kind;
}

double windowed_keys(const ModelSpec& m) {
  const double s = m.seq_length;
  const double w = std::min<double>(m.window_attention ? m.window_attention->size : s, s);
  return w - w * w / (2.0 * s);
}

double routed_rows(const ModelSpec& m, const Parallelism& p) {
  const MoeSpec& e = *m.moe;
  const double busiest = busiest_routed_rows(m, p);
  return e.rank_capacity_factor > 0.0
             ? std::max(busiest, balanced_routed_rows(m, p) * e.rank_capacity_factor)
             : busiest;
}

std::vector<Op> lower_embedding(const ModelSpec& m, const Parallelism& p) {
  const double e = element_bytes(is_low_precision(p.precision) ? Precision::kBf16 : p.precision);
  const double tokens = d(p.micro_batch_size) * d(m.seq_length) / d(p.context);
  std::vector<Op> ops;
  // Lookup writes tokens x h (plus positions for GPT); the backward scatters gradients into the
  // (vocab/t x h) table, read-modify-write of the touched rows.
  add_elementwise(ops, "embedding", (is_gpt_family(m) ? 3.0 : 2.0) * tokens * m.hidden_size * e);
  // The weight gradient is dense (nn.Embedding without sparse gradients): PyTorch zero-fills
  // the whole (padded vocab/t x h) table and the framework adds it into the main gradient
  // after every micro-batch (Megatron-Core DDP's grad hook, main_grad.add_(grad)): write e, read
  // e, read and write the main gradient in its precision.
  const double table = padded_vocab_size(m, p.tensor) / d(p.tensor) * d(m.hidden_size);
  ops.push_back({"embedding_wgrad",
                 KernelKind::kMemoryBound,
                 Pass::kBackwardWeight,
                 {},
                 0.0,
                 table * (2.0 * e + 2.0 * p.grad_reduce_bytes_per_element()),
                 0});
  return ops;
}

std::vector<Op> lower_head(const ModelSpec& m, const Parallelism& p) {
  const double e = element_bytes(is_low_precision(p.precision) ? Precision::kBf16 : p.precision);
  const double t = p.tensor;
  const double tokens = d(p.micro_batch_size) * d(m.seq_length) / d(p.context);
  const double norm_tokens = p.sequence_parallel ? tokens / t : tokens;
  std::vector<Op> ops;
  add_elementwise(ops, "final_norm", 2.0 * norm_tokens * m.hidden_size * e);
  // The logits GEMM stays in 16-bit even in fp8 recipes (Transformer Engine keeps the head in
  // higher precision).
  const double vocab_slice = padded_vocab_size(m, p.tensor) / t;
  add_linear(ops, "logits", tokens, m.hidden_size, vocab_slice);
  add_cross_entropy(ops, m.cross_entropy, tokens * vocab_slice, e);
  return ops;
}

std::vector<Op> lower_mtp_module(const ModelSpec& m, const Parallelism& p) {
  const double e = element_bytes(is_low_precision(p.precision) ? Precision::kBf16 : p.precision);
  const double tokens = d(p.micro_batch_size) * d(m.seq_length) / d(p.context);
  const double h = m.hidden_size;
  std::vector<Op> ops;
  // The two input norms (the hidden state and the next token's embedding) and their 2h x h
  // projection, column-parallel over TP (Megatron-Core MultiTokenPredictionLayer).
  add_elementwise(ops, "mtp_norms", 4.0 * tokens * h * e);
  add_linear(ops, "mtp_proj", tokens, 2.0 * h, h / d(p.tensor));
  std::vector<Op> layer = lower_layer(m, p, layer_kind(m, m.num_layers - 1));
  ops.insert(ops.end(), layer.begin(), layer.end());
  std::vector<Op> head = lower_head(m, p);
  ops.insert(ops.end(), head.begin(), head.end());
  return ops;
}

namespace {

// Megatron-LM's model FLOPs per token for MoE and MLA models (megatron/training/training.py,
// num_floating_point_operations, which Megatron-Bridge's performance tables print as model
// TFLOP/s): 6 x the GEMM weights a token passes through (attention, the dense FFN on dense
// layers, top_k routed experts and the shared expert on MoE layers; not the router), causal
// attention as s/2 keys per query (a window's layers fewer), each MTP module as one more layer
// of the last layer's kind with its projection and norms, and one logits GEMM per head on the
// padded vocabulary.
double megatron_flop_per_token(const ModelSpec& m) {
  const double h = m.hidden_size;
  const double s = m.seq_length;
  const double heads = m.num_attention_heads;
  const double gated = is_gated(m.ffn_activation) ? 1.5 : 1.0;
  const double mtp = m.mtp_layers;
  const double layers = d(m.num_layers) + mtp;
  double moe_layers = 0.0;
  double windowed = 0.0;
  for (int layer = 0; layer < m.num_layers; ++layer) {
    const LayerKind kind = layer_kind(m, layer);
    moe_layers += kind.moe ? 1.0 : 0.0;
    windowed += kind.windowed ? 1.0 : 0.0;
  }
  if (m.is_moe_layer(m.num_layers - 1))
    moe_layers += mtp;
  const double dense_layers = layers - moe_layers;
  // Keys per query over s, averaged over the layers.
  const double ratio = (windowed * windowed_keys(m) / s + (layers - windowed) * 0.5) / layers;
  double ffn = d(m.ffn_hidden_size) * gated * dense_layers;
  if (m.moe) {
    ffn += (d(m.moe->ffn_hidden_size) * d(m.moe->top_k) + d(m.moe->shared_expert_ffn_hidden_size)) *
           gated * moe_layers;
  }
  double attention = 0.0;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const double qk = d(a.qk_head_dim + a.qk_pos_emb_head_dim);
    const double q = a.q_lora_rank > 0 ? d(a.q_lora_rank) * (h + heads * qk + 1.0) : h * heads * qk;
    attention = 6.0 * layers *
                (q + d(a.kv_lora_rank) * (h + heads * d(a.qk_head_dim + a.v_head_dim) + 1.0) +
                 h * d(a.qk_pos_emb_head_dim) + heads * d(a.v_head_dim) * h +
                 s * heads * qk * ratio + s * heads * d(a.v_head_dim) * ratio);
  } else {
    const double q_ratio = query_width(m) / h;
    attention =
        12.0 * layers * h * h * ((1.0 + d(m.num_kv_heads) / heads + s / h * ratio) * q_ratio);
  }
  const double mtp_extra = 6.0 * mtp * (3.0 * h + 2.0 * h * h);
  const double logits = 6.0 * h * padded_vocab_size(m, 1) * (mtp + 1.0);
  return 12.0 * h * ffn + attention + mtp_extra + logits;
}

}  // namespace

double model_flop_per_token(const ModelSpec& m) {
  if (m.moe || m.mla)
    return megatron_flop_per_token(m);
  return 6.0 * matmul_parameters(m) + 12.0 * d(m.num_layers) * d(m.hidden_size) * d(m.seq_length);
}

double hardware_flop_per_token(const ModelSpec& m, Recompute recompute) {
  const double model = model_flop_per_token(m);
  const double layers_matmul = matmul_parameters(m) - d(m.vocab_size) * d(m.hidden_size);
  const double attention_fwd = 4.0 * d(m.num_layers) * d(m.hidden_size) * d(m.seq_length);
  switch (recompute) {
    case Recompute::kNone:
      return model;
    case Recompute::kSelective:
      return model + attention_fwd;
    case Recompute::kFull:
      // One more forward of every layer (2N_layers + attention), not of the head.
      return model + 2.0 * layers_matmul + attention_fwd;
  }
  return model;
}

}  // namespace capsim

#include "models/memory_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/as_double.hpp"
#include "models/low_precision.hpp"
#include "models/parameter_count.hpp"
#include "models/workload.hpp"

namespace capsim {
namespace {

// Bytes of one stored activation element: fp16/bf16 use 2, fp32 uses 4. fp8 runs keep their
// tensors in bf16 (2) except those Transformer Engine saves in fp8 (layer_activation_bytes).
double stored_element_bytes(Precision precision) {
  return precision == Precision::kFp32 ? 4.0 : 2.0;
}

// Korthikanti et al. 2022 §4.1 counts 1-byte dropout masks; models without dropout (Llama,
// Touvron et al. 2023; MPT) keep none.
double mask_bytes(const ModelSpec& model) {
  return has_dropout(model) ? 1.0 : 0.0;
}

// Bytes of one element of the input SwiGLU keeps for its backward: fp8 (1 B, a plain cast with
// no scale) with activation_input_fp8, else the stored element's `e`.
double activation_input_bytes(const Parallelism& par, double e) {
  return par.activation_input_fp8 ? 1.0 : e;
}

// Activation bytes of one layer and one micro-batch on one GPU, term by term from Korthikanti
// et al. 2022 §4.1, generalised to GQA (K, V are kv_heads·head_dim wide) and to the FFN width
// and activation (GeLU stores its input and output, f each; SwiGLU stores the 2f-wide gate/up
// output and the f-wide product). With f = 4h, MHA and e = 2 this is Table 2 exactly.
//
// Under fp8, Transformer Engine saves some of these tensors in fp8, 1 B (v1.7-v1.9:
// module/layernorm_linear.py, layernorm_mlp.py and linear.py _*.forward, ctx.save_for_backward;
// v2.x the same tensors through prepare_for_saving): the norm outputs (ln_out, the QKV and FC1
// inputs; the norm inputs stay bf16), the MLP activation's output (the FC2 input; FC1's output
// stays bf16 for the activation's backward) and the out-projection's input. A flash (or cuDNN
// fused) attention kernel that is not recomputed keeps its bf16 output for its own backward, so
// that fp8 copy comes on top; under selective recompute (Megatron-Core checkpoints core
// attention) or with materialized attention (whose backward needs the probabilities and V, not
// the output) it is the only copy. Q, K, V, the masks and the scores stay bf16.
double layer_activation_bytes(const ModelSpec& model, const Parallelism& par, Recompute recompute,
                              AttentionMemory attention) {
  const double seq_local = d(model.seq_length) / d(par.context);
  const double sb = seq_local * d(par.micro_batch_size);
  const double h = d(model.hidden_size);
  const double f = d(model.ffn_hidden_size);
  const double kv = d(model.num_kv_heads) * d(model.head_dim());
  const double t = d(par.tensor);
  const double e = stored_element_bytes(par.precision);
  const bool fp8 = is_low_precision(par.precision);
  // A tensor Transformer Engine saves quantized (fp8: 1 B; block scales add their share).
  const double e_te = fp8 ? quantized_activation_bytes(par.precision) : e;
  const double mask = mask_bytes(model);
  // Sequence parallelism shards the parts that TP alone replicates (Korthikanti §4.2.2).
  const double replicated_div = par.sequence_parallel ? t : 1.0;

  // Full recompute keeps only each layer's input (Korthikanti §4.3: 2sbh, /t with SP), the
  // bf16 residual stream even under fp8.
  if (recompute == Recompute::kFull)
    return e * sb * h / replicated_div;
  // Selective recompute drops what its modules produce inside them (Megatron-Core checkpoints
  // each module, or discards its output after use: CheckpointWithoutOutput for layernorm and
  // moe_act), keeping their inputs, which the layer stores anyway.
  const unsigned replayed = recompute == Recompute::kSelective ? par.recompute_modules : 0u;
  const bool attention_replayed = (replayed & kRecomputeCoreAttention) != 0;
  const bool norms_replayed = (replayed & kRecomputeLayernorm) != 0;
  const bool mlp_replayed = (replayed & kRecomputeMlp) != 0;

  // Replicated under TP: two norm inputs, two norm outputs (the QKV and FC1 inputs), the
  // attention-output and MLP dropout masks: 10sbh for e = 2.
  const double replicated =
      sb * (2.0 * e * h + (norms_replayed ? 0.0 : 2.0 * e_te * h) + 2.0 * mask * h);
  // Split by TP: Q, K, V, the attention context (out-projection input) and the MLP: 24sbh.
  // The activation's input: gate and up for a GLU, else one f (squared ReLU's jit-fused kernel
  // saves its input as GeLU's does).
  const double mlp_input = is_gated(model.ffn_activation) ? 2.0 * f : f;
  const double mlp = mlp_replayed ? 0.0 : activation_input_bytes(par, e) * mlp_input + e_te * f;
  const bool attention_keeps_its_output =
      attention != AttentionMemory::kMaterialized && !attention_replayed;
  const double projection_input = !fp8 ? e * h : (attention_keeps_its_output ? e * h : 0.0) + h;
  double split = sb * (e * (h + 2.0 * kv) + projection_input + mlp);
  if (model.mla || model.explicit_head_dim > 0) {
    // MLA keeps the query and key-value latents (the up projections' inputs) beside Q, K (each
    // head's qk_head_dim + rotary part) and V; the attention context is heads x v_head_dim. An
    // explicit head_dim widens Q and the context to heads x head_dim.
    const double heads = d(model.num_attention_heads);
    double qkv = query_width(model) + 2.0 * kv;
    double context = query_width(model);
    if (model.mla) {
      // Replaying the up projections keeps only the latents.
      const MlaSpec& a = *model.mla;
      const bool up_replayed = (replayed & kRecomputeMlaUpProjection) != 0;
      qkv = d(a.q_lora_rank + a.kv_lora_rank) +
            (up_replayed ? 0.0
                         : heads * d(2 * (a.qk_head_dim + a.qk_pos_emb_head_dim) + a.v_head_dim));
      context = heads * d(a.v_head_dim);
    }
    const double context_bytes =
        !fp8 ? e * context : (attention_keeps_its_output ? e * context : 0.0) + context;
    split = sb * (e * qkv + context_bytes + mlp);
  }
  double bytes = replicated / replicated_div + split / t;
  // Softmax output, its dropout mask and dropout output: 5as²b (Korthikanti §4.1; without
  // dropout only the softmax output, 2as²b). Selective
  // recompute drops it (§4.2.3); FlashAttention never stores it (Dao et al. 2022 §3.1), so the
  // default drops it always. With context parallelism the local queries see all s keys.
  if (attention == AttentionMemory::kMaterialized && !attention_replayed) {
    const double a = d(model.num_attention_heads);
    bytes += a * sb * d(model.seq_length) * (e + mask * (e + 1.0)) / t;
  }
  return bytes;
}

}  // namespace

BytesPerParameter bytes_per_parameter(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
      return {2.0, 2.0, 12.0};  // ZeRO paper §3.1: 2Ψ + 2Ψ + KΨ with K = 12
    case Precision::kBf16:
    case Precision::kFp8:
    case Precision::kFp8Cs:
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8:
    case Precision::kNvfp4:
      return {2.0, 4.0, 12.0};  // Megatron: fp32 main grads for bf16 (arguments.py), 18 B/param
    case Precision::kFp32:
      return {4.0, 4.0, 8.0};  // weights are the master copy; Adam m and v
  }
  return {2.0, 4.0, 12.0};
}

double optimizer_bytes_per_parameter(const Parallelism& parallelism) {
  return parallelism.master_weight_bytes() + 2.0 * parallelism.optimizer_state_bytes_per_element();
}

namespace {

// fp16 training scales the loss, so its step first unscales the fp32 gradients in place while
// checking them for inf/nan (read 4, write 4), after copying 16-bit gradients into fp32 ones
// (read 2, write 4) when they were reduced in 16 bits: Megatron-LM's
// Float16OptimizerWithFloat16Params.step (_copy_model_grads_to_main_grads,
// _unscale_main_grads_and_check_for_nan with its DynamicGradScaler). bf16 and fp8 training have
// no grad scaler and accumulate fp32 main gradients: neither pass.
double loss_scaling_bytes(const Parallelism& parallelism) {
  if (parallelism.precision != Precision::kFp16)
    return 0.0;
  const double copy_bytes = parallelism.grad_reduce_bytes_per_element() < 4.0 ? 2.0 + 4.0 : 0.0;
  return copy_bytes + 4.0 + 4.0;
}

}  // namespace

double adam_step_bytes_per_parameter(const Parallelism& parallelism) {
  // The fused Adam kernels (Apex distributed_fused_adam.py _local_step and
  // _local_step_with_param_remainders; TE FusedAdam) read the gradient and both moments, write
  // the moments, read and write the master, and write the 16-bit weights the forward pass uses;
  // the gradient-norm pass for clipping reads the gradients once more. Gradients count 4 B
  // whatever their buffer's precision, as before these keys existed.
  const double gradient_bytes = 4.0 + 4.0;
  const double moment_bytes = 2.0 * 2.0 * parallelism.optimizer_state_bytes_per_element();
  const double weight_bytes = bytes_per_parameter(parallelism.precision).weights_bytes;
  double master_bytes = 2.0 * parallelism.master_weight_bytes() + weight_bytes;
  // With remainders the weights are the master's high half, and without a master they are the
  // master: the kernel reads them too.
  const MasterWeights master = parallelism.master_weights_or_default();
  if (master == MasterWeights::kFp32Remainders || master == MasterWeights::kNone)
    master_bytes += weight_bytes;
  // Default (fp32 master and moments, 16-bit weights): 8 + 16 + (8 + 2) = 34 B per parameter.
  // fp32 training (no scenario trains in fp32) moves 8 + 16 + (4 + 4) = 32, not 34.
  return gradient_bytes + moment_bytes + master_bytes + loss_scaling_bytes(parallelism);
}

double activation_bytes_per_layer(const ModelSpec& model, const Parallelism& parallelism,
                                  AttentionMemory attention) {
  return layer_activation_bytes(model, parallelism, parallelism.recompute, attention);
}

double micro_batches_in_flight(const Parallelism& parallelism, int stage) {
  const int p = parallelism.pipeline;
  if (stage < 0 || stage >= p)
    throw std::invalid_argument("micro_batches_in_flight: bad stage");
  const int m = std::max(1, parallelism.num_micro_batches());
  // Without a pipeline, micro-batches run one after another (gradient accumulation).
  if (p == 1)
    return 1.0;
  const int v = std::max(1, parallelism.virtual_pipeline_stages);
  switch (parallelism.schedule) {
    case Schedule::kGpipe:  // all forwards before any backward (Huang et al. 2019)
      return d(m);
    case Schedule::kInterleaved:
      if (v > 1) {
        // Megatron schedules.py: warmup (p - i - 1)·2 + (v - 1)·N chunk forwards (N the
        // micro-batch group, p by default), plus the one the steady state runs before its first
        // backward, capped by m·v; each chunk holds 1/v of the stage. Stage 0 with N = p gives
        // p(1 + (p - 1)/(p·v)) (Korthikanti §4.2.3).
        const int chunks =
            std::min(m * v, (p - stage - 1) * 2 + (v - 1) * parallelism.micro_batch_group() + 1);
        return d(chunks) / d(v);
      }
      [[fallthrough]];
    case Schedule::kOneFOneB:
    case Schedule::kZeroBubble:          // ZB-H1 peaks like 1F1B (Qi et al. 2024 §3.1)
      return d(std::min(p - stage, m));  // Narayanan et al. 2021 §2.2
    case Schedule::kDualPipeV:
      // Every stage peaks at 2P + 1 chunk forwards whose backward has not run (the DualPipe
      // repository's README: activations "PP + 1" of its 2P stages; its order, dualpipev.py,
      // holds 2P - s - 1 chunk-0 and s + 1 chunk-1 forwards after its warm-up, and one more
      // forward before the first paired backward), each chunk half the stage.
      return d(std::min(2 * p + 1, 2 * m)) / 2.0;
  }
  return d(std::min(p - stage, m));
}

double weight_gradients_pending(const Parallelism& parallelism, int stage) {
  const int p = parallelism.pipeline;
  if (stage < 0 || stage >= p)
    throw std::invalid_argument("weight_gradients_pending: bad stage");
  if (parallelism.schedule != Schedule::kZeroBubble || p == 1)
    return 0.0;
  const int m = std::max(1, parallelism.num_micro_batches());
  return d(std::min(p, m) - std::min(p - stage, m));
}

namespace {

// What every stage's estimate shares, computed once.
struct MemoryInputs {
  const ModelSpec* model = nullptr;
  const Parallelism* parallelism = nullptr;
  std::vector<int> layers;  // per stage
  double t = 1.0;
  double zero_group = 1.0;  // Megatron's DP×CP
  BytesPerParameter bpp;
  bool fsdp_mixed_precision = false;
  double e = 2.0;  // activation element bytes
  double sb = 0.0;
  double vocab = 0.0;
  double replicated_div = 1.0;  // t with SP: tensors replicated over TP are split
  // Parameters per TP rank (parameter_count.hpp): layer weights split, norms and row-parallel
  // biases replicated; the padded word embedding vocab-parallel, learned positions replicated.
  double layer_params = 0.0;
  double word = 0.0;
  double positions = 0.0;
  double final_norm = 0.0;
  bool last_has_word = false;  // Megatron keeps a copy of tied word embeddings when p > 1
  double layer_act = 0.0;
  double live_layer = 0.0;
  double pending_w_layer = 0.0;
  double bucket_bytes = 0.0;
  double fp8_weight_cache_per_layer = 0.0;  // bytes per layer on one TP rank, before ZeRO-3
  // Mixture of experts: per MoE layer on one GPU, the parameters beside the routed experts, the
  // routed experts' (over EP x ETP), and the activations a MoE layer stores beyond a dense one.
  std::vector<int> moe_layers;  // per stage
  double moe_dense_params = 0.0;
  double expert_params = 0.0;
  double expert_zero_group = 1.0;  // expert data parallelism
  double moe_act_extra = 0.0;
  double mtp_params = 0.0;  // the MTP modules beside their experts (last stage)
  double mtp_expert_params = 0.0;
  double mtp_act = 0.0;  // the MTP modules' activations per micro-batch (with the head)
};

// The MoE layers of each pipeline stage, its chunks taken in Megatron's model order.
std::vector<int> moe_layers_per_stage(const ModelSpec& model, const Parallelism& par,
                                      const std::vector<int>& stage_layers) {
  std::vector<int> moe(stage_layers.size(), 0);
  int next = 0;
  for_each_chunk_in_model_order(par, [&](int s, int k) {
    const int n = layers_in_chunk(stage_layers[static_cast<size_t>(s)], s, k, par.pipeline,
                                  par.virtual_pipeline_stages, par.schedule);
    for (int layer = next; layer < next + n; ++layer)
      moe[static_cast<size_t>(s)] += model.is_moe_layer(layer) ? 1 : 0;
    next += n;
  });
  return moe;
}

// What a MoE layer stores for its backward beyond a dense layer's MLP, per micro-batch: the
// router's fp32 probabilities (tokens x experts), the permuted token copies (the grouped up
// GEMM's input, which Transformer Engine's GroupedLinear saves in fp8 under fp8 as Linear does
// its input), the experts' gate/up output and activation output (as a dense MLP's, on the
// routed rows, ETP-split), the un-permutation's input unless memory_efficient_permutation, and
// the shared expert as a dense MLP of its width; minus the dense MLP it replaces. Full
// recompute keeps only the layer input.
double moe_activation_extra_bytes(const ModelSpec& model, const Parallelism& par) {
  if (!model.moe || par.recompute == Recompute::kFull)
    return 0.0;
  const unsigned replayed = par.replayed_modules();
  const MoeSpec& moe = *model.moe;
  const double t = d(par.tensor);
  const double sb = d(model.seq_length) / d(par.context) * d(par.micro_batch_size);
  const double h = d(model.hidden_size);
  const double e = stored_element_bytes(par.precision);
  const double e_te =
      is_low_precision(par.precision) ? quantized_activation_bytes(par.precision) : e;
  const bool gated = is_gated(model.ffn_activation);
  const double e_input = activation_input_bytes(par, e);
  const auto mlp = [&](double rows, double f) {
    return rows * ((gated ? 2.0 : 1.0) * f * e_input + f * e_te);
  };
  // The dense MLP this layer does not have (counted in layer_activation_bytes), unless the mlp
  // module's recompute already dropped it there.
  const double dense_mlp =
      (replayed & kRecomputeMlp) != 0 ? 0.0 : mlp(sb, d(model.ffn_hidden_size) / t);
  // Replaying the whole MoE layer keeps only its input (the norm output, stored anyway).
  if ((replayed & kRecomputeMoe) != 0)
    return -dense_mlp;
  const double rows = routed_rows(model, par);
  const double expert_ffn = d(moe.ffn_hidden_size) / d(par.expert_tensor_or_default());
  // Replaying the experts' activation drops its output (the down GEMM's input).
  const double expert_activation_output =
      (replayed & kRecomputeMoeActivation) != 0 ? rows * expert_ffn * e_te : 0.0;
  // The experts' output, kept for the probabilities' gradient unless the activation applies them.
  const double expert_output = par.memory_efficient_permutation ? 0.0 : e;
  double bytes = sb / t * d(moe.num_experts) * 4.0 + rows * h * (e_te + expert_output) +
                 mlp(rows, expert_ffn) - expert_activation_output;
  if (moe.shared_expert_ffn_hidden_size > 0 && (replayed & kRecomputeSharedExperts) == 0)
    bytes += mlp(sb, d(moe.shared_expert_ffn_hidden_size) / t);
  return bytes - dense_mlp;
}

// Bytes Transformer Engine keeps per GEMM weight element beside the stored weight, through the
// iteration, when fp8 trains bf16 parameters: the fp8 weight (1 B) and its fp8 transpose (1 B,
// the dgrad GEMM's operand on Hopper); the other recipes keep the two quantized copies
// (rowwise and columnwise) with their block scales. TE v1.5-v1.7 allocate them in
// TransformerEngineBaseModule.set_fp8_weights (module/base.py, `weight{i}_fp8` and
// `weight{i}_t_fp8`); v1.8-v1.13 cache one Float8Tensor per weight in `_fp8_workspaces` through
// get_fp8_workspace(cache_name="weight", with_transpose=True) (module/linear.py forward) and
// v2.x through get_weight_workspace with rowwise and columnwise usage, whenever
// is_first_microbatch is passed, which Megatron-Core's TE wrappers do unless
// disable_parameter_transpose_cache. With fp8 parameters the weight is itself the Float8Tensor
// (1 B) and keeps its transpose cache (1 B: Float8Tensor.transpose_2d(fill_cache=True) in v1.x,
// update_usage(columnwise_usage=True) in v2.x), 2 B as the bf16 weight, and no cache. The
// output layer is Megatron's ColumnParallelLinear (bf16, no cache); embeddings, norms and
// biases are not cached.
double fp8_weight_cache_bytes_per_element(const Parallelism& parallelism) {
  if (!is_low_precision(parallelism.precision) || parallelism.fp8_params)
    return 0.0;
  return 2.0 * quantized_weight_bytes(parallelism.precision);
}

MemoryInputs memory_inputs(const ModelSpec& model, const Parallelism& parallelism,
                           AttentionMemory attention) {
  MemoryInputs in;
  in.model = &model;
  in.parallelism = &parallelism;
  in.layers = layers_per_stage(model, parallelism);
  const int p = parallelism.pipeline;
  if (p < 1 || static_cast<int>(in.layers.size()) != p) {
    throw std::invalid_argument("estimate_memory: one layer count per pipeline stage expected");
  }
  in.t = d(parallelism.tensor);
  in.zero_group = d(parallelism.data) * d(parallelism.context);
  in.bpp = bytes_per_parameter(parallelism.precision);
  in.bpp.optimizer_bytes = optimizer_bytes_per_parameter(parallelism);
  // An explicit gradient-reduction precision is also the main-gradient buffer's
  // (Megatron-LM --grad-reduce-in-bf16 keeps bf16 main grads).
  if (parallelism.grad_reduce_precision)
    in.bpp.gradients_bytes = parallelism.grad_reduce_bytes_per_element();
  // FSDP full shard with 16-bit compute keeps only the fp32 shard (the master copy, counted in
  // the optimizer state) and the fp32 sharded gradient: its 16-bit shard is freed after each
  // all-gather (torch/distributed/fsdp/_flat_param.py, _free_low_precision_sharded_param), so
  // 16-bit weights exist only gathered, as a buffer of their own (4 + 4 + 8 = 16 B/param over
  // D, not Megatron's 18). fp16 training is DeepSpeed's, which keeps its fp16 partition.
  // That needs the fp32 master: with remainders, a 16-bit master or none, the 16-bit shard is
  // kept.
  in.fsdp_mixed_precision =
      parallelism.zero_stage >= 3 &&
      (parallelism.precision == Precision::kBf16 || is_low_precision(parallelism.precision)) &&
      parallelism.master_weights_or_default() == MasterWeights::kFp32;
  in.e = stored_element_bytes(parallelism.precision);
  in.sb = d(model.seq_length) / d(parallelism.context) * d(parallelism.micro_batch_size);
  in.vocab = padded_vocab_size(model, parallelism.tensor);
  in.replicated_div = parallelism.sequence_parallel ? in.t : 1.0;
  in.layer_params = layer_parameters_per_rank(model, parallelism.tensor);
  in.word = word_embedding_parameters_per_rank(model, parallelism.tensor);
  in.positions = input_embedding_parameters_per_rank(model, parallelism.tensor) - in.word;
  in.final_norm =
      head_parameters_per_rank(model, parallelism.tensor) - (model.tied_embeddings ? 0.0 : in.word);
  // ... unless the head shares stage 0 with the embedding (DualPipeV).
  in.last_has_word = !model.tied_embeddings || (p > 1 && head_stage(parallelism.schedule, p) != 0);
  in.fp8_weight_cache_per_layer = fp8_weight_cache_bytes_per_element(parallelism) *
                                  layer_matmul_parameters_per_rank(model, parallelism.tensor);
  in.layer_act = activation_bytes_per_layer(model, parallelism, attention);
  // Recomputation makes one layer's dropped activations live again during its backward: all
  // of them under full recompute (its input is the stored checkpoint, not counted twice), the
  // attention scores under selective recompute (zero with FlashAttention).
  in.live_layer =
      layer_activation_bytes(model, parallelism, Recompute::kNone, attention) - in.layer_act;
  // A micro-batch whose W (ZB-H1) is deferred keeps every linear layer's input and output
  // gradient, whatever the recompute mode: as much as the layer stores without recompute and
  // with FlashAttention (exact for layers without dropout, a little more with its masks).
  in.pending_w_layer =
      layer_activation_bytes(model, parallelism, Recompute::kNone, AttentionMemory::kFlash);
  // Bucketing every chunk is a framework that copies gradients into its buckets (PyTorch DDP
  // without gradient_as_bucket_view, Apex); Megatron-Core's buckets are views into the gradient
  // buffer counted above, so only NCCL's staging is extra.
  in.bucket_bytes = parallelism.dp_buckets_every_chunk ? parallelism.dp_bucket_bytes_or_default()
                                                       : kBucketStagingBytes;
  const bool last_moe = model.is_moe_layer(model.num_layers - 1);
  if (model.moe) {
    in.moe_layers = moe_layers_per_stage(model, parallelism, in.layers);
    in.moe_dense_params = moe_layer_dense_parameters_per_rank(model, parallelism.tensor);
    in.expert_params = expert_parameters_per_rank(model, parallelism);
    in.expert_zero_group = d(std::max(parallelism.expert_data(), 1));
    in.moe_act_extra = moe_activation_extra_bytes(model, parallelism);
    in.mtp_params = d(model.mtp_layers) * ((last_moe ? in.moe_dense_params : in.layer_params) +
                                           mtp_extra_parameters(model) / in.t);
    in.mtp_expert_params = d(model.mtp_layers) * (last_moe ? in.expert_params : 0.0);
  }
  // Each MTP module (Megatron-Core multi_token_prediction.py) runs a transformer layer like the
  // last one on its two normed inputs, kept with their inputs and the projection's 2h-wide
  // input: 4h per token beside the layer's own activations.
  in.mtp_act =
      d(model.mtp_layers) * (in.layer_act + (last_moe ? in.moe_act_extra : 0.0) +
                             4.0 * in.e * in.sb * d(model.hidden_size) / in.replicated_div);
  return in;
}

// Weights, gradients and optimizer state of `params` parameters. ZeRO (Rajbhandari et al. 2020
// §5): stage 1 shards optimizer state, 2 also gradients, 3 also weights, over the
// data-parallel group (DP×CP, as Megatron's distributed optimizer).
void add_model_states(StageMemory& s, const MemoryInputs& in, double params) {
  const int zero = in.parallelism->zero_stage;
  s.parameters = params;
  s.weights_bytes = in.fsdp_mixed_precision
                        ? 0.0
                        : params * in.bpp.weights_bytes / (zero >= 3 ? in.zero_group : 1.0);
  s.gradients_bytes = params * in.bpp.gradients_bytes / (zero >= 2 ? in.zero_group : 1.0);
  s.optimizer_bytes = params * in.bpp.optimizer_bytes / (zero >= 1 ? in.zero_group : 1.0);
}

// What the embedding (first stage) and the head (last stage) hold beyond the layers.
double edge_activation_bytes(const MemoryInputs& in, int stage, double in_flight) {
  const ModelSpec& model = *in.model;
  const Parallelism& par = *in.parallelism;
  const int p = par.pipeline;
  const double h = d(model.hidden_size);
  double bytes = 0.0;
  if (stage == 0) {
    // Token ids (int64) and the embedding dropout mask per micro-batch in flight (Megatron
    // theoretical_memory_usage.py; Korthikanti §4.3). The embedding output is the first
    // layer's input, already counted in the layer.
    bytes += in_flight * in.sb * (8.0 + mask_bytes(model) * h / in.replicated_div);
  }
  if (stage == head_stage(par.schedule, p)) {
    // Per micro-batch held by the head: the final norm's input (the last layer's output, which
    // no layer stores) and output (the output layer's input), 4sbh as Megatron's
    // theoretical_memory_usage.py counts them, and what the loss saves for backward: the fp32
    // softmax of the vocab-parallel cross entropy (4sbV/t, Korthikanti §4.3), or the 16-bit
    // logits of a single-kernel one; plus the transient logits in compute precision for the
    // micro-batch being computed.
    const double head_mbs = (par.schedule == Schedule::kGpipe && p > 1) ? in_flight : 1.0;
    const double saved_per_logit =
        model.cross_entropy == CrossEntropyKernel::kSingleKernel ? in.e : 4.0;
    // Each MTP module computes a loss of its own through the shared output layer, which keeps
    // as much again.
    bytes += head_mbs * (1.0 + d(model.mtp_layers)) *
                 (2.0 * in.e * in.sb * h / in.replicated_div +
                  saved_per_logit * in.sb * in.vocab / in.t) +
             in.e * in.sb * in.vocab / in.t;
  }
  return bytes;
}

// Transformer Engine's userbuffers under tp_comm_overlap: one registered buffer per overlapped
// GEMM (initialize_ub, module/base.py: the QKV and MLP-up fprop, dgrad and wgrad, the
// projection's and MLP-down's fprop and dgrad; their wgrad reuses the dgrad's), each of one
// micro-batch's tokens on this CP rank x h (Megatron-Core _initialize_tp_communicators). The six
// all-gather buffers hold fp8 under fp8 (fp8_buf), the four reduce-scatter buffers 16 bits.
double userbuffer_bytes(const MemoryInputs& in) {
  if (!in.parallelism->tp_comm_overlap)
    return 0.0;
  const double gather_element = is_low_precision(in.parallelism->precision)
                                    ? quantized_activation_bytes(in.parallelism->precision)
                                    : 2.0;
  return in.sb * d(in.model->hidden_size) * (6.0 * gather_element + 4.0 * 2.0);
}

// Two DP gradient buckets in flight (one reducing, one filling); ZeRO-3 prefetches the next
// layer's gathered weights while the current one computes (two layers, FSDP/DeepSpeed); and
// the tensor-parallel overlap's userbuffers.
double communication_bytes(const MemoryInputs& in, int stage) {
  double bytes = userbuffer_bytes(in);
  if (in.zero_group <= 1.0)
    return bytes;
  bytes += 2.0 * in.bucket_bytes;
  if (in.parallelism->zero_stage >= 3) {
    const int p = in.parallelism->pipeline;
    // Each rank's own 1/D shard is its slice of the gathered buffer (NCCL in-place
    // all-gather), so a gathered layer adds (1 - 1/D) of its weights; under FSDP mixed
    // precision the 16-bit buffer is separate from the fp32 shard and counts whole.
    const double gathered_layers = std::min(2.0, d(in.layers[static_cast<size_t>(stage)]));
    // The word embedding (first stage) and the output layer (last stage) are gathered too,
    // and stay gathered through the step (FSDP keeps its root unit, which holds them,
    // unsharded between forward and backward).
    double gathered_edges = stage == 0 ? in.word : 0.0;
    if (stage == head_stage(in.parallelism->schedule, p) && in.last_has_word &&
        !(p == 1 && in.model->tied_embeddings))
      gathered_edges += in.word;
    bytes += (gathered_layers * in.layer_params + gathered_edges) * in.bpp.weights_bytes *
             (in.fsdp_mixed_precision ? 1.0 : 1.0 - 1.0 / in.zero_group);
    // TE gathers a layer's sharded fp8 weight cache with its weights (stage_memory counts the
    // 1/D shard).
    bytes += gathered_layers * in.fp8_weight_cache_per_layer * (1.0 - 1.0 / in.zero_group);
  }
  return bytes;
}

StageMemory stage_memory(const MemoryInputs& in, int stage) {
  const Parallelism& par = *in.parallelism;
  const int p = par.pipeline;
  const double stage_layers = d(in.layers[static_cast<size_t>(stage)]);
  StageMemory s;
  s.stage = stage;
  double params = stage_layers * in.layer_params;
  if (stage == 0)
    params += in.word + in.positions;
  const bool holds_head = stage == head_stage(par.schedule, p);
  if (holds_head)
    params += in.final_norm + (in.last_has_word ? in.word : 0.0);
  double moe_layers = 0.0;
  double experts = 0.0;
  if (!in.moe_layers.empty()) {
    moe_layers = d(in.moe_layers[static_cast<size_t>(stage)]);
    params += moe_layers * (in.moe_dense_params - in.layer_params);
    experts = moe_layers * in.expert_params;
    if (holds_head) {
      params += in.mtp_params;
      experts += in.mtp_expert_params;
    }
  }
  add_model_states(s, in, params);
  if (experts > 0.0) {
    // The routed experts' gradients and optimizer state shard over expert data parallelism.
    const int zero = par.zero_stage;
    s.parameters += experts;
    s.weights_bytes += experts * in.bpp.weights_bytes;
    s.gradients_bytes +=
        experts * in.bpp.gradients_bytes / (zero >= 2 ? in.expert_zero_group : 1.0);
    s.optimizer_bytes +=
        experts * in.bpp.optimizer_bytes / (zero >= 1 ? in.expert_zero_group : 1.0);
  }
  // TE's fp8 weight caches count with the weights; under ZeRO-3 TE keeps them sharded over the
  // FSDP group between uses (v1.8 linear.py, _fsdp_scatter_tensors of the workspace).
  if (in.fp8_weight_cache_per_layer > 0.0) {
    s.weights_bytes +=
        stage_layers * in.fp8_weight_cache_per_layer / (par.zero_stage >= 3 ? in.zero_group : 1.0);
  }

  const double in_flight = micro_batches_in_flight(par, stage);
  const double pending_w = weight_gradients_pending(par, stage);
  s.micro_batches_in_flight = static_cast<int>(std::ceil(in_flight + pending_w - 1e-9));
  // Stored activations of the micro-batches in flight plus the recomputed live layer
  // (Korthikanti §4.3; Chen et al. 2016), and what the deferred W passes keep.
  s.activations_bytes =
      stage_layers * (in_flight * in.layer_act + pending_w * in.pending_w_layer) + in.live_layer;
  if (moe_layers > 0.0)
    s.activations_bytes += moe_layers * (in_flight + pending_w) * in.moe_act_extra;
  if (holds_head)
    s.activations_bytes += (in_flight + pending_w) * in.mtp_act;
  s.embedding_logits_bytes = edge_activation_bytes(in, stage, in_flight);
  s.communication_bytes = communication_bytes(in, stage);
  s.reserve_bytes = kFrameworkReserveBytes +
                    kFragmentationFraction * (s.activations_bytes + s.embedding_logits_bytes);
  return s;
}

}  // namespace

MemoryEstimate estimate_memory(const ModelSpec& model, const Parallelism& parallelism,
                               const GpuSpec& gpu, AttentionMemory attention) {
  const MemoryInputs in = memory_inputs(model, parallelism, attention);
  MemoryEstimate estimate;
  estimate.capacity_bytes = gpu.hbm_capacity_bytes;
  estimate.stages.reserve(static_cast<size_t>(parallelism.pipeline));
  for (int i = 0; i < parallelism.pipeline; ++i) {
    estimate.stages.push_back(stage_memory(in, i));
    const StageMemory& s = estimate.stages.back();
    if (s.total_bytes() > estimate.peak_bytes) {
      estimate.peak_bytes = s.total_bytes();
      estimate.worst_stage = i;
    }
  }
  estimate.fits = estimate.peak_bytes <= estimate.capacity_bytes;
  return estimate;
}

}  // namespace capsim

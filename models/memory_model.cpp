#include "models/memory_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/as_double.hpp"
#include "models/parameter_count.hpp"

namespace capsim {
namespace {

// Bytes of one stored activation element: fp16/bf16 (and fp8 runs, whose saved tensors we take
// as bf16; Transformer Engine's fp8 copies would only lower this) use 2, fp32 uses 4.
double element_bytes(Precision precision) {
  return precision == Precision::kFp32 ? 4.0 : 2.0;
}

// Korthikanti et al. 2022 §4.1 counts 1-byte dropout masks; models without dropout (Llama,
// Touvron et al. 2023; MPT) keep none.
double mask_bytes(const ModelSpec& model) {
  return has_dropout(model) ? 1.0 : 0.0;
}

// Activation bytes of one layer and one micro-batch on one GPU, term by term from Korthikanti
// et al. 2022 §4.1, generalised to GQA (K, V are kv_heads·head_dim wide) and to the FFN width
// and activation (GeLU stores its input and output, 2·f each; SwiGLU stores the 2f-wide
// gate/up output and the f-wide product). With f = 4h, MHA and e = 2 this is Table 2 exactly.
double layer_activation_bytes(const ModelSpec& model, const Parallelism& par, Recompute recompute,
                              AttentionMemory attention) {
  const double seq_local = d(model.seq_length) / d(par.context);
  const double sb = seq_local * d(par.micro_batch_size);
  const double h = d(model.hidden_size);
  const double f = d(model.ffn_hidden_size);
  const double kv = d(model.num_kv_heads) * d(model.head_dim());
  const double t = d(par.tensor);
  const double e = element_bytes(par.precision);
  const double mask = mask_bytes(model);
  // Sequence parallelism shards the parts that TP alone replicates (Korthikanti §4.2.2).
  const double replicated_div = par.sequence_parallel ? t : 1.0;

  // Full recompute keeps only each layer's input (Korthikanti §4.3: 2sbh, /t with SP).
  if (recompute == Recompute::kFull)
    return e * sb * h / replicated_div;

  // Replicated under TP: two norm inputs, two norm outputs (the QKV and FC1 inputs), the
  // attention-output and MLP dropout masks: 10sbh for e = 2.
  const double replicated = sb * (4.0 * e * h + 2.0 * mask * h);
  // Split by TP: Q, K, V, the attention context (out-projection input) and the MLP: 24sbh.
  const double mlp = model.ffn_activation == FfnActivation::kSwiglu ? 3.0 * e * f : 2.0 * e * f;
  const double split = sb * (e * (2.0 * h + 2.0 * kv) + mlp);
  double bytes = replicated / replicated_div + split / t;
  // Softmax output, its dropout mask and dropout output: 5as²b (Korthikanti §4.1; without
  // dropout only the softmax output, 2as²b). Selective
  // recompute drops it (§4.2.3); FlashAttention never stores it (Dao et al. 2022 §3.1), so the
  // default drops it always. With context parallelism the local queries see all s keys.
  if (attention == AttentionMemory::kMaterialized && recompute == Recompute::kNone) {
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
      return {2.0, 4.0, 12.0};  // Megatron: fp32 main grads for bf16 (arguments.py), 18 B/param
    case Precision::kFp32:
      return {4.0, 4.0, 8.0};  // weights are the master copy; Adam m and v
  }
  return {2.0, 4.0, 12.0};
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
        // Megatron schedules.py: warmup (p - i - 1)·2 + (v - 1)·p chunk forwards, plus the one
        // the steady state runs before its first backward, capped by m·v; each chunk holds 1/v
        // of the stage. Stage 0 gives p(1 + (p - 1)/(p·v)) (Korthikanti §4.2.3).
        const int chunks = std::min(m * v, (p - stage - 1) * 2 + (v - 1) * p + 1);
        return d(chunks) / d(v);
      }
      [[fallthrough]];
    case Schedule::kOneFOneB:
    case Schedule::kZeroBubble:          // ZB-H1 peaks like 1F1B (Qi et al. 2024 §3.1)
      return d(std::min(p - stage, m));  // Narayanan et al. 2021 §2.2
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

MemoryEstimate estimate_memory(const ModelSpec& model, const Parallelism& parallelism,
                               const GpuSpec& gpu, AttentionMemory attention) {
  const std::vector<int> layers = layers_per_stage(model, parallelism);
  const int p = parallelism.pipeline;
  if (p < 1 || static_cast<int>(layers.size()) != p) {
    throw std::invalid_argument("estimate_memory: one layer count per pipeline stage expected");
  }
  const double t = d(parallelism.tensor);
  const double zero_group = d(parallelism.data) * d(parallelism.context);  // Megatron DP×CP
  const int zero = parallelism.zero_stage;
  BytesPerParameter bpp = bytes_per_parameter(parallelism.precision);
  // An explicit gradient-reduction precision is also the main-gradient buffer's
  // (Megatron-LM --grad-reduce-in-bf16 keeps bf16 main grads).
  if (parallelism.grad_reduce_precision)
    bpp.gradients_bytes = parallelism.grad_reduce_bytes_per_element();
  // FSDP full shard with 16-bit compute keeps only the fp32 shard (the master copy, counted in
  // the optimizer state) and the fp32 sharded gradient: its 16-bit shard is freed after each
  // all-gather (torch/distributed/fsdp/_flat_param.py, _free_low_precision_sharded_param), so
  // 16-bit weights exist only gathered, as a buffer of their own (4 + 4 + 8 = 16 B/param over
  // D, not Megatron's 18). fp16 training is DeepSpeed's, which keeps its fp16 partition.
  const bool fsdp_mixed_precision = zero >= 3 && (parallelism.precision == Precision::kBf16 ||
                                                  parallelism.precision == Precision::kFp8);
  const double e = element_bytes(parallelism.precision);
  const double sb = d(model.seq_length) / d(parallelism.context) * d(parallelism.micro_batch_size);
  const double h = d(model.hidden_size);
  const double vocab = padded_vocab_size(model, parallelism.tensor);
  const double replicated_div = parallelism.sequence_parallel ? t : 1.0;

  // Parameters per TP rank (parameter_count.hpp): layer weights split, norms and row-parallel
  // biases replicated; the padded word embedding vocab-parallel, learned positions replicated.
  const double layer_params = layer_parameters_per_rank(model, parallelism.tensor);
  const double word = word_embedding_parameters_per_rank(model, parallelism.tensor);
  const double positions = input_embedding_parameters_per_rank(model, parallelism.tensor) - word;
  const double final_norm =
      head_parameters_per_rank(model, parallelism.tensor) - (model.tied_embeddings ? 0.0 : word);
  // Megatron keeps a copy of tied word embeddings on the last stage when p > 1.
  const bool last_has_word = !model.tied_embeddings || p > 1;

  const double layer_act = activation_bytes_per_layer(model, parallelism, attention);
  // Recomputation makes one layer's dropped activations live again during its backward: all
  // of them under full recompute (its input is the stored checkpoint, not counted twice), the
  // attention scores under selective recompute (zero with FlashAttention).
  const double live_layer =
      layer_activation_bytes(model, parallelism, Recompute::kNone, attention) - layer_act;
  // A micro-batch whose W (ZB-H1) is deferred keeps every linear layer's input and output
  // gradient, whatever the recompute mode: as much as the layer stores without recompute and
  // with FlashAttention (exact for layers without dropout, a little more with its masks).
  const double pending_w_layer =
      layer_activation_bytes(model, parallelism, Recompute::kNone, AttentionMemory::kFlash);
  // Bucketing every chunk is a framework that copies gradients into its buckets (PyTorch DDP
  // without gradient_as_bucket_view, Apex); Megatron-Core's buckets are views into the gradient
  // buffer counted above, so only NCCL's staging is extra.
  const double bucket_bytes = parallelism.dp_buckets_every_chunk
                                  ? parallelism.dp_bucket_bytes_or_default()
                                  : kBucketStagingBytes;

  MemoryEstimate estimate;
  estimate.capacity_bytes = gpu.hbm_capacity_bytes;
  for (int i = 0; i < p; ++i) {
    StageMemory s;
    s.stage = i;
    double params = d(layers[static_cast<size_t>(i)]) * layer_params;
    if (i == 0)
      params += word + positions;
    if (i == p - 1)
      params += final_norm + (last_has_word ? word : 0.0);
    s.parameters = params;
    // ZeRO (Rajbhandari et al. 2020 §5): stage 1 shards optimizer state, 2 also gradients,
    // 3 also weights, over the data-parallel group (DP×CP, as Megatron's distributed optimizer).
    s.weights_bytes =
        fsdp_mixed_precision ? 0.0 : params * bpp.weights_bytes / (zero >= 3 ? zero_group : 1.0);
    s.gradients_bytes = params * bpp.gradients_bytes / (zero >= 2 ? zero_group : 1.0);
    s.optimizer_bytes = params * bpp.optimizer_bytes / (zero >= 1 ? zero_group : 1.0);

    const double in_flight = micro_batches_in_flight(parallelism, i);
    const double pending_w = weight_gradients_pending(parallelism, i);
    s.micro_batches_in_flight = static_cast<int>(std::ceil(in_flight + pending_w - 1e-9));
    // Stored activations of the micro-batches in flight plus the recomputed live layer
    // (Korthikanti §4.3; Chen et al. 2016), and what the deferred W passes keep.
    const double stage_layers = d(layers[static_cast<size_t>(i)]);
    s.activations_bytes =
        stage_layers * (in_flight * layer_act + pending_w * pending_w_layer) + live_layer;

    if (i == 0) {
      // Token ids (int64) and the embedding dropout mask per micro-batch in flight (Megatron
      // theoretical_memory_usage.py; Korthikanti §4.3). The embedding output is the first
      // layer's input, already counted in the layer.
      s.embedding_logits_bytes += in_flight * sb * (8.0 + mask_bytes(model) * h / replicated_div);
    }
    if (i == p - 1) {
      // Per micro-batch held by the head: the final norm's input (the last layer's output, which
      // no layer stores) and output (the output layer's input), 4sbh as Megatron's
      // theoretical_memory_usage.py counts them, and what the loss saves for backward: the fp32
      // softmax of the vocab-parallel cross entropy (4sbV/t, Korthikanti §4.3), or the 16-bit
      // logits of a single-kernel one; plus the transient logits in compute precision for the
      // micro-batch being computed.
      const double head_mbs = (parallelism.schedule == Schedule::kGpipe && p > 1) ? in_flight : 1.0;
      const double saved_per_logit =
          model.cross_entropy == CrossEntropyKernel::kSingleKernel ? e : 4.0;
      s.embedding_logits_bytes +=
          head_mbs * (2.0 * e * sb * h / replicated_div + saved_per_logit * sb * vocab / t) +
          e * sb * vocab / t;
    }

    // Two DP gradient buckets in flight (one reducing, one filling); ZeRO-3 prefetches the next
    // layer's gathered weights while the current one computes (two layers, FSDP/DeepSpeed).
    if (zero_group > 1.0) {
      s.communication_bytes += 2.0 * bucket_bytes;
      if (zero >= 3) {
        // Each rank's own 1/D shard is its slice of the gathered buffer (NCCL in-place
        // all-gather), so a gathered layer adds (1 - 1/D) of its weights; under FSDP mixed
        // precision the 16-bit buffer is separate from the fp32 shard and counts whole.
        const double gathered_layers = std::min(2.0, d(layers[static_cast<size_t>(i)]));
        // The word embedding (first stage) and the output layer (last stage) are gathered too,
        // and stay gathered through the step (FSDP keeps its root unit, which holds them,
        // unsharded between forward and backward).
        double gathered_edges = i == 0 ? word : 0.0;
        if (i == p - 1 && last_has_word && !(p == 1 && model.tied_embeddings))
          gathered_edges += word;
        s.communication_bytes += (gathered_layers * layer_params + gathered_edges) *
                                 bpp.weights_bytes *
                                 (fsdp_mixed_precision ? 1.0 : 1.0 - 1.0 / zero_group);
      }
    }
    s.reserve_bytes = kFrameworkReserveBytes +
                      kFragmentationFraction * (s.activations_bytes + s.embedding_logits_bytes);

    if (s.total_bytes() > estimate.peak_bytes) {
      estimate.peak_bytes = s.total_bytes();
      estimate.worst_stage = i;
    }
    estimate.stages.push_back(s);
  }
  estimate.fits = estimate.peak_bytes <= estimate.capacity_bytes;
  return estimate;
}

}  // namespace capsim

#include "planner/megatron_args.hpp"

#include <cmath>
#include <vector>

#include "models/parameter_count.hpp"

#include "io/megatron_import.hpp"
#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

void add(std::string& out, const std::string& arg) {
  if (!out.empty())
    out += ' ';
  out += arg;
}

void add(std::string& out, const char* flag, long long value) {
  add(out, io::printf_string("%s %lld", flag, value));
}

// The layers of each virtual stage in Megatron's order (virtual stage j of pipeline rank i is
// chunk j·p + i), each rank's layers dealt evenly over its chunks; empty when a rank's layers
// do not divide over them.
std::vector<int> chunk_layers(const Parallelism& p) {
  const int v = p.virtual_pipeline_stages;
  std::vector<int> chunks(static_cast<size_t>(p.pipeline * v), 0);
  for (int rank = 0; rank < p.pipeline; ++rank) {
    const int layers = p.stage_layers[static_cast<size_t>(rank)];
    if (layers % v != 0)
      return {};
    for (int j = 0; j < v; ++j)
      chunks[static_cast<size_t>(j) * static_cast<size_t>(p.pipeline) + static_cast<size_t>(rank)] =
          layers / v;
  }
  return chunks;
}

// --pipeline-model-parallel-layout for an uneven split: the embedding before the first chunk's
// layers, the loss after the last's.
std::string layout_argument(const Parallelism& p) {
  const std::vector<int> chunks = chunk_layers(p);
  if (chunks.empty())
    return {};
  std::string layout;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0)
      layout += '|';
    if (i == 0)
      layout += 'E';
    if (chunks[i] > 0)
      layout += io::printf_string("t*%d", chunks[i]);
    if (i + 1 == chunks.size())
      layout += 'L';
  }
  return "--pipeline-model-parallel-layout \"" + layout + "\"";
}

// --pipeline-model-parallel-layout for any split: each chunk's layers as capsim deals them
// (layers_in_chunk), the multi-token-prediction layers before the loss.
std::string complete_layout_argument(const Scenario& s) {
  const Parallelism& p = s.parallelism;
  const int chunks = p.pipeline * p.virtual_pipeline_stages;
  std::string layout;
  for (int c = 0; c < chunks; ++c) {
    const int rank = c % p.pipeline;
    const int layers = layers_in_chunk(p.stage_layers[static_cast<size_t>(rank)], rank,
                                       c / p.pipeline, p.pipeline, p.virtual_pipeline_stages);
    if (c > 0)
      layout += '|';
    if (c == 0)
      layout += 'E';
    if (layers > 0)
      layout += io::printf_string("t*%d", layers);
    if (c + 1 == chunks) {
      for (int k = 0; k < s.model.mtp_layers; ++k)
        layout += 'm';
      layout += 'L';
    }
  }
  return "--pipeline-model-parallel-layout \"" + layout + "\"";
}

// The model keys beyond the layout writer's: vocabulary, embeddings, head size, MLA, MoE, MTP,
// windows, kernels and dropout.
void add_model_details(std::string& out, const ModelSpec& m) {
  add(out, "--vocab-size", m.vocab_size);
  if (!m.tied_embeddings)
    add(out, "--untie-embeddings-and-output-weights");
  if (m.explicit_head_dim > 0)
    add(out, "--kv-channels", m.explicit_head_dim);
  if (m.mla) {
    add(out, "--multi-latent-attention");
    if (m.mla->q_lora_rank > 0)
      add(out, "--q-lora-rank", m.mla->q_lora_rank);
    add(out, "--kv-lora-rank", m.mla->kv_lora_rank);
    add(out, "--qk-head-dim", m.mla->qk_head_dim);
    add(out, "--qk-pos-emb-head-dim", m.mla->qk_pos_emb_head_dim);
    add(out, "--v-head-dim", m.mla->v_head_dim);
  }
  if (m.moe) {
    add(out, "--num-experts", m.moe->num_experts);
    add(out, "--moe-router-topk", m.moe->top_k);
    add(out, "--moe-ffn-hidden-size", m.moe->ffn_hidden_size);
    if (m.moe->shared_expert_ffn_hidden_size > 0)
      add(out, "--moe-shared-expert-intermediate-size", m.moe->shared_expert_ffn_hidden_size);
    if (m.moe->first_dense_layers > 0 || m.moe->layer_interval > 1) {
      add(out, "--moe-layer-freq \"" +
                   io::moe_layer_freq_text(m.num_layers, m.moe->first_dense_layers,
                                           m.moe->layer_interval) +
                   "\"");
    }
    if (m.moe->router_score == RouterScore::kSigmoid)
      add(out, "--moe-router-score-function sigmoid");
    if (m.moe->router_groups > 1) {
      add(out, "--moe-router-num-groups", m.moe->router_groups);
      add(out, "--moe-router-group-topk", m.moe->router_group_top_k);
    }
    if (m.moe->rank_capacity_factor > 0.0) {
      add(out, io::printf_string("--moe-expert-rank-capacity-factor %.17g",
                                 m.moe->rank_capacity_factor));
    }
    // Megatron-LM's linears carry biases unless told not to.
    if (!m.moe->linear_bias)
      add(out, "--disable-bias-linear");
    if (m.moe->fused_grouped_mlp)
      add(out, "--use-transformer-engine-op-fuser");
  }
  if (!m.rope_fusion)
    add(out, "--no-rope-fusion");
  if (m.mtp_layers > 0)
    add(out, "--mtp-num-layers", m.mtp_layers);
  if (m.window_attention) {
    add(out, io::printf_string("--window-size %d,0", m.window_attention->size));
    if (m.window_attention->every == 2)
      add(out, "--window-attn-skip-freq 2");
  }
  if (m.attention == AttentionKernel::kMaterialized)
    add(out, "--attention-backend unfused");
  if (m.attention == AttentionKernel::kCudnn)
    add(out, "--attention-backend fused");
  if (m.cross_entropy == CrossEntropyKernel::kFused)
    add(out, "--cross-entropy-loss-fusion");
  // Megatron-LM's dropout defaults to 0.1 on attention and hidden states.
  if (!has_dropout(m))
    add(out, "--attention-dropout 0 --hidden-dropout 0");
}

// The training stack's keys: DDP overlap, reduction and optimizer precisions, dispatch.
void add_stack_details(std::string& out, const Scenario& s) {
  const Parallelism& p = s.parallelism;
  if (p.zero_stage != 3 && p.overlap_grad_reduce)
    add(out, "--overlap-grad-reduce");
  if ((p.zero_stage == 1 || p.zero_stage == 2) && p.overlap_grad_reduce && p.overlap_param_gather)
    add(out, "--overlap-param-gather");
  if (p.tp_comm_overlap)
    add(out, "--tp-comm-overlap");
  if (p.grad_reduce_precision == Precision::kBf16)
    add(out, "--grad-reduce-in-bf16");
  if (p.optimizer_state_precision && *p.optimizer_state_precision != Precision::kFp32) {
    const char* dtype = to_string(*p.optimizer_state_precision);
    add(out, io::printf_string(
                 "--use-precision-aware-optimizer --exp-avg-dtype %s --exp-avg-sq-dtype %s", dtype,
                 dtype));
  }
  if (p.master_weights == MasterWeights::kFp16)
    add(out, "--main-params-dtype fp16");
  if (p.dp_bucket_bytes > 0.0) {
    add(out, io::printf_string("--ddp-bucket-size %.0f",
                               p.dp_bucket_bytes / p.grad_reduce_bytes_per_element()));
  }
  if (p.token_dispatcher == TokenDispatcher::kAllGather)
    add(out, "--moe-token-dispatcher-type allgather");
  else if (p.token_dispatcher == TokenDispatcher::kDeepEp)
    add(out, "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep");
  if (p.moe_a2a_overlap)
    add(out, "--overlap-moe-expert-parallel-comm");
}

// How the layers split over the stages: an uneven split as --pipeline-model-parallel-layout
// (the layout set only when each rank's layers divide over its chunks), and in the complete
// set Megatron's split that counts the embedding and loss as layers.
void add_pipeline_split(std::string& out, const Scenario& s, bool complete) {
  const Parallelism& p = s.parallelism;
  if (complete && !p.stage_layers.empty()) {
    add(out, complete_layout_argument(s));
  } else if (!p.stage_layers.empty()) {
    const std::string layout = layout_argument(p);
    if (!layout.empty())
      add(out, layout);
  } else if (complete && is_megatron_embedding_loss_split(s.model.num_layers,
                                                          p.pipeline * p.virtual_pipeline_stages)) {
    add(out, "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split");
  }
}

void add_recompute(std::string& out, const Parallelism& p) {
  if (p.recompute == Recompute::kSelective) {
    add(out, "--recompute-granularity selective");
    if (p.recompute_modules != kDefaultRecomputeModules) {
      std::string modules = "--recompute-modules";
      for (const RecomputeModule module : kAllRecomputeModules) {
        if ((p.recompute_modules & module) != 0)
          modules += std::string(" ") + to_string(module);
      }
      add(out, modules);
    }
  } else if (p.recompute == Recompute::kFull) {
    add(out, "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  }
}

// The precision flags; the complete set also gives fp8 parameters of every fp8 recipe.
void add_precision(std::string& out, const Parallelism& p, bool complete) {
  switch (p.precision) {
    case Precision::kBf16:
      add(out, "--bf16");
      break;
    case Precision::kFp16:
      add(out, "--fp16");
      break;
    case Precision::kFp8:
      add(out, "--bf16 --fp8-format hybrid");
      if (p.fp8_params)
        add(out, "--fp8-param-gather");
      break;
    // Megatron-Core's --fp8-recipe names (arguments.py): current scaling is "tensorwise".
    case Precision::kFp8Cs:
      add(out, "--bf16 --fp8-format hybrid --fp8-recipe tensorwise");
      break;
    case Precision::kFp8Blockwise:
      add(out, "--bf16 --fp8-format e4m3 --fp8-recipe blockwise");
      break;
    case Precision::kMxfp8:
      add(out, "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8");
      break;
    case Precision::kNvfp4:
      add(out, "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4");
      break;
    case Precision::kFp32:  // Megatron's default without a precision flag
      break;
  }
  if (complete && p.fp8_params && p.precision != Precision::kFp8)
    add(out, "--fp8-param-gather");
}

}  // namespace

std::string megatron_arguments(const Scenario& given, MegatronArgumentSet set) {
  // DeepSpeed's split (partition_method) reaches Megatron-LM as the stage layout it gives.
  Scenario scenario = given;
  Parallelism& split = scenario.parallelism;
  if (split.partition_method && split.stage_layers.empty()) {
    split.stage_layers = layers_per_stage(scenario.model, split);
    split.partition_method.reset();
  }
  const bool complete = set == MegatronArgumentSet::kComplete;
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  std::string out;
  add(out, "--num-layers", m.num_layers);
  add(out, "--hidden-size", m.hidden_size);
  add(out, "--num-attention-heads", m.num_attention_heads);
  if (m.num_kv_heads > 0 && m.num_kv_heads != m.num_attention_heads) {
    add(out, "--group-query-attention");
    add(out, "--num-query-groups", m.num_kv_heads);
  }
  if (m.ffn_hidden_size > 0)
    add(out, "--ffn-hidden-size", m.ffn_hidden_size);
  if (m.ffn_activation == FfnActivation::kSwiglu)
    add(out, "--swiglu");
  if (m.ffn_activation == FfnActivation::kSquaredRelu)
    add(out, "--squared-relu");
  add(out, "--seq-length", m.seq_length);
  if (complete)
    add_model_details(out, m);
  add(out, "--tensor-model-parallel-size", p.tensor);
  add(out, "--pipeline-model-parallel-size", p.pipeline);
  if (p.context > 1)
    add(out, "--context-parallel-size", p.context);
  if (p.expert > 1)
    add(out, "--expert-model-parallel-size", p.expert);
  if (m.moe && p.expert_tensor_or_default() != p.tensor)
    add(out, "--expert-tensor-parallel-size", p.expert_tensor_or_default());
  else if (complete && m.moe && p.expert_tensor)
    add(out, "--expert-tensor-parallel-size", *p.expert_tensor);
  if (p.virtual_pipeline_stages > 1)
    add(out, "--num-virtual-stages-per-pipeline-rank", p.virtual_pipeline_stages);
  if (p.microbatch_group_size > 0)
    add(out, "--microbatch-group-size-per-virtual-pipeline-stage", p.microbatch_group_size);
  add_pipeline_split(out, scenario, complete);
  if (p.sequence_parallel)
    add(out, "--sequence-parallel");
  add(out, "--micro-batch-size", p.micro_batch_size);
  add(out, "--global-batch-size", p.global_batch_size);
  add_recompute(out, p);
  // Megatron's distributed optimizer shards the optimizer states and reduce-scatters the
  // gradients (ZeRO-1 and ZeRO-2's communication); ZeRO-3 is its FSDP.
  if (p.zero_stage == 1 || p.zero_stage == 2)
    add(out, "--use-distributed-optimizer");
  else if (p.zero_stage == 3)
    add(out, "--use-torch-fsdp2");
  add_precision(out, p, complete);
  // What the activations take, as the recompute above: the layout may fit only with it.
  if (p.activation_input_fp8)
    add(out, "--activation-func-fp8-input-store");
  if (p.fp8_attention)
    add(out, "--fp8-dot-product-attention");
  if (complete)
    add_stack_details(out, scenario);
  return out;
}

std::vector<std::string> megatron_unexpressed(const Scenario& s) {
  const ModelSpec& m = s.model;
  const Parallelism& p = s.parallelism;
  std::vector<std::string> out;
  const Schedule megatron_schedule =
      p.virtual_pipeline_stages > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
  if (p.schedule == Schedule::kDualPipeV) {
    out.emplace_back(
        "parallelism.schedule \"dualpipev\" (no Megatron-LM schedule: written as "
        "interleaved-1f1b; torchtitan runs it with --parallelism.pipeline_parallel_schedule "
        "DualPipeV)");
  } else if (p.schedule != megatron_schedule) {
    out.push_back(std::string("parallelism.schedule \"") + to_string(p.schedule) + "\"");
  }
  if (p.zero_stage == 2)
    out.emplace_back("parallelism.zero_stage 2 (written as the distributed optimizer, ZeRO-1)");
  if (p.partition_method) {
    out.push_back(std::string("parallelism.partition_method \"") + to_string(*p.partition_method) +
                  "\" (DeepSpeed's split, written as the stage layout it gives)");
  }
  // Megatron-LM's activation flags are --swiglu, --squared-relu and --quick-geglu (a gated
  // x * sigmoid(1.702 x), not GeGLU); none gates a GeLU (megatron/training/arguments.py).
  if (m.ffn_activation == FfnActivation::kGeglu)
    out.emplace_back("model.ffn_activation \"geglu\" (no Megatron-LM flag: written as GeLU)");
  if (m.moe && !p.memory_efficient_permutation) {
    out.emplace_back(
        "parallelism.memory_efficient_permutation false (Megatron-Core 0.13 and later always "
        "apply the probabilities in the experts' activation)");
  }
  if (m.moe && m.moe->fused_grouped_mlp) {
    out.emplace_back(
        "model.moe.fused_grouped_mlp also needs NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 in the "
        "environment (Transformer Engine's switch for the CuTe DSL kernels)");
  }
  if (m.moe && m.moe->activation_clamp > 0.0) {
    out.push_back(io::printf_string(
        "model.moe.activation_clamp %g (no Megatron-LM flag: Megatron-Core's "
        "activation_func_clamp_value, which Megatron-Bridge's GPT-OSS recipe sets)",
        m.moe->activation_clamp));
  }
  if (m.moe && m.moe->load_imbalance != 1.0)
    out.push_back(io::printf_string("model.moe.load_imbalance %g", m.moe->load_imbalance));
  if (m.cross_entropy == CrossEntropyKernel::kSingleKernel)
    out.emplace_back("model.cross_entropy \"single-kernel\"");
  if (m.dropout.has_value()) {
    ModelSpec family = m;
    family.dropout.reset();
    if (*m.dropout == has_dropout(family))
      out.emplace_back("model.dropout given as the family's default");
  }
  if (m.window_attention && m.window_attention->every > 2)
    out.push_back(io::printf_string("model.window_attention.every %d", m.window_attention->every));
  if (!p.tp_backward_overlap)
    out.emplace_back("parallelism.tp_backward_overlap false");
  if (p.dp_buckets_every_chunk)
    out.emplace_back("parallelism.dp_bucket_layout \"every-chunk\"");
  if (p.grad_reduce_precision && *p.grad_reduce_precision != Precision::kBf16) {
    out.push_back(std::string("parallelism.grad_reduce_precision \"") +
                  to_string(*p.grad_reduce_precision) + "\"");
  }
  if (p.optimizer_state_precision == Precision::kFp32)
    out.emplace_back("parallelism.optimizer_state_precision \"fp32\" (the default, given)");
  if (p.master_weights && *p.master_weights != MasterWeights::kFp16) {
    out.push_back(std::string("parallelism.master_weights \"") + to_string(*p.master_weights) +
                  "\"");
  }
  if (p.dp_bucket_bytes > 0.0) {
    const double params = p.dp_bucket_bytes / p.grad_reduce_bytes_per_element();
    if (params != std::floor(params))
      out.emplace_back("parallelism.dp_bucket_size (not a whole number of parameters)");
  }
  return out;
}

}  // namespace capsim::planner

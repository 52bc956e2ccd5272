#include "models/training_stack.hpp"

#include <algorithm>

namespace capsim {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// DeepSpeed's default reduce_bucket_size, 5e8 gradient elements, at 16 bits.
constexpr double kDeepSpeedBucketBytes = 5e8 * 2.0;

// Transformer Engine's attention, which Megatron-Core runs by default (--attention-backend
// auto), selects cuDNN's FusedAttention on Hopper whenever FlashAttention is also available
// ("Select FusedAttention on sm90", transformer_engine/pytorch/attention.py, TE 1.2 of December
// 2023 on); kCudnn costs it so there and as the profile's figures elsewhere (op_cost.cpp).
constexpr AttentionKernel kTransformerEngineAttention = AttentionKernel::kCudnn;

// Megatron-LM's own argument defaults (megatron/training/arguments.py): no DDP overlap
// (--overlap-grad-reduce, --overlap-param-gather off), fp32 gradient reduction for bf16
// (accumulate_allreduce_grads_in_fp32), no comm-GEMM overlap, --cross-entropy-loss-fusion off.
StackSettings megatron_core_2024() {
  StackSettings s;
  s.attention = kTransformerEngineAttention;
  s.overlap_grad_reduce = false;
  s.overlap_param_gather = false;
  s.cross_entropy = CrossEntropyKernel::kUnfused;
  return s;
}

// Megatron-LM as the SC'21 runs used it: the column-parallel layers' input-gradient all-reduce
// after the weight-gradient GEMM (async before September 2021's
// LinearWithGradAccumulationAndAsyncCommunication) and attention as batched GEMMs with a fused
// softmax (FlashAttention came in 2022-23).
StackSettings megatron_core_2021() {
  StackSettings s = megatron_core_2024();
  s.tp_backward_overlap = false;
  s.attention = AttentionKernel::kMaterialized;
  return s;
}

// NeMo 2 recipes (nemo/collections/llm/recipes): DistributedDataParallelConfig with
// grad_reduce_in_fp32, overlap_grad_reduce and overlap_param_gather on; MegatronCommOverlapCallback
// with tp_comm_overlap for sequence-parallel runs; cross_entropy_loss_fusion on. Megatron-Bridge's
// recipes carry the same settings over.
StackSettings nemo_2024() {
  StackSettings s;
  s.attention = kTransformerEngineAttention;
  s.grad_reduce_precision = Precision::kFp32;
  s.tp_comm_overlap = true;
  return s;
}

// Megatron-Bridge's performance configurations: NeMo 2's settings, but the gradients reduced in
// bf16 (scripts/performance/configs/*_llm_pretrain.py of DeepSeek-V3, GPT-OSS, Llama 3 and Qwen3,
// v0.2.0 to v0.5.1, and perf_recipes of v0.6.0: grad_reduce_in_fp32 = False); its precision
// presets keep fp8 parameters for delayed and current scaling and MXFP8
// (training/mixed_precision.py: fp8_param_gather in bf16_with_fp8_delayed_scaling_mixed,
// bf16_with_fp8_current_scaling_mixed and bf16_with_mxfp8_mixed, v0.1.0rc3 to v0.6.0; not in the
// subchannel (blockwise) and NVFP4 ones).
StackSettings megatron_bridge_2025() {
  StackSettings s = nemo_2024();
  s.grad_reduce_precision = Precision::kBf16;
  s.fp8_parameters_with_fp8_recipes = true;
  return s;
}

// NeMo 1 as NeMo-Framework-Launcher's GPT training configs run it (distributed_fused_adam):
// Apex DistributedFusedAdam buckets every chunk, syncs gradients in bf16 (grad_sync_dtype) and
// keeps fp32 remainders beside bf16 weights (store_param_remainders); ub_tp_comm_overlap in the
// tuned configs; no cross-entropy fusion before mid-2024.
StackSettings nemo_2023() {
  StackSettings s;
  s.attention = kTransformerEngineAttention;
  s.grad_reduce_precision = Precision::kBf16;
  s.dp_buckets_every_chunk = true;
  s.master_weights = MasterWeights::kFp32Remainders;
  s.tp_comm_overlap = true;
  s.cross_entropy = CrossEntropyKernel::kUnfused;
  return s;
}

// Megatron-DeepSpeed: DeepSpeed's pipeline engine reduces the gradients once the schedule's
// last backward is done (runtime/pipe/engine.py, ReduceGrads after the micro-batches) and its
// ZeRO-1 optimizer gathers the parameters after the step; Megatron's GPT model with its fused
// softmax (FlashAttention only with --use-flash-attn) and vocab-parallel cross entropy.
// Its buckets are DeepSpeed's (reduce_bucket_size 5e8 elements, at 2 B: see deepspeed_2024).
StackSettings megatron_deepspeed_2022() {
  StackSettings s;
  s.dp_bucket_bytes = kDeepSpeedBucketBytes;
  s.dp_buckets_every_chunk = true;
  s.overlap_grad_reduce = false;
  s.overlap_param_gather = false;
  s.attention = AttentionKernel::kMaterialized;
  s.cross_entropy = CrossEntropyKernel::kUnfused;
  return s;
}

// DeepSpeed's engine (docs: config-json, zero_optimization): reduce_bucket_size 5e8 elements
// in the gradients' dtype (communication_data_type unset), overlap_comm off for ZeRO 1-2 (on for
// ZeRO-3, which capsim always overlaps), every bucket of every module; models from PyTorch or
// Hugging Face with PyTorch's cross entropy.
StackSettings deepspeed_2024() {
  StackSettings s;
  s.grad_reduce_in_training_precision = true;
  s.dp_bucket_bytes = kDeepSpeedBucketBytes;
  s.dp_buckets_every_chunk = true;
  s.overlap_grad_reduce = false;
  s.overlap_param_gather = false;
  s.cross_entropy = CrossEntropyKernel::kUnfused;
  return s;
}

// DeepSpeed's ZeRO-3 of 2021 (ZeRO-Infinity) trained Megatron's GPT without FlashAttention, and
// issued its collectives tensor by tensor (until v0.6 fetched each module with one gather).
StackSettings deepspeed_2021() {
  StackSettings s = deepspeed_2024();
  s.attention = AttentionKernel::kMaterialized;
  s.zero3_per_tensor_collectives = true;
  return s;
}

// PyTorch DDP and FSDP: DDP's bucket_cap_mb=25 over every module; FSDP reduces in
// MixedPrecision.reduce_dtype, which defaults to param_dtype; PyTorch's cross entropy.
StackSettings pytorch_fsdp_2024() {
  StackSettings s;
  s.grad_reduce_in_training_precision = true;
  s.dp_bucket_bytes = 25.0 * kMiB;
  s.dp_buckets_every_chunk = true;
  s.cross_entropy = CrossEntropyKernel::kUnfused;
  return s;
}

// llm-foundry (Composer FSDP): its pretraining YAMLs set mixed_precision PURE, which reduces in
// bf16, MPT's loss_fn defaults to fused_crossentropy (flash-attn's xentropy kernel), and MPT's
// attn_config to attn_impl 'triton' (llmfoundry/models/mpt/configuration_mpt.py, October 2023).
StackSettings llm_foundry_2023() {
  StackSettings s = pytorch_fsdp_2024();
  s.cross_entropy = CrossEntropyKernel::kSingleKernel;
  s.attention = AttentionKernel::kTriton;
  return s;
}

// torchtitan (FSDP2): mixed_precision_reduce defaults to float32 (torchtitan/config/job_config.py);
// PyTorch's cross entropy; FSDP2 with pipeline parallelism, parameters kept after the forward
// pass under PP (torchtitan/models/llama3/infra/parallelize.py, apply_fsdp: reshard_after_forward
// off when pp_enabled), i.e. ZeRO-2.
StackSettings torchtitan_2025() {
  StackSettings s = pytorch_fsdp_2024();
  s.grad_reduce_in_training_precision = false;
  s.grad_reduce_precision = Precision::kFp32;
  s.shards_data_parallel_with_pipeline = true;
  return s;
}

}  // namespace

const std::vector<TrainingStack>& training_stacks() {
  static const std::vector<TrainingStack> stacks{
      {"megatron-core", "2024", megatron_core_2024()},
      {"megatron-core", "2021", megatron_core_2021()},
      {"nemo", "2024", nemo_2024()},
      {"nemo", "2023", nemo_2023()},
      {"megatron-bridge", "2025", megatron_bridge_2025()},
      {"megatron-deepspeed", "2022", megatron_deepspeed_2022()},
      {"deepspeed", "2024", deepspeed_2024()},
      {"deepspeed", "2021", deepspeed_2021()},
      {"pytorch-fsdp", "2024", pytorch_fsdp_2024()},
      {"llm-foundry", "2023", llm_foundry_2023()},
      {"torchtitan", "2025", torchtitan_2025()},
  };
  return stacks;
}

const TrainingStack* find_training_stack(std::string_view name, std::string_view version) {
  for (const TrainingStack& stack : training_stacks()) {
    if (stack.name == name && (version.empty() || stack.version == version))
      return &stack;
  }
  return nullptr;
}

std::vector<std::string> training_stack_names() {
  std::vector<std::string> names;
  for (const TrainingStack& stack : training_stacks()) {
    if (std::find(names.begin(), names.end(), stack.name) == names.end())
      names.push_back(stack.name);
  }
  return names;
}

std::vector<std::string> training_stack_versions(std::string_view name) {
  std::vector<std::string> versions;
  for (const TrainingStack& stack : training_stacks()) {
    if (stack.name == name)
      versions.push_back(stack.version);
  }
  return versions;
}

bool keeps_fp8_parameters(const StackSettings& stack, Precision precision) {
  if (!stack.fp8_parameters_with_fp8_recipes)
    return false;
  return precision == Precision::kFp8 || precision == Precision::kFp8Cs ||
         precision == Precision::kMxfp8;
}

bool states_bf16_weights(const std::function<bool(std::string_view key)>& is_explicit,
                         const Parallelism& p) {
  return is_explicit("master_weights") && p.master_weights == MasterWeights::kFp32Remainders;
}

void apply_stack_settings(const StackSettings& stack,
                          const std::function<bool(std::string_view key)>& is_explicit,
                          Parallelism& p) {
  if (!is_explicit("grad_reduce_precision")) {
    p.grad_reduce_precision = stack.grad_reduce_precision;
    const bool sixteen_bit = p.precision == Precision::kBf16 || p.precision == Precision::kFp16;
    if (!p.grad_reduce_precision && stack.grad_reduce_in_training_precision && sixteen_bit)
      p.grad_reduce_precision = p.precision;
  }
  if (!is_explicit("dp_bucket_size"))
    p.dp_bucket_bytes = stack.dp_bucket_bytes;
  if (!is_explicit("dp_bucket_layout"))
    p.dp_buckets_every_chunk = stack.dp_buckets_every_chunk;
  if (!is_explicit("overlap_grad_reduce") && p.zero_stage != 3)
    p.overlap_grad_reduce = stack.overlap_grad_reduce;
  if (!is_explicit("overlap_param_gather")) {
    const bool gathers_parameters = p.zero_stage == 1 || p.zero_stage == 2;
    p.overlap_param_gather =
        p.overlap_grad_reduce && (!gathers_parameters || stack.overlap_param_gather);
  }
  if (!is_explicit("optimizer_state_precision"))
    p.optimizer_state_precision = stack.optimizer_state_precision;
  if (!is_explicit("fp8_params"))
    p.fp8_params = keeps_fp8_parameters(stack, p.precision) && !states_bf16_weights(is_explicit, p);
  if (!is_explicit("master_weights")) {
    // Remainders complete bf16 weights (fp8 runs keep bf16 weights unless fp8_params).
    const bool bf16_weights = p.precision != Precision::kFp16 && !p.fp8_params;
    const bool fits = stack.master_weights != MasterWeights::kFp32Remainders || bf16_weights;
    p.master_weights = fits ? stack.master_weights : std::nullopt;
  }
  if (!is_explicit("tp_comm_overlap"))
    p.tp_comm_overlap = stack.tp_comm_overlap && p.sequence_parallel;
  if (!is_explicit("tp_backward_overlap"))
    p.tp_backward_overlap = stack.tp_backward_overlap;
}

void apply_stack_kernels(const StackSettings& stack,
                         const std::function<bool(std::string_view key)>& is_explicit,
                         ModelSpec& model) {
  if (!is_explicit("attention"))
    model.attention = stack.attention;
  if (!is_explicit("cross_entropy"))
    model.cross_entropy = stack.cross_entropy;
}

}  // namespace capsim

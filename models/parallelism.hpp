#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/recompute_modules.hpp"

namespace capsim {

enum class Schedule { kGpipe, kOneFOneB, kInterleaved, kZeroBubble, kDualPipeV };

enum class Recompute { kNone, kSelective, kFull };
// What the optimizer keeps as the master copy of the weights: a full fp32 copy; only the 16
// low-order bits of that fp32 value beside the bf16 weights (Apex DistributedFusedAdam and TE
// FusedAdam store_param_remainders); a 16-bit copy (Megatron-Core --main-params-dtype fp16,
// Apex with dtype=bf16); or none, the update going to the weights themselves (fp32 training;
// Apex with store_params=False).
enum class MasterWeights { kFp32, kFp32Remainders, kBf16, kFp16, kNone };

// How tokens reach the expert-parallel ranks that hold their experts (Megatron-Core
// --moe-token-dispatcher-type): NCCL all-to-all, all-gather then local selection, or DeepEP's
// / HybridEP's fused dispatch and combine kernels ("flex" with the deepep backend).
enum class TokenDispatcher { kAllToAll, kAllGather, kDeepEp };
// DeepSpeed PipelineModule's partition_method (Megatron-DeepSpeed): layer specs split evenly by
// count, or balanced by their parameter counts (models/pipeline_partition.hpp).
enum class PartitionMethod { kUniform, kParameters };

// How one training iteration is laid out over the GPUs.
struct Parallelism {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int context = 1;
  int micro_batch_size = 1;
  int global_batch_size = 1;
  int virtual_pipeline_stages = 1;
  // Interleaved 1F1B: micro-batches that go through a stage's chunks together (Megatron-Core
  // --microbatch-group-size-per-virtual-pipeline-stage); 0: `pipeline`, Megatron's default.
  int microbatch_group_size = 0;
  Schedule schedule = Schedule::kOneFOneB;
  Recompute recompute = Recompute::kNone;
  // Under selective recompute, the modules replayed (a RecomputeModule bit set).
  unsigned recompute_modules = kDefaultRecomputeModules;
  bool sequence_parallel = false;
  int zero_stage = 0;
  Precision precision = Precision::kBf16;
  // fp8 training whose model parameters are Transformer Engine Float8Tensors
  // (te.fp8_model_init, Megatron --fp8-param-gather, NeMo fp8_params): the GEMM weights are
  // stored in fp8 with their fp8 transpose instead of bf16 plus TE's fp8 weight caches.
  // Only with precision kFp8.
  bool fp8_params = false;
  std::vector<int> stage_layers;  // empty: even split
  // DeepSpeed's split of the layers over the stages; empty: stage_layers or the even split.
  std::optional<PartitionMethod> partition_method;
  double dp_bucket_bytes = 0.0;  // 0: Megatron-Core's default (dp_bucket_bytes_or_default)
  // Which chunks are split into buckets (dp_bucket_count): Megatron-Core's layout, or every
  // chunk of every stage (PyTorch DDP, Apex distributed Adam).
  bool dp_buckets_every_chunk = false;
  // Precision gradients are reduced in across data parallelism; empty: the framework default
  // (grad_reduce_bytes_per_element).
  std::optional<Precision> grad_reduce_precision;
  // Megatron-Core's DDP options (--overlap-grad-reduce, --overlap-param-gather). Overlapped,
  // gradient buckets go out as the backward pass fills them and the distributed optimizer's
  // parameter all-gather runs beside the next forward; without, each waits for the stage's
  // compute (ZeRO 0-2). Tuned recipes overlap both (Megatron-LM's own default does not).
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // Transformer Engine's comm-GEMM overlap of the sequence-parallel collectives (Megatron-Core
  // --tp-comm-overlap, NeMo ub_tp_comm_overlap; tp_overlapped_layer_comm). Needs
  // sequence_parallel. Off by default, as in Megatron-LM; NVIDIA's recipes turn it on.
  bool tp_comm_overlap = false;
  // The column-parallel layers' input-gradient all-reduce (reduce-scatter with SP) runs beside
  // their weight-gradient GEMM (Megatron-LM since September 2021, Transformer Engine); false:
  // after it, serially (Megatron-LM before, e.g. the SC'21 runs).
  bool tp_backward_overlap = true;
  // Precision of Adam's two moments (Megatron-Core --exp-avg-dtype / --exp-avg-sq-dtype, Apex
  // DistributedFusedAdam dtype); empty: fp32.
  std::optional<Precision> optimizer_state_precision;
  // The optimizer's master copy of the weights; empty: master_weights_or_default().
  std::optional<MasterWeights> master_weights;
  // Expert parallelism (EP) and expert tensor parallelism (ETP; empty: `tensor`) of the
  // mixture-of-experts layers; expert data parallelism is what remains of a stage's GPUs:
  // tensor x context x data / (expert x expert_tensor) (Megatron-Core's MoE parallel folding).
  int expert = 1;
  std::optional<int> expert_tensor = std::nullopt;
  TokenDispatcher token_dispatcher = TokenDispatcher::kAllToAll;
  // The dispatch and combine all-to-alls of one micro-batch run beside another micro-batch's
  // compute (Megatron-Core --overlap-moe-expert-parallel-comm, 1F1B A2A overlap).
  bool moe_a2a_overlap = false;
  // The routing probabilities multiply the experts' activation output instead of their down
  // projection's output (Megatron-Core 0.13+, "memory-efficient permutation", arXiv 2603.07685
  // §4.1.2), so the experts' output is not kept for the probabilities' gradient; false: the
  // un-permutation weighs the outputs and keeps them (Megatron-Core up to 0.12).
  bool memory_efficient_permutation = true;
  // SwiGLU keeps its input (the up projection's output) for the backward in fp8, 1 B, cast by
  // a kernel of its own each way (Megatron-Core --activation-func-fp8-input-store; DeepSeek-V3
  // report §3.3.3 for the experts').
  bool activation_input_fp8 = false;
  // The attention core runs in fp8 under a low-precision recipe (Transformer Engine's FP8
  // dot-product attention, cuDNN's fused kernel; Megatron-Core --fp8-dot-product-attention).
  bool fp8_attention = false;

  [[nodiscard]] int expert_tensor_or_default() const { return expert_tensor.value_or(tensor); }
  // The modules selective recompute replays: none without it (full recompute replays every
  // layer whole and is handled on its own).
  [[nodiscard]] unsigned replayed_modules() const {
    return recompute == Recompute::kSelective ? recompute_modules : 0u;
  }
  // Expert data parallelism: a stage's GPUs over expert x expert_tensor.
  [[nodiscard]] int expert_data() const {
    return tensor * context * data / (expert * expert_tensor_or_default());
  }
  [[nodiscard]] int num_gpus() const { return tensor * pipeline * data * context; }
  // Micro-batches each pipeline runs per iteration: global / (micro * data).
  [[nodiscard]] int num_micro_batches() const {
    return global_batch_size / (micro_batch_size * data);
  }
  // The interleaved schedule's micro-batch group: microbatch_group_size, or `pipeline`.
  [[nodiscard]] int micro_batch_group() const {
    return microbatch_group_size > 0 ? microbatch_group_size : pipeline;
  }
  // Bytes per gradient element on the wire. Default: Megatron-LM accumulates and reduces bf16
  // (and fp8) training's gradients in fp32 (arguments.py: accumulate_allreduce_grads_in_fp32
  // unless --grad-reduce-in-bf16); fp16 training and ZeRO-3 / FSDP reduce in 16 bits.
  [[nodiscard]] double grad_reduce_bytes_per_element() const;
  // Bytes of one DP gradient bucket: `dp_bucket_bytes` when set, else Megatron-Core's default
  // (kMegatronBucket*, sized by `data`) in gradient-reduce precision.
  [[nodiscard]] double dp_bucket_bytes_or_default() const;
  // Bytes of each of Adam's two moments per parameter: 4 unless optimizer_state_precision says
  // 16 bits.
  [[nodiscard]] double optimizer_state_bytes_per_element() const;
  // `master_weights` when set, else a full fp32 copy for 16-bit and fp8 training and none for
  // fp32 training, whose weights are the master.
  [[nodiscard]] MasterWeights master_weights_or_default() const;
  // Bytes per parameter the optimizer stores for the master copy: 4, 2 (remainders or a 16-bit
  // copy) or 0.
  [[nodiscard]] double master_weight_bytes() const;

  [[nodiscard]] bool operator==(const Parallelism& other) const = default;
};

// Canonical names used in JSON and tables, and their inverses (nullopt for an unknown name).
[[nodiscard]] const char* to_string(Schedule schedule);
[[nodiscard]] const char* to_string(Recompute recompute);
[[nodiscard]] const char* to_string(Precision precision);
[[nodiscard]] const char* to_string(MasterWeights master_weights);
[[nodiscard]] const char* to_string(TokenDispatcher dispatcher);
[[nodiscard]] const char* to_string(PartitionMethod method);
[[nodiscard]] std::optional<Schedule> schedule_from_string(std::string_view name);
[[nodiscard]] std::optional<Recompute> recompute_from_string(std::string_view name);
[[nodiscard]] std::optional<Precision> precision_from_string(std::string_view name);
[[nodiscard]] std::optional<MasterWeights> master_weights_from_string(std::string_view name);
[[nodiscard]] std::optional<TokenDispatcher> token_dispatcher_from_string(std::string_view name);
[[nodiscard]] std::optional<PartitionMethod> partition_method_from_string(std::string_view name);

// Megatron-Core's default gradient bucket holds max(40M, 1M x DP) parameters: larger DP groups
// get larger buckets so the ring's latency, which grows with the group, stays amortised
// (megatron/core/distributed/distributed_data_parallel.py).
inline constexpr double kMegatronBucketMinParams = 40e6;
inline constexpr double kMegatronBucketParamsPerDpRank = 1e6;

// Staging memory the memory model counts for two gradient buckets in flight with Megatron-Core's
// bucket layout (views into the gradient buffer, so only NCCL's scratch is extra): PyTorch
// DDP's 25 MB bucket (bucket_cap_mb=25), the smallest common bucket.
inline constexpr double kBucketStagingBytes = 25e6;

}  // namespace capsim

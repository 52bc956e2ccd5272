#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_spec.hpp"
#include "models/parallelism.hpp"

namespace capsim {

// What a training stack does by itself, when a run does not say otherwise: the values of the
// ten stack keys of docs/scenario.md and the loss kernels it ships. Sources per stack:
// docs/scenario.md, "Training stacks".
struct StackSettings {
  std::optional<Precision> grad_reduce_precision;  // empty: grad_reduce_bytes_per_element()
  double dp_bucket_bytes = 0.0;                    // 0: Megatron-Core's sizing
  bool dp_buckets_every_chunk = false;
  bool overlap_grad_reduce = true;   // ZeRO 0-2; ZeRO-3 always reduces layer by layer
  bool overlap_param_gather = true;  // ZeRO 1-2, and only when gradients overlap
  std::optional<Precision> optimizer_state_precision;
  std::optional<MasterWeights> master_weights;  // applied where the precision allows it
  bool tp_comm_overlap = false;                 // applied only with sequence parallelism
  bool tp_backward_overlap = true;
  // Gradients reduced in the training precision (fp16/bf16; DeepSpeed's communication_data_type
  // and FSDP's reduce_dtype left unset); grad_reduce_precision, when set, wins.
  bool grad_reduce_in_training_precision = false;
  AttentionKernel attention = AttentionKernel::kFlash;  // materialized before FlashAttention
  CrossEntropyKernel cross_entropy = CrossEntropyKernel::kFused;
  // Shards gradients (ZeRO-2/FSDP) or parameters (ZeRO-3) over data parallelism in a pipelined
  // model. Megatron's distributed optimizer is ZeRO-1 and DeepSpeed's pipeline engine refuses
  // ZeRO-2/3; torchtitan composes FSDP2 with its pipeline schedules.
  bool shards_data_parallel_with_pipeline = false;
  // ZeRO-3 as DeepSpeed v0.3 ran it (v0.3.13 partition_parameters.py _allgather_param and
  // _reduce_scatter_gradient; stage3.py): one collective per parameter tensor, each through
  // torch.distributed's list API, which copies every rank's part on its own; the tensors above
  // param_persistence_threshold (1e5 elements) released after each use, so gathered again for a
  // recompute. False: one collective per layer over a flat buffer (FSDP, later DeepSpeed).
  bool zero3_per_tensor_collectives = false;
  // Keeps the weights as fp8 tensors (fp8_params) under the recipes whose precision presets
  // gather them in fp8: delayed and current scaling and MXFP8 (keeps_fp8_parameters).
  bool fp8_parameters_with_fp8_recipes = false;
};

// Whether `stack` keeps fp8 parameters for a run in `precision` that does not say.
[[nodiscard]] bool keeps_fp8_parameters(const StackSettings& stack, Precision precision);

// Whether a run's explicit keys say its weights are bf16: stated fp32 remainders hold the high
// halves' complement, so no stack gives that run fp8 parameters.
[[nodiscard]] bool states_bf16_weights(const std::function<bool(std::string_view key)>& is_explicit,
                                       const Parallelism& parallelism);

// One release line of a training stack.
struct TrainingStack {
  std::string name;     // "megatron-deepspeed"
  std::string version;  // "2021"
  StackSettings settings;
};

// The stacks capsim knows; each name's first entry is its default version.
[[nodiscard]] const std::vector<TrainingStack>& training_stacks();

// The stack `name` at `version` (its default version when empty), or nullptr.
[[nodiscard]] const TrainingStack* find_training_stack(std::string_view name,
                                                       std::string_view version = {});

// The known stack names, in catalog order, each once.
[[nodiscard]] std::vector<std::string> training_stack_names();

// The versions of stack `name` capsim knows (empty for an unknown name), the default first.
[[nodiscard]] std::vector<std::string> training_stack_versions(std::string_view name);

// Sets the stack keys of `parallelism` that the run left unsaid (`is_explicit(key)` false) to
// what `stack` does for its layout: no gradient-overlap setting under ZeRO-3 (which reduces
// layer by layer), no parameter-gather overlap without overlapped gradients, no comm-GEMM
// overlap without sequence parallelism, no master-weight layout the precision cannot hold, no
// fp8 parameters where the run states fp32 remainders (which complete bf16 weights).
void apply_stack_settings(const StackSettings& stack,
                          const std::function<bool(std::string_view key)>& is_explicit,
                          Parallelism& parallelism);

// Sets the model's kernels the run left unsaid (`is_explicit("attention")`,
// `is_explicit("cross_entropy")` false) to the ones `stack` ships.
void apply_stack_kernels(const StackSettings& stack,
                         const std::function<bool(std::string_view key)>& is_explicit,
                         ModelSpec& model);

}  // namespace capsim

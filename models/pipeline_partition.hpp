#pragma once

#include <vector>

#include "models/model_spec.hpp"
#include "models/parallelism.hpp"

namespace capsim {

// DeepSpeed's pipeline split (PipelineModule partition_method), as Megatron-DeepSpeed's
// GPTModelPipe lays a GPT out: its layer specs are the fp16/bf16 cast, the embedding, the
// transformer layers, the final norm, the head (the tied embedding again when tied) and the
// cast back to fp32. Pure functions of their arguments.

// Returns DeepSpeed's partition_uniform: part boundaries (num_parts + 1 of them, from 0 to
// num_items), chunks of num_items / num_parts with one more item in each of the first
// num_items % num_parts parts.
// REQUIRES: num_items >= 0, num_parts >= 1.
[[nodiscard]] std::vector<int> partition_uniform(int num_items, int num_parts);

// Returns DeepSpeed's partition_balanced: the boundaries of num_parts contiguous parts whose
// weight sums differ least (largest minus smallest), by its dynamic programme over prefix sums;
// ties go to the later cut, as DeepSpeed's `>=` gives them. Fewer items than parts: uniform.
// REQUIRES: num_parts >= 1.
[[nodiscard]] std::vector<int> partition_balanced(const std::vector<double>& weights,
                                                  int num_parts);

// The most (specs + 1)^2 x stages steps partition_balanced's dynamic programme may take in a
// scenario (about 0.2 s); 1000 layers on 128 stages take 1.3e8.
inline constexpr double kMaxBalancedPartitionWork = 2e8;

// Returns (specs + 1)^2 x stages for `model`'s layer specs on `pipeline` stages.
[[nodiscard]] double balanced_partition_work(const ModelSpec& model, int pipeline);

// Returns the parameters of each of GPTModelPipe's layer specs on one tensor-parallel rank, in
// order (0 for the casts), as PipelineModule._count_layer_params counts them.
[[nodiscard]] std::vector<double> layer_spec_parameters(const ModelSpec& model,
                                                        const Parallelism& parallelism);

// Returns the transformer layers each pipeline stage holds under `method`.
[[nodiscard]] std::vector<int> deepspeed_stage_layers(const ModelSpec& model,
                                                      const Parallelism& parallelism,
                                                      PartitionMethod method);

}  // namespace capsim

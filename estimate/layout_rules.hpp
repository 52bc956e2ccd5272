#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/scenario.hpp"

namespace capsim::estimate {

// The rules that tie a model, a cluster and a parallel layout together (docs/scenario.md,
// "Validation rules"), in the order they are checked.
enum class LayoutRule {
  kGpuCount,                        // tensor x pipeline x data x context = the cluster's GPUs
  kTensorSplit,                     // heads, KV heads and FFN width divisible by tensor
  kSequenceParallelNeedsTensor,     // sequence_parallel needs tensor > 1
  kTpOverlapNeedsSequenceParallel,  // tp_comm_overlap needs sequence_parallel
  kContextSplit,                    // seq_length divisible by 2 x context
  kTensorTilesNodes,                // tensor divides a node or is a multiple of it
  kStageTilesNodes,                 // so does tensor x context x data
  kSequenceParallelSplit,           // with SP, seq_length divisible by tensor x context
  kBatchSplit,                      // global batch divisible by micro batch x data
  kScheduleStages,           // interleaving <=> virtual stages > 1, and it needs pipeline > 1
  kInterleavedMicroBatches,  // interleaving's micro-batch groups: last one whole or >= pipeline
  kDualPipeV,                // DualPipeV: two chunks, >= 2 x pipeline micro-batches, no ZeRO-3
  kLayerSplit,               // the layers split over the stages and their chunks
  kFp8Support,               // the recipe needs fp8 (mxfp8/nvfp4: block-scaled) cores
  // Mixture-of-experts layouts (Megatron-Core's MoE parallel folding; docs/scenario.md).
  kExpertSplit,                  // num_experts divisible by expert
  kExpertTensorSplit,            // the experts' FFN width divisible by expert_tensor
  kExpertFolding,                // expert x expert_tensor divides tensor x context x data
  kExpertTensorTilesNodes,       // expert_tensor divides a node or is a multiple of it
  kExpertNeedsSequenceParallel,  // expert > 1 with tensor > 1 needs sequence_parallel
  kExpertPrecision,              // expert > 1 does not train in fp16
  kDeepEpNeedsExpertRanks,       // the deepep dispatcher needs expert x expert_tensor > 1
  kA2aOverlapNeedsExpert,        // moe_a2a_overlap needs expert > 1
  kA2aOverlapDispatcher,         // moe_a2a_overlap needs the alltoall or deepep dispatcher
  kA2aOverlapRecompute,          // moe_a2a_overlap does not run with full recompute
  kA2aOverlapNeedsInterleaving,  // moe_a2a_overlap with pipeline > 1 needs virtual stages
  kA2aOverlapMtp,                // moe_a2a_overlap runs with at most one MTP layer
  kRecomputeModulePresent,       // recompute_modules names only parts the model has
  kActivationInputFp8,           // activation_input_fp8 stores SwiGLU's input only
  kFusedGroupedMlp,  // moe.fused_grouped_mlp: Blackwell, mxfp8 or nvfp4, expert_tensor 1
  kFp8Attention,     // fp8_attention needs a low-precision recipe
};
inline constexpr int kNumLayoutRules = 30;

// One broken rule: where in the scenario it points (a JSON pointer relative to the scenario
// object, e.g. "/parallelism/data") and what is wrong, naming the fields and their values.
struct LayoutProblem {
  LayoutRule rule = LayoutRule::kGpuCount;
  std::string pointer;
  std::string message;
};

// The rules a layout breaks, as a set. Plain value.
class BrokenLayoutRules {
 public:
  void add(LayoutRule rule) { bits_.set(static_cast<size_t>(rule)); }
  [[nodiscard]] bool contains(LayoutRule rule) const {
    return bits_.test(static_cast<size_t>(rule));
  }
  [[nodiscard]] bool empty() const { return bits_.none(); }

 private:
  std::bitset<kNumLayoutRules> bits_;
};

// Returns every problem of `parallelism` running `model` on `cluster` (and its GPU), in
// the rules' order (a rule may report more than one), so that the first is always the same one
// for a layout with several faults; empty when the layout is valid. Pure: no I/O, no throw
// other than std::bad_alloc. REQUIRES: every parallel degree and micro_batch_size >= 1.
[[nodiscard]] std::vector<LayoutProblem> layout_problems(const ModelSpec& model,
                                                         const ClusterSpec& cluster,
                                                         const Parallelism& parallelism);

// Returns the rules that layout_problems() reports for the same inputs, without building its
// messages: cheap enough to call for every candidate of a plan's search space.
// REQUIRES: every parallel degree and micro_batch_size >= 1.
[[nodiscard]] BrokenLayoutRules broken_layout_rules(const ModelSpec& model,
                                                    const ClusterSpec& cluster,
                                                    const Parallelism& parallelism);

// Whether `parallelism` meets every precondition of moe_a2a_overlap (expert > 1, a dispatcher
// that exchanges, no full recompute, virtual stages when pipelined, at most one MTP layer),
// whatever its own moe_a2a_overlap says: a plan's stack turns the overlap on where it runs.
[[nodiscard]] bool moe_a2a_overlap_possible(const ModelSpec& model, const Parallelism& parallelism);

// Why selective recompute of `modules` (RecomputeModule bits) cannot run on `model`: the first
// module it names that the model lacks, as the kRecomputeModulePresent rule words it; nothing
// when every module is present.
[[nodiscard]] std::optional<std::string> recompute_module_problem(const ModelSpec& model,
                                                                  unsigned modules);

}  // namespace capsim::estimate

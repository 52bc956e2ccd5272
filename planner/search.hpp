#pragma once

#include <array>
#include <optional>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/scenario.hpp"

namespace capsim::planner {

// Why a candidate of the search space was dropped before (or, for kBelowTarget, after) the
// analytic screen. Order matters: a candidate is counted under the first reason that applies.
enum class PruneReason {
  kTensorExceedsNode,        // TP larger than a node: TP traffic would cross the network
  kGpuCount,                 // the layout does not fill the cluster, or does not tile its nodes
  kTensorDivisibility,       // heads, KV heads or FFN width not divisible by tensor
  kExpertDivisibility,       // experts by EP, their width by ETP, or a stage's GPUs by EP x ETP
  kContextDivisibility,      // seq_length not divisible by 2 x context
  kLayerDivisibility,        // no even or (when allowed) uneven split of the layers fits
  kBatchDivisibility,        // global batch not divisible by micro batch x data
  kInterleavedMicroBatches,  // interleaved 1F1B's micro-batch groups do not fit (no group size
                             // does)
  kZeroWithPipeline,         // ZeRO-2/3 with pipeline parallelism (unsupported by Megatron/DS)
  kFp8Unsupported,           // a low-precision recipe the GPU's tensor cores do not run
  kInvalidLayout,            // breaks a layout rule none of the reasons above names
  kFailures,                 // so many GPUs that failures outpace checkpoints (failure_model)
  kMemory,                   // peak memory above the GPU's HBM
  kBelowTarget,              // screened, but too slow for the deadline / throughput target
};
inline constexpr int kNumPruneReasons = 14;

// Returns the key used in reports, e.g. "memory", "batch_divisibility".
[[nodiscard]] const char* to_string(PruneReason reason);
// Whether a plan of `model` can prune for `reason`: the expert reason only with model.moe (so a
// dense plan's report lists the reasons it always had).
[[nodiscard]] bool applies_to(PruneReason reason, const ModelSpec& model);

// Candidates dropped, per reason. Plain value; add() merges shards.
struct PruneCounts {
  std::array<long long, kNumPruneReasons> counts{};
  void add(PruneReason reason, long long n = 1) { counts[static_cast<size_t>(reason)] += n; }
  void merge(const PruneCounts& other) {
    for (size_t i = 0; i < counts.size(); ++i)
      counts[i] += other.counts[i];
  }
  [[nodiscard]] long long of(PruneReason reason) const {
    return counts[static_cast<size_t>(reason)];
  }
};

// Returns the first structural reason `parallelism` cannot run `model` on `cluster` (each broken
// layout rule of estimate/layout_rules.hpp, plus the planner's own kTensorExceedsNode and
// kZeroWithPipeline; tensor or expert_tensor above a node is kTensorExceedsNode), or nullopt when
// it can. Never throws: infeasible is not an error. REQUIRES: micro_batch_size >= 1.
// ZeRO-2/3 with pipeline parallelism is kZeroWithPipeline unless `stack_shards_with_pipeline`
// (the plan's stack composes them: StackSettings::shards_data_parallel_with_pipeline).
[[nodiscard]] std::optional<PruneReason> check_structure(const ModelSpec& model,
                                                         const ClusterSpec& cluster,
                                                         const Parallelism& parallelism,
                                                         bool stack_shards_with_pipeline = false);

// Sets an interleaved layout's microbatch_group_size to the smallest group Megatron-Core runs
// its micro-batches in when the default (pipeline) does not fit: P < N <= M with the last group
// whole or at least P (e.g. 120 micro-batches on 16 stages: 20). Leaves 0 (the default) when
// that fits, when no group does, or for other schedules.
void choose_micro_batch_group(Parallelism& p);

// Returns an uneven split of `layers` over `pipeline` stages for when pipeline x virtual stages
// does not divide them: units of `virtual_stages` layers, as even as possible, the lighter
// stages at the ends (they also hold the embedding and the logits), alternating last, first,
// second-to-last, ... E.g. Llama-3 405B's 126 layers over 16 stages: 7 + 14 x 8 + 7 (Llama 3
// paper §3.3.2). Layers that are no multiple of `virtual_stages` are split one at a time, as
// Megatron-Core's --pipeline-model-parallel-layout can run them (DeepSeek-V3's 61 over 16 x 2
// chunks: 3, 4, ..., 4, 3, 3). Returns {} when a stage would hold fewer layers than chunks.
// REQUIRES: pipeline >= 1, virtual_stages >= 1.
[[nodiscard]] std::vector<int> uneven_stage_layers(int layers, int pipeline, int virtual_stages);

// Returns the cluster of `num_nodes` catalog instances, exactly as a scenario naming the
// instance reads it (rail-optimized fabric, the GPU's NVLink bandwidth inside a node), with
// NVLink domains of `nvlink_domain` GPUs (0: the node).
[[nodiscard]] ClusterSpec cluster_for_instance(const InstanceSpec& instance, int num_nodes,
                                               int nvlink_domain = 0);

}  // namespace capsim::planner

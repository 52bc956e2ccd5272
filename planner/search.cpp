#include "planner/search.hpp"

#include <algorithm>

#include "models/gpu_catalog.hpp"

#include "estimate/layout_rules.hpp"
#include "estimate/pipeline_schedule.hpp"

namespace capsim::planner {

const char* to_string(PruneReason reason) {
  switch (reason) {
    case PruneReason::kTensorExceedsNode:
      return "tensor_exceeds_node";
    case PruneReason::kGpuCount:
      return "gpu_count";
    case PruneReason::kTensorDivisibility:
      return "tensor_divisibility";
    case PruneReason::kExpertDivisibility:
      return "expert_divisibility";
    case PruneReason::kContextDivisibility:
      return "context_divisibility";
    case PruneReason::kLayerDivisibility:
      return "layer_divisibility";
    case PruneReason::kBatchDivisibility:
      return "batch_divisibility";
    case PruneReason::kInterleavedMicroBatches:
      return "interleaved_micro_batches";
    case PruneReason::kZeroWithPipeline:
      return "zero_with_pipeline";
    case PruneReason::kFp8Unsupported:
      return "fp8_unsupported";
    case PruneReason::kInvalidLayout:
      return "invalid_layout";
    case PruneReason::kFailures:
      return "failures";
    case PruneReason::kMemory:
      return "memory";
    case PruneReason::kBelowTarget:
      return "below_target";
  }
  return "?";
}

bool applies_to(PruneReason reason, const ModelSpec& model) {
  return reason != PruneReason::kExpertDivisibility || model.moe.has_value();
}

namespace {

// The reason a plan counts a candidate breaking `rule` under.
PruneReason prune_reason(estimate::LayoutRule rule) {
  switch (rule) {
    case estimate::LayoutRule::kGpuCount:
    case estimate::LayoutRule::kStageTilesNodes:
      return PruneReason::kGpuCount;
    case estimate::LayoutRule::kTensorSplit:
      return PruneReason::kTensorDivisibility;
    case estimate::LayoutRule::kContextSplit:
      return PruneReason::kContextDivisibility;
    case estimate::LayoutRule::kLayerSplit:
      return PruneReason::kLayerDivisibility;
    case estimate::LayoutRule::kBatchSplit:
      return PruneReason::kBatchDivisibility;
    case estimate::LayoutRule::kInterleavedMicroBatches:
      return PruneReason::kInterleavedMicroBatches;
    case estimate::LayoutRule::kFp8Support:
      return PruneReason::kFp8Unsupported;
    case estimate::LayoutRule::kExpertSplit:
    case estimate::LayoutRule::kExpertTensorSplit:
    case estimate::LayoutRule::kExpertFolding:
      return PruneReason::kExpertDivisibility;
    case estimate::LayoutRule::kExpertTensorTilesNodes:
    case estimate::LayoutRule::kExpertNeedsSequenceParallel:
    case estimate::LayoutRule::kExpertPrecision:
    case estimate::LayoutRule::kDeepEpNeedsExpertRanks:
    case estimate::LayoutRule::kA2aOverlapNeedsExpert:
    case estimate::LayoutRule::kA2aOverlapDispatcher:
    case estimate::LayoutRule::kA2aOverlapRecompute:
    case estimate::LayoutRule::kA2aOverlapNeedsInterleaving:
    case estimate::LayoutRule::kA2aOverlapMtp:
    case estimate::LayoutRule::kRecomputeModulePresent:
    case estimate::LayoutRule::kActivationInputFp8:
    case estimate::LayoutRule::kFusedGroupedMlp:
    case estimate::LayoutRule::kFp8Attention:
    case estimate::LayoutRule::kSequenceParallelNeedsTensor:
    case estimate::LayoutRule::kTpOverlapNeedsSequenceParallel:
    case estimate::LayoutRule::kTensorTilesNodes:
    case estimate::LayoutRule::kSequenceParallelSplit:
    case estimate::LayoutRule::kScheduleStages:
    case estimate::LayoutRule::kDualPipeV:
      return PruneReason::kInvalidLayout;
  }
  return PruneReason::kInvalidLayout;
}

}  // namespace

std::optional<PruneReason> check_structure(const ModelSpec& m, const ClusterSpec& c,
                                           const Parallelism& p, bool stack_shards_with_pipeline) {
  // TP and ETP stay inside an NVLink domain; one that straddles two domains of a rack
  // (TP 16 on NVL72: ranks 64-79) is priced at its NIC-crossing cost (estimate::group_shape).
  const int domain = c.nvlink_domain_gpus();
  if (p.tensor > domain || p.expert_tensor_or_default() > domain)
    return PruneReason::kTensorExceedsNode;
  // A zero degree (the search's data where the model-parallel GPUs do not divide the cluster)
  // fills no GPU; the layout rules need every degree at least 1.
  if (std::min({p.tensor, p.pipeline, p.data, p.context, p.expert}) < 1)
    return PruneReason::kGpuCount;
  // The first reason that applies counts: the smallest in PruneReason's order.
  std::optional<PruneReason> first;
  const auto consider = [&first](PruneReason reason) {
    if (!first || reason < *first)
      first = reason;
  };
  const estimate::BrokenLayoutRules broken = estimate::broken_layout_rules(m, c, p);
  for (int i = 0; i < estimate::kNumLayoutRules; ++i) {
    const auto rule = static_cast<estimate::LayoutRule>(i);
    if (broken.contains(rule))
      consider(prune_reason(rule));
  }
  // Megatron's distributed optimizer is ZeRO-1 and DeepSpeed refuses ZeRO-2/3 with its pipeline
  // engine: the planner follows them unless the plan's stack composes the two (torchtitan);
  // `capsim simulate` accepts such layouts (docs/planner.md).
  if (p.zero_stage >= 2 && p.pipeline > 1 && !stack_shards_with_pipeline)
    consider(PruneReason::kZeroWithPipeline);
  return first;
}

void choose_micro_batch_group(Parallelism& p) {
  p.microbatch_group_size = 0;
  if (p.schedule != Schedule::kInterleaved || p.pipeline <= 1 || p.data < 1 ||
      p.micro_batch_size < 1)
    return;
  const int group = estimate::smallest_fitting_group(p.pipeline, p.num_micro_batches());
  if (group > p.pipeline)
    p.microbatch_group_size = group;
}

std::vector<int> uneven_stage_layers(int layers, int pipeline, int virtual_stages) {
  // Layers that are no multiple of v go out one at a time; each stage keeps at least one layer
  // per chunk, and layers_in_chunk() spreads a stage's layers over its chunks.
  if (layers % virtual_stages != 0) {
    std::vector<int> out = uneven_stage_layers(layers, pipeline, 1);
    const bool every_chunk_holds_one =
        !out.empty() && *std::min_element(out.begin(), out.end()) >= virtual_stages;
    return every_chunk_holds_one ? out : std::vector<int>{};
  }
  const int units = layers / virtual_stages;
  if (units < pipeline)
    return {};
  const int base = (units + pipeline - 1) / pipeline;
  std::vector<int> out(static_cast<size_t>(pipeline), base);
  int deficit = base * pipeline - units;
  // Take one unit at a time from the ends inwards: last, first, second-to-last, second, ...
  for (int k = 0; deficit > 0; ++k) {
    const int from_end = k / 2;
    const int stage = k % 2 == 0 ? pipeline - 1 - from_end : from_end;
    --out[static_cast<size_t>(stage)];
    --deficit;
  }
  for (int& n : out)
    n *= virtual_stages;
  return out;
}

ClusterSpec cluster_for_instance(const InstanceSpec& inst, int num_nodes, int nvlink_domain) {
  ClusterSpec c;
  c.nvlink_domain = nvlink_domain;
  c.gpu = inst.gpu;
  c.instance = inst.name;
  c.gpus_per_node = inst.gpus_per_node;
  c.num_nodes = num_nodes;
  c.intra_node_bandwidth_bytes_per_s = inst.gpu.nvlink_bandwidth_bytes_per_s;
  c.has_inter_node = num_nodes > 1;
  c.inter_node_fabric = fabric_from_string(inst.fabric).value_or(Fabric::kEthernet);
  c.nics_per_node = inst.nics_per_node;
  c.nic_bandwidth_bytes_per_s = inst.nic_bandwidth_bytes_per_s;
  c.topology = Topology::kRailOptimized;
  return c;
}

}  // namespace capsim::planner

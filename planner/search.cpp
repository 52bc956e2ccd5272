#include "planner/search.hpp"

#include "models/gpu_catalog.hpp"

namespace capsim::planner {

const char* to_string(PruneReason reason) {
  switch (reason) {
    case PruneReason::kTensorExceedsNode:
      return "tensor_exceeds_node";
    case PruneReason::kGpuCount:
      return "gpu_count";
    case PruneReason::kTensorDivisibility:
      return "tensor_divisibility";
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

std::optional<PruneReason> check_structure(const ModelSpec& m, const ClusterSpec& c,
                                           const Parallelism& p) {
  if (p.tensor > c.gpus_per_node)
    return PruneReason::kTensorExceedsNode;
  if (p.num_gpus() != c.num_gpus())
    return PruneReason::kGpuCount;
  // Megatron's rank order must tile the nodes (check_layout's rule): tensor x context x data
  // divides a node or is a multiple of it. Counted with the GPU count.
  const int inner = p.tensor * p.context * p.data;
  if (inner % c.gpus_per_node != 0 && c.gpus_per_node % inner != 0)
    return PruneReason::kGpuCount;
  if (m.num_attention_heads % p.tensor != 0 || m.num_kv_heads % p.tensor != 0 ||
      m.ffn_hidden_size % p.tensor != 0) {
    return PruneReason::kTensorDivisibility;
  }
  if (p.context > 1 && m.seq_length % (2 * p.context) != 0) {
    return PruneReason::kContextDivisibility;
  }
  if (p.stage_layers.empty()) {
    const int chunks = p.pipeline * p.virtual_pipeline_stages;
    if (p.pipeline > m.num_layers ||
        (m.num_layers % chunks != 0 && !is_megatron_embedding_loss_split(m.num_layers, chunks))) {
      return PruneReason::kLayerDivisibility;
    }
  } else {
    int total = 0;
    for (int n : p.stage_layers) {
      if (n < p.virtual_pipeline_stages) {
        return PruneReason::kLayerDivisibility;
      }
      total += n;
    }
    if (static_cast<int>(p.stage_layers.size()) != p.pipeline || total != m.num_layers) {
      return PruneReason::kLayerDivisibility;
    }
  }
  if (p.global_batch_size % (p.micro_batch_size * p.data) != 0) {
    return PruneReason::kBatchDivisibility;
  }
  if (p.schedule == Schedule::kInterleaved && p.num_micro_batches() % p.pipeline != 0) {
    return PruneReason::kInterleavedMicroBatches;
  }
  // Megatron's distributed optimizer is ZeRO-1 and DeepSpeed refuses ZeRO-2/3 with its pipeline
  // engine: the planner follows them (torchtitan runs FSDP with pipelines; `capsim simulate`
  // accepts such layouts, docs/planner.md).
  if (p.zero_stage >= 2 && p.pipeline > 1)
    return PruneReason::kZeroWithPipeline;
  if (p.precision == Precision::kFp8 && c.gpu.peak_fp8_flop_per_s <= 0.0) {
    return PruneReason::kFp8Unsupported;
  }
  return std::nullopt;
}

std::vector<int> uneven_stage_layers(int layers, int pipeline, int virtual_stages) {
  if (layers % virtual_stages != 0)
    return {};
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

ClusterSpec cluster_for_instance(const InstanceSpec& inst, int num_nodes) {
  ClusterSpec c;
  c.gpu = inst.gpu;
  c.instance = inst.name;
  c.gpus_per_node = inst.gpus_per_node;
  c.num_nodes = num_nodes;
  c.intra_node_bandwidth_bytes_per_s = inst.gpu.nvlink_bandwidth_bytes_per_s;
  c.has_inter_node = num_nodes > 1;
  c.inter_node_fabric = inst.fabric == "infiniband" ? Fabric::kInfiniband
                        : inst.fabric == "roce"     ? Fabric::kRoce
                        : inst.fabric == "efa"      ? Fabric::kEfa
                                                    : Fabric::kEthernet;
  c.nics_per_node = inst.nics_per_node;
  c.nic_bandwidth_bytes_per_s = inst.nic_bandwidth_bytes_per_s;
  c.topology = Topology::kRailOptimized;
  return c;
}

}  // namespace capsim::planner

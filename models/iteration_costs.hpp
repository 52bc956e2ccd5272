#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Shape of one communicator: how many ranks, spread over how many nodes.
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes = 1;
  // NIC bandwidth (bytes/s, per direction) available to this group's ranks on one node when all
  // concurrent groups of the same kind run at once (e.g. 8 DP groups share a node's NICs).
  double nic_bandwidth_per_node_bytes_per_s = 0.0;
  // A "node" here is an NVLink domain that spans several servers (ClusterSpec::nvlink_domain):
  // a ring or tree between domains also runs through each domain's NVLink, so it is no faster
  // than the same collective inside one domain.
  bool multi_node_nvlink = false;

  [[nodiscard]] bool operator==(const GroupShape& other) const = default;
};

// Costs of one micro-batch through one model chunk (a pipeline stage's virtual stage) on one
// GPU, seconds and bytes. Compute and TP communication are serial on the critical path.
struct ChunkCosts {
  int first_layer = 0;
  int num_layers = 0;
  bool has_embedding = false;  // the model's first chunk (stage 0's first)
  bool has_head = false;       // the model's last chunk: logits + loss
  double forward_compute_s = 0.0;
  double forward_tp_comm_s = 0.0;  // TP/SP collectives in the forward pass
  double forward_cp_comm_s = 0.0;  // CP ring exchange not hidden behind attention
  double backward_input_s = 0.0;   // input-gradient compute (B of ZB-H1), excl. recompute
  double backward_weight_s = 0.0;  // weight-gradient compute (W of ZB-H1)
  double backward_tp_comm_s = 0.0;
  double backward_cp_comm_s = 0.0;
  double recompute_s = 0.0;  // forward recomputation done before the backward pass
  double recompute_tp_comm_s = 0.0;
  // Expert-parallel token exchanges of its MoE layers (dispatch and combine all-to-alls, ETP
  // gathers) not hidden behind compute.
  double forward_ep_comm_s = 0.0;
  double backward_ep_comm_s = 0.0;  // including a full recompute's replayed forward exchanges
  // The same for a forward and a backward that run paired (DualPipeV; as above otherwise).
  double paired_forward_ep_comm_s = 0.0;
  double paired_backward_ep_comm_s = 0.0;
  double activation_bytes = 0.0;  // sent to the next stage per micro-batch (same size back)
  double parameter_count = 0.0;   // parameters of this chunk held by one GPU (per TP shard)
  // Of one of its layers, without routed experts, averaged over its layers (the rest: routed
  // experts, embedding, head, MTP modules).
  double layer_parameter_count = 0.0;
  // The routed experts' parameters among parameter_count (reduced over expert data parallelism,
  // not the DP group).
  double expert_parameter_count = 0.0;

  // The embedding, final norm and output layer this chunk holds: under ZeRO-3 FSDP's root
  // unit, gathered once per micro-batch and kept through the backward.
  [[nodiscard]] double root_parameter_count() const {
    return parameter_count - expert_parameter_count - num_layers * layer_parameter_count;
  }
  // Parameters whose gradients the DP (x CP) group reduces: all but the routed experts'.
  [[nodiscard]] double dense_parameter_count() const {
    return parameter_count - expert_parameter_count;
  }
  [[nodiscard]] bool has_root_unit() const { return root_parameter_count() >= 1.0; }
};

struct StageCosts {
  std::vector<ChunkCosts> chunks;  // one per virtual stage, in model order
  double parameter_count = 0.0;    // sum over chunks, per GPU
  double optimizer_s = 0.0;        // Adam step over the local shard (memory bound)
  // The routed experts' gradient reduction (all-reduce, or reduce-scatter with a distributed
  // optimizer) and parameter gather over the expert-data-parallel group, after the stage's last
  // backward and before its optimizer step (uncontended collective times).
  double expert_dp_s = 0.0;
};

// Everything both engines need about one iteration, computed once from a scenario and profile.
struct IterationCosts {
  std::vector<StageCosts> stages;  // pipeline stages
  int micro_batches = 1;           // per pipeline per iteration
  GroupShape tp_group;
  GroupShape dp_group;           // data-parallel replicas of one shard (x context)
  GroupShape pp_link;            // ranks_per_node = 1 hop; nodes = 2 when PP crosses nodes
  GroupShape ep_group;           // expert parallelism (MoE models)
  GroupShape expert_dp_group;    // expert data parallelism (MoE models)
  double dp_bucket_bytes = 0.0;  // Parallelism::dp_bucket_bytes_or_default
  // Megatron-Core's bucket layout (Parallelism::dp_buckets_every_chunk false): dp_bucket_count.
  bool megatron_core_buckets = true;
  // Fraction of compute throughput left while a collective runs concurrently (its CTAs hold
  // HardwareProfile::collective_sms SMs): one layer's fwd + bwd time on the whole GPU over its
  // time on the remaining SMs. 1 when nothing is taken.
  double compute_rate_during_comm = 1.0;
  double grad_bytes_per_element = 2.0;  // gradient reduction precision
  // ZeRO parameter gathers: the embedding, final norm and output layer, and a layer's parameters
  // on average (fp8_params: its GEMM weights in 1 byte, Megatron --fp8-param-gather).
  double param_bytes_per_element = 2.0;
  double layer_param_bytes_per_element = 2.0;
  // ZeRO-3's collectives per layer, as the stack issues them
  // (StackSettings::zero3_per_tensor_collectives): gathers and reduce-scatters of this many
  // tensors each (1: one flat collective per layer), the backward's gathers repeated
  // `zero3_backward_gather_passes` times (a full recompute gathers again), and the host time
  // each collective's per-rank copies take, fully exposed (the stack synchronises the device
  // before each gather).
  int zero3_gathers_per_layer = 1;
  int zero3_scatters_per_layer = 1;
  int zero3_backward_gather_passes = 1;
  double zero3_host_s_per_collective = 0.0;
  double tokens_per_iteration = 0.0;
  double model_flop_per_iteration = 0.0;     // 6N + attention convention (PaLM / Korthikanti)
  double hardware_flop_per_iteration = 0.0;  // including recomputation
};

// Bytes a ZeRO gather of all of `chunk`'s parameters moves (a distributed optimizer's parameter
// gather after the step): its layers at layer_param_bytes_per_element, the rest at
// param_bytes_per_element.
[[nodiscard]] inline double chunk_param_gather_bytes(const IterationCosts& costs,
                                                     const ChunkCosts& chunk) {
  return chunk.num_layers * chunk.layer_parameter_count * costs.layer_param_bytes_per_element +
         chunk.root_parameter_count() * costs.param_bytes_per_element;
}

// Host time of one ZeRO-3 op over `chunk`'s layers: `gather_passes` gathers per layer (0: none)
// and, when it `scatters`, one reduce-scatter per layer, each of zero3_*_per_layer collectives.
[[nodiscard]] inline double zero3_host_s(const IterationCosts& costs, const ChunkCosts& chunk,
                                         int gather_passes, bool scatters) {
  const int per_layer = gather_passes * costs.zero3_gathers_per_layer +
                        (scatters ? costs.zero3_scatters_per_layer : 0);
  return std::max(chunk.num_layers, 1) * per_layer * costs.zero3_host_s_per_collective;
}

// Bytes a DP gradient reduction of all of `chunk`'s gradients moves.
[[nodiscard]] inline double chunk_gradient_bytes(const IterationCosts& costs,
                                                 const ChunkCosts& chunk) {
  return chunk.dense_parameter_count() * costs.grad_bytes_per_element;
}

// At most this many buckets per chunk: beyond it the replay merges buckets (a 64 KiB bucket on a
// 70B stage would mean millions of flows); 4,096 already resolve the overlap to 1/4,096 of the
// backward pass.
inline constexpr double kMaxDpBucketsPerChunk = 4096.0;

// Gradient buckets of virtual chunk `chunk` on pipeline stage `stage`.
// Megatron-Core (since Sept 2023) splits only the first stage's first model chunk into buckets;
// later chunks and later stages reduce as one bucket each, off the critical path
// (distributed_data_parallel.py: bucket_size = None when pp_rank > 0; training.py
// disables bucketing for model_chunk_idx > 0). PyTorch DDP and Apex distributed Adam split
// every chunk (`dp_bucket_layout: every-chunk`). The same buckets (the same parameters) carry
// the distributed optimizer's parameter gather, so the count follows the gradient bytes even
// when the gather moves fewer bytes per parameter.
[[nodiscard]] inline int dp_bucket_count(const IterationCosts& costs, std::size_t stage,
                                         std::size_t chunk) {
  if (costs.megatron_core_buckets && (stage > 0 || chunk > 0))
    return 1;
  const double gradient_bytes =
      costs.stages[stage].chunks[chunk].dense_parameter_count() * costs.grad_bytes_per_element;
  return static_cast<int>(
      std::clamp(std::ceil(gradient_bytes / costs.dp_bucket_bytes), 1.0, kMaxDpBucketsPerChunk));
}

// How a chunk's gradients (and the same parameters' gathers) split into its dp_bucket_count
// buckets. Megatron-Core walks the parameters in backward order and closes a bucket once it
// holds the bucket size, so every bucket but the last is full and the last, produced at the end
// of the backward and needed first by the next forward (the first layers and the embedding),
// holds the rest (param_and_grad_buffer.py, _compute_default_per_buffer_param_layout; PyTorch
// DDP fills its buckets the same way). Past kMaxDpBucketsPerChunk the buckets are merged evenly.
struct DpBucketSplit {
  int count = 1;
  double full_share = 1.0;  // of the chunk's parameters in each bucket but the last
  [[nodiscard]] double last_share() const {
    return count <= 1 ? 1.0 : 1.0 - (count - 1) * full_share;
  }
};

[[nodiscard]] inline DpBucketSplit dp_bucket_split(const IterationCosts& costs, std::size_t stage,
                                                   std::size_t chunk) {
  const int count = dp_bucket_count(costs, stage, chunk);
  if (count == 1)
    return {};
  const double gradient_bytes =
      costs.stages[stage].chunks[chunk].dense_parameter_count() * costs.grad_bytes_per_element;
  const double full_share = costs.dp_bucket_bytes / gradient_bytes;
  if (gradient_bytes / costs.dp_bucket_bytes > kMaxDpBucketsPerChunk)
    return {count, 1.0 / count};
  // A rest below a millionth of a bucket is rounding in the division, not a bucket.
  if ((1.0 - (count - 1) * full_share) < 1e-6 * full_share)
    return {count - 1, 1.0 / (count - 1)};
  return {count, full_share};
}

// The shares of a chunk's parameters its buckets hold in forward order (the order a
// distributed optimizer's parameter gather needs them): the last gradient bucket, which holds
// the first layers, then the full ones.
[[nodiscard]] inline std::vector<double> forward_order_shares(const DpBucketSplit& split) {
  std::vector<double> shares(static_cast<std::size_t>(split.count), split.full_share);
  shares.front() = split.last_share();
  return shares;
}

}  // namespace capsim

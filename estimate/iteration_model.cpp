#include "estimate/iteration_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "models/all_to_all_cost.hpp"
#include "models/as_double.hpp"
#include "models/collective_cost.hpp"
#include "models/domain_span.hpp"
#include "models/gemm_cost.hpp"
#include "models/gpu_catalog.hpp"
#include "models/low_precision.hpp"
#include "models/memory_model.hpp"
#include "models/op_cost.hpp"
#include "models/overlap.hpp"
#include "models/parameter_count.hpp"
#include "models/tp_comm_overlap.hpp"
#include "models/workload.hpp"

#include "estimate/leaf_uplinks.hpp"

namespace capsim::estimate {
namespace {

// Activations, gradients and gathered parameters travel in 16 bits (fp8 recipes keep bf16
// activations between layers and bf16 gradients; Transformer Engine).
constexpr double kActivationBytes = 2.0;

// GPU idle at each dropless dispatch while the host waits for the routed-token counts and then
// issues the expert work. Megatron-Bridge's skills/nemo-mbridge-perf-moe-comm-overlap/SKILL.md
// profiles Qwen3-30B-A3B on 16 H100 (BF16, HybridEP, EP16, global batch 1,024, no all-to-all
// overlap) at 24.714 s per step with kernels active 22.821 s of it: 1.893 s idle over the 64
// micro-batches x 48 MoE layers = 3,072 dispatches of each GPU's step. With the overlap on, the
// same profile's kernels run through the whole step.
constexpr double kDroplessDispatchHostStallS = (24.7138 - 22.821) / 3072.0;

// Share of the exchange time that the pairing of moe_a2a_overlap (paired_exchanges_exposed)
// would hide which the schedule hides in practice. The same profile with the overlap on has its
// kernels active 1.600 s less (21.221 s): the exchange time hidden, where the full pairing
// hides 3.877 s of capsim's exchanges for that run.
constexpr double kEpOverlapEfficiency = 1.600 / 3.877;

// Compute time of one pass's ops, split by pass.
struct PassTimes {
  double forward_s = 0.0;
  double backward_input_s = 0.0;
  double backward_weight_s = 0.0;
  double attention_forward_s = 0.0;
  double attention_backward_s = 0.0;
  double replayed_forward_s = 0.0;  // the forward ops selective recompute replays
  // The MoE block's share (ops of the moe recompute module): router to un-permute, shared
  // expert included; the rest of the layer is its attention block.
  double moe_forward_s = 0.0;
  double moe_backward_s = 0.0;
};

// `replayed`: the recompute modules (Parallelism::replayed_modules) whose forward ops run again.
PassTimes cost_ops(const std::vector<Op>& ops, const HardwareProfile& profile, const GpuSpec& gpu,
                   Precision precision, double seq_length, unsigned replayed = 0) {
  PassTimes out;
  for (const Op& op : ops) {
    const double t = op_time_s(op, profile, gpu, precision, seq_length);
    if (op.attention_core) {
      (op.pass == Pass::kForward ? out.attention_forward_s : out.attention_backward_s) += t;
    }
    if (op.pass == Pass::kForward && (op.recompute_modules & replayed) != 0)
      out.replayed_forward_s += t;
    if ((op.recompute_modules & kRecomputeMoe) != 0)
      (op.pass == Pass::kForward ? out.moe_forward_s : out.moe_backward_s) += t;
    switch (op.pass) {
      case Pass::kForward:
        out.forward_s += t;
        break;
      case Pass::kBackwardInput:
        out.backward_input_s += t;
        break;
      case Pass::kBackwardWeight:
        out.backward_weight_s += t;
        break;
    }
  }
  return out;
}

double pass_total_s(const PassTimes& t) {
  return t.forward_s + t.backward_input_s + t.backward_weight_s;
}

// Megatron orders ranks tensor (fastest), context, data, pipeline; a node holds
// gpus_per_node consecutive ranks. Returns the shape of a group whose members are `stride`
// ranks apart, and the NIC bandwidth one such group gets per node while all groups of its
// kind communicate at once. With an NVLink domain spanning nodes the shape's "node" is the
// domain: the worst-placed group's domains and its fewest ranks in one (the slowest hop), each
// rank with its own server's NIC share.
GroupShape group_shape(int size, int stride, const ClusterSpec& cluster) {
  GroupShape g;
  g.ranks = size;
  if (cluster.nvlink_domain > 0) {
    const DomainSpan span =
        worst_domain_span(size, std::max(stride, 1), cluster.nvlink_domain, cluster.num_gpus());
    g.nodes = span.domains;
    g.ranks_per_node = span.domains > 1 ? span.min_ranks_per_domain : size;
    g.multi_node_nvlink = cluster.nvlink_domain > cluster.gpus_per_node;
  } else {
    const int per_node = std::max(1, cluster.gpus_per_node / std::max(stride, 1));
    g.ranks_per_node = std::min(size, per_node);
    g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
  }
  g.nic_bandwidth_per_node_bytes_per_s =
      cluster.node_nic_bandwidth_bytes_per_s() * g.ranks_per_node / d(cluster.gpus_per_node);
  return g;
}

// Megatron TP per layer: two all-reduces forward and two backward of tokens x h; with SP each
// becomes an all-gather plus a reduce-scatter of the same tokens (Korthikanti et al. §4.2.2).
// The gathers carry `gather_bytes` (fp8 under Transformer Engine, sp_gather_bytes), the
// reduce-scatters the 16-bit `buffer_bytes`. Returns the forward collectives and the backward
// ones of the row-parallel layers (SP's output-gradient gathers); the column-parallel layers'
// input-gradient collectives are column_parallel_backward_s's.
LayerComm tp_layer_comm(const HardwareProfile& profile, const GroupShape& tp, double buffer_bytes,
                        double gather_bytes, bool sequence_parallel) {
  if (tp.ranks <= 1)
    return {};
  if (sequence_parallel) {
    const double gather_s =
        collective_time_s(profile, CollectiveKind::kAllGather, gather_bytes, tp);
    const double scatter_s =
        collective_time_s(profile, CollectiveKind::kReduceScatter, buffer_bytes, tp);
    return {2.0 * (gather_s + scatter_s), 2.0 * gather_s};
  }
  return {2.0 * collective_time_s(profile, CollectiveKind::kAllReduce, buffer_bytes, tp), 0.0};
}

// What a TP collective of `comm_s` adds to each `pass` GEMM of the layers `names` in `ops`:
// beside it, what exceeds the GEMM and the compute its SMs slow (overlap.hpp); else all of it.
double collective_per_gemm_s(const std::vector<Op>& ops, const HardwareProfile& profile,
                             const GpuSpec& gpu, Precision precision, double seq_length,
                             double comm_s, bool beside, double rate, Pass pass,
                             std::initializer_list<std::string_view> names) {
  double added_s = 0.0;
  for (const Op& op : ops) {
    const bool named = std::any_of(names.begin(), names.end(),
                                   [&](std::string_view name) { return is_gemm(op, name, pass); });
    if (!named)
      continue;
    added_s += beside ? overlapped_exposed_s(
                            comm_s, op_time_s(op, profile, gpu, precision, seq_length), rate)
                      : comm_s;
  }
  return added_s;
}

// The backward collectives of the column-parallel layers `column_parallel` of `ops` (QKV and
// MLP-up; the output layer, Megatron's ColumnParallelLinear), given the serial path:
// - the input gradient is all-reduced over TP (reduce-scattered with SP). Megatron-LM
//   (LinearWithGradAccumulationAndAsyncCommunication, since September 2021) and Transformer
//   Engine (LayerNormLinear/LayerNormMLP backward, async_op=True) issue it before the layer's
//   weight-gradient GEMM and wait after it: beside that GEMM with tp_backward_overlap, else
//   serial;
// - with SP, the weight gradient needs the whole sequence while only each rank's slice of the
//   input was kept: the input is all-gathered again beside the data-gradient GEMM (Megatron-LM's
//   same backward; TE's LayerNormLinear/LayerNormMLP re-gather ln_out). `regather_bytes` is what
//   it moves (fp8 under TE for the layers, 16 bits for the output layer).
double column_parallel_backward_s(const std::vector<Op>& ops, const Scenario& scenario,
                                  const HardwareProfile& profile, const GpuSpec& gpu,
                                  const GroupShape& tp, double buffer_bytes, double regather_bytes,
                                  double seq_length, double rate,
                                  std::initializer_list<std::string_view> column_parallel) {
  const Parallelism& p = scenario.parallelism;
  if (tp.ranks <= 1)
    return 0.0;
  const CollectiveKind kind =
      p.sequence_parallel ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  double added_s =
      collective_per_gemm_s(ops, profile, gpu, p.precision, seq_length,
                            collective_time_s(profile, kind, buffer_bytes, tp),
                            p.tp_backward_overlap, rate, Pass::kBackwardWeight, column_parallel);
  if (p.sequence_parallel) {
    added_s += collective_per_gemm_s(
        ops, profile, gpu, p.precision, seq_length,
        collective_time_s(profile, CollectiveKind::kAllGather, regather_bytes, tp),
        /*beside=*/true, rate, Pass::kBackwardInput, column_parallel);
  }
  return added_s;
}

// Bytes a layer's sequence-parallel all-gather moves for `elements` activations. Under fp8,
// Transformer Engine gathers the inputs of its fp8 GEMMs already cast (per-tensor scaling, one
// scale for all ranks): the norm's output before QKV and MLP-up, forward and in the backward's
// re-gather (LayerNormLinear/LayerNormMLP gather the uint8 `ln_out`), and the output gradient
// before the projection's and MLP-down's data gradient (grad_output_preprocess casts, then
// gathers). Reduce-scatters carry the GEMMs' 16-bit outputs, and the head's logits input, a
// Megatron ColumnParallelLinear in 16 bits, is gathered in 16 bits. The other recipes gather
// their quantized copy with its block scales.
double sp_gather_bytes(double elements, Precision precision) {
  return elements *
         (is_low_precision(precision) ? quantized_activation_bytes(precision) : kActivationBytes);
}

struct EdgeComm {
  LayerComm embedding;
  LayerComm head;
};

EdgeComm tp_edge_comm(const HardwareProfile& profile, const GroupShape& tp, double buffer_bytes,
                      bool sequence_parallel) {
  if (tp.ranks <= 1)
    return {};
  const auto time = [&](CollectiveKind kind) {
    return collective_time_s(profile, kind, buffer_bytes, tp);
  };
  if (sequence_parallel) {
    return {{time(CollectiveKind::kReduceScatter), time(CollectiveKind::kAllGather)},
            {time(CollectiveKind::kAllGather), 0.0}};
  }
  return {{time(CollectiveKind::kAllReduce), 0.0}, {0.0, 0.0}};
}

// Bytes per parameter a ZeRO gather of one layer moves: 16 bits, except that with fp8_params
// the GEMM weights are Transformer Engine fp8 tensors and travel as 1 byte (Megatron-LM
// --fp8-param-gather); norms and biases stay 16-bit.
double layer_param_gather_bytes_per_element(const ModelSpec& m, const Parallelism& p) {
  if (!p.fp8_params)
    return kActivationBytes;
  const double all = layer_parameters_per_rank(m, p.tensor);
  const double matmul = layer_matmul_parameters_per_rank(m, p.tensor);
  return (matmul * 1.0 + (all - matmul) * kActivationBytes) / all;
}

// Tokens of one micro-batch on one GPU (its context-parallel share of the sequence).
double tokens_per_micro_batch(const Scenario& scenario) {
  const Parallelism& p = scenario.parallelism;
  return d(p.micro_batch_size) * d(scenario.model.seq_length) / d(p.context);
}

// The iteration's totals and communication groups, before any per-stage cost.
IterationCosts iteration_frame(const Scenario& scenario) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const ClusterSpec& c = scenario.cluster;
  IterationCosts costs;
  costs.micro_batches = p.num_micro_batches();
  costs.tp_group = group_shape(p.tensor, 1, c);
  costs.dp_group = group_shape(p.data * p.context, p.tensor, c);
  costs.pp_link.ranks = 2;
  const int pp_stride = p.tensor * p.context * p.data;
  costs.pp_link.nodes = pp_stride >= c.nvlink_domain_gpus() ? 2 : 1;
  costs.pp_link.ranks_per_node = 1;
  // Every GPU of a node sends its slice at once in steady state: one GPU's share of the NICs.
  costs.pp_link.nic_bandwidth_per_node_bytes_per_s =
      c.node_nic_bandwidth_bytes_per_s() / d(c.gpus_per_node);
  if (m.moe) {
    // Megatron-Core's expert grid orders expert-tensor (fastest), expert, expert-data, pipeline.
    costs.ep_group = group_shape(p.expert, p.expert_tensor_or_default(), c);
    costs.expert_dp_group =
        group_shape(p.expert_data(), p.expert * p.expert_tensor_or_default(), c);
  }
  costs.dp_bucket_bytes = p.dp_bucket_bytes_or_default();
  costs.megatron_core_buckets = !p.dp_buckets_every_chunk;
  costs.grad_bytes_per_element = p.grad_reduce_bytes_per_element();
  costs.param_bytes_per_element = kActivationBytes;
  costs.layer_param_bytes_per_element = layer_param_gather_bytes_per_element(m, p);
  costs.tokens_per_iteration = d(p.global_batch_size) * d(m.seq_length);
  costs.model_flop_per_iteration = costs.tokens_per_iteration * model_flop_per_token(m);
  costs.hardware_flop_per_iteration =
      costs.tokens_per_iteration * hardware_flop_per_token(m, p.recompute);
  return costs;
}

// DeepSpeed keeps whole on every rank the parameters of at most this many elements
// (param_persistence_threshold, default 1e5 in v0.3.13's stage3.py).
constexpr double kDeepSpeedPersistenceThreshold = 1e5;

// ZeRO-3 as the scenario's stack issues its collectives. DeepSpeed v0.3
// (StackSettings::zero3_per_tensor_collectives) reduce-scatters every parameter tensor on its
// own and gathers each one above the persistence threshold, again for a full recompute's
// forward; torch.distributed's list API copies each rank's part separately (ProcessGroupNCCL's
// reduce_scatter flattens its inputs, its allgather copies out each output), one kernel call
// per rank at the profile's launch term, and the host waits for the device before each gather
// (_allgather_param: torch.cuda.synchronize()), so that time is not hidden.
void set_zero3_collectives(const Scenario& scenario, const HardwareProfile& profile,
                           IterationCosts& costs) {
  const Parallelism& p = scenario.parallelism;
  if (p.zero_stage != 3 || scenario.stack == nullptr ||
      !scenario.stack->settings.zero3_per_tensor_collectives) {
    return;
  }
  const ModelSpec& m = scenario.model;
  const std::vector<double> tensors =
      layer_parameter_tensors_per_rank(m, p.tensor, m.moe.has_value());
  const auto gathered = std::count_if(tensors.begin(), tensors.end(), [](double elements) {
    return elements > kDeepSpeedPersistenceThreshold;
  });
  // A layer whose tensors all persist still moves its bytes through the one gather the streams
  // run per layer (its first use): at least one collective's latency.
  costs.zero3_gathers_per_layer = std::max(1, static_cast<int>(gathered));
  costs.zero3_scatters_per_layer = static_cast<int>(tensors.size());
  costs.zero3_backward_gather_passes = p.recompute == Recompute::kFull ? 2 : 1;
  costs.zero3_host_s_per_collective = d(costs.dp_group.ranks) * profile.gemm.launch_overhead_s;
}

// The context-parallel ring of one GPU. A ring's node-crossing step is one send from one GPU
// through its own NICs (rail-aligned), however many ring ranks share a node: one GPU's share,
// as a pipeline hop; rings that leave their leaf on an oversubscribed fabric share its uplinks.
GroupShape cp_ring_group(const Scenario& scenario) {
  const ClusterSpec& c = scenario.cluster;
  GroupShape cp = group_shape(scenario.parallelism.context, scenario.parallelism.tensor, c);
  cp.nic_bandwidth_per_node_bytes_per_s = c.node_nic_bandwidth_bytes_per_s() / d(c.gpus_per_node);
  if (const double share = cp_leaf_uplink_share(scenario); share > 0.0) {
    cp.nic_bandwidth_per_node_bytes_per_s = std::min(cp.nic_bandwidth_per_node_bytes_per_s, share);
  }
  return cp;
}

// What one layer of one kind (LayerKind: dense or MoE FFN, full or windowed attention) costs.
struct KindCosts {
  bool used = false;  // some layer of the model is of this kind
  PassTimes compute;
  LayerComm tp;
  LayerComm cp;                    // the K/V ring not hidden behind attention
  LayerComm ep;                    // exposed expert-parallel exchanges (MoE layers)
  LayerComm ep_paired;             // the same in a DualPipeV pair (PipelineOp::paired)
  LayerComm ep_replayed;           // the forward exchanges a full recompute replays
  double parameters = 0.0;         // on one GPU, without routed experts
  double expert_parameters = 0.0;  // routed experts on one GPU
};

// Index of a LayerKind in PartCosts::kinds.
size_t kind_index(LayerKind kind) {
  return (kind.moe ? 2U : 0U) + (kind.windowed ? 1U : 0U);
}

// What each kind of layer, the embedding and the head cost, computed once: layers of one kind
// are identical. `layer` is the first layer's kind (the dense full-attention layer of a dense
// model), which the compute rate during collectives is measured on.
struct PartCosts {
  std::array<KindCosts, 4> kinds;
  PassTimes embedding;
  PassTimes head;
  EdgeComm edges;  // the embedding's and the head's TP collectives
  // One multi-token-prediction module (its layer, projection and head), with its collectives.
  PassTimes mtp;
  LayerComm mtp_comm;
  LayerComm mtp_ep;
  LayerComm mtp_ep_paired;
  double mtp_parameters = 0.0;
  double mtp_expert_parameters = 0.0;
  double activation_bytes = 0.0;          // a PP hop's bytes per micro-batch
  double compute_rate_during_comm = 1.0;  // IterationCosts::compute_rate_during_comm
};

// TP (and SP) collectives of a layer and of the edges. Vocab-parallel embedding (Megatron-LM):
// forward all-reduces its output (SP: reduce-scatter), whose backward is free (SP: an
// all-gather). The head's column-parallel logits take a replicated input: with SP it is
// all-gathered forward and reduce-scattered backward, without SP the input gradient is
// all-reduced backward, as any column-parallel layer's (column_parallel_backward_s; tp_edge_comm
// holds the rest). The vocab-parallel loss all-reduces per-token fp32 values over TP: the
// logit maximum, the target logit and the exp-sum (Megatron-Core cross_entropy.py: three; its
// fused version concatenates the last two, as one-kernel losses with a process group do).
// `layer_ops` and `head_ops` are the lowered layer and head. With tp_comm_overlap the layer's
// collectives are costed as Transformer Engine overlaps them (tp_overlapped_layer_comm).
LayerComm layer_tensor_parallel_comm(const Scenario& scenario, const std::vector<Op>& layer_ops,
                                     LayerKind kind, const HardwareProfile& profile,
                                     const GpuSpec& gpu, const GroupShape& tp, double rate) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const double tokens = tokens_per_micro_batch(scenario);
  const double buffer_bytes = tokens * m.hidden_size * kActivationBytes;
  const double layer_gather_bytes = sp_gather_bytes(tokens * m.hidden_size, p.precision);
  const double seq = attention_kernel_seq_length(m, p);
  if (kind.moe) {
    // A MoE layer's TP collectives are its attention block's: half of a dense layer's. The
    // experts' own exchanges are expert-parallel (expert_parallel_comm).
    LayerComm tp_comm =
        tp_layer_comm(profile, tp, buffer_bytes, layer_gather_bytes, p.sequence_parallel);
    tp_comm.forward_s *= 0.5;
    tp_comm.backward_s *= 0.5;
    tp_comm.backward_s +=
        column_parallel_backward_s(layer_ops, scenario, profile, gpu, tp, buffer_bytes,
                                   layer_gather_bytes, seq, rate, {"qkv", "q_down", "q_proj"});
    return tp_comm;
  }
  // MLA's latent projections replace the QKV GEMM the overlap pairs the first all-gather with,
  // so an MLA layer's collectives are costed without it.
  if (p.tp_comm_overlap && !m.mla) {
    return tp_overlapped_layer_comm(layer_ops, profile, gpu, p.precision, seq, tp,
                                    layer_gather_bytes, buffer_bytes);
  }
  LayerComm tp_comm =
      tp_layer_comm(profile, tp, buffer_bytes, layer_gather_bytes, p.sequence_parallel);
  tp_comm.backward_s += column_parallel_backward_s(layer_ops, scenario, profile, gpu, tp,
                                                   buffer_bytes, layer_gather_bytes, seq, rate,
                                                   {"qkv", "q_down", "q_proj", "mlp_up"});
  return tp_comm;
}

void add_edge_tensor_parallel_costs(PartCosts& parts, const Scenario& scenario,
                                    const std::vector<Op>& head_ops, const HardwareProfile& profile,
                                    const GpuSpec& gpu, const GroupShape& tp, double rate) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const double tokens = tokens_per_micro_batch(scenario);
  const double buffer_bytes = tokens * m.hidden_size * kActivationBytes;
  const double seq = attention_kernel_seq_length(m, p);
  // The embedding's and the head's collectives stay outside Transformer Engine's layers and so
  // outside its overlap.
  parts.edges = tp_edge_comm(profile, tp, buffer_bytes, p.sequence_parallel);
  if (tp.ranks > 1) {
    const double loss_reductions = m.cross_entropy == CrossEntropyKernel::kUnfused ? 3.0 : 2.0;
    parts.edges.head.forward_s +=
        loss_reductions * collective_time_s(profile, CollectiveKind::kAllReduce, 4.0 * tokens, tp);
  }
  parts.edges.head.backward_s += column_parallel_backward_s(
      head_ops, scenario, profile, gpu, tp, buffer_bytes, buffer_bytes, seq, rate, {"logits"});
}

// Context parallelism: a ring of c-1 K/V exchanges per layer overlapped with the attention of
// each chunk (Megatron CP, ring attention; Liu et al. 2023); backward also sends dK/dV.
LayerComm context_parallel_costs(const Scenario& scenario, const HardwareProfile& profile,
                                 const PassTimes& layer, double rate) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  if (p.context <= 1)
    return {};
  const GroupShape ring = cp_ring_group(scenario);
  double kv_bytes = 2.0 * tokens_per_micro_batch(scenario) * d(m.num_kv_heads) * d(m.head_dim()) /
                    d(p.tensor) * kActivationBytes;
  if (m.mla) {
    // MLA's ring carries each head's keys (qk_head_dim + rotary part) and values.
    kv_bytes = tokens_per_micro_batch(scenario) * d(m.num_attention_heads) *
               d(m.mla->qk_head_dim + m.mla->qk_pos_emb_head_dim + m.mla->v_head_dim) /
               d(p.tensor) * kActivationBytes;
  }
  const double steps = p.context - 1.0;
  const auto exposed_s = [&](double bytes, double attention_s) {
    const double step_s = collective_time_s(profile, CollectiveKind::kSendRecv, bytes, ring);
    return steps * overlapped_exposed_s(step_s, attention_s / p.context, rate);
  };
  return {exposed_s(kv_bytes, layer.attention_forward_s),
          exposed_s(2.0 * kv_bytes, layer.attention_backward_s)};
}

// One virtual chunk of `layers` layers starting at `first_layer`, with the embedding on stage
// 0's first chunk and the head (and the MTP modules) on the model's last chunk. Each layer costs
// what its kind costs (layer_kind); a dense model's layers are all of the first kind.
ChunkCosts chunk_costs(const PartCosts& parts, const Scenario& scenario, int stage, int chunk,
                       int first_layer, int layers) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  ChunkCosts ch;
  ch.first_layer = first_layer;
  ch.num_layers = layers;
  ch.has_embedding = stage == 0 && chunk == 0;
  ch.has_head = !next_chunk(p.schedule, p.pipeline, p.virtual_pipeline_stages, stage, chunk);
  std::array<int, 4> counts{};
  if (m.moe || m.window_attention) {
    for (int layer = first_layer; layer < first_layer + layers; ++layer)
      ++counts[kind_index(layer_kind(m, layer))];
  } else {
    counts[0] = layers;
  }
  bool first_kind = true;
  double dense_parameters = 0.0;
  for (size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0)
      continue;
    const KindCosts& kc = parts.kinds[k];
    const double n = counts[k];
    // The first kind assigns, so that a uniform chunk's sums are n x one layer exactly.
    const auto put = [first_kind](double& field, double value) {
      field = first_kind ? value : field + value;
    };
    put(ch.forward_compute_s, n * kc.compute.forward_s);
    put(ch.backward_input_s, n * kc.compute.backward_input_s);
    put(ch.backward_weight_s, n * kc.compute.backward_weight_s);
    put(ch.forward_tp_comm_s, n * kc.tp.forward_s);
    put(ch.backward_tp_comm_s, n * kc.tp.backward_s);
    put(ch.forward_cp_comm_s, n * kc.cp.forward_s);
    put(ch.backward_cp_comm_s, n * kc.cp.backward_s);
    if (p.recompute == Recompute::kFull) {
      put(ch.recompute_s, n * kc.compute.forward_s);
      put(ch.recompute_tp_comm_s, n * kc.tp.forward_s);
      ch.backward_cp_comm_s += n * kc.cp.forward_s;  // the replayed forward's K/V ring
    } else if (p.recompute == Recompute::kSelective) {
      put(ch.recompute_s, n * kc.compute.replayed_forward_s);
      // The recomputed attention core is Transformer Engine's attention with its CP ring
      // (Megatron-Core checkpoints core_attention): the K/V exchange runs again too.
      if ((p.recompute_modules & kRecomputeCoreAttention) != 0)
        ch.backward_cp_comm_s += n * kc.cp.forward_s;
    }
    if (kc.expert_parameters > 0.0 || kc.ep.forward_s > 0.0 || kc.ep.backward_s > 0.0) {
      ch.forward_ep_comm_s += n * kc.ep.forward_s;
      ch.backward_ep_comm_s += n * kc.ep.backward_s;
      ch.paired_forward_ep_comm_s += n * kc.ep_paired.forward_s;
      ch.paired_backward_ep_comm_s += n * kc.ep_paired.backward_s;
      // Replaying the whole MoE layer (full recompute, or the moe module) dispatches and
      // combines its tokens again.
      if (p.recompute == Recompute::kFull || (p.replayed_modules() & kRecomputeMoe) != 0) {
        ch.backward_ep_comm_s += n * kc.ep_replayed.forward_s;
        ch.paired_backward_ep_comm_s += n * kc.ep_replayed.forward_s;
      }
      ch.expert_parameter_count += n * kc.expert_parameters;
    }
    dense_parameters = first_kind ? n * kc.parameters : dense_parameters + n * kc.parameters;
    first_kind = false;
  }
  if (layers > 0 && counts[0] == layers) {
    ch.layer_parameter_count = parts.kinds[0].parameters;
    ch.parameter_count = layers * ch.layer_parameter_count;
  } else {
    ch.layer_parameter_count = layers > 0 ? dense_parameters / layers : parts.kinds[0].parameters;
    ch.parameter_count = dense_parameters + ch.expert_parameter_count;
  }
  const auto add = [&ch](const PassTimes& compute, const LayerComm& tp) {
    ch.forward_compute_s += compute.forward_s;
    ch.backward_input_s += compute.backward_input_s;
    ch.backward_weight_s += compute.backward_weight_s;
    ch.forward_tp_comm_s += tp.forward_s;
    ch.backward_tp_comm_s += tp.backward_s;
  };
  if (ch.has_embedding) {
    add(parts.embedding, parts.edges.embedding);
    ch.parameter_count += input_embedding_parameters_per_rank(m, p.tensor);
  }
  if (ch.has_head) {
    add(parts.head, parts.edges.head);
    // Tied embeddings: with pipeline > 1 the last stage keeps its own copy of the word
    // embedding (Megatron-LM), kept in sync by an extra all-reduce we neglect.
    const bool own_copy = m.tied_embeddings && p.pipeline > 1 && stage != 0;
    ch.parameter_count += head_parameters_per_rank(m, p.tensor) +
                          (own_copy ? word_embedding_parameters_per_rank(m, p.tensor) : 0.0);
    for (int k = 0; k < m.mtp_layers; ++k) {
      add(parts.mtp, parts.mtp_comm);
      ch.forward_ep_comm_s += parts.mtp_ep.forward_s;
      ch.backward_ep_comm_s += parts.mtp_ep.backward_s;
      ch.paired_forward_ep_comm_s += parts.mtp_ep_paired.forward_s;
      ch.paired_backward_ep_comm_s += parts.mtp_ep_paired.backward_s;
      ch.parameter_count += parts.mtp_parameters + parts.mtp_expert_parameters;
      ch.expert_parameter_count += parts.mtp_expert_parameters;
    }
  }
  ch.activation_bytes = parts.activation_bytes;
  return ch;
}

// Each stage's chunks and optimizer step. Megatron assigns chunk k of stage s the layers of
// model chunk k·p + s; DualPipeV the V (models/pipeline_placement.hpp).
void add_stages(IterationCosts& costs, const PartCosts& parts, const Scenario& scenario,
                const HardwareProfile& profile, const GpuSpec& gpu) {
  const Parallelism& p = scenario.parallelism;
  const std::vector<int> stage_layers = layers_per_stage(scenario.model, p);
  const int v = p.virtual_pipeline_stages;
  // The stages keep their chunk vectors' storage (compute_iteration_costs into `out`).
  costs.stages.resize(static_cast<size_t>(p.pipeline));
  for (StageCosts& stage : costs.stages) {
    std::vector<ChunkCosts> chunks = std::move(stage.chunks);
    chunks.clear();
    stage = StageCosts{};
    stage.chunks = std::move(chunks);
  }
  // In model order (Megatron's: chunk k of every stage before chunk k + 1 of any), which puts
  // each stage's chunks in its vector in chunk order under every schedule.
  int next_layer = 0;
  for_each_chunk_in_model_order(p, [&](int s, int k) {
    const int layers =
        layers_in_chunk(stage_layers[static_cast<size_t>(s)], s, k, p.pipeline, v, p.schedule);
    StageCosts& stage = costs.stages[static_cast<size_t>(s)];
    stage.chunks.push_back(chunk_costs(parts, scenario, s, k, next_layer, layers));
    stage.parameter_count += stage.chunks.back().parameter_count;
    next_layer += layers;
  });
  for (StageCosts& stage : costs.stages) {
    // Adam over the local shard (ZeRO >= 1 shards it over DP x CP), memory bound. By default
    // it reads the fp32 master, gradient, m and v (16 B), writes master, m, v (12 B) and the
    // 16-bit copy (2 B), and the gradient-norm pass for clipping reads the fp32 gradients once
    // more (4 B): 34 bytes per parameter; adam_step_bytes_per_parameter follows the master's
    // and the moments' storage.
    const double shard = p.zero_stage >= 1 ? d(p.data * p.context) : 1.0;
    double expert_parameters = 0.0;
    for (const ChunkCosts& ch : stage.chunks)
      expert_parameters += ch.expert_parameter_count;
    // The routed experts' optimizer state is sharded over expert data parallelism instead.
    double step_bytes = adam_step_bytes_per_parameter(p) * stage.parameter_count / shard;
    if (expert_parameters > 0.0) {
      step_bytes = adam_step_bytes_per_parameter(p) *
                   ((stage.parameter_count - expert_parameters) / shard +
                    expert_parameters / (p.zero_stage >= 1 ? d(p.expert_data()) : 1.0));
    }
    stage.optimizer_s =
        memory_bound_time_s(profile.gemm, gpu, step_bytes) / profile.software_efficiency;
    if (expert_parameters > 0.0 && costs.expert_dp_group.ranks > 1) {
      const CollectiveKind reduce =
          p.zero_stage >= 1 ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
      stage.expert_dp_s = collective_time_s(
          profile, reduce, expert_parameters * costs.grad_bytes_per_element, costs.expert_dp_group);
      if (p.zero_stage >= 1) {
        stage.expert_dp_s += collective_time_s(profile, CollectiveKind::kAllGather,
                                               expert_parameters * costs.param_bytes_per_element,
                                               costs.expert_dp_group);
      }
    }
  }
}

// The expert-parallel exchanges of one MoE layer, forward and backward (seconds, not hidden).
// Dispatch and combine forward, and their gradients backward (a dispatch's backward is a
// combine and the reverse): each moves the rank's routed token copies, top_k per token of its
// sequence-parallel share (times load_imbalance on the busiest rank), hidden_size wide; the
// forward dispatch in fp8 (1 byte plus a 4-byte scale per 128 elements) when training in fp8,
// the rest in 16 bits. `allgather`: the tokens are all-gathered over EP and the outputs
// reduce-scattered back (Megatron-Core MoEAllGatherTokenDispatcher). With ETP > 1 the routed
// rows are all-gathered over the expert-tensor group before the experts and reduce-scattered
// after, each way.
LayerComm expert_parallel_exchanges(const Scenario& scenario, const HardwareProfile& profile,
                                    const GroupShape& ep) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const MoeSpec& moe = *m.moe;
  const double h = m.hidden_size;
  const double local = tokens_per_micro_batch(scenario) / d(p.tensor);
  const double copies = local * d(moe.top_k) * std::max(moe.load_imbalance, 1.0);
  const double dispatch_bytes_per_element =
      p.precision == Precision::kFp8 ? 1.0 + 4.0 / 128.0 : kActivationBytes;
  LayerComm raw;
  if (p.token_dispatcher == TokenDispatcher::kAllGather) {
    const double gathered = local * h * kActivationBytes * d(p.expert);
    const double gather_s = collective_time_s(profile, CollectiveKind::kAllGather, gathered, ep);
    const double scatter_s =
        collective_time_s(profile, CollectiveKind::kReduceScatter, gathered, ep);
    raw = {gather_s + scatter_s, gather_s + scatter_s};
  } else {
    const DeepEpShares shares = deepep_shares(moe, ep);
    const auto exchange_s = [&](double bytes_per_element) {
      return all_to_all_time_s(profile, scenario.cluster, p.token_dispatcher,
                               copies * h * bytes_per_element, ep, shares);
    };
    const double bf16_s = exchange_s(kActivationBytes);
    raw = {exchange_s(dispatch_bytes_per_element) + bf16_s, 2.0 * bf16_s};
  }
  if (const int etp = p.expert_tensor_or_default(); etp > 1) {
    const GroupShape etp_group = group_shape(etp, 1, scenario.cluster);
    const double rows_bytes = routed_rows(m, p) * h * kActivationBytes;
    const double etp_s =
        collective_time_s(profile, CollectiveKind::kAllGather, rows_bytes, etp_group) +
        collective_time_s(profile, CollectiveKind::kReduceScatter, rows_bytes, etp_group);
    raw.forward_s += etp_s;
    raw.backward_s += etp_s;
  }
  return raw;
}

// What the exchanges `raw` of a MoE layer whose compute is `layer` expose. With
// moe_a2a_overlap (Megatron-Core's combined 1F1B, pipeline_parallel/combined_1f1b.py: "EP A2A
// in forward step is hidden by the attention/mlp computation in the backward step, and vice
// versa") one micro-batch's forward and another's backward of the same layer run as
// paired sub-blocks, each exchange beside one block of the other pass: the forward dispatch
// beside the backward MoE block, the forward combine beside the backward attention block, the
// backward combine beside the forward attention block and the backward dispatch beside the
// forward MoE block; each is slowed by the SMs the exchange holds (overlap.hpp). Dispatch and
// combine move the same bytes, half of each pass's exchanges. A schedule realises `efficiency`
// of what that pairing would hide: DualPipeV's pairs all of it (DeepSeek-V3 technical report
// §3.2.1: "both all-to-all and PP communication can be fully hidden").
LayerComm paired_exchanges_exposed(const LayerComm& raw, const PassTimes& layer, double rate,
                                   double efficiency) {
  const double backward_s = layer.backward_input_s + layer.backward_weight_s;
  const double attention_forward_s = layer.forward_s - layer.moe_forward_s;
  const double attention_backward_s = backward_s - layer.moe_backward_s;
  const auto beside = [rate](double comm_s, double compute_s) {
    return overlapped_exposed_s(comm_s, compute_s, rate);
  };
  const LayerComm paired{beside(0.5 * raw.forward_s, layer.moe_backward_s) +
                             beside(0.5 * raw.forward_s, attention_backward_s),
                         beside(0.5 * raw.backward_s, attention_forward_s) +
                             beside(0.5 * raw.backward_s, layer.moe_forward_s)};
  const auto realised = [efficiency](double raw_s, double paired_s) {
    return raw_s - efficiency * (raw_s - paired_s);
  };
  return {realised(raw.forward_s, paired.forward_s), realised(raw.backward_s, paired.backward_s)};
}

// The host's wait at one MoE layer's dispatch: dropless routing sizes the exchange and the
// grouped GEMMs from counts the host reads back from the device (Megatron-Core's alltoall
// dispatcher synchronises on their copy before the all-to-all, DeepEP's dispatch spins on them,
// HybridEP drains its stream, the allgather dispatcher copies them with .cpu()), and the
// device idles until the host issues the work after it. Padding each rank's experts to a
// capacity (rank_capacity_factor) needs no counts.
double dispatch_host_stall_s(const MoeSpec& moe) {
  return moe.rank_capacity_factor > 0.0 ? 0.0 : kDroplessDispatchHostStallS;
}

// The costs of each kind of layer, the embedding and the head of `scenario`, whose TP group is
// `tp`.
PartCosts part_costs(const Scenario& scenario, const HardwareProfile& profile, const GpuSpec& gpu,
                     const GroupShape& tp) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const double seq = attention_kernel_seq_length(m, p);
  PartCosts parts;
  std::array<bool, 4> used{};
  for (int layer = 0; layer < m.num_layers; ++layer)
    used[kind_index(layer_kind(m, layer))] = true;
  used[0] = used[0] || m.num_layers == 0;
  const LayerKind first = layer_kind(m, 0);
  const std::vector<Op> first_ops = lower_layer(m, p, first);
  const unsigned replayed = p.replayed_modules();
  const PassTimes first_compute = cost_ops(first_ops, profile, gpu, p.precision, seq, replayed);
  if (profile.collective_sms > 0) {
    const GpuSpec shared = without_sms(gpu, profile.collective_sms);
    parts.compute_rate_during_comm =
        pass_total_s(first_compute) /
        pass_total_s(cost_ops(first_ops, profile, shared, p.precision, seq));
  }
  const double rate = parts.compute_rate_during_comm;
  const GroupShape ep =
      m.moe ? group_shape(p.expert, p.expert_tensor_or_default(), scenario.cluster) : GroupShape{};
  const LayerComm ep_raw = m.moe ? expert_parallel_exchanges(scenario, profile, ep) : LayerComm{};
  for (size_t k = 0; k < parts.kinds.size(); ++k) {
    if (!used[k])
      continue;
    const LayerKind kind{k >= 2, k % 2 == 1};
    const std::vector<Op> ops = kind == first ? first_ops : lower_layer(m, p, kind);
    KindCosts& kc = parts.kinds[k];
    kc.used = true;
    kc.compute =
        kind == first ? first_compute : cost_ops(ops, profile, gpu, p.precision, seq, replayed);
    kc.tp = layer_tensor_parallel_comm(scenario, ops, kind, profile, gpu, tp, rate);
    kc.cp = context_parallel_costs(scenario, profile, kc.compute, rate);
    if (kind.moe) {
      kc.parameters = moe_layer_dense_parameters_per_rank(m, p.tensor);
      kc.expert_parameters = expert_parameters_per_rank(m, p);
      // The host's wait at the dispatch counts as exposed exchange time, except where the
      // overlap pairs the layer with another micro-batch's, whose work stays queued meanwhile.
      const LayerComm stalled{ep_raw.forward_s + dispatch_host_stall_s(*m.moe), ep_raw.backward_s};
      if (p.schedule == Schedule::kDualPipeV) {
        // Only its pairs overlap, and those fully when the layers run them overlapped.
        kc.ep = stalled;
        kc.ep_paired =
            p.moe_a2a_overlap ? paired_exchanges_exposed(ep_raw, kc.compute, rate, 1.0) : stalled;
      } else {
        // Megatron-Core's combined 1F1B realises kEpOverlapEfficiency of the pairing.
        kc.ep = p.moe_a2a_overlap
                    ? paired_exchanges_exposed(ep_raw, kc.compute, rate, kEpOverlapEfficiency)
                    : stalled;
        kc.ep_paired = kc.ep;
      }
      kc.ep_replayed = kc.ep;
    } else {
      kc.parameters = layer_parameters_per_rank(m, p.tensor);
    }
  }
  parts.embedding = cost_ops(lower_embedding(m, p), profile, gpu, p.precision, seq);
  const std::vector<Op> head_ops = lower_head(m, p);
  parts.head = cost_ops(head_ops, profile, gpu, p.precision, seq);
  add_edge_tensor_parallel_costs(parts, scenario, head_ops, profile, gpu, tp, rate);
  if (m.mtp_layers > 0 && m.num_layers > 0) {
    const KindCosts& last = parts.kinds[kind_index(layer_kind(m, m.num_layers - 1))];
    parts.mtp = cost_ops(lower_mtp_module(m, p), profile, gpu, p.precision, seq);
    parts.mtp_comm = {last.tp.forward_s + last.cp.forward_s + parts.edges.head.forward_s,
                      last.tp.backward_s + last.cp.backward_s + parts.edges.head.backward_s};
    parts.mtp_ep = last.ep;
    parts.mtp_ep_paired = last.ep_paired;
    parts.mtp_parameters = last.parameters + mtp_extra_parameters(m) / d(p.tensor);
    parts.mtp_expert_parameters = last.expert_parameters;
  }
  // Scatter-gather optimisation (Narayanan et al. 2021 §4.1): each TP rank sends 1/t.
  parts.activation_bytes =
      tokens_per_micro_batch(scenario) * m.hidden_size * kActivationBytes / p.tensor;
  return parts;
}

// What part_costs reads of a layout, for a given model, cluster and profile: the parallelism
// with the fields it never reads reset. The ZeRO stage reaches it only through the gradient
// precision (the embedding's weight gradient is added into the main gradient in it), and the
// pipeline depth, data parallelism and virtual stages only through where they place the
// context-parallel ring (cp_ring_group).
struct PartKey {
  Parallelism layer_view;
  double grad_reduce_bytes = 0.0;
  GroupShape cp_ring;
  [[nodiscard]] bool operator==(const PartKey& other) const = default;
};

PartKey part_key(const Scenario& scenario) {
  const Parallelism& p = scenario.parallelism;
  PartKey key{p, p.grad_reduce_bytes_per_element(), cp_ring_group(scenario)};
  const Parallelism unread;
  const auto reset = [&](auto Parallelism::*field) { key.layer_view.*field = unread.*field; };
  reset(&Parallelism::pipeline);
  reset(&Parallelism::data);
  reset(&Parallelism::virtual_pipeline_stages);
  reset(&Parallelism::global_batch_size);
  reset(&Parallelism::schedule);
  reset(&Parallelism::zero_stage);
  reset(&Parallelism::stage_layers);
  reset(&Parallelism::dp_bucket_bytes);
  reset(&Parallelism::dp_buckets_every_chunk);
  reset(&Parallelism::overlap_grad_reduce);
  reset(&Parallelism::overlap_param_gather);
  reset(&Parallelism::optimizer_state_precision);
  reset(&Parallelism::master_weights);
  return key;
}

}  // namespace

struct PartCostMemo::Entries {
  // What every entry was computed for.
  ModelSpec model;
  ClusterSpec cluster;
  const HardwareProfile* profile = nullptr;
  std::vector<std::pair<PartKey, PartCosts>> seen;
  // The default plan's layouts of one instance, node count and TP degree have at most 4
  // micro-batch sizes x 3 recomputes x 2 SP x 2 gradient precisions (48), times 4 context-
  // parallel rings for long sequences.
  static constexpr size_t kMaxEntries = 256;

  // Returns `scenario`'s part costs, computed on first use.
  const PartCosts& find_or_add(const Scenario& scenario, const HardwareProfile& prof,
                               const GpuSpec& gpu, const GroupShape& tp) {
    if (profile != &prof || !(model == scenario.model) || !(cluster == scenario.cluster)) {
      seen.clear();
      model = scenario.model;
      cluster = scenario.cluster;
      profile = &prof;
    }
    PartKey key = part_key(scenario);
    for (const auto& [known, parts] : seen) {
      if (known == key)
        return parts;
    }
    if (seen.size() >= kMaxEntries)
      seen.clear();
    seen.emplace_back(std::move(key), part_costs(scenario, prof, gpu, tp));
    return seen.back().second;
  }
};

PartCostMemo::PartCostMemo() : entries_(std::make_unique<Entries>()) {}
PartCostMemo::~PartCostMemo() = default;

void compute_iteration_costs(const Scenario& scenario, const HardwareProfile& profile,
                             PartCostMemo* memo, IterationCosts& out) {
  const GpuSpec& gpu = scenario.cluster.gpu;
  std::vector<StageCosts> stages = std::move(out.stages);
  out = iteration_frame(scenario);
  out.stages = std::move(stages);
  const PartCosts parts = memo != nullptr
                              ? memo->entries().find_or_add(scenario, profile, gpu, out.tp_group)
                              : part_costs(scenario, profile, gpu, out.tp_group);
  out.compute_rate_during_comm = parts.compute_rate_during_comm;
  set_zero3_collectives(scenario, profile, out);
  add_stages(out, parts, scenario, profile, gpu);
}

IterationCosts compute_iteration_costs(const Scenario& scenario, const HardwareProfile& profile,
                                       PartCostMemo* memo) {
  IterationCosts costs;
  compute_iteration_costs(scenario, profile, memo, costs);
  return costs;
}

}  // namespace capsim::estimate
